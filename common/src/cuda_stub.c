/* cuda_stub.c — the CUDA backend in a build without nvcc: every entry point
 * fails with DL_ERR_NO_CUDA and says how to get a CUDA build. This is the only
 * place where the absence of CUDA is handled. */
#include <stdio.h> // snprintf

#include "backend.h"

static dl_status no_cuda(void)
{
    return dl_error_set(DL_ERR_NO_CUDA, "this build has no CUDA backend (nvcc was not found when "
                                        "it was built); rebuild where nvcc is on PATH");
}

void dl_cuda_set_watch_(dl_cuda_watch_fn watch, void *ctx)
{
    (void)watch, (void)ctx;
}

dl_status dl_cuda_host_wait_(void *stream, const char *what)
{
    (void)stream, (void)what;
    return no_cuda();
}

int dl_cuda_emulated_(void)
{
    return 0;
}

int dl_cuda_count_(void)
{
    return 0;
}

int dl_cuda_is_device_ptr_(const void *p)
{
    (void)p;
    return 0;
}

void dl_cuda_versions_(char *runtime, char *driver, size_t len)
{
    snprintf(runtime, len, "none");
    snprintf(driver, len, "none");
}

void dl_nccl_version_(char *out, size_t len)
{
    snprintf(out, len, "none");
}

dl_status dl_cuda_open_(int ordinal, dl_device *dev)
{
    (void)ordinal;
    (void)dev;
    return no_cuda();
}

void dl_cuda_close_(dl_device *dev)
{
    (void)dev;
}

dl_status dl_cuda_sync_(const dl_device *dev)
{
    (void)dev;
    return no_cuda();
}

dl_status dl_cuda_malloc_(const dl_device *dev, void **p, size_t bytes)
{
    (void)dev;
    (void)p;
    (void)bytes;
    return no_cuda();
}

void dl_cuda_free_(const dl_device *dev, void *p)
{
    (void)dev;
    (void)p;
}

dl_status dl_cuda_memcpy_(const dl_device *dev, void *dst, const void *src, size_t bytes, int kind)
{
    (void)dev;
    (void)dst;
    (void)src;
    (void)bytes;
    (void)kind;
    return no_cuda();
}

dl_status dl_cuda_memset0_(const dl_device *dev, void *p, size_t bytes)
{
    (void)dev;
    (void)p;
    (void)bytes;
    return no_cuda();
}

dl_status dl_cuda_stream_create_(const dl_device *dev, dl_stream *s)
{
    (void)dev;
    (void)s;
    return no_cuda();
}

void dl_cuda_stream_destroy_(const dl_device *dev, dl_stream s)
{
    (void)dev;
    (void)s;
}

dl_status dl_cuda_stream_sync_(const dl_device *dev, dl_stream s)
{
    (void)dev;
    (void)s;
    return no_cuda();
}

dl_status dl_cuda_event_create_(const dl_device *dev, dl_event *e)
{
    (void)dev;
    (void)e;
    return no_cuda();
}

void dl_cuda_event_destroy_(const dl_device *dev, dl_event *e)
{
    (void)dev;
    (void)e;
}

dl_status dl_cuda_event_record_(const dl_device *dev, dl_event *e, dl_stream s)
{
    (void)dev;
    (void)e;
    (void)s;
    return no_cuda();
}

dl_status dl_cuda_stream_wait_event_(const dl_device *dev, dl_stream s, const dl_event *e)
{
    (void)dev;
    (void)s;
    (void)e;
    return no_cuda();
}

dl_status dl_cuda_event_sync_(const dl_device *dev, const dl_event *e)
{
    (void)dev;
    (void)e;
    return no_cuda();
}

dl_status dl_cuda_event_elapsed_(const dl_device *dev, const dl_event *a, const dl_event *b, float *ms)
{
    (void)dev;
    (void)a;
    (void)b;
    (void)ms;
    return no_cuda();
}

dl_status dl_cuda_gemm_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                        const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    (void)dev, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda;
    (void)B, (void)ldb, (void)beta, (void)C, (void)ldc;
    return no_cuda();
}

dl_status dl_cuda_gemv_(const dl_device *dev, dl_trans ta, int M, int N, float alpha, const float *A, int lda,
                        const float *x, float beta, float *y)
{
    (void)dev, (void)ta, (void)M, (void)N, (void)alpha, (void)A, (void)lda, (void)x, (void)beta;
    (void)y;
    return no_cuda();
}

dl_status dl_cuda_gemm_ex_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                           const void *A, int lda, const void *B, int ldb, dl_dtype ab_type, float beta, void *C,
                           dl_dtype c_type, int ldc)
{
    (void)dev, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda;
    (void)B, (void)ldb, (void)ab_type, (void)beta, (void)C, (void)c_type, (void)ldc;
    return no_cuda();
}

dl_status dl_cuda_fill_(const dl_device *dev, float *p, size_t count, float v)
{
    (void)dev, (void)p, (void)count, (void)v;
    return no_cuda();
}

dl_status dl_cuda_bias_act_(const dl_device *dev, float *Z, const float *b, size_t n, size_t out, int relu)
{
    (void)dev, (void)Z, (void)b, (void)n, (void)out, (void)relu;
    return no_cuda();
}

dl_status dl_cuda_relu_mask_(const dl_device *dev, float *delta, const float *A, size_t count)
{
    (void)dev, (void)delta, (void)A, (void)count;
    return no_cuda();
}

dl_status dl_cuda_xent_(const dl_device *dev, float *Z, const int32_t *y, size_t n, int C, float scale, float *part,
                        double *acc, double *loss)
{
    (void)dev, (void)Z, (void)y, (void)n, (void)C, (void)scale, (void)part, (void)acc, (void)loss;
    return no_cuda();
}

dl_status dl_cuda_loss_ctl_(const dl_device *dev, double *acc, int mode, int per, double value)
{
    (void)dev, (void)acc, (void)mode, (void)per, (void)value;
    return no_cuda();
}

dl_status dl_cuda_count_right_(const dl_device *dev, const float *Z, const int32_t *y, size_t n, size_t C,
                               double *right)
{
    (void)dev, (void)Z, (void)y, (void)n, (void)C, (void)right;
    return no_cuda();
}

dl_status dl_cuda_sgd_(const dl_device *dev, float *p, const float *g, float *v, size_t count, float lr, float mu,
                       float wd)
{
    (void)dev, (void)p, (void)g, (void)v, (void)count, (void)lr, (void)mu, (void)wd;
    return no_cuda();
}

dl_status dl_cuda_bias_act16_(const dl_device *dev, void *H, const float *Z, const void *b, dl_dtype t, size_t n,
                              size_t out, int relu)
{
    (void)dev, (void)H, (void)Z, (void)b, (void)t, (void)n, (void)out, (void)relu;
    return no_cuda();
}

dl_status dl_cuda_scale_grad16_(const dl_device *dev, void *dY, dl_dtype t, const float *g, size_t count, float s)
{
    (void)dev, (void)dY, (void)t, (void)g, (void)count, (void)s;
    return no_cuda();
}

dl_status dl_cuda_relu_mask16_(const dl_device *dev, void *delta, const void *A, dl_dtype t, size_t count)
{
    (void)dev, (void)delta, (void)A, (void)t, (void)count;
    return no_cuda();
}

dl_status dl_cuda_gather_rows_(const dl_device *dev, float *X, int32_t *y, const float *srcX, const int32_t *srcy,
                               size_t d, const int32_t *order, size_t n)
{
    (void)dev, (void)X, (void)y, (void)srcX, (void)srcy, (void)d, (void)order, (void)n;
    return no_cuda();
}

dl_status dl_cuda_host_alloc_(void **p, size_t bytes)
{
    (void)p, (void)bytes;
    return no_cuda();
}

void dl_cuda_host_free_(void *p)
{
    (void)p;
}

dl_status dl_cuda_memcpy_async_(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    (void)dev, (void)dst, (void)src, (void)bytes;
    return no_cuda();
}

int dl_cuda_event_done_(const dl_device *dev, const dl_event *e)
{
    (void)dev, (void)e;
    return 1;
}

dl_status dl_cuda_add_(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t)
{
    (void)dev, (void)dst, (void)src, (void)count, (void)t;
    return no_cuda();
}

dl_status dl_cuda_scale_(const dl_device *dev, void *buf, size_t count, dl_dtype t, float alpha)
{
    (void)dev, (void)buf, (void)count, (void)t, (void)alpha;
    return no_cuda();
}

dl_status dl_cuda_accumulate_(const dl_device *dev, float *acc, const void *src, size_t count, dl_dtype t)
{
    (void)dev, (void)acc, (void)src, (void)count, (void)t;
    return no_cuda();
}

dl_status dl_cuda_cast_(const dl_device *dev, void *dst, dl_dtype dst_t, const void *src, dl_dtype src_t, size_t count)
{
    (void)dev, (void)dst, (void)dst_t, (void)src, (void)src_t, (void)count;
    return no_cuda();
}

dl_status dl_cuda_unscale_(const dl_device *dev, const void *src, dl_dtype src_t, float *dst, size_t count,
                           float inv_scale, int *found_inf)
{
    (void)dev, (void)src, (void)src_t, (void)dst, (void)count, (void)inv_scale, (void)found_inf;
    return no_cuda();
}
