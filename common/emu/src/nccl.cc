/* nccl.cc — NCCL on the emulated CUDA device: communicators of one rank
 * (copies), or of several over the kit's transport table (emu/emu.h). An
 * operation runs when issued (or at ncclGroupEnd), after its stream has run
 * what came before it, on the calling thread. */
#include <nccl.h>
#include <pthread.h> // pthread_mutex_t
#include <stdarg.h> // va_list
#include <stdlib.h> // calloc
#include <string.h> // memmove
#include <time.h> // clock_gettime
#include <vector> // std::vector

#include "internal.h"

struct ncclComm {
    int nranks, rank;
    emu_nccl_transport t; /* t.ctx NULL: one rank, no transport */
    ncclResult_t async; /* the first failure, for ncclCommGetAsyncError */
    char err[1024];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static emu_nccl_transport transport;
static int has_transport;
static __thread char last_err[1024];

int emu_nccl_set_transport(const emu_nccl_transport *t)
{
    if (t != NULL && (t->allreduce == NULL || t->broadcast == NULL || t->allgather == NULL || t->sendrecv == NULL))
        return -1;
    pthread_mutex_lock(&mu);
    has_transport = t != NULL;
    if (t != NULL)
        transport = *t;
    pthread_mutex_unlock(&mu);
    return 0;
}

size_t emu_nccl_type_size(int t)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
    return t >= 0 && t < ncclNumTypes ? sizes[t] : 0;
}

static ncclResult_t fail(ncclResult_t r, int kind, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ncclResult_t fail(ncclResult_t r, int kind, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
    if (kind != 0)
        emu_finding_add(kind, call, "", last_err);
    return r;
}

// ---- operations ----

enum { OP_ALLREDUCE, OP_BROADCAST, OP_ALLGATHER, OP_SEND, OP_RECV };

typedef struct nccl_op {
    int kind;
    const void *send;
    void *recv;
    size_t count;
    ncclDataType_t type;
    int arg; /* the reduction, the root or the peer */
    ncclComm_t comm;
    cudaStream_t stream;
} nccl_op;

static __thread int group_depth;
static thread_local std::vector<nccl_op> group;

/* Device memory for count elements from p, or a message in last_err. */
static int device_range(const char *call, const char *name, const void *p, size_t bytes)
{
    emu_alloc a;
    if (bytes == 0)
        return 1;
    if (p == NULL || !emu_mem_find(p, &a) || a.pinned || (const char *)p == a.p + a.bytes) {
        fail(ncclInvalidArgument, EMU_HOST_POINTER, call,
             "%s: %s = %p is not device memory (NCCL needs device buffers)", call, name, p);
        return 0;
    }
    if ((size_t)((const char *)p - a.p) + bytes > a.bytes) {
        fail(ncclInvalidArgument, EMU_OUT_OF_BOUNDS, call,
             "%s: %s = %p + %zu bytes runs past the end of its %zu-byte device allocation (#%u)", call, name, p, bytes,
             a.bytes, a.id);
        return 0;
    }
    return 1;
}

static const char *const names[] = {"ncclAllReduce", "ncclBroadcast", "ncclAllGather", "ncclSend", "ncclRecv"};

/* One operation, or a send and a receive together (recv_op may be NULL). */
static ncclResult_t execute(const nccl_op *o, const nccl_op *pair)
{
    ncclComm_t c = o->comm;
    cudaError_t e;
    { // the streams run up to here; the transport then runs without the device lock, which another
        // host thread of this process (another rank) may need to reach the same collective
        emu_dev_lock lock;
        e = emu_wait_point(o->stream);
        if (pair != NULL && e == cudaSuccess)
            e = emu_wait_point(pair->stream);
    }
    if (e != cudaSuccess)
        return fail(ncclUnhandledCudaError, 0, names[o->kind], "%s: %s", names[o->kind], cudaGetErrorString(e));
    size_t es = emu_nccl_type_size(o->type), bytes = o->count * es;
    const nccl_op *s = o->kind == OP_SEND ? o : pair, *r = o->kind == OP_RECV ? o : pair;
    if (c->t.allreduce == NULL) { // one rank: the result is the input
        if (o->kind == OP_ALLREDUCE || o->kind == OP_BROADCAST || o->kind == OP_ALLGATHER) {
            memmove(o->recv, o->send, bytes);
            return ncclSuccess;
        }
        if (s == NULL || r == NULL || s->count != r->count)
            return fail(ncclInvalidUsage, 0, names[o->kind],
                        "%s with one rank: a send to itself needs a receive of as many elements in the same group",
                        names[o->kind]);
        memmove(r->recv, s->send, s->count * emu_nccl_type_size(s->type));
        return ncclSuccess;
    }
    char err[512] = "";
    int bad = 0;
    switch (o->kind) {
    case OP_ALLREDUCE:
        bad = c->t.allreduce(c->t.ctx, o->send, o->recv, o->count, o->type, o->arg, err, sizeof err);
        break;
    case OP_BROADCAST:
        bad = c->t.broadcast(c->t.ctx, o->send, o->recv, o->count, o->type, o->arg, err, sizeof err);
        break;
    case OP_ALLGATHER:
        bad = c->t.allgather(c->t.ctx, o->send, o->recv, o->count, o->type, err, sizeof err);
        break;
    default:
        bad = c->t.sendrecv(c->t.ctx, s ? s->send : NULL, s ? s->count : 0, s ? s->arg : -1, r ? r->recv : NULL,
                            r ? r->count : 0, r ? r->arg : -1, o->type, err, sizeof err);
    }
    if (!bad)
        return ncclSuccess;
    if (c->async == ncclSuccess) {
        c->async = ncclSystemError;
        snprintf(c->err, sizeof c->err, "%s: the transport failed: %s", names[o->kind], err);
    }
    return fail(ncclSystemError, 0, names[o->kind], "%s: the transport failed: %s", names[o->kind], err);
}

static ncclResult_t issue(int kind, const void *send, void *recv, size_t count, ncclDataType_t type, int arg,
                          ncclComm_t comm, cudaStream_t stream)
{
    const char *call = names[kind];
    size_t es = emu_nccl_type_size(type);
    if (comm == NULL)
        return fail(ncclInvalidArgument, 0, call, "%s: comm is NULL", call);
    if (es == 0)
        return fail(ncclInvalidArgument, 0, call, "%s: unknown data type %d", call, (int)type);
    if (kind == OP_ALLREDUCE && (arg < 0 || arg >= ncclNumOps))
        return fail(ncclInvalidArgument, 0, call, "%s: unknown reduction %d", call, arg);
    if ((kind != OP_ALLREDUCE && kind != OP_ALLGATHER) && (arg < 0 || arg >= comm->nranks))
        return fail(ncclInvalidArgument, 0, call, "%s: rank %d of a communicator of %d", call, arg, comm->nranks);
    if (emu_stream_check(stream, call) != cudaSuccess)
        return fail(ncclInvalidArgument, 0, call, "%s: the stream is not live", call);
    size_t in = kind == OP_RECV ? 0 : count * es;
    size_t out = kind == OP_SEND ? 0 : kind == OP_ALLGATHER ? count * es * (size_t)comm->nranks : count * es;
    if ((kind != OP_BROADCAST || comm->rank == arg) && !device_range(call, "sendbuff", send, in))
        return ncclInvalidArgument;
    if (!device_range(call, "recvbuff", recv, out))
        return ncclInvalidArgument;
    nccl_op o = {kind, send, recv, count, type, arg, comm, stream};
    if (group_depth > 0) {
        group.push_back(o);
        return ncclSuccess;
    }
    return execute(&o, NULL);
}

// ---- the API ----

ncclResult_t ncclGetVersion(int *version)
{
    if (version == NULL)
        return fail(ncclInvalidArgument, 0, "ncclGetVersion", "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (id == NULL)
        return fail(ncclInvalidArgument, 0, "ncclGetUniqueId", "ncclGetUniqueId: uniqueId is NULL");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "ddplab-emu-nccl %ld.%09ld", (long)ts.tv_sec, ts.tv_nsec);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    (void)commId;
    if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks)
        return fail(ncclInvalidArgument, 0, "ncclCommInitRank", "ncclCommInitRank: rank %d of %d ranks", rank, nranks);
    ncclComm *c = (ncclComm *)calloc(1, sizeof *c);
    if (c == NULL)
        return fail(ncclSystemError, 0, "ncclCommInitRank", "ncclCommInitRank: out of memory");
    c->nranks = nranks;
    c->rank = rank;
    if (nranks > 1) {
        pthread_mutex_lock(&mu);
        int ok = has_transport && transport.nranks == nranks && transport.rank == rank;
        if (ok)
            c->t = transport;
        pthread_mutex_unlock(&mu);
        if (!ok) {
            free(c);
            return fail(ncclInvalidUsage, EMU_UNSUPPORTED, "ncclCommInitRank",
                        "ncclCommInitRank: rank %d of %d: the emulated NCCL runs communicators of more than one rank "
                        "over the kit's transport (emu_nccl_set_transport), and %s",
                        rank, nranks, has_transport ? "its ranks differ" : "none was given");
        }
    }
    *comm = c;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (comm != NULL && comm->t.abort != NULL)
        comm->t.abort(comm->t.ctx);
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (comm == NULL || asyncError == NULL)
        return fail(ncclInvalidArgument, 0, "ncclCommGetAsyncError", "ncclCommGetAsyncError: NULL argument");
    *asyncError = comm->async;
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    if (comm == NULL || count == NULL)
        return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    if (comm == NULL || rank == NULL)
        return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    static const char *const text[] = {"no error",
                                       "unhandled cuda error",
                                       "unhandled system error",
                                       "internal error",
                                       "invalid argument",
                                       "invalid usage",
                                       "remote process exited or there was a network error",
                                       "NCCL operation in progress"};
    return (unsigned)r < ncclNumResults ? text[r] : "unknown result code";
}

const char *ncclGetLastError(ncclComm_t comm)
{
    return comm != NULL && comm->err[0] ? comm->err : last_err;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    return issue(OP_ALLREDUCE, sendbuff, recvbuff, count, datatype, (int)op, comm, stream);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    return issue(OP_BROADCAST, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
    return issue(OP_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, 0, comm, stream);
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    return issue(OP_SEND, sendbuff, NULL, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    return issue(OP_RECV, NULL, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return fail(ncclInvalidUsage, 0, "ncclGroupEnd", "ncclGroupEnd without ncclGroupStart");
    if (--group_depth > 0)
        return ncclSuccess;
    std::vector<nccl_op> ops;
    ops.swap(group);
    std::vector<char> done(ops.size(), 0);
    ncclResult_t r = ncclSuccess;
    for (size_t i = 0; i < ops.size() && r == ncclSuccess; i++) {
        if (done[i])
            continue;
        done[i] = 1;
        const nccl_op *pair = NULL; // a send goes with the group's next receive, and a receive with its next send
        int want = ops[i].kind == OP_SEND ? OP_RECV : ops[i].kind == OP_RECV ? OP_SEND : -1;
        for (size_t j = i + 1; want >= 0 && j < ops.size() && pair == NULL; j++)
            if (!done[j] && ops[j].kind == want && ops[j].comm == ops[i].comm) {
                done[j] = 1;
                pair = &ops[j];
            }
        r = execute(&ops[i], pair);
    }
    return r;
}
