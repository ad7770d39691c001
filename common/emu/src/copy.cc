/* copy.cc — cudaMemcpy(Async) and cudaMemset(Async) on the emulated CUDA
 * device: each pointer is looked up in the allocation table (memory.cc) and
 * the copy's kind must agree with where it lives; a range must fit its
 * allocation. Then CUDA's timing: a copy from pageable host memory is staged
 * at the call (the host may reuse its buffer at once), one into pageable
 * memory waits for the stream and copies before returning, the others run
 * in stream order. */
#include <stdlib.h> // malloc
#include <string.h> // memmove

#include "internal.h"

enum { LOC_HOST, LOC_PINNED, LOC_DEVICE, LOC_BAD };

static const char *const kind_names[] = {"cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
                                         "cudaMemcpyDeviceToDevice", "cudaMemcpyDefault"};

/* Where [p, p + n) lives; LOC_BAD (with why) when it starts inside an
 * allocation and runs past its end. */
static int locate(const void *p, size_t n, char *why, size_t wlen, const char *which)
{
    emu_alloc a;
    if (!emu_mem_find(p, &a) || ((const char *)p == a.p + a.bytes && n > 0))
        return LOC_HOST;
    size_t off = (size_t)((const char *)p - a.p);
    if (off + n > a.bytes) {
        snprintf(why, wlen, "the %s range %p + %zu bytes runs %zu bytes past the end of the %zu-byte %s allocation #%u",
                 which, p, n, off + n - a.bytes, a.bytes, a.pinned ? "page-locked" : "device", a.id);
        return LOC_BAD;
    }
    return a.pinned ? LOC_PINNED : LOC_DEVICE;
}

static const char *loc_name(int loc)
{
    return loc == LOC_DEVICE   ? "device memory (from cudaMalloc)"
           : loc == LOC_PINNED ? "page-locked host memory"
                               : "host memory";
}

typedef struct copy_op {
    void *dst;
    const void *src;
    size_t n;
    void *stage; /* the source, copied at the call */
    int value; /* memsets: the byte */
} copy_op;

static void run_copy(void *arg)
{
    copy_op *c = (copy_op *)arg;
    memmove(c->dst, c->stage != NULL ? c->stage : c->src, c->n);
}

static void run_set(void *arg)
{
    copy_op *c = (copy_op *)arg;
    memset(c->dst, c->value, c->n);
}

static void free_op(void *arg)
{
    copy_op *c = (copy_op *)arg;
    free(c->stage);
    free(c);
}

static cudaError_t copy(const char *call, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                        cudaStream_t stream)
{
    emu_dev_lock lock;
    cudaError_t e = emu_sticky();
    if (e != cudaSuccess)
        return emu_error(e, 0, NULL, NULL, "%s", "");
    if (emu_stream_check(stream, call) != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if ((unsigned)kind > cudaMemcpyDefault)
        return emu_error(cudaErrorInvalidMemcpyDirection, EMU_BAD_COPY, call, "", "%s: kind %d is not a cudaMemcpyKind",
                         call, (int)kind);
    if (count == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, call, "", "%s: a NULL %s", call,
                         dst == NULL ? "destination" : "source");
    char why[400] = "";
    int ld = locate(dst, count, why, sizeof why, "destination");
    int ls = ld == LOC_BAD ? LOC_HOST : locate(src, count, why, sizeof why, "source");
    if (ld == LOC_BAD || ls == LOC_BAD)
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, call, "", "%s of %zu bytes (%s): %s", call, count,
                         kind_names[kind], why);
    int want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind != cudaMemcpyDefault && ((ld == LOC_DEVICE) != want_dst || (ls == LOC_DEVICE) != want_src)) {
        int bad_dst = (ld == LOC_DEVICE) != want_dst;
        return emu_error(cudaErrorInvalidMemcpyDirection, EMU_BAD_COPY, call, "",
                         "%s with %s: the %s %p is %s, not %s: a copy in the wrong direction", call, kind_names[kind],
                         bad_dst ? "destination" : "source", bad_dst ? dst : src, loc_name(bad_dst ? ld : ls),
                         (bad_dst ? want_dst : want_src) ? "device memory" : "host memory");
    }
    copy_op *op = (copy_op *)calloc(1, sizeof *op);
    if (op == NULL)
        return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL, "%s: out of host memory", call);
    op->dst = dst;
    op->src = src;
    op->n = count;
    if (ld == LOC_HOST || (ld == LOC_PINNED && ls == LOC_HOST)) {
        // into pageable memory, or pageable to page-locked: the host waits and copies
        e = emu_wait_point(stream);
        if (e == cudaSuccess)
            run_copy(op);
        free_op(op);
        return e == cudaSuccess ? cudaSuccess : emu_error(e, 0, NULL, NULL, "%s", "");
    }
    if (ls == LOC_HOST) { // from pageable memory: staged now, the buffer is the caller's again
        op->stage = malloc(count);
        if (op->stage == NULL) {
            free(op);
            return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL, "%s: out of host memory", call);
        }
        memcpy(op->stage, src, count);
    }
    return emu_enqueue(stream, run_copy, free_op, op);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy("cudaMemcpyAsync", dst, src, count, kind, stream);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    emu_dev_lock lock;
    cudaError_t e = copy("cudaMemcpy", dst, src, count, kind, 0);
    if (e != cudaSuccess)
        return e;
    e = emu_drain(0); // synchronous: done when it returns
    return e == cudaSuccess ? cudaSuccess : emu_error(e, 0, NULL, NULL, "%s", "");
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    emu_dev_lock lock;
    cudaError_t e = emu_sticky();
    if (e != cudaSuccess)
        return emu_error(e, 0, NULL, NULL, "%s", "");
    if (emu_stream_check(stream, "cudaMemsetAsync") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if (count == 0)
        return cudaSuccess;
    char why[400] = "";
    int l = devPtr == NULL ? LOC_HOST : locate(devPtr, count, why, sizeof why, "destination");
    if (l == LOC_BAD)
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, "cudaMemset", "", "cudaMemset of %zu bytes: %s", count,
                         why);
    if (l == LOC_HOST)
        return emu_error(cudaErrorInvalidValue, EMU_BAD_COPY, "cudaMemset", "",
                         "cudaMemset(%p, %d, %zu): %s is not device memory", devPtr, value, count,
                         devPtr == NULL ? "NULL" : "the pointer");
    copy_op *op = (copy_op *)calloc(1, sizeof *op);
    if (op == NULL)
        return emu_error(cudaErrorMemoryAllocation, 0, NULL, NULL, "cudaMemset: out of host memory");
    op->dst = devPtr;
    op->n = count;
    op->value = value & 0xff;
    return emu_enqueue(stream, run_set, free_op, op);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return cudaMemsetAsync(devPtr, value, count, 0); // queued: asynchronous for device memory, as CUDA's
}
