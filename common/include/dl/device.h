/* dl/device.h — where memory lives and where work runs: CPU, one CUDA GPU, or
 * the emulated CUDA device.
 *
 * Contract
 * - A dl_device is opened from a spec: "auto", "cpu", "cuda", "cuda:N", "emu"
 *   or "emu:N", parsed once (dl_device_parse: a flag's value is checked when
 *   the flags are, dl/cli.h) into a dl_device_spec and opened from it
 *   (dl_device_open_spec). dl_device_open(text, dev) does both; its NULL or
 *   "" means dl_device_env(): the DL_DEVICE environment variable, else
 *   "auto" — the one place the kit reads DL_DEVICE.
 *   "auto" picks CUDA when the library was built with it *and* a GPU answers,
 *   else the CPU. "cuda" when no GPU answers fails with DL_ERR_NO_DEVICE (or
 *   DL_ERR_NO_CUDA in a build without CUDA) and a message that says why.
 * - The emulated CUDA device (common/emu/README.md) runs the kit's and the
 *   learner's .cu files on the CPU under CUDA's execution model, with checks
 *   a GPU does not make. It exists only in a build of its own (`make EMU=1`,
 *   build/emucuda/: dl_built_with_emu), whose CUDA backend it is: that build
 *   has no GPU (dl_cuda_device_count is 0 there), and a normal build has no
 *   emulated device. "emu" and "emu:N" open it there (N < DL_EMU_DEVICES,
 *   default 1: several ordinals so that ranks of one machine each open their
 *   own, as on GPUs); elsewhere dl_device_parse refuses them with DL_ERR_ARG
 *   and a message saying how to get that build. "auto" never picks it: in the
 *   emulated build "auto" is the CPU (the emulator checks code, it does not
 *   run it fast), and a GPU is "cuda" in a normal build. Its dl_device has
 *   kind DL_DEVICE_CUDA, so every CUDA path of the kit runs on it unchanged,
 *   and emulated = 1: dl_device_describe says "emu:N (emulated CUDA, ...)",
 *   and dl_device_is_gpu is 0 — speed measured there is the CPU's, never a
 *   GPU's (timings, projections "measured on a GPU", GPU-only speed items
 *   must ask dl_device_is_gpu, not kind).
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
    char name[256]; /* "cpu", the GPU's name, or "emulated CUDA, ddplab, N worker threads" */
    int cc_major, cc_minor; /* compute capability; 0 on the CPU */
    int emulated; /* 1: the emulated CUDA device (kind DL_DEVICE_CUDA, ordinal its emu:N); else 0 */
} dl_device;

/* A stream handle (cudaStream_t); NULL means the device's compute stream. */
typedef void *dl_stream;

/* 1 when the library was built with CUDA (DL_HAVE_CUDA): by nvcc, or for the
 * emulated device. Cannot fail. */
int dl_built_with_cuda(void);
/* 1 when the library's CUDA backend is the emulated device (EMU=1). Cannot fail. */
int dl_built_with_emu(void);

/* Number of CUDA GPUs that answer; 0 without CUDA or without a driver, and
 * in the emulated build. Initialises CUDA in the calling process. Cannot fail. */
int dl_cuda_device_count(void);
/* The emulated device's ordinals (DL_EMU_DEVICES, default 1) in the emulated
 * build; 0 elsewhere. Cannot fail. */
int dl_emu_device_count(void);
/* 1 when dev is a real GPU (kind DL_DEVICE_CUDA, not emulated): the device
 * whose speed a GPU's numbers may be read from. Cannot fail. */
int dl_device_is_gpu(const dl_device *dev);

/* Versions as "13.0" strings ("none" when absent). Cannot fail. */
const char *dl_cuda_runtime_version(void);
const char *dl_cuda_driver_version(void);
/* NCCL's version ("2.28.3") when built with NCCL, else "none". Cannot fail. */
const char *dl_nccl_version(void);

/* A device as a flag names it, parsed. */
typedef struct dl_device_spec {
    dl_device_kind kind; /* DL_DEVICE_CPU for "auto" too; DL_DEVICE_CUDA for "emu" */
    int ordinal; /* cuda:N's (emu:N's) N; 0 otherwise */
    int is_auto; /* "auto": CUDA when built with it and a GPU answers, else the CPU */
    int any_gpu; /* "cuda" ("emu") without :N: ordinal 0, or the rank's own (dl/rank.h) */
    int emu; /* "emu", "emu:N": the emulated CUDA device */
} dl_device_spec;

/* The default device spec: DL_DEVICE when set and not empty, else "auto". */
const char *dl_device_env(void);
/* Parses text ("auto", "cpu", "cuda", "cuda:N", "emu", "emu:N"; NULL or "":
 * "auto") without opening anything; DL_ERR_ARG naming the text and what was
 * expected, and for "emu" in a build without the emulated device how to get
 * one (make EMU=1). */
dl_status dl_device_parse(const char *text, dl_device_spec *spec);
dl_status dl_device_open_spec(const dl_device_spec *spec, dl_device *dev);
/* dl_device_parse then dl_device_open_spec; NULL or "": dl_device_env(). */
dl_status dl_device_open(const char *text, dl_device *dev);
/* A CPU device that is always open (for host-only code such as CPU losses). */
const dl_device *dl_cpu(void);
void dl_device_close(dl_device *dev);
/* "cpu", "cuda:0 (NVIDIA H200, sm_90)" or "emu:0 (emulated CUDA, ddplab, 2
 * worker threads)". Cannot fail. */
const char *dl_device_describe(const dl_device *dev);

/* "cpu", "cuda" (a GPU) or "emu" (the emulated CUDA device): what kind of
 * device ran, for summaries and logs a program reads. Cannot fail. */
const char *dl_device_kind_name(const dl_device *dev);

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
