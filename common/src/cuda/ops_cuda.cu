/* ops_cuda.cu — dl/ops.h's kernels; each thread calls the same DL_HD function
 * as the CPU loop in ops.c (dl_add_f32_1, dl_add_f16_1), so both give the same
 * bits. Arguments were checked by ops.c. */
#include <cuda_runtime.h> // cudaStream_t

#include "../backend.h" // dl_cuda_add_, dl_cuda_unscale_
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "dl/ops.h" // dl_add_f32_1, dl_add_f16_1, dl_unscale_1

#define BLOCK 256
#define MAX_BLOCKS 65536 /* then each thread strides over the rest */

static unsigned blocks_for(size_t n)
{
    size_t b = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(b < MAX_BLOCKS ? b : MAX_BLOCKS);
}

// ---- kernels ----

/* dst, src are (n,); dst == src doubles in place. */
__global__ void add_f32_kernel(float *dst, const float *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_add_f32_1(dst[i], src[i]);
}

__global__ void add_f16_kernel(dl_half *dst, const dl_half *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_add_f16_1(dst[i], src[i]);
}

/* buf (n,) *= alpha */
__global__ void scale_f32_kernel(float *buf, float alpha, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = dl_scale_f32_1(buf[i], alpha);
}

__global__ void scale_f16_kernel(dl_half *buf, float alpha, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = dl_scale_f16_1(buf[i], alpha);
}

/* acc (n,) fp32 += src (n,) */
__global__ void accumulate_f32_kernel(float *acc, const float *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc[i] = dl_add_f32_1(acc[i], src[i]);
}

__global__ void accumulate_f16_kernel(float *acc, const dl_half *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc[i] = dl_accumulate_f16_1(acc[i], src[i]);
}

__global__ void cast_to_f16_kernel(dl_half *dst, const float *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_f2h(src[i]);
}

__global__ void cast_to_f32_kernel(float *dst, const dl_half *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_h2f(src[i]);
}

/* dst (n,) fp32 = src (n,) · inv_scale; *flag = 1 where a product is not finite */
__global__ void unscale_f32_kernel(float *dst, const float *src, size_t n, float inv_scale, int *flag)
{
    int bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_unscale_1(src[i], inv_scale, &bad);
    if (bad)
        *flag = 1; // every writer writes 1: the race is benign
}

__global__ void unscale_f16_kernel(float *dst, const dl_half *src, size_t n, float inv_scale, int *flag)
{
    int bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_unscale_1(dl_h2f(src[i]), inv_scale, &bad);
    if (bad)
        *flag = 1;
}

// ---- launchers ----

extern "C" dl_status dl_cuda_add_(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        add_f16_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_half *)dst, (const dl_half *)src, count);
    else
        add_f32_kernel<<<blocks_for(count), BLOCK, 0, s>>>((float *)dst, (const float *)src, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_scale_(const dl_device *dev, void *buf, size_t count, dl_dtype t, float alpha)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        scale_f16_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_half *)buf, alpha, count);
    else
        scale_f32_kernel<<<blocks_for(count), BLOCK, 0, s>>>((float *)buf, alpha, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_accumulate_(const dl_device *dev, float *acc, const void *src, size_t count, dl_dtype t)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        accumulate_f16_kernel<<<blocks_for(count), BLOCK, 0, s>>>(acc, (const dl_half *)src, count);
    else
        accumulate_f32_kernel<<<blocks_for(count), BLOCK, 0, s>>>(acc, (const float *)src, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_cast_(const dl_device *dev, void *dst, dl_dtype dst_t, const void *src, size_t count)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (dst_t == DL_F16)
        cast_to_f16_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_half *)dst, (const float *)src, count);
    else
        cast_to_f32_kernel<<<blocks_for(count), BLOCK, 0, s>>>((float *)dst, (const dl_half *)src, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_unscale_(const dl_device *dev, const void *src, dl_dtype src_t, float *dst, size_t count,
                                      float inv_scale, int *found_inf)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    int *flag = NULL, h = 0;
    // stream-ordered allocation: no device-wide synchronisation, only this stream's
    DL_CUDA_CHECK(cudaMallocAsync((void **)&flag, sizeof *flag, s));
    DL_CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof *flag, s));
    if (src_t == DL_F16)
        unscale_f16_kernel<<<blocks_for(count), BLOCK, 0, s>>>(dst, (const dl_half *)src, count, inv_scale, flag);
    else
        unscale_f32_kernel<<<blocks_for(count), BLOCK, 0, s>>>(dst, (const float *)src, count, inv_scale, flag);
    DL_LAUNCH_CHECK();
    DL_CUDA_CHECK(cudaMemcpyAsync(&h, flag, sizeof h, cudaMemcpyDeviceToHost, s));
    DL_CUDA_CHECK(cudaFreeAsync(flag, s));
    DL_CUDA_CHECK(cudaStreamSynchronize(s));
    *found_inf = h;
    return DL_OK;
}
