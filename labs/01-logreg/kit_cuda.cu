/* kit_cuda.cu — lab 01's provided CUDA: the right predictions of a model,
 * counted on the device from the residuals your logreg_loss_grad_cuda leaves,
 * so that the validation accuracy needs no copy of the rows. Not a student
 * file. */
#include <cuda_runtime.h> // cudaStream_t

#include "dl/cuda_check.h" // DL_LAUNCH_CHECK, DL_CUDA_CHECK
#include "logreg.h"

#define BLOCK 256

/* One thread per row: right when p = r + y is on the label's side of 0.5
 * (class 1 when p >= 0.5): y = 1 needs r >= −0.5, y = 0 needs r < 0.5. Per
 * block a count, added to *right (whole numbers: exact in any order). */
__global__ void logreg_right_kernel(const float *r, const float *y, size_t n, double *right)
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
        atomicAdd(right, (double)s[0]);
}

extern "C" dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n,
                                             double *dright, double *right)
{
    cudaStream_t s = (cudaStream_t)dev->stream;
    DL_TRY(dl_memset0(dev, dright, sizeof(double)));
    logreg_right_kernel<<<(unsigned)((n + BLOCK - 1) / BLOCK), BLOCK, 0, s>>>(r, y, n, dright);
    DL_LAUNCH_CHECK();
    return dl_memcpy_d2h(dev, right, dright, sizeof(double)); // waits for the stream
}
