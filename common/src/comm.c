/* comm.c — dl_comm's one job: where each operation goes, the same for
 * every transport — the MPI transport (host buffers), the NCCL transport
 * (device buffers once a CUDA device is bound) or a local copy (a world of
 * one, a message to this rank) — and the one event of each of its phases
 * that the recorders hear (comm_record.h). The transports and the watchdog
 * they share are declared in comm_backend.h; none of them is switched here.
 * Each operation's arguments are checked by comm_args.c; the communicator's
 * life (start under a launcher, device binding, end) is comm_boot.c's, the
 * device each rank claims placement.c's. */
#define _POSIX_C_SOURCE 200809L
#include "dl/comm.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // calloc, free
#include <string.h> // memmove, memset, strcmp

#include "backend.h" // dl_cuda_is_device_ptr_
#include "comm_args.h" // comm_*_args_
#include "comm_backend.h" // dl_comm_args, dl_mpi_*_, dl_nccl_*_
#include "comm_impl.h" // struct dl_comm
#include "comm_record.h" // comm_record_

/* Where one operation runs. */
typedef enum path { PATH_LOCAL = 0, PATH_MPI, PATH_NCCL } path;

struct dl_comm_req {
    const char *what; /* the call's name in messages (what_buf for a message between two ranks) */
    char what_buf[64]; /* "send to rank 0", "sendrecv to rank 2 from rank 0": the watchdog names the peers */
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

// ---- the world and its counters ----

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

/* One phase of r on its path (comm_record.h): BEGUN opens it, STARTED hands
 * a to the transport, DONE waits for it; then the recorders hear of the phase
 * (FAILED where the transport refused it), here and nowhere else. */
static dl_status phase(dl_comm *c, dl_comm_req *r, comm_phase ph, dl_comm_op op, const dl_comm_args *a)
{
    dl_status st = DL_OK;
    if (ph == COMM_STARTED) {
        if (r->where == PATH_LOCAL)
            st = run_local(c, a);
        else if (r->where == PATH_MPI)
            st = dl_mpi_start_(c->mpi, a, &r->impl);
        else
            st = dl_nccl_start_(c->nccl, a, &r->impl);
    } else if (ph == COMM_DONE) {
        if (r->where == PATH_MPI)
            st = dl_mpi_wait_(c->mpi, r->impl, r->what);
        else if (r->where == PATH_NCCL)
            st = dl_nccl_wait_(c->nccl, r->impl, r->what);
    }
    comm_record_(&c->rec, ph == COMM_STARTED && st != DL_OK ? COMM_FAILED : ph, &r->rec, op, a, st);
    return st;
}

/* Starts a on its path, counted under op. */
static dl_status start(dl_comm *c, const dl_comm_args *a, dl_comm_op op, const char *what, dl_comm_req *r)
{
    r->what = what;
    if (a->op == DL_OP_SENDRECV) { // the other rank named: a deadlock's message says who waits for whom
        if (strcmp(what, "send") == 0)
            snprintf(r->what_buf, sizeof r->what_buf, "%s to rank %d", what, a->dst);
        else if (strcmp(what, "recv") == 0)
            snprintf(r->what_buf, sizeof r->what_buf, "%s from rank %d", what, a->src);
        else
            snprintf(r->what_buf, sizeof r->what_buf, "%s to rank %d from rank %d", what, a->dst, a->src);
        r->what = r->what_buf;
    }
    r->where = route(c, a);
    r->impl = NULL;
    phase(c, r, COMM_BEGUN, op, a);
    return phase(c, r, COMM_STARTED, op, a);
}

static dl_status finish(dl_comm *c, dl_comm_req *r)
{
    return phase(c, r, COMM_DONE, r->rec.op, NULL);
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
    dl_comm_args a;
    DL_TRY(dl_comm_broadcast_args_(c->size, buf, count, t, root, &a));
    return run(c, &a, "broadcast");
}

dl_status dl_comm_allreduce(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op)
{
    dl_comm_args a;
    DL_TRY(dl_comm_allreduce_args_("allreduce", buf, count, t, op, &a));
    return run(c, &a, "allreduce");
}

dl_status dl_comm_allreduce_async(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_req **out)
{
    *out = NULL;
    dl_comm_args a;
    DL_TRY(dl_comm_allreduce_args_("allreduce_async", buf, count, t, op, &a));
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
    dl_comm_args a;
    DL_TRY(dl_comm_allgather_args_(c->size, send, recv, count, t, &a));
    return run(c, &a, "allgather");
}

dl_status dl_comm_sendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                           int src, dl_dtype t)
{
    dl_comm_args a;
    DL_TRY(dl_comm_sendrecv_args_(c->rank, c->size, "sendrecv", send, send_count, dst, recv, recv_count, src, t, &a));
    return run(c, &a, "sendrecv");
}

dl_status dl_comm_send(dl_comm *c, const void *buf, size_t count, int dst, dl_dtype t)
{
    dl_comm_args a;
    DL_TRY(dl_comm_one_way_args_(c->rank, c->size, "send", buf, count, NULL, 0, dst, t, &a));
    return run(c, &a, "send");
}

dl_status dl_comm_recv(dl_comm *c, void *buf, size_t count, int src, dl_dtype t)
{
    dl_comm_args a;
    DL_TRY(dl_comm_one_way_args_(c->rank, c->size, "recv", NULL, 0, buf, count, src, t, &a));
    return run(c, &a, "recv");
}

dl_status dl_comm_isendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                            int src, dl_dtype t, dl_comm_req **req)
{
    if (req == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: isendrecv without a request to return");
    *req = NULL;
    dl_comm_args a;
    DL_TRY(dl_comm_sendrecv_args_(c->rank, c->size, "isendrecv", send, send_count, dst, recv, recv_count, src, t, &a));
    return run_async(c, &a, DL_OP_SENDRECV, "isendrecv", req);
}
