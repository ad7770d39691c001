/* comm_backend.h — what dl_comm's dispatcher (comm.c) asks of a transport.
 *
 * Two transports sit behind dl/comm.h: MPI (src/comm_mpi.c, or src/mpi_stub.c
 * in a build without MPI) and NCCL (src/cuda/comm_nccl.cu, or src/nccl_stub.c
 * without NCCL). Each is switched in one place, the Makefile's list of library
 * files, so no caller needs an #ifdef. A stub's open fails with a clear status
 * and message; its other entry points are never reached (the dispatcher only
 * calls a transport it has opened) and fail the same way if they are.
 *
 * Every operation reaches a transport as one dl_comm_args and goes through the
 * same two calls: start (queue it, return a request at once) and wait
 * (complete it, free the request). A blocking call is a start followed by a
 * wait. So adding an operation touches dl/comm.h (its contract and its
 * dl_comm_op), comm.c (its route, the world of one), comm_args.c (its
 * argument checks) and one
 * case in each transport's start — not this header, not the stubs.
 *
 * The dispatcher has checked the arguments (ranks in range, counts below 2^31,
 * a known dtype, non-NULL buffers where count > 0) before a transport sees
 * them. Every wait, on every transport, polls through the one watchdog below.
 */
#ifndef DL_COMM_BACKEND_H
#define DL_COMM_BACKEND_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm_op, dl_red
#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

/* One operation, as this rank sees it. Which fields an operation reads:
 *
 *   op                send, send_count          recv, recv_count             peers
 *   DL_OP_BARRIER     -                         -                            -
 *   DL_OP_BROADCAST   buf (== recv), count      buf, count                   root
 *   DL_OP_ALLREDUCE   buf (== recv), count      buf, count (in place); red   -
 *   DL_OP_ALLGATHER   this rank's part, count   count x P, in rank order     -
 *   DL_OP_SENDRECV    to dst, send_count        from src, recv_count         dst, src
 *
 * Counts are elements of t. DL_OP_ALLREDUCE_ASYNC never reaches a transport:
 * the dispatcher sends DL_OP_ALLREDUCE and counts it apart. */
typedef struct dl_comm_args {
    dl_comm_op op;
    const void *send;
    size_t send_count;
    void *recv;
    size_t recv_count;
    int root; /* broadcast */
    int dst, src; /* sendrecv */
    int one_way; /* sendrecv as dl_comm_send or dl_comm_recv: only the non-empty side exists */
    dl_dtype t;
    dl_red red; /* allreduce */
} dl_comm_args;

// ---- the watchdog: the one timeout of every wait ----

/* A wait polls its transport; after each poll that found the operation still
 * running it calls dl_comm_watch_expired_, which backs off (spins first, for
 * latency; then short sleeps, which matters when ranks outnumber cores) and
 * returns 1 once dl_comm_timeout() seconds (DL_COMM_TIMEOUT, default 300) have
 * passed since dl_comm_watch_start_, having printed to stderr
 *   "rank R: WHAT timed out after S s waiting for the other ranks: ..."
 * The transport then stops every rank its own way (MPI_Abort, ncclCommAbort)
 * with exit status 124. Cannot fail. */
typedef struct dl_comm_watch {
    double t0, limit;
    long polls;
} dl_comm_watch;

void dl_comm_watch_start_(dl_comm_watch *w);
int dl_comm_watch_expired_(dl_comm_watch *w, int rank, const char *what);

// ---- MPI (src/comm_mpi.c; src/mpi_stub.c without MPI) ----

typedef struct dl_mpi dl_mpi;

/* Starts MPI (MPI_Init unless already initialised) and fills this rank's
 * place in the world and on its machine. Without MPI: DL_ERR_UNSUPPORTED,
 * naming the world size the launcher asked for and how to get MPI. */
dl_status dl_mpi_open_(int *argc, char ***argv, dl_mpi **out, int *rank, int *size, int *local_rank, int *local_size);
/* Frees m and finalises MPI when open started it (a duplicate frees its
 * communicator instead). NULL is fine. */
void dl_mpi_close_(dl_mpi *m);
/* Collective over m's ranks: a transport of the same ranks on a duplicate of
 * m's communicator (MPI_Comm_dup), whose messages never match m's: the
 * emulated NCCL moves its data over one (dl_nccl_open_). Freed by
 * dl_mpi_close_. Without MPI: DL_ERR_UNSUPPORTED. */
dl_status dl_mpi_dup_(dl_mpi *m, dl_mpi **out);
/* Stops every rank of the job with exit status code (MPI_Abort); returns only
 * when m is NULL or MPI is absent. */
void dl_mpi_abort_(dl_mpi *m, int code);
/* Host buffers only. f16 reduces with dl_half_add (sum and avg only: others
 * are DL_ERR_UNSUPPORTED); avg divides the sum by P in dl_mpi_wait_. A
 * sendrecv receiving fewer elements than recv_count fails in the wait. */
dl_status dl_mpi_start_(dl_mpi *m, const dl_comm_args *a, void **req);
/* what names the call in errors and in the watchdog's message. */
dl_status dl_mpi_wait_(dl_mpi *m, void *req, const char *what);

// ---- NCCL (src/cuda/comm_nccl.cu; src/nccl_stub.c without NCCL) ----

typedef struct dl_nccl dl_nccl;

/* Rank 0 makes the id; the dispatcher broadcasts it over MPI. */
dl_status dl_nccl_unique_id_(unsigned char id[128]);
/* Binds this rank to dev (one GPU per rank): a communicator, a comm stream
 * and the events that order it after dev's compute stream. mpi is the MPI
 * transport the ranks were bootstrapped over: a GPU's NCCL does not use it;
 * the emulated device's NCCL (EMU=1) moves its data over a duplicate of it
 * (dl_mpi_dup_, common/emu's emu_nccl_set_transport). */
dl_status dl_nccl_open_(dl_nccl **out, const dl_device *dev, int nranks, int rank, const unsigned char id[128],
                        dl_mpi *mpi);
/* Frees s; abort != 0 aborts the communicator (ncclCommAbort) instead of
 * destroying it. NULL is fine. */
void dl_nccl_close_(dl_nccl *s, int abort);
/* Device buffers of s's device. Queues the operation on the comm stream after
 * everything already queued on the compute stream, then records the request's
 * event. A sendrecv side whose count is 0 is left out of the group. */
dl_status dl_nccl_start_(dl_nccl *s, const dl_comm_args *a, void **req);
/* Waits for the request's event under the watchdog, polling NCCL's async
 * error (a failure aborts the communicator and exits 125), then orders the
 * compute stream after it and frees the request. */
dl_status dl_nccl_wait_(dl_nccl *s, void *req, const char *what);
/* s's comm stream (for the trace's device times); NULL for NULL or without NCCL. */
dl_stream dl_nccl_stream_(const dl_nccl *s);

#ifdef __cplusplus
}
#endif
#endif /* DL_COMM_BACKEND_H */
