/* dl/comm.h — communication between ranks: the only thing labs call.
 *
 * Contract
 * - A program started by common/bin/dlrun (or mpirun) is one rank of a world
 *   of P processes; started on its own it is a world of one (no MPI needed).
 *   dl_comm_init reads the launcher's environment and starts MPI when P > 1.
 * - Backends: MPI on the CPU (buffers are host pointers), NCCL on CUDA once
 *   dl_comm_use_device binds a CUDA device (buffers are then device pointers
 *   of that device; collectives run on a dedicated comm stream ordered after
 *   the device's compute stream with events). The same calls work for both.
 * - Every collective must be called by every rank, in the same order, with
 *   the same count and dtype. Results are identical on every rank (ranks
 *   reduce in the same order).
 * - Counts are elements of dtype, not bytes. DL_RED_AVG is the sum divided by
 *   P (floating types only).
 * - Faults: no call waits forever. If the others do not answer within
 *   DL_COMM_TIMEOUT seconds (default 300) the rank prints which call timed out
 *   and aborts the whole job (MPI_Abort / ncclCommAbort); a rank that exits or
 *   calls dl_comm_abort makes the launcher stop every rank with a non-zero
 *   status. Failed calls return DL_ERR_MPI / DL_ERR_NCCL with the library's
 *   error string.
 * - Counters (dl_comm_stats) record per operation the calls, the payload bytes
 *   (count x element size, what one rank hands to the call) and the seconds
 *   spent inside the call; the grader and the speedup projection read them.
 */
#ifndef DL_COMM_H
#define DL_COMM_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
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

typedef struct dl_comm_stats {
    uint64_t calls[DL_OP_COUNT];
    uint64_t bytes[DL_OP_COUNT]; /* payload bytes handed to the calls */
    double seconds[DL_OP_COUNT]; /* wall time inside the calls (async: launch to wait) */
} dl_comm_stats;

typedef struct dl_comm dl_comm;
typedef struct dl_comm_req dl_comm_req;

/* Starts this rank's communication. argc/argv may be NULL. */
dl_status dl_comm_init(int *argc, char ***argv, dl_comm **out);
/* Binds a device: a CUDA device switches the collectives to NCCL (MPI
 * bootstraps the NCCL id); the CPU device keeps MPI. Refuses, before NCCL
 * would, two ranks on one GPU. Call it on every rank, after dl_comm_init. */
dl_status dl_comm_use_device(dl_comm *c, const dl_device *dev);
/* Finishes (MPI_Finalize when it started MPI) and frees c. NULL is fine. */
void dl_comm_finalize(dl_comm *c);
/* Prints "rank R: fatal: ..." and stops every rank with exit status code. */
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
 * primitive a ring is built on). dst and src may be this rank. */
dl_status dl_comm_sendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                           int src, dl_dtype t);
/* Starts an in-place allreduce and returns at once; *req must be waited. */
dl_status dl_comm_allreduce_async(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_req **req);
/* Waits for an async operation, frees req; buf then holds the result. */
dl_status dl_comm_wait(dl_comm *c, dl_comm_req *req);

void dl_comm_stats_get(const dl_comm *c, dl_comm_stats *s);
void dl_comm_stats_reset(dl_comm *c);
const char *dl_comm_op_name(dl_comm_op op);

/* Seconds a call waits for the other ranks before aborting (DL_COMM_TIMEOUT). */
double dl_comm_timeout(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_COMM_H */
