/* device_cuda.cu — the CUDA backend of dl/device.h: devices, memory, streams,
 * events, and the check-macro helpers. Built when nvcc is found, and for the
 * emulated CUDA device (EMU=1, DL_CUDA_EMU: common/emu), where the same calls
 * reach the emulator's runtime and its cuBLAS runs on the kit's CPU BLAS. */
#include <cublas_v2.h> // cublasCreate, cublasSetStream
#include <cuda_runtime.h> // cudaGetDeviceCount, cudaMallocAsync, ...
#include <dlfcn.h> // dlopen, dlsym: cuBLAS on first use
#include <pthread.h> // pthread_once
#include <stdio.h> // snprintf, fprintf

#ifdef DL_HAVE_NCCL
#include <nccl.h> // ncclGetVersion
#endif

#include "../backend.h" // dl_cuda_*_
#include "dl/cuda_check.h" // DL_CUDA_CHECK, DL_CUBLAS_CHECK

#ifdef DL_CUDA_EMU
// ---- cuBLAS on the emulated device: the emulator's, its GEMMs on the kit's CPU BLAS ----
#include <emu/emu.h> // emu_set_sgemm, emu_workers

#include "../blas_cpu.h" // blas_cpu_sgemm (row-major)

/* cuBLAS's column-major GEMM on the kit's row-major one: blas_cuda.cu's
 * transpose identity the other way round (a column-major X is the row-major
 * Xᵀ with the same leading dimension, so C = op(A)·op(B) column-major is
 * Cᵀ = op(B)ᵀ·op(A)ᵀ row-major, with the same flags). */
static void sgemm_on_cpu_blas(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                              int ldb, float beta, float *C, int ldc)
{
    blas_cpu_sgemm(tb, ta, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
}

extern "C" int dl_cuda_emulated_(void)
{
    return 1;
}
#else
extern "C" int dl_cuda_emulated_(void)
{
    return 0;
}

// ---- cuBLAS, loaded on first use ----
// The kit's cuBLAS calls (here and in blas_cuda.cu) reach the library through
// these definitions of its functions, which open it (dlopen) the first time a
// program calls one: a program that never opens a GPU never loads it. Loading
// libcublasLt costs about 0.1 s of CPU (its initialisers) in every process,
// every rank of every job, where most of them only compute on the CPU. The
// executables link -lcublas --as-needed: only code that calls another cuBLAS
// function (a student's .cu file may) brings the library in at start-up again.
// Each definition is one of a C function the header declares, so the compiler
// holds it to cuBLAS's signature (another would conflict), and its pointer too.

#ifndef DL_CUBLAS_SO
#define DL_CUBLAS_SO "libcublas.so"
#endif

static void *cublas_lib;
static pthread_once_t cublas_once = PTHREAD_ONCE_INIT;
static void cublas_open(void)
{
    cublas_lib = dlopen(DL_CUBLAS_SO, RTLD_NOW | RTLD_LOCAL);
    if (cublas_lib == NULL)
        fprintf(stderr, "ddplab: cannot load cuBLAS (%s): %s\n", DL_CUBLAS_SO, dlerror());
}

template <typename F> static F *cublas_fn(F *&f, const char *name)
{
    if (f == NULL) {
        pthread_once(&cublas_once, cublas_open);
        if (cublas_lib != NULL)
            f = (F *)dlsym(cublas_lib, name);
    }
    return f;
}

#define DL_CUBLAS_LAZY(name, params, args)                                           \
    extern "C" cublasStatus_t CUBLASWINAPI name params                               \
    {                                                                                \
        static cublasStatus_t(CUBLASWINAPI *f) params;                               \
        return cublas_fn(f, #name) != NULL ? f args : CUBLAS_STATUS_NOT_INITIALIZED; \
    }
DL_CUBLAS_LAZY(cublasCreate_v2, (cublasHandle_t * handle), (handle))
DL_CUBLAS_LAZY(cublasDestroy_v2, (cublasHandle_t handle), (handle))
DL_CUBLAS_LAZY(cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t streamId), (handle, streamId))
DL_CUBLAS_LAZY(cublasSgemm_v2,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
                int ldc),
               (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
DL_CUBLAS_LAZY(cublasSgemv_v2,
               (cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha, const float *A,
                int lda, const float *x, int incx, const float *beta, float *y, int incy),
               (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
DL_CUBLAS_LAZY(cublasGemmEx,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B, cudaDataType Btype,
                int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                cublasGemmAlgo_t algo),
               (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType,
                algo))

extern "C" const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    static decltype(cublasGetStatusString) *f;
    return cublas_fn(f, "cublasGetStatusString") != NULL ? f(status) : "cuBLAS could not be loaded";
}
#endif // DL_CUDA_EMU

// ---- error reporting ----

extern "C" const char *dl_cublas_error_string(cublasStatus_t st)
{
    return cublasGetStatusString(st);
}

extern "C" dl_status dl_cuda_fail_(dl_status st, const char *file, int line, const char *call, const char *err)
{
    dl_error_set(st, "%s:%d: %s failed: %s", file, line, call, err);
    fprintf(stderr, "%s\n", dl_last_error());
    return st;
}

// ---- host waits, watched ----

static dl_cuda_watch_fn watch_fn;
static void *watch_ctx;

extern "C" void dl_cuda_set_watch_(dl_cuda_watch_fn watch, void *ctx)
{
    watch_fn = watch;
    watch_ctx = ctx;
}

extern "C" dl_status dl_cuda_host_wait_(void *stream, const char *what)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (watch_fn == NULL) {
        DL_CUDA_CHECK(cudaStreamSynchronize(s));
        return DL_OK;
    }
    for (long polls = 0;; polls++) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess)
            return DL_OK;
        if (e != cudaErrorNotReady)
            DL_CUDA_CHECK(e);
        watch_fn(watch_ctx, what, polls == 0); // stops the job when a peer is gone or the timeout is spent
    }
}

// ---- devices ----

extern "C" int dl_cuda_count_(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        // (without an NVIDIA driver the runtime says its driver is "insufficient": it means none loaded)
        dl_error_set(DL_ERR_NO_DEVICE, "%s (the CUDA runtime: %s)",
                     e == cudaErrorInsufficientDriver ? "no NVIDIA driver is loaded, or one older than this CUDA"
                     : e == cudaErrorNoDevice         ? "the driver sees no GPU"
                                                      : "the CUDA runtime does not start",
                     cudaGetErrorString(e));
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return 0;
    }
    return n;
}

extern "C" int dl_cuda_is_device_ptr_(const void *p)
{
    cudaPointerAttributes a;
    if (p == NULL || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); // an unknown host pointer is not an error worth keeping
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

extern "C" void dl_cuda_versions_(char *runtime, char *driver, size_t len)
{
    int rv = 0, dv = 0;
#ifdef DL_CUDA_EMU
    const char *how = " (emulated)"; // the CUDA API the emulator follows; it has no driver
#else
    const char *how = "";
#endif
    if (cudaRuntimeGetVersion(&rv) == cudaSuccess)
        snprintf(runtime, len, "%d.%d%s", rv / 1000, (rv % 1000) / 10, how);
    else
        snprintf(runtime, len, "none");
    if (cudaDriverGetVersion(&dv) == cudaSuccess && dv > 0)
        snprintf(driver, len, "%d.%d", dv / 1000, (dv % 1000) / 10);
    else
        snprintf(driver, len, "none");
}

extern "C" void dl_nccl_version_(char *out, size_t len)
{
#ifdef DL_HAVE_NCCL
    int v = 0;
    if (ncclGetVersion(&v) == ncclSuccess) {
        // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
#ifdef DL_CUDA_EMU
        snprintf(out, len, "%d.%d.%d (emulated)", v / 10000, (v / 100) % 100, v % 100);
#else
        snprintf(out, len, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
#endif
        return;
    }
#endif
    snprintf(out, len, "none");
}

extern "C" dl_status dl_cuda_open_(int ordinal, dl_device *dev)
{
    cudaDeviceProp prop;
    DL_CUDA_CHECK(cudaSetDevice(ordinal));
    DL_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
#ifdef DL_CUDA_EMU
    emu_set_sgemm(sgemm_on_cpu_blas);
#endif
    cudaStream_t stream;
    DL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t handle;
    cublasStatus_t bs = cublasCreate(&handle);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasSetStream(handle, stream);
    else
        handle = NULL;
    if (bs != CUBLAS_STATUS_SUCCESS) { // named: DL_CUBLAS_CHECK(bs) would say "bs failed"
        if (handle != NULL)
            cublasDestroy(handle);
        cudaStreamDestroy(stream);
        return dl_cuda_fail_(DL_ERR_CUBLAS, __FILE__, __LINE__, "cublasCreate + cublasSetStream",
                             dl_cublas_error_string(bs));
    }
    dev->kind = DL_DEVICE_CUDA;
    dev->ordinal = ordinal;
    dev->stream = (void *)stream;
    dev->blas = (void *)handle;
    dev->cc_major = prop.major;
    dev->cc_minor = prop.minor;
#ifdef DL_CUDA_EMU
    dev->emulated = 1;
    snprintf(dev->name, sizeof dev->name, "emulated CUDA, ddplab, %d worker thread%s", emu_workers(),
             emu_workers() == 1 ? "" : "s");
#else
    snprintf(dev->name, sizeof dev->name, "%s", prop.name);
#endif
    return DL_OK;
}

extern "C" void dl_cuda_close_(dl_device *dev)
{
    if (dev->blas != NULL)
        cublasDestroy((cublasHandle_t)dev->blas);
    if (dev->stream != NULL) {
        cudaStreamSynchronize((cudaStream_t)dev->stream);
        cudaStreamDestroy((cudaStream_t)dev->stream);
    }
    dev->blas = NULL;
    dev->stream = NULL;
}

static cudaStream_t stream_of(const dl_device *dev, dl_stream s)
{
    return s != NULL ? (cudaStream_t)s : (cudaStream_t)dev->stream;
}

extern "C" dl_status dl_cuda_sync_(const dl_device *dev)
{
    return dl_cuda_host_wait_(dev->stream, "a wait for the device");
}

// ---- memory ----

extern "C" dl_status dl_cuda_malloc_(const dl_device *dev, void **p, size_t bytes)
{
    (void)dev;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = NULL;
        cudaGetLastError();
        return dl_error_set(e == cudaErrorMemoryAllocation ? DL_ERR_NOMEM : DL_ERR_CUDA,
                            "cudaMalloc(%zu bytes) failed: %s", bytes, cudaGetErrorString(e));
    }
    return DL_OK;
}

extern "C" void dl_cuda_free_(const dl_device *dev, void *p)
{
    // The stream may still use p, and cudaFree waits for the whole device: wait
    // here first, under the watch, so that a peer gone in a collective the
    // stream waits for stops the job instead of hanging it in cudaFree. Quietly:
    // a free after a failure must not replace its message.
    cudaStream_t s = (cudaStream_t)dev->stream;
    for (long polls = 0; watch_fn != NULL && cudaStreamQuery(s) == cudaErrorNotReady; polls++)
        watch_fn(watch_ctx, "a wait before freeing device memory", polls == 0);
    cudaStreamSynchronize(s);
    cudaFree(p);
}

extern "C" dl_status dl_cuda_memcpy_(const dl_device *dev, void *dst, const void *src, size_t bytes, int kind)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    cudaMemcpyKind k = kind == DL_COPY_H2D   ? cudaMemcpyHostToDevice
                       : kind == DL_COPY_D2H ? cudaMemcpyDeviceToHost
                                             : cudaMemcpyDeviceToDevice;
    // Into pageable memory cudaMemcpyAsync returns only once the copy is done,
    // so it waits for the stream itself, where no watch can see: wait first
    // (the same wait, watched), then copy from an idle stream.
    if (kind == DL_COPY_D2H && watch_fn != NULL)
        DL_TRY(dl_cuda_host_wait_(s, "a copy from the device"));
    DL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, k, s));
    if (kind == DL_COPY_D2H || kind == DL_COPY_H2D) // host memory is pageable: wait for it
        return dl_cuda_host_wait_(s, kind == DL_COPY_D2H ? "a copy from the device" : "a copy to the device");
    return DL_OK;
}

extern "C" dl_status dl_cuda_memset0_(const dl_device *dev, void *p, size_t bytes)
{
    DL_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)dev->stream));
    return DL_OK;
}

extern "C" dl_status dl_cuda_host_alloc_(void **p, size_t bytes)
{
    cudaError_t e = cudaMallocHost(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = NULL;
        cudaGetLastError();
        return dl_error_set(e == cudaErrorMemoryAllocation ? DL_ERR_NOMEM : DL_ERR_CUDA,
                            "cudaMallocHost(%zu bytes) failed: %s", bytes, cudaGetErrorString(e));
    }
    return DL_OK;
}

extern "C" void dl_cuda_host_free_(void *p)
{
    cudaFreeHost(p);
}

extern "C" dl_status dl_cuda_memcpy_async_(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    DL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)dev->stream));
    return DL_OK;
}

// ---- streams ----

extern "C" dl_status dl_cuda_stream_create_(const dl_device *dev, dl_stream *s)
{
    (void)dev;
    cudaStream_t st;
    DL_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *s = (dl_stream)st;
    return DL_OK;
}

extern "C" void dl_cuda_stream_destroy_(const dl_device *dev, dl_stream s)
{
    (void)dev;
    cudaStreamDestroy((cudaStream_t)s);
}

extern "C" dl_status dl_cuda_stream_sync_(const dl_device *dev, dl_stream s)
{
    return dl_cuda_host_wait_(stream_of(dev, s), "a wait for a stream");
}

// ---- events ----

extern "C" dl_status dl_cuda_event_create_(const dl_device *dev, dl_event *e)
{
    (void)dev;
    cudaEvent_t ev;
    DL_CUDA_CHECK(cudaEventCreate(&ev));
    e->ev = (void *)ev;
    return DL_OK;
}

extern "C" void dl_cuda_event_destroy_(const dl_device *dev, dl_event *e)
{
    (void)dev;
    cudaEventDestroy((cudaEvent_t)e->ev);
}

extern "C" dl_status dl_cuda_event_record_(const dl_device *dev, dl_event *e, dl_stream s)
{
    DL_CUDA_CHECK(cudaEventRecord((cudaEvent_t)e->ev, stream_of(dev, s)));
    return DL_OK;
}

extern "C" dl_status dl_cuda_stream_wait_event_(const dl_device *dev, dl_stream s, const dl_event *e)
{
    DL_CUDA_CHECK(cudaStreamWaitEvent(stream_of(dev, s), (cudaEvent_t)e->ev, 0));
    return DL_OK;
}

extern "C" dl_status dl_cuda_event_sync_(const dl_device *dev, const dl_event *e)
{
    (void)dev;
    if (watch_fn == NULL) {
        DL_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)e->ev));
        return DL_OK;
    }
    for (long polls = 0;; polls++) { // as dl_cuda_host_wait_, for an event
        cudaError_t q = cudaEventQuery((cudaEvent_t)e->ev);
        if (q == cudaSuccess)
            return DL_OK;
        if (q != cudaErrorNotReady)
            DL_CUDA_CHECK(q);
        watch_fn(watch_ctx, "a wait for an event", polls == 0);
    }
}

extern "C" int dl_cuda_event_done_(const dl_device *dev, const dl_event *e)
{
    (void)dev;
    // an error is not "not yet": it shows at the next call that waits
    return cudaEventQuery((cudaEvent_t)e->ev) != cudaErrorNotReady;
}

extern "C" dl_status dl_cuda_event_elapsed_(const dl_device *dev, const dl_event *a, const dl_event *b, float *ms)
{
    (void)dev;
    DL_CUDA_CHECK(cudaEventElapsedTime(ms, (cudaEvent_t)a->ev, (cudaEvent_t)b->ev));
    return DL_OK;
}
