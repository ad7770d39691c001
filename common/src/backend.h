/* backend.h — the CUDA backend's entry points, used by the neutral code.
 *
 * Implemented by the files in src/cuda/ when the library is built with CUDA and by
 * src/cuda_stub.c otherwise (every call then fails with DL_ERR_NO_CUDA), so no
 * caller needs an #ifdef. Arguments are validated by the neutral callers.
 * dl_comm's transports (MPI, NCCL) have their own header: comm_backend.h.
 */
#ifndef DL_BACKEND_H
#define DL_BACKEND_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t

#include "dl/blas.h" // dl_trans, dl_dtype
#include "dl/device.h" // dl_device, dl_event

#ifdef __cplusplus
extern "C" {
#endif

enum { DL_COPY_H2D = 0, DL_COPY_D2H = 1, DL_COPY_D2D = 2 };

/* Every host wait for a CUDA stream goes through dl_cuda_host_wait_: it
 * polls the stream and, while a watch is set (dl_comm sets one once NCCL is
 * bound), calls watch(ctx, what, first) between polls — first = 1 on the
 * wait's first call — which checks the communicator's errors and the
 * DL_COMM_TIMEOUT watchdog and stops the job itself when either fires (a
 * dead peer leaves a collective, and so the stream, unfinished forever).
 * Without a watch it is cudaStreamSynchronize. */
typedef void (*dl_cuda_watch_fn)(void *ctx, const char *what, int first);
void dl_cuda_set_watch_(dl_cuda_watch_fn watch, void *ctx);
dl_status dl_cuda_host_wait_(void *stream, const char *what);

/* 1 when this backend is the emulated CUDA device (common/emu, EMU=1):
 * the CUDA calls reach the emulator's runtime, and its devices are
 * dl_device.emulated; 0 for nvcc's backend and the stub. Cannot fail. */
int dl_cuda_emulated_(void);
/* The backend's devices: CUDA GPUs, or the emulated device's ordinals. */
int dl_cuda_count_(void);
/* 1 when p points to CUDA device (or managed) memory; 0 for host memory. */
int dl_cuda_is_device_ptr_(const void *p);
void dl_cuda_versions_(char *runtime, char *driver, size_t len);
void dl_nccl_version_(char *out, size_t len);
dl_status dl_cuda_open_(int ordinal, dl_device *dev);
void dl_cuda_close_(dl_device *dev);
dl_status dl_cuda_sync_(const dl_device *dev);
dl_status dl_cuda_malloc_(const dl_device *dev, void **p, size_t bytes);
void dl_cuda_free_(const dl_device *dev, void *p);
dl_status dl_cuda_memcpy_(const dl_device *dev, void *dst, const void *src, size_t bytes, int kind);
dl_status dl_cuda_memset0_(const dl_device *dev, void *p, size_t bytes);
dl_status dl_cuda_host_alloc_(void **p, size_t bytes);
void dl_cuda_host_free_(void *p);
/* cudaMemcpyAsync host -> device on dev's stream, no wait. */
dl_status dl_cuda_memcpy_async_(const dl_device *dev, void *dst, const void *src, size_t bytes);
int dl_cuda_event_done_(const dl_device *dev, const dl_event *e);
dl_status dl_cuda_stream_create_(const dl_device *dev, dl_stream *s);
void dl_cuda_stream_destroy_(const dl_device *dev, dl_stream s);
dl_status dl_cuda_stream_sync_(const dl_device *dev, dl_stream s);
dl_status dl_cuda_event_create_(const dl_device *dev, dl_event *e);
void dl_cuda_event_destroy_(const dl_device *dev, dl_event *e);
dl_status dl_cuda_event_record_(const dl_device *dev, dl_event *e, dl_stream s);
dl_status dl_cuda_stream_wait_event_(const dl_device *dev, dl_stream s, const dl_event *e);
dl_status dl_cuda_event_sync_(const dl_device *dev, const dl_event *e);
dl_status dl_cuda_event_elapsed_(const dl_device *dev, const dl_event *a, const dl_event *b, float *ms);

dl_status dl_cuda_gemm_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                        const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);
dl_status dl_cuda_gemv_(const dl_device *dev, dl_trans ta, int M, int N, float alpha, const float *A, int lda,
                        const float *x, float beta, float *y);
/* dl_gemm_ex: A, B of ab_type (DL_F16 or DL_BF16), fp32 accumulate, C of c_type (DL_F32 or ab_type). */
dl_status dl_cuda_gemm_ex_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                           const void *A, int lda, const void *B, int ldb, dl_dtype ab_type, float beta, void *C,
                           dl_dtype c_type, int ldc);

// ---- the MLP's element-wise kernels (src/cuda/mlp_cuda.cu) ----
dl_status dl_cuda_fill_(const dl_device *dev, float *p, size_t count, float v);
dl_status dl_cuda_bias_act_(const dl_device *dev, float *Z, const float *b, size_t n, size_t out, int relu);
dl_status dl_cuda_relu_mask_(const dl_device *dev, float *delta, const float *A, size_t count);
/* The slots of the MLP's device accumulator m->acc (doubles). */
enum {
    DL_ACC_STEP = 0, /* the step's sum of batch means */
    DL_ACC_TOTAL, /* the running total of the committed steps */
    DL_ACC_BAD, /* labels out of range since the last reset */
    DL_ACC_RIGHT, /* right predictions counted */
    DL_ACC_LAST, /* the last batch's mean loss */
    DL_ACC_LAST_BAD, /* its labels out of range */
    DL_ACC_N
};
/* Rows of Z become (softmax − onehot)·scale; the batch's mean loss (the
 * block sums added in block order, in double) is added to acc[DL_ACC_STEP]
 * and written to acc[DL_ACC_LAST], its bad labels (outside [0, C)) added to
 * acc[DL_ACC_BAD] and written to acc[DL_ACC_LAST_BAD]. loss not NULL: waits,
 * *loss (host) = the mean loss, DL_ERR_RANGE when a label of this batch is
 * out of range. part: device scratch of 2 floats per 256 rows. */
dl_status dl_cuda_xent_(const dl_device *dev, float *Z, const int32_t *y, size_t n, int C, float scale, float *part,
                        double *acc, double *loss);
/* On acc (device): mode 0 commits the step (total += step / per), 1 drops
 * it, 2 resets (total = value, step = bad = 0). No wait. */
dl_status dl_cuda_loss_ctl_(const dl_device *dev, double *acc, int mode, int per, double value);
/* *right (device, double) += the rows i of Z (n, C) whose argmax
 * (dl_argmax_row) equals y[i]. No host wait. */
dl_status dl_cuda_count_right_(const dl_device *dev, const float *Z, const int32_t *y, size_t n, size_t C,
                               double *right);
dl_status dl_cuda_sgd_(const dl_device *dev, float *p, const float *g, float *v, size_t count, float lr, float mu,
                       float wd);
/* The 16-bit path's steps (dl/mlp.h's dl_mlp_*16_1), t = DL_F16 or DL_BF16:
 * H = round_t(Z + b), ReLU; dY = round_t(g · s); d masked by A > 0. H, b,
 * dY, delta, A are arrays of t. (The bias gradient is a GEMV: dl_gemm_ex.) */
dl_status dl_cuda_bias_act16_(const dl_device *dev, void *H, const float *Z, const void *b, dl_dtype t, size_t n,
                              size_t out, int relu);
dl_status dl_cuda_scale_grad16_(const dl_device *dev, void *dY, dl_dtype t, const float *g, size_t count, float s);
dl_status dl_cuda_relu_mask16_(const dl_device *dev, void *delta, const void *A, dl_dtype t, size_t count);

// ---- dl/batch.h's gather (src/cuda/batch_cuda.cu) ----
/* X (n, d) and y (n,) = rows order[0..n) of srcX, srcy; all device memory. */
dl_status dl_cuda_gather_rows_(const dl_device *dev, float *X, int32_t *y, const float *srcX, const int32_t *srcy,
                               size_t d, const int32_t *order, size_t n);

// ---- dl/ops.h's kernels (src/cuda/ops_cuda.cu) ----
/* dst += src for count elements of t (DL_F32, DL_F16 or DL_BF16), queued on dev's stream. */
dl_status dl_cuda_add_(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t);
/* buf *= alpha; acc (fp32) += src (t); dst (dst_t) = src (src_t), two different
 * types of f32/f16/bf16, rounded once. */
dl_status dl_cuda_scale_(const dl_device *dev, void *buf, size_t count, dl_dtype t, float alpha);
dl_status dl_cuda_accumulate_(const dl_device *dev, float *acc, const void *src, size_t count, dl_dtype t);
dl_status dl_cuda_cast_(const dl_device *dev, void *dst, dl_dtype dst_t, const void *src, dl_dtype src_t, size_t count);
/* dst = src (DL_F32, DL_F16 or DL_BF16) · inv_scale; waits, then *found_inf (host). */
dl_status dl_cuda_unscale_(const dl_device *dev, const void *src, dl_dtype src_t, float *dst, size_t count,
                           float inv_scale, int *found_inf);

#ifdef __cplusplus
}
#endif
#endif /* DL_BACKEND_H */
