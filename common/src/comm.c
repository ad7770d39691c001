/* comm.c — dl_comm's dispatcher, the same for every transport: argument
 * checks, the counters, the world of one, and where each operation goes —
 * the MPI transport (host buffers), the NCCL transport (device buffers once a
 * CUDA device is bound) or a local copy (a world of one, a message to this
 * rank). The transports and the watchdog they share are declared in
 * comm_backend.h; none of them is switched here. Where the ranks are (the
 * launcher that started them, the device each claims) is placement.c's. */
#define _POSIX_C_SOURCE 200809L
#include "dl/comm.h"

#include <stdarg.h> // va_list
#include <stdint.h> // int32_t
#include <stdio.h> // fputs, snprintf, vsnprintf
#include <stdlib.h> // calloc, exit
#include <string.h> // memmove, strcmp

#include "backend.h" // dl_cuda_is_device_ptr_
#include "comm_backend.h" // dl_comm_args, dl_mpi_*_, dl_nccl_*_, dl_comm_watch
#include "dl/trace.h" // dl_trace_use_device
#include "comm_record.h" // comm_recorders, comm_record_

enum { BACKEND_SELF = 0, BACKEND_MPI = 1, BACKEND_NCCL = 2 };

/* Where one operation runs. */
typedef enum path { PATH_LOCAL = 0, PATH_MPI, PATH_NCCL } path;

struct dl_comm {
    int rank, size, local_rank, local_size;
    int backend;
    const dl_device *dev;
    dl_mpi *mpi; /* NULL in a world of one without a launcher */
    dl_nccl *nccl; /* set once a CUDA device is bound in a world of several */
    int claimed; /* the last dl_comm_claim_device was agreed by every rank */
    dl_device_kind claim_kind;
    int claim_ordinal;
    comm_recorders rec; /* the counters and the logs (comm_record.h) */
};

struct dl_comm_req {
    const char *what; /* the call's name in messages */
    path where;
    void *impl; /* the transport's request */
    comm_op_rec rec; /* what the recorders follow of it (comm_record.h) */
};

static const char *const op_names[DL_OP_COUNT] = {"barrier",   "broadcast", "allreduce",
                                                  "allgather", "sendrecv",  "allreduce_async"};

const char *dl_comm_op_name(dl_comm_op op)
{
    return (unsigned)op < DL_OP_COUNT ? op_names[op] : "?";
}

// ---- life cycle ----

dl_status dl_comm_init(int *argc, char ***argv, dl_comm **out)
{
    *out = NULL;
    dl_comm *c = calloc(1, sizeof *c);
    if (c == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    c->size = 1;
    c->local_size = 1;
    c->backend = BACKEND_SELF;
    // before MPI_Init, which may add variables of its own
    const char *var = NULL;
    int announced = dl_comm_launcher(&var, NULL), tasks = dl_comm_slurm_tasks();
    if (announced > 0 || tasks > 1) {
        dl_status st = dl_mpi_open_(argc, argv, &c->mpi, &c->rank, &c->size, &c->local_rank, &c->local_size);
        if (st == DL_OK && tasks <= 1 && announced > 1 && c->size != announced)
            st = dl_error_set(DL_ERR_MPI,
                              "comm: started as one of %d ranks (%s=%d), but MPI sees a world of %d: the ranks "
                              "cannot find one another (each would train alone). Start the kit's programs with "
                              "common/bin/dlrun -n N (or mpirun, or srun)",
                              announced, var, announced, c->size);
        if (st == DL_OK && tasks > 1 && c->size != tasks)
            st = dl_error_set(DL_ERR_MPI,
                              "comm: srun started %d tasks, but MPI sees a world of %d: MPI does not know the "
                              "other tasks (each would train alone). Start MPI programs with srun --mpi=pmix (`srun "
                              "--mpi=list` shows what this cluster has; SLURM_MPI_TYPE sets it), or use "
                              "common/bin/dlrun, which passes it",
                              tasks, c->size);
        if (st != DL_OK) {
            dl_mpi_close_(c->mpi);
            free(c);
            return st;
        }
        c->backend = BACKEND_MPI;
    }
    *out = c;
    return DL_OK;
}

/* An uncounted MPI operation of the bootstrap. */
static dl_status mpi_run(dl_comm *c, const dl_comm_args *a, const char *what)
{
    void *req = NULL;
    DL_TRY(dl_mpi_start_(c->mpi, a, &req));
    return dl_mpi_wait_(c->mpi, req, what);
}

dl_status dl_comm_claim_device(dl_comm *c, dl_device_kind kind, int ordinal)
{
    c->claimed = 0;
    if (c->backend == BACKEND_SELF)
        return DL_OK; // nothing to share; dl_device_open names what is missing
    DL_TRY(dl_place_claims_(c->mpi, c->size, kind, ordinal)); // every rank's claim, one verdict (placement.c)
    c->claimed = 1;
    c->claim_kind = kind;
    c->claim_ordinal = kind == DL_DEVICE_CUDA ? ordinal : 0;
    return DL_OK;
}

/* dev is what this rank claimed last, with a verdict of DL_OK. */
static int claimed(const dl_comm *c, const dl_device *dev)
{
    return c->claimed && c->claim_kind == dev->kind &&
           (dev->kind != DL_DEVICE_CUDA || c->claim_ordinal == dev->ordinal);
}

dl_status dl_comm_use_device(dl_comm *c, const dl_device *dev)
{
    if (c->backend != BACKEND_SELF && !claimed(c, dev))
        DL_TRY(dl_comm_claim_device(c, dev->kind, dev->ordinal));
    if (dev->kind != DL_DEVICE_CUDA || c->backend == BACKEND_SELF) {
        // the CPU keeps MPI; one rank on a GPU needs no NCCL (its collectives are copies)
        c->dev = dev;
        dl_trace_use_device(dev, NULL); // on a GPU, the trace times the compute stream
        return DL_OK;
    }
    if (c->nccl != NULL)
        return dl_error_set(DL_ERR_ARG, "comm: a CUDA device is already bound to this communicator");
    // rank 0 makes the NCCL id and broadcasts it, with its status, so that no
    // rank waits for an id that was never made
    int32_t idw[33] = {0};
    char why[256] = "see rank 0's message";
    if (c->rank == 0 && dl_nccl_unique_id_((unsigned char *)idw) != DL_OK) {
        idw[32] = 1;
        snprintf(why, sizeof why, "%s", dl_last_error());
    }
    dl_comm_args a = {
        .op = DL_OP_BROADCAST, .send = idw, .send_count = 33, .recv = idw, .recv_count = 33, .root = 0, .t = DL_I32};
    DL_TRY(mpi_run(c, &a, "use_device"));
    if (idw[32] != 0)
        return dl_error_set(DL_ERR_NCCL, "comm: rank 0 could not create the NCCL id (%s)", why);
    DL_TRY(dl_nccl_open_(&c->nccl, dev, c->size, c->rank, (const unsigned char *)idw, c->mpi));
    c->dev = dev;
    c->backend = BACKEND_NCCL;
    dl_trace_use_device(dev, dl_nccl_stream_(c->nccl)); // allreduces timed on the comm stream
    return DL_OK;
}

void dl_comm_finalize(dl_comm *c)
{
    if (c == NULL)
        return;
    if (c->dev != NULL && c->dev->kind == DL_DEVICE_CUDA)
        dl_trace_use_device(NULL, NULL); // before the streams it times go
    dl_nccl_close_(c->nccl, 0);
    dl_mpi_close_(c->mpi);
    dl_record_free_(&c->rec.log);
    free(c);
}

void dl_comm_abort(dl_comm *c, int code, const char *fmt, ...)
{
    // one line in one write: when several ranks abort at once their lines
    // must not interleave
    char line[2048];
    int k = snprintf(line, sizeof line, "rank %d: fatal: ", c != NULL ? c->rank : 0);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    fflush(stderr);
    if (c != NULL) {
        dl_nccl_close_(c->nccl, 1);
        dl_mpi_abort_(c->mpi, code);
    }
    exit(code);
}

int dl_comm_rank(const dl_comm *c)
{
    return c->rank;
}

int dl_comm_size(const dl_comm *c)
{
    return c->size;
}

int dl_comm_local_rank(const dl_comm *c)
{
    return c->local_rank;
}

int dl_comm_local_size(const dl_comm *c)
{
    return c->local_size;
}

const char *dl_comm_backend(const dl_comm *c)
{
    return c->backend == BACKEND_NCCL ? "nccl" : c->backend == BACKEND_MPI ? "mpi" : "self";
}

void dl_comm_stats_get(const dl_comm *c, dl_comm_stats *s)
{
    *s = c->rec.stats;
}

void dl_comm_stats_reset(dl_comm *c)
{
    memset(&c->rec.stats, 0, sizeof c->rec.stats);
}

void dl_comm_log_start(dl_comm *c, size_t cap)
{
    if (c->rec.log.limit == 0)
        c->rec.log.limit = cap ? cap : (size_t)1 << 20;
}

const dl_comm_rec *dl_comm_log(const dl_comm *c, size_t *n, size_t *dropped)
{
    *n = c->rec.log.n;
    if (dropped != NULL)
        *dropped = c->rec.log.dropped;
    return c->rec.log.items;
}

/* Appends the operation a, started under op with trace span trace, to the log. */
// ---- dispatch: start, wait, count ----

/* A buffer NCCL must move: a device pointer once NCCL is bound. Host buffers
 * (counters, losses, timings) go over MPI even then. */
static int nccl_buffer(const dl_comm *c, const void *p)
{
    return c->backend == BACKEND_NCCL && p != NULL && dl_cuda_is_device_ptr_(p);
}

static path route(const dl_comm *c, const dl_comm_args *a)
{
    if (c->backend == BACKEND_SELF && !a->one_way)
        return PATH_LOCAL;
    if (a->op == DL_OP_SENDRECV && a->dst == c->rank && a->src == c->rank)
        return PATH_LOCAL;
    if (c->backend == BACKEND_NCCL && a->op != DL_OP_BARRIER) {
        // Nothing to move: NCCL leaves an empty side out, so every rank must, whatever
        // its pointers say. An empty side's pointer may be NULL or one past the end of
        // its allocation, which CUDA does not call device memory: asked, one rank would
        // post MPI messages its NCCL peers never match.
        if (a->send_count == 0 && a->recv_count == 0)
            return PATH_LOCAL;
        if ((a->send_count > 0 && nccl_buffer(c, a->send)) || (a->recv_count > 0 && nccl_buffer(c, a->recv)))
            return PATH_NCCL;
    }
    return PATH_MPI;
}

/* The copy a rank makes to itself: on the device (queued on its compute
 * stream) when the buffers are there. */
static dl_status self_copy(const dl_comm *c, void *dst, const void *src, size_t bytes)
{
    if (dst == src || bytes == 0)
        return DL_OK;
    if (c->dev != NULL && c->dev->kind == DL_DEVICE_CUDA && dl_cuda_is_device_ptr_(dst))
        return dl_memcpy_d2d(c->dev, dst, src, bytes);
    memmove(dst, src, bytes);
    return DL_OK;
}

/* One rank's share of an operation when no other rank takes part: a
 * reduction, broadcast or barrier of one leaves the data as it is (the
 * average of one value is the value); a gather or a message to itself copies. */
static dl_status run_local(const dl_comm *c, const dl_comm_args *a)
{
    if (a->op == DL_OP_ALLGATHER || a->op == DL_OP_SENDRECV)
        return self_copy(c, a->recv, a->send, a->send_count * dl_dtype_size(a->t));
    return DL_OK;
}

/* Starts a on its path, counted under op; the recorders hear of it at each
 * phase (comm_record.h), finish tells them it is done. */
static dl_status start(dl_comm *c, const dl_comm_args *a, dl_comm_op op, const char *what, dl_comm_req *r)
{
    r->what = what;
    r->where = route(c, a);
    r->impl = NULL;
    comm_record_(&c->rec, COMM_BEGUN, &r->rec, op, a, DL_OK);
    dl_status st = DL_OK;
    switch (r->where) {
    case PATH_LOCAL:
        st = run_local(c, a);
        break;
    case PATH_MPI:
        st = dl_mpi_start_(c->mpi, a, &r->impl);
        break;
    case PATH_NCCL:
        st = dl_nccl_start_(c->nccl, a, &r->impl);
        break;
    }
    comm_record_(&c->rec, st == DL_OK ? COMM_STARTED : COMM_FAILED, &r->rec, op, a, st);
    return st;
}

static dl_status finish(dl_comm *c, dl_comm_req *r)
{
    dl_status st = DL_OK;
    if (r->where == PATH_MPI)
        st = dl_mpi_wait_(c->mpi, r->impl, r->what);
    else if (r->where == PATH_NCCL)
        st = dl_nccl_wait_(c->nccl, r->impl, r->what);
    comm_record_(&c->rec, COMM_DONE, &r->rec, r->rec.op, NULL, st);
    return st;
}

/* A blocking operation: started and waited at once. */
static dl_status run(dl_comm *c, const dl_comm_args *a, const char *what)
{
    dl_comm_req r;
    DL_TRY(start(c, a, a->op, what, &r));
    return finish(c, &r);
}

/* A non-blocking operation: started; dl_comm_wait finishes and frees it. */
static dl_status run_async(dl_comm *c, const dl_comm_args *a, dl_comm_op op, const char *what, dl_comm_req **out)
{
    dl_comm_req *r = calloc(1, sizeof *r);
    if (r == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    dl_status st = start(c, a, op, what, r);
    if (st != DL_OK) {
        free(r);
        return st;
    }
    *out = r;
    return DL_OK;
}

// ---- argument checks ----

static dl_status check_buffer(const char *what, const void *p, size_t count, dl_dtype t)
{
    if (dl_dtype_size(t) == 0)
        return dl_error_set(DL_ERR_ARG, "comm: %s of unknown dtype %d", what, (int)t);
    if (count > (size_t)0x7fffffff)
        return dl_error_set(DL_ERR_ARG, "comm: %s of %zu elements exceeds 2^31 - 1", what, count);
    if (count > 0 && p == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: %s of %zu elements from a NULL buffer", what, count);
    return DL_OK;
}

static dl_status check_reduction(const char *what, dl_dtype t, dl_red op)
{
    if ((unsigned)op > DL_RED_MIN)
        return dl_error_set(DL_ERR_ARG, "comm: %s with unknown reduction %d", what, (int)op);
    if (op == DL_RED_AVG && (t == DL_I32 || t == DL_I64))
        return dl_error_set(DL_ERR_ARG, "comm: DL_RED_AVG needs a floating dtype, not %s", dl_dtype_name(t));
    return DL_OK;
}

static dl_status check_peers(const dl_comm *c, const char *what, int dst, int src, size_t send_count, size_t recv_count)
{
    if (dst < 0 || dst >= c->size || src < 0 || src >= c->size)
        return dl_error_set(DL_ERR_ARG, "comm: %s to %d from %d, expected ranks 0..%d", what, dst, src, c->size - 1);
    if ((dst == c->rank) != (src == c->rank))
        return dl_error_set(DL_ERR_ARG,
                            "comm: %s to %d from %d on rank %d: a rank that sends to itself receives from "
                            "itself in the same call",
                            what, dst, src, c->rank);
    if (dst == c->rank && send_count != recv_count)
        return dl_error_set(DL_ERR_ARG, "comm: %s to itself of %zu elements but %zu expected", what, send_count,
                            recv_count);
    return DL_OK;
}

// ---- operations ----

dl_status dl_comm_barrier(dl_comm *c)
{
    if (c->dev != NULL)
        DL_TRY(dl_device_sync(c->dev));
    dl_comm_args a = {.op = DL_OP_BARRIER, .t = DL_F32};
    return run(c, &a, "barrier");
}

dl_status dl_comm_broadcast(dl_comm *c, void *buf, size_t count, dl_dtype t, int root)
{
    DL_TRY(check_buffer("broadcast", buf, count, t));
    if (root < 0 || root >= c->size)
        return dl_error_set(DL_ERR_ARG, "comm: broadcast root %d, expected 0..%d", root, c->size - 1);
    dl_comm_args a = {.op = DL_OP_BROADCAST,
                      .send = buf,
                      .send_count = count,
                      .recv = buf,
                      .recv_count = count,
                      .root = root,
                      .t = t};
    return run(c, &a, "broadcast");
}

static dl_status allreduce_args(const char *what, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_args *a)
{
    DL_TRY(check_buffer(what, buf, count, t));
    DL_TRY(check_reduction(what, t, op));
    *a = (dl_comm_args){
        .op = DL_OP_ALLREDUCE, .send = buf, .send_count = count, .recv = buf, .recv_count = count, .t = t, .red = op};
    return DL_OK;
}

dl_status dl_comm_allreduce(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op)
{
    dl_comm_args a;
    DL_TRY(allreduce_args("allreduce", buf, count, t, op, &a));
    return run(c, &a, "allreduce");
}

dl_status dl_comm_allreduce_async(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_req **out)
{
    *out = NULL;
    dl_comm_args a;
    DL_TRY(allreduce_args("allreduce_async", buf, count, t, op, &a));
    return run_async(c, &a, DL_OP_ALLREDUCE_ASYNC, "allreduce_async", out);
}

dl_status dl_comm_wait(dl_comm *c, dl_comm_req *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: wait on a NULL request");
    dl_status st = finish(c, r);
    free(r);
    return st;
}

dl_status dl_comm_allgather(dl_comm *c, const void *send, void *recv, size_t count, dl_dtype t)
{
    DL_TRY(check_buffer("allgather", send, count, t));
    DL_TRY(check_buffer("allgather", recv, count, t));
    dl_comm_args a = {.op = DL_OP_ALLGATHER,
                      .send = send,
                      .send_count = count,
                      .recv = recv,
                      .recv_count = count * (size_t)c->size,
                      .t = t};
    return run(c, &a, "allgather");
}

static dl_status sendrecv_args(const dl_comm *c, const char *what, const void *send, size_t send_count, int dst,
                               void *recv, size_t recv_count, int src, dl_dtype t, dl_comm_args *a)
{
    DL_TRY(check_buffer(what, send, send_count, t));
    DL_TRY(check_buffer(what, recv, recv_count, t));
    DL_TRY(check_peers(c, what, dst, src, send_count, recv_count));
    *a = (dl_comm_args){.op = DL_OP_SENDRECV,
                        .send = send,
                        .send_count = send_count,
                        .dst = dst,
                        .recv = recv,
                        .recv_count = recv_count,
                        .src = src,
                        .t = t};
    return DL_OK;
}

dl_status dl_comm_sendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                           int src, dl_dtype t)
{
    dl_comm_args a;
    DL_TRY(sendrecv_args(c, "sendrecv", send, send_count, dst, recv, recv_count, src, t, &a));
    return run(c, &a, "sendrecv");
}

/* One way: the other side of the sendrecv does not exist (count 0, and the
 * peer is not this rank: a blocking message to itself could never arrive). */
static dl_status one_way(dl_comm *c, const char *what, const void *send, size_t send_count, void *recv,
                         size_t recv_count, int peer, dl_dtype t)
{
    DL_TRY(check_buffer(what, send != NULL ? send : recv, send_count + recv_count, t));
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return dl_error_set(DL_ERR_ARG, "comm: %s on rank %d with rank %d: expected another rank of 0..%d", what,
                            c->rank, peer, c->size - 1);
    dl_comm_args a = {.op = DL_OP_SENDRECV,
                      .send = send,
                      .send_count = send_count,
                      .dst = peer,
                      .recv = recv,
                      .recv_count = recv_count,
                      .src = peer,
                      .one_way = 1,
                      .t = t};
    return run(c, &a, what);
}

dl_status dl_comm_send(dl_comm *c, const void *buf, size_t count, int dst, dl_dtype t)
{
    return one_way(c, "send", buf, count, NULL, 0, dst, t);
}

dl_status dl_comm_recv(dl_comm *c, void *buf, size_t count, int src, dl_dtype t)
{
    return one_way(c, "recv", NULL, 0, buf, count, src, t);
}

dl_status dl_comm_isendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                            int src, dl_dtype t, dl_comm_req **req)
{
    if (req == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: isendrecv without a request to return");
    *req = NULL;
    dl_comm_args a;
    DL_TRY(sendrecv_args(c, "isendrecv", send, send_count, dst, recv, recv_count, src, t, &a));
    return run_async(c, &a, DL_OP_SENDRECV, "isendrecv", req);
}
