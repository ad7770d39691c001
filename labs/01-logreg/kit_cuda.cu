/* kit_cuda.cu — lab 01's provided CUDA: a mini-batch gathered on the device
 * from the training rows it holds, by the indices of the batch, and the
 * right predictions of a model counted on the device from the residuals your
 * logreg_loss_grad_cuda leaves. So neither a training step nor an evaluation
 * copies rows, and neither waits: the engine reads the results back in one
 * copy (kit.c). Not a student file.
 *
 * (dl/batch.h gathers the same way, for int32 class labels; lab 01's targets
 * are float, so the engine has its own gather.) */
#include <cuda_runtime.h> // cudaStream_t
#include <stdint.h> // int32_t

#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "logreg.h"

#define BLOCK 256
#define WARPS (BLOCK / 32)
#define GATHER_MAX_BLOCKS 65535

// ---- kernels ----

/* One warp per batch row k (rows warp, warp + all warps, ...): bX row k =
 * X row idx[k], its lanes reading and writing consecutive floats; lane 0
 * copies y. X is (·, d), bX (n, d), idx and by (n,). */
__global__ void logreg_gather_kernel(const float *X, const float *y, size_t d, const int32_t *idx, size_t n, float *bX,
                                     float *by)
{
    unsigned lane = threadIdx.x & 31;
    size_t first = (size_t)blockIdx.x * WARPS + (threadIdx.x >> 5), stride = (size_t)gridDim.x * WARPS;
    for (size_t k = first; k < n; k += stride) {
        size_t from = (size_t)idx[k];
        const float *src = X + from * d;
        float *dst = bX + k * d;
        for (size_t j = lane; j < d; j += 32)
            dst[j] = src[j];
        if (lane == 0)
            by[k] = y[from];
    }
}

/* One thread per row: right when p = r + y is on the label's side of 0.5
 * (class 1 when p >= 0.5): y = 1 needs r >= −0.5, y = 0 needs r < 0.5. Per
 * block a count, added to *right (whole numbers: exact in any order). */
__global__ void logreg_right_kernel(const float *r, const float *y, size_t n, unsigned long long *right)
{
    __shared__ unsigned s[BLOCK];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    s[t] = i < n && (y[i] >= 0.5f ? r[i] >= -0.5f : r[i] < 0.5f) ? 1u : 0u;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0 && s[0] > 0)
        atomicAdd(right, (unsigned long long)s[0]);
}

// ---- launchers (kit.c declares them) ----

extern "C" dl_status logreg_gather_rows_cuda(const dl_device *dev, const float *X, const float *y, size_t d,
                                             const int32_t *idx, size_t n, float *bX, float *by)
{
    if (n == 0)
        return DL_OK;
    size_t want = (n + WARPS - 1) / WARPS;
    unsigned blocks = (unsigned)(want < GATHER_MAX_BLOCKS ? want : GATHER_MAX_BLOCKS);
    logreg_gather_kernel<<<blocks, BLOCK, 0, (cudaStream_t)dev->stream>>>(X, y, d, idx, n, bX, by);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n,
                                             unsigned long long *dright)
{
    DL_TRY(dl_memset0(dev, dright, sizeof *dright));
    if (n == 0)
        return DL_OK;
    logreg_right_kernel<<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK, 0, (cudaStream_t)dev->stream>>>(r, y, n, dright);
    DL_LAUNCH_CHECK();
    return DL_OK;
}
