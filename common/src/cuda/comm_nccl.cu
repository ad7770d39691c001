/* comm_nccl.cu — dl_comm's NCCL transport: a communicator per rank, a comm
 * stream ordered after the compute stream with events. A wait does not make
 * the host wait: it orders the compute stream after the operation and
 * returns, as PyTorch's work.wait() does, so a step's allreduces cost the
 * host nothing. The watchdog moves to where the host does wait: while NCCL is
 * bound, every host wait for the device (dl_cuda_host_wait_) polls
 * ncclCommGetAsyncError and the DL_COMM_TIMEOUT timer (ncclCommAbort on
 * failure), so a dead peer still stops the job instead of hanging it. The
 * operations' events come from a pool: nothing is allocated per step.
 * Bootstrapped by comm.c over MPI; reached only through comm.c (see
 * comm_backend.h). On the emulated CUDA device (DL_CUDA_EMU) NCCL is the
 * emulator's, and its ranks exchange their data over dl_comm's MPI
 * transport, on a duplicate of its communicator (the emulator's transport
 * table, below); everything else here is the same. */
#include <cuda_runtime.h> // cudaEvent_t, cudaStream_t
#include <nccl.h> // ncclComm_t, ncclAllReduce, ncclSend, ncclRecv
#include <stdio.h> // fprintf
#include <stdlib.h> // calloc, exit
#include <string.h> // memcpy

#include "../backend.h" // dl_cuda_set_watch_
#include "../comm_backend.h" // dl_comm_args, dl_nccl_*_, dl_comm_watch, dl_mpi_*_
#include "dl/cuda_check.h" // DL_CUDA_CHECK, DL_NCCL_CHECK

#ifdef DL_CUDA_EMU
#include <emu/emu.h> // emu_nccl_transport, emu_nccl_set_transport
#endif

#define POOL 64 /* events kept for reuse: more than a step's buckets */

struct dl_nccl {
    ncclComm_t comm;
    dl_mpi *mpi; /* the emulated NCCL's transport (a duplicate of dl_comm's); NULL on a GPU */
    int nranks;
    cudaStream_t stream; /* the comm stream */
    cudaEvent_t ready; /* recorded on the compute stream before each operation */
    const dl_device *dev;
    int rank;
    cudaEvent_t pool[POOL]; /* free events, n_free of them */
    int n_free;
    dl_comm_watch watch; /* the host wait under way */
};

/* A request is the event recorded on the comm stream after its operation. */

static dl_status nccl_type(dl_dtype t, ncclDataType_t *out)
{
    switch (t) {
    case DL_F32:
        *out = ncclFloat32;
        return DL_OK;
    case DL_F16:
        *out = ncclFloat16;
        return DL_OK;
    case DL_BF16: // NCCL >= 2.10 (cuda_bf16.h); NCCL sums in the element type
        *out = ncclBfloat16;
        return DL_OK;
    case DL_F64:
        *out = ncclFloat64;
        return DL_OK;
    case DL_I32:
        *out = ncclInt32;
        return DL_OK;
    case DL_I64:
        *out = ncclInt64;
        return DL_OK;
    default:
        return dl_error_set(DL_ERR_ARG, "nccl: unknown dtype %d", (int)t);
    }
}

static dl_status nccl_op(dl_red red, ncclRedOp_t *out)
{
    switch (red) {
    case DL_RED_SUM:
        *out = ncclSum;
        return DL_OK;
    case DL_RED_AVG:
        *out = ncclAvg;
        return DL_OK;
    case DL_RED_MAX:
        *out = ncclMax;
        return DL_OK;
    case DL_RED_MIN:
        *out = ncclMin;
        return DL_OK;
    default:
        return dl_error_set(DL_ERR_ARG, "nccl: unknown reduction %d", (int)red);
    }
}

#ifdef DL_CUDA_EMU
// ---- the emulated NCCL's transport: its collectives over dl_comm's MPI transport ----
// The emulator calls these on the host thread that issued the NCCL call, once the
// stream has run everything before it; its device buffers are host memory.

/* nccl.h's types as dl_dtype; 0 and a message for a type dl_comm cannot move. */
static int emu_dtype(int t, dl_dtype *out, char *err, size_t len)
{
    switch (t) {
    case ncclFloat32:
        *out = DL_F32;
        return 1;
    case ncclFloat16:
        *out = DL_F16;
        return 1;
    case ncclBfloat16:
        *out = DL_BF16;
        return 1;
    case ncclFloat64:
        *out = DL_F64;
        return 1;
    case ncclInt32:
        *out = DL_I32;
        return 1;
    case ncclInt64:
        *out = DL_I64;
        return 1;
    default:
        snprintf(err, len,
                 "NCCL data type %d has no transport in the kit (dl_comm moves f32, f16, bf16, f64, i32, i64)", t);
        return 0;
    }
}

/* One operation over the MPI transport, started and waited (under dl_comm's watchdog). */
static int emu_run(void *ctx, const dl_comm_args *a, const char *what, char *err, size_t len)
{
    void *req = NULL;
    dl_mpi *m = ((dl_nccl *)ctx)->mpi;
    dl_status st = dl_mpi_start_(m, a, &req);
    if (st == DL_OK)
        st = dl_mpi_wait_(m, req, what);
    if (st == DL_OK)
        return 0;
    snprintf(err, len, "%s", dl_last_error());
    return 1;
}

static int emu_allreduce(void *ctx, const void *send, void *recv, size_t count, int dtype, int op, char *err,
                         size_t len)
{
    dl_comm_args a = {};
    if (!emu_dtype(dtype, &a.t, err, len))
        return 1;
    switch (op) {
    case ncclSum:
        a.red = DL_RED_SUM;
        break;
    case ncclAvg:
        a.red = DL_RED_AVG;
        break;
    case ncclMax:
        a.red = DL_RED_MAX;
        break;
    case ncclMin:
        a.red = DL_RED_MIN;
        break;
    default:
        snprintf(err, len, "NCCL reduction %d has no transport in the kit (sum, avg, max, min)", op);
        return 1;
    }
    if (send != recv) // MPI reduces in place
        memmove(recv, send, count * dl_dtype_size(a.t));
    a.op = DL_OP_ALLREDUCE;
    a.send = recv;
    a.send_count = a.recv_count = count;
    a.recv = recv;
    return emu_run(ctx, &a, "ncclAllReduce", err, len);
}

static int emu_broadcast(void *ctx, const void *send, void *recv, size_t count, int dtype, int root, char *err,
                         size_t len)
{
    dl_comm_args a = {};
    if (!emu_dtype(dtype, &a.t, err, len))
        return 1;
    a.op = DL_OP_BROADCAST;
    a.send = recv;
    a.send_count = a.recv_count = count;
    a.recv = recv;
    a.root = root;
    if (send != recv && send != NULL) // the root's data (only the root's send is read)
        memmove(recv, send, count * dl_dtype_size(a.t));
    return emu_run(ctx, &a, "ncclBroadcast", err, len);
}

static int emu_allgather(void *ctx, const void *send, void *recv, size_t count, int dtype, char *err, size_t len)
{
    dl_comm_args a = {};
    if (!emu_dtype(dtype, &a.t, err, len))
        return 1;
    a.op = DL_OP_ALLGATHER;
    a.send = send;
    a.send_count = count;
    a.recv = recv;
    a.recv_count = count * (size_t)((dl_nccl *)ctx)->nranks;
    return emu_run(ctx, &a, "ncclAllGather", err, len);
}

static int emu_sendrecv(void *ctx, const void *send, size_t send_count, int dst, void *recv, size_t recv_count, int src,
                        int dtype, char *err, size_t len)
{
    dl_comm_args a = {};
    if (!emu_dtype(dtype, &a.t, err, len))
        return 1;
    a.op = DL_OP_SENDRECV;
    a.send = send;
    a.send_count = send_count;
    a.dst = send_count > 0 ? dst : src;
    a.recv = recv;
    a.recv_count = recv_count;
    a.src = recv_count > 0 ? src : dst;
    a.one_way = send_count == 0 || recv_count == 0; // NCCL leaves an empty side out of the group
    return emu_run(ctx, &a, "ncclSend/ncclRecv", err, len);
}
#endif

// ---- life cycle ----

extern "C" dl_status dl_nccl_unique_id_(unsigned char id[128])
{
    ncclUniqueId u;
    DL_NCCL_CHECK(ncclGetUniqueId(&u));
    memcpy(id, &u, sizeof u < 128 ? sizeof u : 128);
    return DL_OK;
}

/* dl_cuda_host_wait_'s watch while NCCL is bound: a peer's failure or the
 * timeout stops this rank (and, through the launcher, the job). */
static void watch(void *ctx, const char *what, int first)
{
    dl_nccl *s = (dl_nccl *)ctx;
    if (first)
        dl_comm_watch_start_(&s->watch);
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(s->comm, &async) == ncclSuccess && async != ncclSuccess) {
        fprintf(stderr, "rank %d: %s: NCCL reported an asynchronous error: %s; stopping\n", s->rank, what,
                ncclGetErrorString(async));
        ncclCommAbort(s->comm);
        exit(125);
    }
    if (dl_comm_watch_expired_(&s->watch, s->rank, what)) {
        ncclCommAbort(s->comm);
        exit(124);
    }
}

static dl_status open_into(dl_nccl *s, const dl_device *dev, int nranks, int rank, const unsigned char id[128],
                           dl_mpi *mpi)
{
    s->dev = dev;
    s->rank = rank;
    s->nranks = nranks;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u < 128 ? sizeof u : 128);
    DL_CUDA_CHECK(cudaSetDevice(dev->ordinal));
    DL_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    DL_CUDA_CHECK(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
#ifdef DL_CUDA_EMU
    // the emulated NCCL's ranks meet over MPI, on a communicator of their own
    if (mpi == NULL)
        return dl_error_set(DL_ERR_NCCL, "nccl: the emulated device's NCCL needs the MPI transport of dl_comm");
    DL_TRY(dl_mpi_dup_(mpi, &s->mpi));
    emu_nccl_transport t = {};
    t.ctx = s;
    t.nranks = nranks;
    t.rank = rank;
    t.allreduce = emu_allreduce;
    t.broadcast = emu_broadcast;
    t.allgather = emu_allgather;
    t.sendrecv = emu_sendrecv;
    if (emu_nccl_set_transport(&t) != 0)
        return dl_error_set(DL_ERR_NCCL, "nccl: the emulated device refused the kit's transport table");
#else
    (void)mpi; // a GPU's NCCL has its own transport
#endif
    DL_NCCL_CHECK(ncclCommInitRank(&s->comm, nranks, u, rank));
    dl_cuda_set_watch_(watch, s);
    return DL_OK;
}

extern "C" dl_status dl_nccl_open_(dl_nccl **out, const dl_device *dev, int nranks, int rank,
                                   const unsigned char id[128], dl_mpi *mpi)
{
    *out = NULL;
    dl_nccl *s = (dl_nccl *)calloc(1, sizeof *s);
    if (s == NULL)
        return dl_error_set(DL_ERR_NOMEM, "nccl: out of memory");
    dl_status st = open_into(s, dev, nranks, rank, id, mpi);
    if (st != DL_OK) {
        if (s->ready != NULL)
            cudaEventDestroy(s->ready);
        if (s->stream != NULL)
            cudaStreamDestroy(s->stream);
        dl_mpi_close_(s->mpi);
        free(s);
        return st;
    }
    *out = s;
    return DL_OK;
}

extern "C" void dl_nccl_close_(dl_nccl *s, int abort)
{
    if (s == NULL)
        return;
    dl_cuda_set_watch_(NULL, NULL);
    if (abort)
        ncclCommAbort(s->comm);
    else
        ncclCommDestroy(s->comm);
    for (int k = 0; k < s->n_free; k++)
        cudaEventDestroy(s->pool[k]);
    cudaEventDestroy(s->ready);
    cudaStreamDestroy(s->stream);
#ifdef DL_CUDA_EMU
    emu_nccl_set_transport(NULL);
#endif
    if (!abort) // (an abort ends the job next: no collective MPI call on the way out)
        dl_mpi_close_(s->mpi);
    free(s);
}

// ---- operations ----

/* Queues the operation's NCCL calls on the comm stream. */
static dl_status enqueue(dl_nccl *s, const dl_comm_args *a)
{
    ncclDataType_t nt = ncclFloat32;
    DL_TRY(nccl_type(a->t, &nt));
    switch (a->op) {
    case DL_OP_BROADCAST:
        DL_NCCL_CHECK(ncclBroadcast(a->recv, a->recv, a->recv_count, nt, a->root, s->comm, s->stream));
        return DL_OK;
    case DL_OP_ALLREDUCE: {
        ncclRedOp_t op = ncclSum;
        DL_TRY(nccl_op(a->red, &op));
        DL_NCCL_CHECK(ncclAllReduce(a->recv, a->recv, a->recv_count, nt, op, s->comm, s->stream));
        return DL_OK;
    }
    case DL_OP_ALLGATHER:
        DL_NCCL_CHECK(ncclAllGather(a->send, a->recv, a->send_count, nt, s->comm, s->stream));
        return DL_OK;
    case DL_OP_SENDRECV:
        DL_NCCL_CHECK(ncclGroupStart());
        if (a->send_count > 0)
            DL_NCCL_CHECK(ncclSend(a->send, a->send_count, nt, a->dst, s->comm, s->stream));
        if (a->recv_count > 0)
            DL_NCCL_CHECK(ncclRecv(a->recv, a->recv_count, nt, a->src, s->comm, s->stream));
        DL_NCCL_CHECK(ncclGroupEnd());
        return DL_OK;
    default:
        return dl_error_set(DL_ERR_UNSUPPORTED, "nccl: operation %s has no NCCL transport", dl_comm_op_name(a->op));
    }
}

extern "C" dl_status dl_nccl_start_(dl_nccl *s, const dl_comm_args *a, void **req)
{
    *req = NULL;
    // the comm stream waits for everything queued so far on the compute stream
    DL_CUDA_CHECK(cudaEventRecord(s->ready, (cudaStream_t)s->dev->stream));
    DL_CUDA_CHECK(cudaStreamWaitEvent(s->stream, s->ready, 0));
    DL_TRY(enqueue(s, a));
    cudaEvent_t done = NULL;
    if (s->n_free > 0)
        done = s->pool[--s->n_free];
    else
        DL_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    cudaError_t e = cudaEventRecord(done, s->stream);
    if (e != cudaSuccess) {
        cudaEventDestroy(done);
        DL_CUDA_CHECK(e);
    }
    *req = (void *)done;
    return DL_OK;
}

extern "C" dl_status dl_nccl_wait_(dl_nccl *s, void *req, const char *what)
{
    (void)what; // a failure shows at the next host wait, under the watch
    cudaEvent_t done = (cudaEvent_t)req;
    // later kernels on the compute stream see the result; the host goes on. The
    // wait took the event's current record: the event may be recorded again.
    cudaError_t e = cudaStreamWaitEvent((cudaStream_t)s->dev->stream, done, 0);
    if (s->n_free < POOL)
        s->pool[s->n_free++] = done;
    else
        cudaEventDestroy(done); // released once it has completed
    DL_CUDA_CHECK(e);
    return DL_OK;
}

extern "C" dl_stream dl_nccl_stream_(const dl_nccl *s)
{
    return s != NULL ? (dl_stream)s->stream : NULL;
}
