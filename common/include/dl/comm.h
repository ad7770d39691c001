/* dl/comm.h — communication between ranks: the only thing labs call.
 *
 * Contract
 * - A program started by common/bin/dlrun (or mpirun, or Slurm's srun) is one
 *   rank of a world of P processes; started on its own it is a world of one
 *   (no MPI needed). dl_comm_init reads the launcher's environment and starts
 *   MPI when P > 1; MPI then says who is who (MPI_Comm_rank, _size, and the
 *   ranks of this machine by MPI_COMM_TYPE_SHARED), never the environment.
 * - Slurm (see dl_comm_slurm_tasks): a task of an srun step of several tasks
 *   is launched, and MPI must know its peers (srun --mpi=pmix, as dlrun
 *   passes it): when MPI sees fewer ranks than the step has tasks,
 *   dl_comm_init fails with DL_ERR_MPI on every task, naming srun's --mpi,
 *   rather than run P copies that each train alone. A batch script's own
 *   process is not a step's task: it is a world of one, whatever its
 *   SLURM_NTASKS says.
 * - Transports, chosen per call by its buffers. A world of one started
 *   without a launcher needs none: a collective is a copy or nothing. Under a
 *   launcher every call goes over MPI (host pointers) until
 *   dl_comm_use_device binds a CUDA device; from then on a call whose buffers
 *   are device pointers of that device goes over NCCL (on a dedicated comm
 *   stream ordered after the device's compute stream with events), a call
 *   whose buffers are host pointers (losses, timings, statistics) still goes
 *   over MPI, and a barrier synchronises the device, then goes over MPI. So
 *   every rank passes the same kind of buffer, host or device, to a given
 *   call, and a call's buffers are all of one kind. The same calls work for
 *   both. Only a side that moves something is asked where it lives: with a
 *   device bound, a call that moves nothing (every count 0) goes nowhere, on
 *   every rank, whatever its pointers (NULL, or one past an allocation's end).
 * - Every collective must be called by every rank, in the same order, with
 *   the same count and dtype. Results are identical on every rank (ranks
 *   reduce in the same order).
 * - Counts are elements of dtype, not bytes. DL_RED_AVG is the sum divided by
 *   P (floating types only). DL_F16 and DL_BF16 reduce by sum or avg only on
 *   MPI, each addition done in fp32 and rounded once (dl_half_add,
 *   dl_bf16_add: the bits of dl_add); NCCL reduces them natively.
 * - Faults: no call waits forever. If the others do not answer within
 *   DL_COMM_TIMEOUT seconds (default 300) the rank prints which call timed out
 *   and aborts the whole job (MPI_Abort / ncclCommAbort); a rank that exits or
 *   calls dl_comm_abort makes the launcher stop every rank with a non-zero
 *   status. Failed calls return DL_ERR_MPI / DL_ERR_NCCL with the library's
 *   error string.
 * - A rank that fails stops the job at once, before its first collective or
 *   after: in a world of several it calls dl_comm_abort (a driver:
 *   dl_rank_exit), or exits without dl_comm_finalize. It never calls
 *   dl_comm_finalize: MPI_Finalize waits for every rank (Open MPI fences
 *   there), so a failed rank that finalizes holds the others in their next
 *   collective until DL_COMM_TIMEOUT, and the launcher learns of nothing.
 *   dl_comm_finalize is the end of a run that succeeded on every rank (or
 *   failed on every rank alike, such as a bad command line).
 * - One GPU per rank, agreed before any device opens: dl_comm_claim_device is
 *   collective; every rank says what it is about to open and all of them get
 *   the same verdict (dl_comm_check_claims) at once, so two ranks on one GPU,
 *   a GPU a host lacks, or ranks split between GPUs and the CPU are refused on
 *   every rank, with a message naming the ranks, the host and the GPU, in the
 *   time of one small allgather — not by NCCL ("Duplicate GPU detected"), not
 *   by one rank while the others wait.
 * - Point-to-point: dl_comm_sendrecv / dl_comm_isendrecv pair up like MPI's
 *   and NCCL's send and receive: what rank r sends to d in its k-th such call
 *   with d is what d receives from r in its k-th such call with r, and the two
 *   counts must be equal (MPI names a mismatch; NCCL cannot see it). A rank
 *   sends to itself exactly when it receives from itself, with equal counts.
 * - Counters (dl_comm_stats) are this rank's, counted when an operation
 *   starts successfully (a call refused by its checks counts nothing); see
 *   dl_comm_stats for what each one means. The grader and the speedup
 *   projection read them.
 * - The log (dl_comm_log_start): from then on the transport also keeps its
 *   own record of each operation this rank starts successfully — which
 *   one, its buffer, count, dtype and reduction, and the span it opened in
 *   dl/trace.h's timeline. Only the transport writes it and nothing stops
 *   it, so it is the witness a trace is held against: an allreduce span
 *   that no record names was not the transport's, and a record whose span
 *   is missing ran while the trace was off.
 * - Transports: comm.c dispatches; src/comm_backend.h says what the MPI and
 *   NCCL transports implement (each has a stub for builds without it).
 */
#ifndef DL_COMM_H
#define DL_COMM_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/launch.h" // dl_comm_launcher, dl_comm_slurm_tasks (where the ranks were started)
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_red { DL_RED_SUM = 0, DL_RED_AVG, DL_RED_MAX, DL_RED_MIN } dl_red;

typedef enum dl_comm_op {
    DL_OP_BARRIER = 0,
    DL_OP_BROADCAST,
    DL_OP_ALLREDUCE,
    DL_OP_ALLGATHER,
    DL_OP_SENDRECV,
    DL_OP_ALLREDUCE_ASYNC,
    DL_OP_COUNT
} dl_comm_op;

/* This rank's counters since dl_comm_init or the last dl_comm_stats_reset.
 * Which calls count under which operation:
 *   DL_OP_BARRIER          dl_comm_barrier
 *   DL_OP_BROADCAST        dl_comm_broadcast
 *   DL_OP_ALLREDUCE        dl_comm_allreduce (blocking)
 *   DL_OP_ALLGATHER        dl_comm_allgather
 *   DL_OP_SENDRECV         dl_comm_sendrecv and dl_comm_isendrecv
 *   DL_OP_ALLREDUCE_ASYNC  dl_comm_allreduce_async */
typedef struct dl_comm_stats {
    /* Calls that started successfully (sendrecv: also those with both counts 0). */
    uint64_t calls[DL_OP_COUNT];
    /* Bytes this rank handed to those calls: count x element size of its own
     * buffer. broadcast: count, on the root and on every other rank alike;
     * allreduce(_async): count; allgather: count (its part, not the P x count
     * it receives); sendrecv: send_count (what it sends, to itself included;
     * what it receives is not counted); barrier: 0. */
    uint64_t bytes[DL_OP_COUNT];
    /* Wall seconds from the start of each call to the end of its wait: inside
     * the call when blocking; from dl_comm_allreduce_async/dl_comm_isendrecv to
     * the end of dl_comm_wait otherwise, so requests in flight together each
     * count their whole span. Only calls completed without error. */
    double seconds[DL_OP_COUNT];
    /* Point-to-point messages this rank sent: one per sendrecv or isendrecv
     * call whose send_count > 0 (to itself included; an empty send is not a
     * message). A ring allreduce of n >= P elements sends 2(P-1) per rank.
     * The library's collectives add none: their algorithm is not the caller's. */
    uint64_t messages;
} dl_comm_stats;

typedef struct dl_comm dl_comm;
typedef struct dl_comm_req dl_comm_req;

/* Starts this rank's communication. argc/argv may be NULL. */
dl_status dl_comm_init(int *argc, char ***argv, dl_comm **out);

/* What one rank is about to open, as the ranks exchange it. */
typedef struct dl_comm_claim {
    char host[64]; /* gethostname(): the ranks of one host share its GPUs */
    int ordinal; /* the GPU it asks for (cuda:N), or -1 for the CPU */
    int gpus; /* CUDA GPUs that answer on its host, as it sees them; -1: a build without CUDA */
    char why[96]; /* gpus == 0: what CUDA said ("cudaGetDeviceCount: ..."), or "" */
    int emulated; /* 1: the emulated CUDA device (emu:N; gpus: its DL_EMU_DEVICES ordinals) */
} dl_comm_claim;

/* The verdict on the claims of a world of n ranks (claims[r] is rank r's).
 * Pure: no communication, no device; the same claims give the same verdict
 * and message on every rank. DL_OK when every rank uses the CPU, or every
 * rank uses a GPU its host has and no two ranks of a host use the same one.
 * GPUs are told apart by host and ordinal, so ranks of one host must see the
 * same GPUs (a CUDA_VISIBLE_DEVICES per rank would make cuda:0 two GPUs).
 * Otherwise the first of these, with dl_last_error() naming ranks and host:
 *   DL_ERR_ARG        some ranks on a GPU and others on the CPU
 *                     ("rank 1 uses cuda:0 but rank 0 the CPU: ...")
 *   DL_ERR_ARG        two ranks of a host ask for the same GPU
 *                     ("ranks 0 and 1 both use GPU 0 on host H: ...")
 *   DL_ERR_ARG        more ranks of a host ask for a GPU than it has, and a
 *                     rank asks for one it lacks (`cuda` is cuda:LOCAL_RANK):
 *                     "ranks 0 and 1 would both use GPU 0 on host H: it has
 *                     1 GPU(s) for 2 ranks (rank 1 asks for cuda:1, ...)"
 *   DL_ERR_NO_DEVICE  a rank asks for a GPU its host lacks, or a host where
 *                     no GPU answers (with CUDA's reason, claims[r].why)
 *   DL_ERR_NO_CUDA    a rank asks for a GPU in a build without CUDA
 * The two refusals of two ranks on one GPU say how many ranks per machine
 * fit (dlrun -n N) and that --device cpu works. The emulated CUDA device
 * (claims with emulated = 1, in the EMU=1 build) is held to the same rules,
 * as a GPU's NCCL would hold it, and the messages name it: "emu:N", "ranks
 * 0 and 1 both use emulated GPU 0 on host H: ...", with DL_EMU_DEVICES=N
 * as the way to give each rank of a machine an ordinal of its own. */
dl_status dl_comm_check_claims(const dl_comm_claim *claims, int n);
/* Collective, before this rank opens its device: every rank passes what it is
 * about to open (kind; ordinal for CUDA, which in the EMU=1 build is the
 * emulated device's: there is no other), the claims are exchanged over MPI
 * and every rank returns dl_comm_check_claims' verdict on all of them. A
 * world of one returns DL_OK (dl_device_open says what its spec lacks).
 * dl_rank_device calls it; dl_comm_use_device calls it when the device it
 * binds was not claimed first. Test hook, for tests only:
 * DL_TEST_SIMULATED_GPUS=N makes a host where no GPU answers claim N GPUs,
 * so the CPU build can exercise the multi-rank verdict (tools/test-comm.sh);
 * it is read only where no GPU answers, so it cannot change a GPU run, and
 * opening a simulated GPU still fails. */
dl_status dl_comm_claim_device(dl_comm *c, dl_device_kind kind, int ordinal);
/* Binds a device. Under a launcher, a CUDA device opens an NCCL
 * communicator (MPI bootstraps the NCCL id), and from then on calls on its
 * device buffers go over NCCL while calls on host buffers stay on MPI; the
 * CPU device keeps MPI; a world of one needs neither. Collective in a world
 * of several: unless dev is what this rank claimed (dl_comm_claim_device),
 * the ranks exchange claims first, so two ranks on one GPU are refused on
 * every rank before NCCL would. Call it on every rank, after dl_comm_init. */
dl_status dl_comm_use_device(dl_comm *c, const dl_device *dev);
/* Finishes (MPI_Finalize when it started MPI) and frees c. NULL is fine.
 * Only at the end of a run every rank reaches: a rank that failed calls
 * dl_comm_abort instead (see Faults above). */
void dl_comm_finalize(dl_comm *c);
/* Prints "rank R: fatal: ..." and stops every rank with exit status code:
 * MPI_Abort, which the launcher turns into the end of the job within a second
 * or two, whatever the other ranks are doing. Safe before the first
 * collective. In a world of one (or c NULL) it prints and exits. */
void dl_comm_abort(dl_comm *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;

int dl_comm_rank(const dl_comm *c);
int dl_comm_size(const dl_comm *c);
int dl_comm_local_rank(const dl_comm *c); /* rank among the ranks on this machine */
int dl_comm_local_size(const dl_comm *c);
/* "mpi", "nccl" or "self" (a world of one without MPI). */
const char *dl_comm_backend(const dl_comm *c);

dl_status dl_comm_barrier(dl_comm *c);
dl_status dl_comm_broadcast(dl_comm *c, void *buf, size_t count, dl_dtype t, int root);
/* In place: buf holds this rank's values and receives the reduction. */
dl_status dl_comm_allreduce(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op);
/* recv (count x P) receives every rank's send (count) in rank order. */
dl_status dl_comm_allgather(dl_comm *c, const void *send, void *recv, size_t count, dl_dtype t);
/* Sends send_count elements to dst while receiving recv_count from src (the
 * primitive a ring is built on) and returns when both are done. Either count
 * may be 0 (its buffer may then be NULL); dst and src may be this rank (both
 * at once, with equal counts: a copy). DL_ERR_ARG for a rank outside 0..P-1. */
dl_status dl_comm_sendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                           int src, dl_dtype t);
/* Starts sending send_count elements of t from send to rank dst and receiving
 * recv_count elements from rank src into recv, and returns at once with *req;
 * dl_comm_wait(c, *req) completes it (and frees it). Either count may be 0;
 * dst/src may be this rank. Buffers must not be touched until the wait.
 * Counted under DL_OP_SENDRECV like dl_comm_sendrecv: one call, the bytes this
 * rank sends, the seconds from start to the end of the wait. MPI: MPI_Irecv +
 * MPI_Isend; NCCL: ncclGroupStart; ncclSend; ncclRecv; ncclGroupEnd on the comm
 * stream, completed by an event. */
dl_status dl_comm_isendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                            int src, dl_dtype t, dl_comm_req **req);
/* One direction only, blocking. dl_comm_send returns once the count elements
 * have left: the transport may have buffered them (below its eager limit, a
 * few KiB for Open MPI's shared memory) or the receiver has taken them.
 * dl_comm_recv returns once count elements from src have arrived. A send
 * pairs with the peer's dl_comm_recv (not with a sendrecv); neither may name
 * this rank. These are the calls a ring deadlocks with: when every rank sends
 * first and receives after, each send above the eager limit waits for a
 * receive its neighbour posts only after its own send (lab 04). Counted
 * under DL_OP_SENDRECV: a send as a call, its bytes and a message (count > 0);
 * a receive as a call. */
dl_status dl_comm_send(dl_comm *c, const void *buf, size_t count, int dst, dl_dtype t);
dl_status dl_comm_recv(dl_comm *c, void *buf, size_t count, int src, dl_dtype t);
/* Starts an in-place allreduce and returns at once; *req must be waited. */
dl_status dl_comm_allreduce_async(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_req **req);
/* Completes a request of dl_comm_allreduce_async or dl_comm_isendrecv and
 * frees it, also when it fails; its buffers then hold the result. Requests in
 * flight together may be waited in any order; each exactly once. On CUDA the
 * compute stream is ordered after the operation (later kernels see it). */
dl_status dl_comm_wait(dl_comm *c, dl_comm_req *req);

void dl_comm_stats_get(const dl_comm *c, dl_comm_stats *s);
void dl_comm_stats_reset(dl_comm *c);
const char *dl_comm_op_name(dl_comm_op op);

/* One operation as the transport started it (dl_comm_log). */
typedef struct dl_comm_rec {
    dl_comm_op op; /* the counter it is counted under */
    const void *buf; /* allreduce: its buffer (in place); otherwise the send buffer */
    size_t count; /* elements of t this rank handed over (as dl_comm_stats' bytes count them) */
    dl_dtype t;
    dl_red red; /* allreduce(_async): its reduction; otherwise DL_RED_SUM */
    long trace; /* the span it opened in dl/trace.h's timeline (its index); -1: none */
} dl_comm_rec;

/* Starts the log (see Contract): every operation this rank starts from now
 * on, in the order started, at most cap records (0: 1 << 20); later ones,
 * and any its memory cannot hold, are counted as dropped. A second call
 * changes nothing. Cannot fail. */
void dl_comm_log_start(dl_comm *c, size_t cap);
/* The records so far (*n of them; NULL when none) and how many were
 * dropped (dropped may be NULL). Valid until the next operation. */
const dl_comm_rec *dl_comm_log(const dl_comm *c, size_t *n, size_t *dropped);

/* Seconds a call waits for the other ranks before aborting (DL_COMM_TIMEOUT). */
double dl_comm_timeout(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_COMM_H */
