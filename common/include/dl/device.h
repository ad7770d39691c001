/* dl/device.h — where memory lives and where work runs: CPU or one CUDA GPU.
 *
 * Contract
 * - A dl_device is opened from a spec: "auto", "cpu", "cuda" or "cuda:N",
 *   parsed once (dl_device_parse: a flag's value is checked when the flags
 *   are, dl/cli.h) into a dl_device_spec and opened from it
 *   (dl_device_open_spec). dl_device_open(text, dev) does both; its NULL or
 *   "" means dl_device_env(): the DL_DEVICE environment variable, else
 *   "auto" — the one place the kit reads DL_DEVICE.
 *   "auto" picks CUDA when the library was built with it *and* a GPU answers,
 *   else the CPU. "cuda" when no GPU answers fails with DL_ERR_NO_DEVICE (or
 *   DL_ERR_NO_CUDA in a build without CUDA) and a message that says why.
 * - On the CPU a device pointer is a host pointer: dl_malloc is malloc, copies
 *   are memcpy, streams and events are trivial (events read the host clock).
 * - On CUDA every call goes to the device's compute stream unless a stream is
 *   given. dl_memcpy_h2d/d2d are asynchronous; dl_memcpy_d2h waits for the
 *   copy, so the host may read the result when it returns.
 * - Every function returns DL_OK or a failure status with dl_last_error() set;
 *   on failure outputs are left untouched (dl_malloc leaves *p NULL).
 * - A CUDA context does not survive fork(): open CUDA devices only in the
 *   process that uses them (in the grader: inside a test, not in main).
 * - Counters (dl_dev_stats): what this process asked of its devices — copies
 *   each way, host waits, launches, allocations. They are counted in the
 *   backend-neutral layer, before the CPU/CUDA branch, so the CPU backend
 *   counts exactly what the same calls would do on a GPU: a CPU run shows
 *   whether a program re-uploads its data every epoch or waits for the
 *   device every step, and `make test` asserts it without a GPU.
 */
#ifndef DL_DEVICE_H
#define DL_DEVICE_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_device_kind { DL_DEVICE_CPU = 0, DL_DEVICE_CUDA = 1 } dl_device_kind;

typedef struct dl_device {
    dl_device_kind kind;
    int ordinal; /* CUDA device index; 0 on the CPU */
    void *stream; /* cudaStream_t of the compute stream; NULL on the CPU */
    void *blas; /* cublasHandle_t bound to that stream; NULL on the CPU */
    char name[256]; /* "cpu" or the GPU's name */
    int cc_major, cc_minor; /* compute capability; 0 on the CPU */
} dl_device;

/* A stream handle (cudaStream_t); NULL means the device's compute stream. */
typedef void *dl_stream;

/* 1 when the library was built with CUDA (DL_HAVE_CUDA). Cannot fail. */
int dl_built_with_cuda(void);

/* Number of CUDA GPUs that answer; 0 without CUDA or without a driver.
 * Initialises CUDA in the calling process. Cannot fail. */
int dl_cuda_device_count(void);

/* Versions as "13.0" strings ("none" when absent). Cannot fail. */
const char *dl_cuda_runtime_version(void);
const char *dl_cuda_driver_version(void);
/* NCCL's version ("2.28.3") when built with NCCL, else "none". Cannot fail. */
const char *dl_nccl_version(void);

/* A device as a flag names it, parsed. */
typedef struct dl_device_spec {
    dl_device_kind kind; /* DL_DEVICE_CPU for "auto" too */
    int ordinal; /* cuda:N's N; 0 otherwise */
    int is_auto; /* "auto": CUDA when built with it and a GPU answers, else the CPU */
    int any_gpu; /* "cuda" without :N: GPU 0, or the rank's own (dl/rank.h) */
} dl_device_spec;

/* The default device spec: DL_DEVICE when set and not empty, else "auto". */
const char *dl_device_env(void);
/* Parses text ("auto", "cpu", "cuda", "cuda:N"; NULL or "": "auto") without
 * opening anything; DL_ERR_ARG naming the text and what was expected. */
dl_status dl_device_parse(const char *text, dl_device_spec *spec);
dl_status dl_device_open_spec(const dl_device_spec *spec, dl_device *dev);
/* dl_device_parse then dl_device_open_spec; NULL or "": dl_device_env(). */
dl_status dl_device_open(const char *text, dl_device *dev);
/* A CPU device that is always open (for host-only code such as CPU losses). */
const dl_device *dl_cpu(void);
void dl_device_close(dl_device *dev);
/* "cpu" or "cuda:0 (NVIDIA H200, sm_90)". Cannot fail. */
const char *dl_device_describe(const dl_device *dev);

/* Waits for all work queued on the device's compute stream. */
dl_status dl_device_sync(const dl_device *dev);

// ---- memory ----
dl_status dl_malloc(const dl_device *dev, void **p, size_t bytes);
void dl_free(const dl_device *dev, void *p); /* NULL is fine */
dl_status dl_memcpy_h2d(const dl_device *dev, void *dst, const void *src, size_t bytes);
dl_status dl_memcpy_d2h(const dl_device *dev, void *dst, const void *src, size_t bytes);
dl_status dl_memcpy_d2d(const dl_device *dev, void *dst, const void *src, size_t bytes);
dl_status dl_memset0(const dl_device *dev, void *p, size_t bytes);
/* Host memory a device copies from without the host waiting: page-locked on
 * CUDA (cudaMallocHost), plain memory on the CPU. dl_host_free(dev, NULL) is
 * fine. DL_ERR_NOMEM (or the device's status) leaves *p NULL. */
dl_status dl_host_alloc(const dl_device *dev, void **p, size_t bytes);
void dl_host_free(const dl_device *dev, void *p);
/* Queues a copy from host memory of dl_host_alloc to the device on its
 * compute stream and returns: the host does not wait (on the CPU it is a
 * memcpy). src must stay unchanged until the device has run the copy — an
 * event recorded after it has completed, or any later host wait on the
 * stream. Counted as an upload (h2d), not as a wait. */
dl_status dl_memcpy_h2d_async(const dl_device *dev, void *dst, const void *src, size_t bytes);

// ---- streams ----
dl_status dl_stream_create(const dl_device *dev, dl_stream *s);
void dl_stream_destroy(const dl_device *dev, dl_stream s);
dl_status dl_stream_sync(const dl_device *dev, dl_stream s);

// ---- events ----
typedef struct dl_event {
    void *ev; /* cudaEvent_t on CUDA */
    double t_host; /* host clock at record time on the CPU */
} dl_event;

dl_status dl_event_create(const dl_device *dev, dl_event *e);
void dl_event_destroy(const dl_device *dev, dl_event *e);
dl_status dl_event_record(const dl_device *dev, dl_event *e, dl_stream s);
/* Makes stream s wait until e has completed (no host wait). */
dl_status dl_stream_wait_event(const dl_device *dev, dl_stream s, const dl_event *e);
dl_status dl_event_sync(const dl_device *dev, const dl_event *e);
/* 1 when e has completed (or was never recorded), 0 while the device has not
 * reached it; never waits, counts nothing. Always 1 on the CPU. */
int dl_event_done(const dl_device *dev, const dl_event *e);
/* Milliseconds from a to b; both must have completed. */
dl_status dl_event_elapsed_ms(const dl_device *dev, const dl_event *a, const dl_event *b, float *ms);

// ---- counters ----

/* What this process asked of its devices since it started or since the last
 * dl_dev_stats_reset (all devices together; the CPU device counts too):
 *   h2d, d2h     dl_memcpy_h2d / dl_memcpy_d2h calls and their bytes;
 *   syncs        host waits for a device: dl_device_sync, dl_stream_sync,
 *                dl_event_sync, every dl_memcpy_d2h and dl_memcpy_h2d (host
 *                memory is pageable: the copy waits), and the library calls
 *                that read a result back (they count through dl_dev_count_sync);
 *   launches     work queued on a device: kernels, cuBLAS calls, device
 *                copies and memsets (dl_memcpy_d2d, dl_memset0);
 *   kernel_bytes bytes the element-wise kernels and device copies read and
 *                write (GEMMs count FLOPs in dl_flops instead);
 *   allocs       dl_malloc calls, and alloc_bytes their bytes.
 * Reading and resetting cannot fail; the counts are process-wide and atomic. */
typedef struct dl_dev_stats {
    uint64_t h2d_calls, h2d_bytes, d2h_calls, d2h_bytes;
    uint64_t syncs, launches, allocs, alloc_bytes;
    double kernel_bytes;
} dl_dev_stats;

void dl_dev_stats_get(dl_dev_stats *s);
void dl_dev_stats_reset(void);
/* For the library's own kernels (and a lab kit's): one launch that reads and
 * writes `bytes` bytes, counted before the CPU/CUDA branch. */
void dl_dev_count_launch(double bytes);
/* For a library call that reads a device result back (a host wait). */
void dl_dev_count_sync(void);
/* For an upload the CPU device skips because its data already is where the
 * model reads it (a host pointer is a device pointer there): counted as the
 * dl_memcpy_h2d a GPU makes. */
void dl_dev_count_upload(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* DL_DEVICE_H */
