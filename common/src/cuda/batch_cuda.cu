/* batch_cuda.cu — dl/batch.h's gather on the device: a batch's rows copied
 * from a resident dataset by the epoch's order, with no host copy. */
#include <cuda_runtime.h> // cudaStream_t

#include "../backend.h" // dl_cuda_gather_rows_
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK

#define BLOCK 256

// ---- kernels ----

/* One block per batch row k: X (n, d) row k = srcX row order[k]; y[k] = srcy[order[k]]. */
__global__ void gather_rows_kernel(float *X, int32_t *y, const float *srcX, const int32_t *srcy, size_t d,
                                   const int32_t *order)
{
    size_t k = blockIdx.x;
    size_t from = (size_t)order[k];
    const float *src = srcX + from * d;
    float *dst = X + k * d;
    for (size_t j = threadIdx.x; j < d; j += blockDim.x)
        dst[j] = src[j];
    if (threadIdx.x == 0)
        y[k] = srcy[from];
}

// ---- launcher ----

extern "C" dl_status dl_cuda_gather_rows_(const dl_device *dev, float *X, int32_t *y, const float *srcX,
                                          const int32_t *srcy, size_t d, const int32_t *order, size_t n)
{
    if (n == 0)
        return DL_OK;
    gather_rows_kernel<<<(unsigned)n, BLOCK, 0, (cudaStream_t)dev->stream>>>(X, y, srcX, srcy, d, order);
    DL_LAUNCH_CHECK();
    return DL_OK;
}
