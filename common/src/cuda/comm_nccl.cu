/* comm_nccl.cu — dl_comm's NCCL backend: a communicator per rank, a comm
 * stream ordered after the compute stream with events, and waits that poll
 * ncclCommGetAsyncError with a timeout (ncclCommAbort on failure), so a dead
 * peer stops the job instead of hanging it. Bootstrapped by comm.c over MPI. */
#include <cuda_runtime.h> // cudaEvent_t, cudaStream_t
#include <nccl.h> // ncclComm_t, ncclAllReduce, ncclSend, ncclRecv
#include <stdio.h> // fprintf
#include <stdlib.h> // malloc, exit
#include <string.h> // memcpy
#include <time.h> // nanosleep

#include "../backend.h" // dl_nccl_*_
#include "dl/cuda_check.h" // DL_CUDA_CHECK, DL_NCCL_CHECK
#include "dl/comm.h" // dl_comm_timeout
#include "dl/timer.h" // dl_now

typedef struct nccl_state {
    ncclComm_t comm;
    cudaStream_t stream; /* the comm stream */
    cudaEvent_t ready; /* recorded on the compute stream before each operation */
    const dl_device *dev;
} nccl_state;

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

static ncclRedOp_t nccl_op(int red)
{
    return red == 1 ? ncclAvg : red == 2 ? ncclMax : red == 3 ? ncclMin : ncclSum;
}

extern "C" dl_status dl_nccl_unique_id_(unsigned char id[128])
{
    ncclUniqueId u;
    DL_NCCL_CHECK(ncclGetUniqueId(&u));
    memcpy(id, &u, sizeof u < 128 ? sizeof u : 128);
    return DL_OK;
}

extern "C" dl_status dl_nccl_init_(void **state, const dl_device *dev, int nranks, int rank,
                                   const unsigned char id[128])
{
    *state = NULL;
    nccl_state *s = (nccl_state *)calloc(1, sizeof *s);
    if (s == NULL)
        return dl_error_set(DL_ERR_NOMEM, "nccl: out of memory");
    s->dev = dev;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u < 128 ? sizeof u : 128);
    DL_CUDA_CHECK(cudaSetDevice(dev->ordinal));
    DL_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    DL_CUDA_CHECK(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
    DL_NCCL_CHECK(ncclCommInitRank(&s->comm, nranks, u, rank));
    *state = s;
    return DL_OK;
}

extern "C" void dl_nccl_destroy_(void *state, int abort)
{
    nccl_state *s = (nccl_state *)state;
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

/* The comm stream waits for everything queued so far on the compute stream. */
static dl_status order(nccl_state *s)
{
    DL_CUDA_CHECK(cudaEventRecord(s->ready, (cudaStream_t)s->dev->stream));
    DL_CUDA_CHECK(cudaStreamWaitEvent(s->stream, s->ready, 0));
    return DL_OK;
}

static dl_status finish(nccl_state *s, void **req)
{
    nccl_req *r = (nccl_req *)malloc(sizeof *r);
    if (r == NULL)
        return dl_error_set(DL_ERR_NOMEM, "nccl: out of memory");
    DL_CUDA_CHECK(cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming));
    DL_CUDA_CHECK(cudaEventRecord(r->done, s->stream));
    *req = r;
    return DL_OK;
}

extern "C" dl_status dl_nccl_wait_(void *state, void *req, double timeout, int rank)
{
    nccl_state *s = (nccl_state *)state;
    nccl_req *r = (nccl_req *)req;
    double t0 = dl_now();
    for (long spins = 0;; spins++) {
        cudaError_t e = cudaEventQuery(r->done);
        if (e == cudaSuccess)
            break;
        if (e != cudaErrorNotReady)
            DL_CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        DL_NCCL_CHECK(ncclCommGetAsyncError(s->comm, &async));
        if (async != ncclSuccess) {
            fprintf(stderr, "rank %d: NCCL reported an asynchronous error: %s; stopping\n", rank,
                    ncclGetErrorString(async));
            ncclCommAbort(s->comm);
            exit(125);
        }
        if ((spins & 1023) == 0 && dl_now() - t0 > timeout) {
            fprintf(stderr,
                    "rank %d: an NCCL operation timed out after %.0f s waiting for the other ranks: one of "
                    "them has failed or is stuck (DL_COMM_TIMEOUT sets the limit); aborting\n",
                    rank, timeout);
            ncclCommAbort(s->comm);
            exit(124);
        }
        if (spins > 4000) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    // later kernels on the compute stream see the result
    DL_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)s->dev->stream, r->done, 0));
    cudaEventDestroy(r->done);
    free(r);
    return DL_OK;
}

static dl_status run_and_wait(nccl_state *s)
{
    void *req = NULL;
    DL_TRY(finish(s, &req));
    return dl_nccl_wait_(s, req, dl_comm_timeout(), -1);
}

extern "C" dl_status dl_nccl_allreduce_(void *state, void *buf, size_t count, dl_dtype t, int red, void **req)
{
    nccl_state *s = (nccl_state *)state;
    ncclDataType_t nt = ncclFloat32;
    DL_TRY(nccl_type(t, &nt));
    DL_TRY(order(s));
    DL_NCCL_CHECK(ncclAllReduce(buf, buf, count, nt, nccl_op(red), s->comm, s->stream));
    return finish(s, req);
}

extern "C" dl_status dl_nccl_broadcast_(void *state, void *buf, size_t count, dl_dtype t, int root)
{
    nccl_state *s = (nccl_state *)state;
    ncclDataType_t nt = ncclFloat32;
    DL_TRY(nccl_type(t, &nt));
    DL_TRY(order(s));
    DL_NCCL_CHECK(ncclBroadcast(buf, buf, count, nt, root, s->comm, s->stream));
    return run_and_wait(s);
}

extern "C" dl_status dl_nccl_allgather_(void *state, const void *send, void *recv, size_t count, dl_dtype t)
{
    nccl_state *s = (nccl_state *)state;
    ncclDataType_t nt = ncclFloat32;
    DL_TRY(nccl_type(t, &nt));
    DL_TRY(order(s));
    DL_NCCL_CHECK(ncclAllGather(send, recv, count, nt, s->comm, s->stream));
    return run_and_wait(s);
}

extern "C" dl_status dl_nccl_sendrecv_(void *state, const void *send, size_t send_count, int dst, void *recv,
                                       size_t recv_count, int src, dl_dtype t)
{
    nccl_state *s = (nccl_state *)state;
    ncclDataType_t nt = ncclFloat32;
    DL_TRY(nccl_type(t, &nt));
    DL_TRY(order(s));
    DL_NCCL_CHECK(ncclGroupStart());
    DL_NCCL_CHECK(ncclSend(send, send_count, nt, dst, s->comm, s->stream));
    DL_NCCL_CHECK(ncclRecv(recv, recv_count, nt, src, s->comm, s->stream));
    DL_NCCL_CHECK(ncclGroupEnd());
    return run_and_wait(s);
}
