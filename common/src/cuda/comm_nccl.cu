/* comm_nccl.cu — dl_comm's NCCL transport: a communicator per rank, a comm
 * stream ordered after the compute stream with events, and waits that poll
 * ncclCommGetAsyncError under the watchdog (ncclCommAbort on failure), so a
 * dead peer stops the job instead of hanging it. Bootstrapped by comm.c over
 * MPI; reached only through comm.c (see comm_backend.h). */
#include <cuda_runtime.h> // cudaEvent_t, cudaStream_t
#include <nccl.h> // ncclComm_t, ncclAllReduce, ncclSend, ncclRecv
#include <stdio.h> // fprintf
#include <stdlib.h> // calloc, exit
#include <string.h> // memcpy

#include "../comm_backend.h" // dl_comm_args, dl_nccl_*_, dl_comm_watch
#include "dl/cuda_check.h" // DL_CUDA_CHECK, DL_NCCL_CHECK

struct dl_nccl {
    ncclComm_t comm;
    cudaStream_t stream; /* the comm stream */
    cudaEvent_t ready; /* recorded on the compute stream before each operation */
    const dl_device *dev;
    int rank;
};

typedef struct nccl_req {
    cudaEvent_t done; /* recorded on the comm stream after the operation */
} nccl_req;

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

// ---- life cycle ----

extern "C" dl_status dl_nccl_unique_id_(unsigned char id[128])
{
    ncclUniqueId u;
    DL_NCCL_CHECK(ncclGetUniqueId(&u));
    memcpy(id, &u, sizeof u < 128 ? sizeof u : 128);
    return DL_OK;
}

static dl_status open_into(dl_nccl *s, const dl_device *dev, int nranks, int rank, const unsigned char id[128])
{
    s->dev = dev;
    s->rank = rank;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u < 128 ? sizeof u : 128);
    DL_CUDA_CHECK(cudaSetDevice(dev->ordinal));
    DL_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    DL_CUDA_CHECK(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
    DL_NCCL_CHECK(ncclCommInitRank(&s->comm, nranks, u, rank));
    return DL_OK;
}

extern "C" dl_status dl_nccl_open_(dl_nccl **out, const dl_device *dev, int nranks, int rank,
                                   const unsigned char id[128])
{
    *out = NULL;
    dl_nccl *s = (dl_nccl *)calloc(1, sizeof *s);
    if (s == NULL)
        return dl_error_set(DL_ERR_NOMEM, "nccl: out of memory");
    dl_status st = open_into(s, dev, nranks, rank, id);
    if (st != DL_OK) {
        if (s->ready != NULL)
            cudaEventDestroy(s->ready);
        if (s->stream != NULL)
            cudaStreamDestroy(s->stream);
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
    if (abort)
        ncclCommAbort(s->comm);
    else
        ncclCommDestroy(s->comm);
    cudaEventDestroy(s->ready);
    cudaStreamDestroy(s->stream);
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
    nccl_req *r = (nccl_req *)malloc(sizeof *r);
    if (r == NULL)
        return dl_error_set(DL_ERR_NOMEM, "nccl: out of memory");
    cudaError_t e = cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventRecord(r->done, s->stream);
    if (e != cudaSuccess) {
        free(r);
        DL_CUDA_CHECK(e);
    }
    *req = r;
    return DL_OK;
}

/* Polls r's event under the watchdog, then orders the compute stream after it. */
static dl_status poll(dl_nccl *s, nccl_req *r, const char *what)
{
    dl_comm_watch w;
    dl_comm_watch_start_(&w);
    for (;;) {
        cudaError_t e = cudaEventQuery(r->done);
        if (e == cudaSuccess)
            break;
        if (e != cudaErrorNotReady)
            DL_CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        DL_NCCL_CHECK(ncclCommGetAsyncError(s->comm, &async));
        if (async != ncclSuccess) {
            fprintf(stderr, "rank %d: %s: NCCL reported an asynchronous error: %s; stopping\n", s->rank, what,
                    ncclGetErrorString(async));
            ncclCommAbort(s->comm);
            exit(125);
        }
        if (dl_comm_watch_expired_(&w, s->rank, what)) {
            ncclCommAbort(s->comm);
            exit(124);
        }
    }
    // later kernels on the compute stream see the result
    DL_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)s->dev->stream, r->done, 0));
    return DL_OK;
}

extern "C" dl_status dl_nccl_wait_(dl_nccl *s, void *req, const char *what)
{
    nccl_req *r = (nccl_req *)req;
    dl_status st = poll(s, r, what);
    cudaEventDestroy(r->done);
    free(r);
    return st;
}

extern "C" dl_stream dl_nccl_stream_(const dl_nccl *s)
{
    return s != NULL ? (dl_stream)s->stream : NULL;
}
