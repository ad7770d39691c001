/* comm_mpi.c — dl_comm's MPI transport: host buffers, non-blocking MPI calls
 * (MPI_Ibcast, MPI_Iallreduce, MPI_Iallgather, MPI_Irecv + MPI_Isend) waited
 * by polling MPI_Testall under the watchdog, so a failed or stuck rank stops
 * the job instead of hanging it. Built only with MPI (src/mpi_stub.c
 * otherwise); reached only through comm.c (see comm_backend.h). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h> // fprintf
#include <stdlib.h> // calloc, free

#include "comm_backend.h" // dl_comm_args, dl_mpi_*_, dl_comm_watch
#include "dl/bf16.h" // dl_bf16, dl_bf16_add
#include "dl/half.h" // dl_half, dl_half_add

/* Every point-to-point message of dl_comm carries this tag: MPI matches
 * messages between two ranks in the order they were posted. */
enum { P2P_TAG = 77 };

struct dl_mpi {
    int rank, size;
    int started; /* this process called MPI_Init */
    MPI_Comm comm; /* MPI_COMM_WORLD, or a duplicate of it (dl_mpi_dup_) */
    MPI_Comm local; /* the ranks on this machine (MPI_COMM_NULL in a duplicate) */
    MPI_Op half_sum; /* f16 sum (dl_half_add) */
    MPI_Op bf16_sum; /* bf16 sum (dl_bf16_add) */
};

typedef struct mpi_req {
    MPI_Request r[2];
    int n; /* requests in r */
    dl_comm_op op;
    void *avg_buf; /* allreduce avg: divide by P after the sum */
    size_t count;
    dl_dtype t;
    size_t recv_count; /* sendrecv: the elements the receive expects */
    int src;
    int has_recv; /* sendrecv: r[0] is a receive whose count is checked */
} mpi_req;

static dl_status mpi_fail(const dl_mpi *m, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return dl_error_set(DL_ERR_MPI, "rank %d: MPI %s failed: %s", m->rank, what, msg);
}

// ---- types and reductions ----

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
    case DL_BF16:
        *out = MPI_UINT16_T; // moved as bits; reduced by half_sum / bf16_sum
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
        b[i] = dl_half_add(a[i], b[i]);
}

/* Each addition in fp32, rounded once to bf16: the same bits as dl_add. */
static void bf16_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const dl_bf16 *a = in;
    dl_bf16 *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = dl_bf16_add(a[i], b[i]);
}

static dl_status mpi_op(const dl_mpi *m, dl_red red, dl_dtype t, MPI_Op *out)
{
    if (t == DL_F16 || t == DL_BF16) {
        if (red != DL_RED_SUM && red != DL_RED_AVG)
            return dl_error_set(DL_ERR_UNSUPPORTED, "comm: only sum/avg are supported for %s on MPI", dl_dtype_name(t));
        *out = t == DL_F16 ? m->half_sum : m->bf16_sum;
        return DL_OK;
    }
    switch (red) {
    case DL_RED_SUM:
    case DL_RED_AVG: // the sum, divided by P in the wait
        *out = MPI_SUM;
        return DL_OK;
    case DL_RED_MAX:
        *out = MPI_MAX;
        return DL_OK;
    case DL_RED_MIN:
        *out = MPI_MIN;
        return DL_OK;
    default:
        return dl_error_set(DL_ERR_ARG, "comm: unknown reduction %d", (int)red);
    }
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
    } else if (t == DL_BF16) {
        dl_bf16 *h = buf;
        for (size_t i = 0; i < count; i++)
            h[i] = dl_f2bf(dl_bf2f(h[i]) / (float)size);
    }
}

// ---- life cycle ----

dl_status dl_mpi_open_(int *argc, char ***argv, dl_mpi **out, int *rank, int *size, int *local_rank, int *local_size)
{
    *out = NULL;
    dl_mpi *m = calloc(1, sizeof *m);
    if (m == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int rc = MPI_Init(argc, argv);
        if (rc != MPI_SUCCESS) {
            free(m);
            return dl_error_set(DL_ERR_MPI, "comm: MPI_Init failed (code %d)", rc);
        }
        m->started = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    m->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &m->local);
    MPI_Comm_rank(m->local, local_rank);
    MPI_Comm_size(m->local, local_size);
    MPI_Op_create(half_sum_fn, 1, &m->half_sum);
    MPI_Op_create(bf16_sum_fn, 1, &m->bf16_sum);
    *rank = m->rank;
    *size = m->size;
    *out = m;
    return DL_OK;
}

dl_status dl_mpi_dup_(dl_mpi *m, dl_mpi **out)
{
    *out = NULL;
    dl_mpi *d = calloc(1, sizeof *d);
    if (d == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    int rc = MPI_Comm_dup(m->comm, &d->comm);
    if (rc != MPI_SUCCESS) {
        free(d);
        return mpi_fail(m, rc, "MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    d->rank = m->rank;
    d->size = m->size;
    d->local = MPI_COMM_NULL;
    MPI_Op_create(half_sum_fn, 1, &d->half_sum);
    MPI_Op_create(bf16_sum_fn, 1, &d->bf16_sum);
    *out = d;
    return DL_OK;
}

void dl_mpi_close_(dl_mpi *m)
{
    if (m == NULL)
        return;
    MPI_Op_free(&m->half_sum);
    MPI_Op_free(&m->bf16_sum);
    if (m->local != MPI_COMM_NULL)
        MPI_Comm_free(&m->local);
    if (m->comm != MPI_COMM_WORLD)
        MPI_Comm_free(&m->comm);
    if (m->started)
        MPI_Finalize();
    free(m);
}

void dl_mpi_abort_(dl_mpi *m, int code)
{
    if (m != NULL)
        MPI_Abort(MPI_COMM_WORLD, code);
}

// ---- operations ----

static dl_status post(dl_mpi *m, const dl_comm_args *a, mpi_req *q)
{
    MPI_Datatype mt = MPI_BYTE;
    int rc = MPI_SUCCESS;
    if (a->op != DL_OP_BARRIER)
        DL_TRY(mpi_type(a->t, &mt));
    switch (a->op) {
    case DL_OP_BARRIER:
        rc = MPI_Ibarrier(m->comm, &q->r[q->n++]);
        break;
    case DL_OP_BROADCAST:
        rc = MPI_Ibcast(a->recv, (int)a->recv_count, mt, a->root, m->comm, &q->r[q->n++]);
        break;
    case DL_OP_ALLREDUCE: {
        MPI_Op mo = MPI_SUM;
        DL_TRY(mpi_op(m, a->red, a->t, &mo));
        rc = MPI_Iallreduce(MPI_IN_PLACE, a->recv, (int)a->recv_count, mt, mo, m->comm, &q->r[q->n++]);
        if (a->red == DL_RED_AVG)
            q->avg_buf = a->recv;
        break;
    }
    case DL_OP_ALLGATHER:
        rc = MPI_Iallgather(a->send, (int)a->send_count, mt, a->recv, (int)a->send_count, mt, m->comm, &q->r[q->n++]);
        break;
    case DL_OP_SENDRECV:
        // both sides are posted even when empty, so a count that does not match
        // the peer's fails in the wait instead of leaving a message behind; a
        // one-way call (dl_comm_send, dl_comm_recv) has only its own side
        if (!a->one_way || a->recv_count > 0) {
            rc = MPI_Irecv(a->recv, (int)a->recv_count, mt, a->src, P2P_TAG, m->comm, &q->r[q->n++]);
            q->has_recv = 1;
        }
        if (rc == MPI_SUCCESS && (!a->one_way || a->send_count > 0))
            rc = MPI_Isend(a->send, (int)a->send_count, mt, a->dst, P2P_TAG, m->comm, &q->r[q->n++]);
        break;
    default:
        return dl_error_set(DL_ERR_UNSUPPORTED, "comm: operation %s has no MPI transport", dl_comm_op_name(a->op));
    }
    if (rc != MPI_SUCCESS)
        return mpi_fail(m, rc, dl_comm_op_name(a->op));
    return DL_OK;
}

dl_status dl_mpi_start_(dl_mpi *m, const dl_comm_args *a, void **req)
{
    *req = NULL;
    mpi_req *q = calloc(1, sizeof *q);
    if (q == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    q->op = a->op;
    q->count = a->recv_count;
    q->t = a->t;
    q->recv_count = a->recv_count;
    q->src = a->src;
    dl_status st = post(m, a, q);
    if (st != DL_OK && q->n > 0 && q->has_recv) {
        // a sendrecv whose send could not be posted: withdraw its receive
        MPI_Cancel(&q->r[0]);
        MPI_Request_free(&q->r[0]);
    }
    if (st != DL_OK) {
        free(q);
        return st;
    }
    *req = q;
    return DL_OK;
}

dl_status dl_mpi_wait_(dl_mpi *m, void *req, const char *what)
{
    mpi_req *q = req;
    MPI_Status status[2];
    dl_comm_watch w;
    dl_comm_watch_start_(&w);
    dl_status st = DL_OK;
    for (;;) {
        int done = 0;
        int rc = MPI_Testall(q->n, q->r, &done, status);
        if (rc == MPI_ERR_IN_STATUS) {
            // name the request's own error (a truncated receive, say), not "error in status"
            for (int i = 0; i < q->n; i++) {
                if (status[i].MPI_ERROR != MPI_SUCCESS && status[i].MPI_ERROR != MPI_ERR_PENDING)
                    rc = status[i].MPI_ERROR;
            }
        }
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_TRUNCATE && q->op == DL_OP_SENDRECV) {
            st = dl_error_set(DL_ERR_ARG,
                              "rank %d: %s received more than %zu element(s) from rank %d: the sender's "
                              "send_count must equal this rank's recv_count",
                              m->rank, what, q->recv_count, q->src);
            break;
        }
        if (rc != MPI_SUCCESS) {
            st = mpi_fail(m, rc, what);
            break;
        }
        if (done)
            break;
        if (dl_comm_watch_expired_(&w, m->rank, what))
            MPI_Abort(MPI_COMM_WORLD, 124);
    }
    if (st == DL_OK && q->op == DL_OP_SENDRECV && q->has_recv) {
        int got = 0;
        MPI_Datatype mt = MPI_BYTE;
        mpi_type(q->t, &mt);
        MPI_Get_count(&status[0], mt, &got);
        if (got < 0 || (size_t)got != q->recv_count)
            st = dl_error_set(DL_ERR_ARG,
                              "rank %d: %s received %d element(s) from rank %d but expected %zu: the sender's "
                              "send_count must equal this rank's recv_count",
                              m->rank, what, got, q->src, q->recv_count);
    }
    if (st == DL_OK && q->avg_buf != NULL)
        scale_avg(q->avg_buf, q->count, q->t, m->size);
    free(q);
    return st;
}
