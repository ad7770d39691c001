/* ops_cuda.cu — dl/ops.h's kernels; each thread calls the same DL_HD function
 * as the CPU loop in ops.c (dl_add_f32_1, dl_add_f16_1, dl_add_bf16_1), so
 * both give the same bits. One kernel template per operation; the overloads
 * below pick the element function of each type. Arguments were checked by
 * ops.c. */
#include <cuda_runtime.h> // cudaStream_t

#include "../backend.h" // dl_cuda_add_, dl_cuda_unscale_
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "dl/ops.h" // dl_add_f32_1, dl_add_f16_1, dl_add_bf16_1, dl_unscale_1

#define BLOCK 256
#define MAX_BLOCKS 65536 /* then each thread strides over the rest */

static unsigned blocks_for(size_t n)
{
    size_t b = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(b < MAX_BLOCKS ? b : MAX_BLOCKS);
}

// ---- the element functions by type (the same ones as ops.c's loops) ----

__device__ static inline float add1(float a, float b)
{
    return dl_add_f32_1(a, b);
}
__device__ static inline dl_half add1(dl_half a, dl_half b)
{
    return dl_add_f16_1(a, b);
}
__device__ static inline dl_bf16 add1(dl_bf16 a, dl_bf16 b)
{
    return dl_add_bf16_1(a, b);
}

__device__ static inline float scale1(float x, float alpha)
{
    return dl_scale_f32_1(x, alpha);
}
__device__ static inline dl_half scale1(dl_half x, float alpha)
{
    return dl_scale_f16_1(x, alpha);
}
__device__ static inline dl_bf16 scale1(dl_bf16 x, float alpha)
{
    return dl_scale_bf16_1(x, alpha);
}

__device__ static inline float accumulate1(float acc, float x)
{
    return dl_add_f32_1(acc, x);
}
__device__ static inline float accumulate1(float acc, dl_half x)
{
    return dl_accumulate_f16_1(acc, x);
}
__device__ static inline float accumulate1(float acc, dl_bf16 x)
{
    return dl_accumulate_bf16_1(acc, x);
}

/* exact widening to fp32 */
__device__ static inline float to_f32(float x)
{
    return x;
}
__device__ static inline float to_f32(dl_half x)
{
    return dl_h2f(x);
}
__device__ static inline float to_f32(dl_bf16 x)
{
    return dl_bf2f(x);
}

/* fp32 rounded once to the type of *tag (which is not read) */
__device__ static inline float from_f32(float v, const float *tag)
{
    (void)tag;
    return v;
}
__device__ static inline dl_half from_f32(float v, const dl_half *tag)
{
    (void)tag;
    return dl_f2h(v);
}
__device__ static inline dl_bf16 from_f32(float v, const dl_bf16 *tag)
{
    (void)tag;
    return dl_f2bf(v);
}

// ---- kernels ----

/* dst, src are (n,); dst == src doubles in place. */
template <typename T> __global__ void add_kernel(T *dst, const T *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = add1(dst[i], src[i]);
}

/* buf (n,) *= alpha */
template <typename T> __global__ void scale_kernel(T *buf, float alpha, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = scale1(buf[i], alpha);
}

/* acc (n,) fp32 += src (n,) */
template <typename T> __global__ void accumulate_kernel(float *acc, const T *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc[i] = accumulate1(acc[i], src[i]);
}

/* dst (n,) = src (n,): exactly to fp32, rounded once to D */
template <typename D, typename S> __global__ void cast_kernel(D *dst, const S *src, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = from_f32(to_f32(src[i]), dst);
}

/* dst (n,) fp32 = src (n,) · inv_scale; *flag = call where a product is not
 * finite: the flag is never cleared, each call has its own number, so the
 * pass needs no memset before it. */
template <typename T>
__global__ void unscale_kernel(float *dst, const T *src, size_t n, float inv_scale, int *flag, int call)
{
    int bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = dl_unscale_1(to_f32(src[i]), inv_scale, &bad);
    if (bad)
        *flag = call; // every writer writes the same value: the race is benign
}

// ---- launchers ----

extern "C" dl_status dl_cuda_add_(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        add_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_half *)dst, (const dl_half *)src, count);
    else if (t == DL_BF16)
        add_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_bf16 *)dst, (const dl_bf16 *)src, count);
    else
        add_kernel<<<blocks_for(count), BLOCK, 0, s>>>((float *)dst, (const float *)src, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_scale_(const dl_device *dev, void *buf, size_t count, dl_dtype t, float alpha)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        scale_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_half *)buf, alpha, count);
    else if (t == DL_BF16)
        scale_kernel<<<blocks_for(count), BLOCK, 0, s>>>((dl_bf16 *)buf, alpha, count);
    else
        scale_kernel<<<blocks_for(count), BLOCK, 0, s>>>((float *)buf, alpha, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_accumulate_(const dl_device *dev, float *acc, const void *src, size_t count, dl_dtype t)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (t == DL_F16)
        accumulate_kernel<<<blocks_for(count), BLOCK, 0, s>>>(acc, (const dl_half *)src, count);
    else if (t == DL_BF16)
        accumulate_kernel<<<blocks_for(count), BLOCK, 0, s>>>(acc, (const dl_bf16 *)src, count);
    else
        accumulate_kernel<<<blocks_for(count), BLOCK, 0, s>>>(acc, (const float *)src, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

/* cast_kernel<D, S> for the source type, D fixed */
template <typename D> static void launch_cast(cudaStream_t s, D *dst, const void *src, dl_dtype src_t, size_t n)
{
    if (src_t == DL_F16)
        cast_kernel<<<blocks_for(n), BLOCK, 0, s>>>(dst, (const dl_half *)src, n);
    else if (src_t == DL_BF16)
        cast_kernel<<<blocks_for(n), BLOCK, 0, s>>>(dst, (const dl_bf16 *)src, n);
    else
        cast_kernel<<<blocks_for(n), BLOCK, 0, s>>>(dst, (const float *)src, n);
}

extern "C" dl_status dl_cuda_cast_(const dl_device *dev, void *dst, dl_dtype dst_t, const void *src, dl_dtype src_t,
                                   size_t count)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (count == 0)
        return DL_OK;
    if (dst_t == DL_F16)
        launch_cast(s, (dl_half *)dst, src, src_t, count);
    else if (dst_t == DL_BF16)
        launch_cast(s, (dl_bf16 *)dst, src, src_t, count);
    else
        launch_cast(s, (float *)dst, src, src_t, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

/* The overflow flag of each device: made at its first unscale and kept (no
 * allocation per step), read back through pinned memory. */
#define MAX_DEVICES 64
typedef struct unscale_flag {
    int *dev_flag; /* device */
    int *host_flag; /* pinned host */
    int calls;
} unscale_flag;
static unscale_flag flags[MAX_DEVICES];

extern "C" dl_status dl_cuda_unscale_(const dl_device *dev, const void *src, dl_dtype src_t, float *dst, size_t count,
                                      float inv_scale, int *found_inf)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    if (dev->ordinal < 0 || dev->ordinal >= MAX_DEVICES)
        return dl_error_set(DL_ERR_ARG, "dl_unscale: device %d; at most %d devices", dev->ordinal, MAX_DEVICES);
    unscale_flag *f = &flags[dev->ordinal];
    if (f->dev_flag == NULL) {
        DL_CUDA_CHECK(cudaMalloc((void **)&f->dev_flag, sizeof(int)));
        DL_CUDA_CHECK(cudaMemsetAsync(f->dev_flag, 0, sizeof(int), s));
        DL_CUDA_CHECK(cudaMallocHost((void **)&f->host_flag, sizeof(int)));
    }
    int call = f->calls = f->calls % 0x7ffffffe + 1; // 1, 2, ...: never the 0 the flag starts at
    if (src_t == DL_F16)
        unscale_kernel<<<blocks_for(count), BLOCK, 0, s>>>(dst, (const dl_half *)src, count, inv_scale, f->dev_flag,
                                                           call);
    else if (src_t == DL_BF16)
        unscale_kernel<<<blocks_for(count), BLOCK, 0, s>>>(dst, (const dl_bf16 *)src, count, inv_scale, f->dev_flag,
                                                           call);
    else
        unscale_kernel<<<blocks_for(count), BLOCK, 0, s>>>(dst, (const float *)src, count, inv_scale, f->dev_flag,
                                                           call);
    DL_LAUNCH_CHECK();
    DL_CUDA_CHECK(cudaMemcpyAsync(f->host_flag, f->dev_flag, sizeof(int), cudaMemcpyDeviceToHost, s));
    DL_TRY(dl_cuda_host_wait_(s, "reading the inf/NaN flag"));
    *found_inf = *f->host_flag == call;
    return DL_OK;
}
