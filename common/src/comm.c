/* comm.c — dl_comm: a world of one, MPI on the CPU, and NCCL (bootstrapped by
 * MPI) on CUDA through backend.h. Every wait polls with a timeout so that a
 * failed or stuck rank stops the job instead of hanging it. */
#define _POSIX_C_SOURCE 200809L
#include "dl/comm.h"

#include <stdarg.h> // va_list
#include <stdio.h> // fprintf
#include <stdlib.h> // getenv, calloc, exit
#include <string.h> // memcpy, strcmp
#include <time.h> // nanosleep
#include <unistd.h> // gethostname

#ifdef DL_HAVE_MPI
#include <mpi.h>
#endif

#include "backend.h" // dl_nccl_*_
#include "dl/half.h" // dl_half (the fp16 sum)
#include "dl/timer.h" // dl_now

enum { BACKEND_SELF = 0, BACKEND_MPI = 1, BACKEND_NCCL = 2 };

struct dl_comm {
    int rank, size, local_rank, local_size;
    int backend;
    int mpi_started; /* this process called MPI_Init */
    const dl_device *dev;
    void *nccl;
    dl_comm_stats stats;
#ifdef DL_HAVE_MPI
    MPI_Comm local;
    MPI_Op half_sum;
#endif
};

struct dl_comm_req {
    dl_comm_op op;
    double t0;
    void *buf;
    size_t count;
    dl_dtype t;
    dl_red red;
    int nccl; /* this request went to NCCL */
    void *nccl_req;
#ifdef DL_HAVE_MPI
    MPI_Request mreq;
#endif
};

static const char *const op_names[DL_OP_COUNT] = {"barrier",   "broadcast", "allreduce",
                                                  "allgather", "sendrecv",  "allreduce_async"};

const char *dl_comm_op_name(dl_comm_op op)
{
    return (unsigned)op < DL_OP_COUNT ? op_names[op] : "?";
}

double dl_comm_timeout(void)
{
    const char *s = getenv("DL_COMM_TIMEOUT");
    double v = s != NULL ? atof(s) : 0.0;
    return v > 0 ? v : 300.0;
}

static void count_op(dl_comm *c, dl_comm_op op, size_t bytes, double t0)
{
    c->stats.calls[op]++;
    c->stats.bytes[op] += bytes;
    c->stats.seconds[op] += dl_now() - t0;
}

#ifndef DL_HAVE_MPI
static int env_int(const char *a, const char *b, const char *cname, int fallback)
{
    const char *names[3] = {a, b, cname};
    for (int i = 0; i < 3; i++) {
        const char *v = names[i] ? getenv(names[i]) : NULL;
        if (v != NULL && v[0] != '\0')
            return atoi(v);
    }
    return fallback;
}
#endif

/* True when a launcher started this process as one rank of several. */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

// ---- MPI helpers ----

#ifdef DL_HAVE_MPI
static dl_status mpi_fail(dl_comm *c, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return dl_error_set(DL_ERR_MPI, "rank %d: MPI %s failed: %s", c->rank, what, msg);
}

static void pause_briefly(long spins)
{
    // Spin first (latency matters in the benchmarks); then let other ranks run,
    // which matters when ranks outnumber cores.
    if (spins < 2000)
        return;
    struct timespec ts = {0, spins < 20000 ? 20000 : 500000};
    nanosleep(&ts, NULL);
}

static dl_status mpi_wait_all(dl_comm *c, int n, MPI_Request *reqs, const char *what)
{
    double t0 = dl_now(), limit = dl_comm_timeout();
    for (long spins = 0;; spins++) {
        int done = 0;
        int rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, what);
        if (done)
            return DL_OK;
        pause_briefly(spins);
        if ((spins & 255) == 0 && dl_now() - t0 > limit) {
            fprintf(stderr,
                    "rank %d: %s timed out after %.0f s waiting for the other ranks: one of them has "
                    "failed or is stuck (DL_COMM_TIMEOUT sets the limit); stopping every rank\n",
                    c->rank, what, limit);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 124);
        }
    }
}

static dl_status mpi_type(dl_dtype t, MPI_Datatype *out)
{
    switch (t) {
    case DL_F32:
        *out = MPI_FLOAT;
        return DL_OK;
    case DL_F64:
        *out = MPI_DOUBLE;
        return DL_OK;
    case DL_I32:
        *out = MPI_INT32_T;
        return DL_OK;
    case DL_I64:
        *out = MPI_INT64_T;
        return DL_OK;
    case DL_F16:
        *out = MPI_UINT16_T; // moved as bits; reduced by half_sum
        return DL_OK;
    default:
        return dl_error_set(DL_ERR_ARG, "comm: unknown dtype %d", (int)t);
    }
}

static void half_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const dl_half *a = in;
    dl_half *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = dl_f2h(dl_h2f(a[i]) + dl_h2f(b[i]));
}

static dl_status mpi_op(const dl_comm *c, dl_red red, dl_dtype t, MPI_Op *out)
{
    if (t == DL_F16) {
        if (red != DL_RED_SUM && red != DL_RED_AVG)
            return dl_error_set(DL_ERR_UNSUPPORTED, "comm: only sum/avg are supported for f16 on MPI");
        *out = c->half_sum;
        return DL_OK;
    }
    if (red == DL_RED_AVG && (t == DL_I32 || t == DL_I64))
        return dl_error_set(DL_ERR_ARG, "comm: DL_RED_AVG needs a floating dtype, not %s", dl_dtype_name(t));
    *out = red == DL_RED_MAX ? MPI_MAX : red == DL_RED_MIN ? MPI_MIN : MPI_SUM;
    return DL_OK;
}

static void scale_avg(void *buf, size_t count, dl_dtype t, int size)
{
    if (t == DL_F32) {
        float *f = buf, s = 1.0f / (float)size;
        for (size_t i = 0; i < count; i++)
            f[i] *= s;
    } else if (t == DL_F64) {
        double *f = buf;
        for (size_t i = 0; i < count; i++)
            f[i] /= size;
    } else if (t == DL_F16) {
        dl_half *h = buf;
        for (size_t i = 0; i < count; i++)
            h[i] = dl_f2h(dl_h2f(h[i]) / (float)size);
    }
}
#endif

static dl_status check_count(const char *what, size_t count)
{
    if (count > (size_t)0x7fffffff)
        return dl_error_set(DL_ERR_ARG, "comm: %s of %zu elements exceeds 2^31 - 1", what, count);
    return DL_OK;
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
    if (!launched()) {
        c->backend = BACKEND_SELF;
        *out = c;
        return DL_OK;
    }
#ifdef DL_HAVE_MPI
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int rc = MPI_Init(argc, argv);
        if (rc != MPI_SUCCESS) {
            free(c);
            return dl_error_set(DL_ERR_MPI, "comm: MPI_Init failed (code %d)", rc);
        }
        c->mpi_started = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->local);
    MPI_Comm_rank(c->local, &c->local_rank);
    MPI_Comm_size(c->local, &c->local_size);
    MPI_Op_create(half_sum_fn, 1, &c->half_sum);
    c->backend = BACKEND_MPI;
    *out = c;
    return DL_OK;
#else
    (void)argc, (void)argv;
    c->rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", 0);
    int size = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL, 1);
    free(c);
    return dl_error_set(DL_ERR_UNSUPPORTED,
                        "comm: started as one of %d ranks, but this build has no MPI (install "
                        "libopenmpi-dev with `make deps` and rebuild)",
                        size);
#endif
}

dl_status dl_comm_use_device(dl_comm *c, const dl_device *dev)
{
    c->dev = dev;
    if (dev->kind != DL_DEVICE_CUDA)
        return DL_OK;
    if (c->backend == BACKEND_SELF && c->size == 1) {
        // one rank on a GPU: collectives are copies; no NCCL needed
        return DL_OK;
    }
#ifdef DL_HAVE_MPI
    // Two ranks on one GPU: say so before NCCL does ("Duplicate GPU detected").
    char mine[320], *all = malloc((size_t)c->size * sizeof mine);
    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    snprintf(mine, sizeof mine, "%s|%d|%s", host, dev->ordinal, dev->name);
    if (all == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    MPI_Allgather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, MPI_COMM_WORLD);
    for (int a = 0; a < c->size; a++) {
        for (int b = a + 1; b < c->size; b++) {
            if (strcmp(all + (size_t)a * sizeof mine, all + (size_t)b * sizeof mine) == 0) {
                dl_status st = dl_error_set(DL_ERR_ARG,
                                            "ranks %d and %d both use GPU %d on host %s: NCCL needs one GPU per rank. "
                                            "Start at most as many ranks per machine as it has GPUs (dlrun -n N), "
                                            "or use --device cpu",
                                            a, b, dev->ordinal, host);
                free(all);
                return st;
            }
        }
    }
    free(all);
    unsigned char id[128];
    if (c->rank == 0)
        DL_TRY(dl_nccl_unique_id_(id));
    MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    DL_TRY(dl_nccl_init_(&c->nccl, dev, c->size, c->rank, id));
    c->backend = BACKEND_NCCL;
    return DL_OK;
#else
    return dl_error_set(DL_ERR_UNSUPPORTED, "comm: NCCL needs MPI to start; this build has none");
#endif
}

void dl_comm_finalize(dl_comm *c)
{
    if (c == NULL)
        return;
    if (c->nccl != NULL)
        dl_nccl_destroy_(c->nccl, 0);
#ifdef DL_HAVE_MPI
    if (c->backend != BACKEND_SELF) {
        MPI_Op_free(&c->half_sum);
        MPI_Comm_free(&c->local);
        if (c->mpi_started)
            MPI_Finalize();
    }
#endif
    free(c);
}

void dl_comm_abort(dl_comm *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: fatal: ", c != NULL ? c->rank : 0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (c != NULL && c->nccl != NULL)
        dl_nccl_destroy_(c->nccl, 1);
#ifdef DL_HAVE_MPI
    if (c != NULL && c->backend != BACKEND_SELF)
        MPI_Abort(MPI_COMM_WORLD, code);
#endif
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
    *s = c->stats;
}

void dl_comm_stats_reset(dl_comm *c)
{
    memset(&c->stats, 0, sizeof c->stats);
}

// ---- operations ----

/* NCCL takes device buffers; host buffers (counters, losses, timings) go
 * over MPI even when the collectives of device buffers use NCCL. */
static int nccl_for(const dl_comm *c, const void *buf)
{
    return c->backend == BACKEND_NCCL && dl_cuda_is_device_ptr_(buf);
}

/* The copy a world of one does: on the device when the buffers are there. */
static dl_status self_copy(dl_comm *c, void *dst, const void *src, size_t bytes)
{
    if (dst == src || bytes == 0)
        return DL_OK;
    if (c->dev != NULL && c->dev->kind == DL_DEVICE_CUDA && dl_cuda_is_device_ptr_(dst))
        return dl_memcpy_d2d(c->dev, dst, src, bytes);
    memmove(dst, src, bytes);
    return DL_OK;
}

dl_status dl_comm_barrier(dl_comm *c)
{
    double t0 = dl_now();
    if (c->dev != NULL)
        DL_TRY(dl_device_sync(c->dev));
#ifdef DL_HAVE_MPI
    if (c->backend != BACKEND_SELF) {
        MPI_Request r;
        int rc = MPI_Ibarrier(MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, "barrier");
        DL_TRY(mpi_wait_all(c, 1, &r, "barrier"));
    }
#endif
    count_op(c, DL_OP_BARRIER, 0, t0);
    return DL_OK;
}

dl_status dl_comm_broadcast(dl_comm *c, void *buf, size_t count, dl_dtype t, int root)
{
    DL_TRY(check_count("broadcast", count));
    if (root < 0 || root >= c->size)
        return dl_error_set(DL_ERR_ARG, "comm: broadcast root %d, expected 0..%d", root, c->size - 1);
    size_t bytes = count * dl_dtype_size(t);
    double t0 = dl_now();
    if (nccl_for(c, buf)) {
        DL_TRY(dl_nccl_broadcast_(c->nccl, buf, count, t, root));
#ifdef DL_HAVE_MPI
    } else if (c->backend != BACKEND_SELF) {
        MPI_Datatype mt;
        DL_TRY(mpi_type(t, &mt));
        MPI_Request r;
        int rc = MPI_Ibcast(buf, (int)count, mt, root, MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, "broadcast");
        DL_TRY(mpi_wait_all(c, 1, &r, "broadcast"));
#endif
    }
    count_op(c, DL_OP_BROADCAST, bytes, t0);
    return DL_OK;
}

dl_status dl_comm_allreduce(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op)
{
    dl_comm_req *req = NULL;
    double t0 = dl_now();
    DL_TRY(dl_comm_allreduce_async(c, buf, count, t, op, &req));
    // an allreduce is an async one waited at once; count it once, as blocking
    c->stats.calls[DL_OP_ALLREDUCE_ASYNC]--;
    c->stats.bytes[DL_OP_ALLREDUCE_ASYNC] -= count * dl_dtype_size(t);
    req->op = DL_OP_ALLREDUCE;
    req->t0 = t0;
    return dl_comm_wait(c, req);
}

dl_status dl_comm_allreduce_async(dl_comm *c, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_req **out)
{
    *out = NULL;
    DL_TRY(check_count("allreduce", count));
    if (dl_dtype_size(t) == 0)
        return dl_error_set(DL_ERR_ARG, "comm: unknown dtype %d", (int)t);
    if (op == DL_RED_AVG && (t == DL_I32 || t == DL_I64))
        return dl_error_set(DL_ERR_ARG, "comm: DL_RED_AVG needs a floating dtype, not %s", dl_dtype_name(t));
    dl_comm_req *r = calloc(1, sizeof *r);
    if (r == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    r->op = DL_OP_ALLREDUCE_ASYNC;
    r->t0 = dl_now();
    r->buf = buf;
    r->count = count;
    r->t = t;
    r->red = op;
    r->nccl = nccl_for(c, buf);
    dl_status st = DL_OK;
    if (r->nccl) {
        st = dl_nccl_allreduce_(c->nccl, buf, count, t, (int)op, &r->nccl_req);
#ifdef DL_HAVE_MPI
    } else if (c->backend != BACKEND_SELF) {
        MPI_Datatype mt = MPI_FLOAT;
        MPI_Op mo = MPI_SUM;
        st = mpi_type(t, &mt);
        if (st == DL_OK)
            st = mpi_op(c, op, t, &mo);
        if (st == DL_OK) {
            int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mt, mo, MPI_COMM_WORLD, &r->mreq);
            if (rc != MPI_SUCCESS)
                st = mpi_fail(c, rc, "allreduce");
        }
#endif
    }
    if (st != DL_OK) {
        free(r);
        return st;
    }
    c->stats.calls[DL_OP_ALLREDUCE_ASYNC]++;
    c->stats.bytes[DL_OP_ALLREDUCE_ASYNC] += count * dl_dtype_size(t);
    *out = r;
    return DL_OK;
}

dl_status dl_comm_wait(dl_comm *c, dl_comm_req *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: wait on a NULL request");
    dl_status st = DL_OK;
    if (r->nccl) {
        st = dl_nccl_wait_(c->nccl, r->nccl_req, dl_comm_timeout(), c->rank);
#ifdef DL_HAVE_MPI
    } else if (c->backend != BACKEND_SELF) {
        st = mpi_wait_all(c, 1, &r->mreq, r->op == DL_OP_ALLREDUCE ? "allreduce" : "allreduce_async");
        if (st == DL_OK && r->red == DL_RED_AVG)
            scale_avg(r->buf, r->count, r->t, c->size);
#endif
    }
    if (st == DL_OK) {
        double dt = dl_now() - r->t0;
        if (r->op == DL_OP_ALLREDUCE) {
            c->stats.calls[DL_OP_ALLREDUCE]++;
            c->stats.bytes[DL_OP_ALLREDUCE] += r->count * dl_dtype_size(r->t);
        }
        c->stats.seconds[r->op] += dt;
    }
    free(r);
    return st;
}

dl_status dl_comm_allgather(dl_comm *c, const void *send, void *recv, size_t count, dl_dtype t)
{
    DL_TRY(check_count("allgather", count));
    size_t bytes = count * dl_dtype_size(t);
    double t0 = dl_now();
    if (c->backend == BACKEND_SELF) {
        DL_TRY(self_copy(c, recv, send, bytes));
    } else if (nccl_for(c, recv)) {
        DL_TRY(dl_nccl_allgather_(c->nccl, send, recv, count, t));
#ifdef DL_HAVE_MPI
    } else {
        MPI_Datatype mt;
        DL_TRY(mpi_type(t, &mt));
        MPI_Request r;
        int rc = MPI_Iallgather(send, (int)count, mt, recv, (int)count, mt, MPI_COMM_WORLD, &r);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, "allgather");
        DL_TRY(mpi_wait_all(c, 1, &r, "allgather"));
#endif
    }
    count_op(c, DL_OP_ALLGATHER, bytes, t0);
    return DL_OK;
}

dl_status dl_comm_sendrecv(dl_comm *c, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                           int src, dl_dtype t)
{
    DL_TRY(check_count("sendrecv", send_count > recv_count ? send_count : recv_count));
    if (dst < 0 || dst >= c->size || src < 0 || src >= c->size)
        return dl_error_set(DL_ERR_ARG, "comm: sendrecv to %d from %d, expected ranks 0..%d", dst, src, c->size - 1);
    size_t esz = dl_dtype_size(t);
    double t0 = dl_now();
    int nccl = nccl_for(c, recv);
    if (c->backend == BACKEND_SELF || (dst == c->rank && src == c->rank && !nccl)) {
        if (send_count != recv_count)
            return dl_error_set(DL_ERR_ARG, "comm: sendrecv to itself of %zu elements but %zu expected", send_count,
                                recv_count);
        DL_TRY(self_copy(c, recv, send, send_count * esz));
    } else if (nccl) {
        DL_TRY(dl_nccl_sendrecv_(c->nccl, send, send_count, dst, recv, recv_count, src, t));
#ifdef DL_HAVE_MPI
    } else {
        MPI_Datatype mt;
        DL_TRY(mpi_type(t, &mt));
        MPI_Request r[2];
        int rc = MPI_Irecv(recv, (int)recv_count, mt, src, 77, MPI_COMM_WORLD, &r[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Isend(send, (int)send_count, mt, dst, 77, MPI_COMM_WORLD, &r[1]);
        if (rc != MPI_SUCCESS)
            return mpi_fail(c, rc, "sendrecv");
        DL_TRY(mpi_wait_all(c, 2, r, "sendrecv"));
#endif
    }
    count_op(c, DL_OP_SENDRECV, send_count * esz, t0);
    return DL_OK;
}
