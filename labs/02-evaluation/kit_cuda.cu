/* kit_cuda.cu — lab 02's provided CUDA: a model's predictions on the rows
 * the engine holds on the device, so that scoring a model on the validation
 * or the test part moves the model up and n labels back, never the rows.
 * Not a student file. */
#include <cuda_runtime.h> // cudaStream_t

#include "dl/blas.h" // dl_gemm
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "dl/nn_math.h" // dl_argmax_row (the first of equal maxima, as softmax_predict)
#include "eval.h"

#define BLOCK 256

// ---- kernels ----

/* One thread per row i < n of Z (n, C), the logits without the bias:
 * z_i += b, then pred[i] = its argmax. */
__global__ void softmax_argmax_kernel(float *Z, const float *b, size_t n, int C, int32_t *pred)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float *z = Z + i * (size_t)C;
    for (int c = 0; c < C; c++)
        z[c] += b[c];
    pred[i] = (int32_t)dl_argmax_row(z, (size_t)C);
}

// ---- launcher ----

/* dX (n, d), dW (C, d), db (C,), dZ (n, C) and dpred (n,) are device
 * pointers; n > 0. Queued on dev's stream; the caller reads dpred back. */
extern "C" dl_status softmax_predict_cuda(const dl_device *dev, const float *dX, size_t n, size_t d, int C,
                                          const float *dW, const float *db, float *dZ, int32_t *dpred)
{
    // Z (n, C) = X (n, d) · Wᵀ, as softmax_predict computes it
    DL_TRY(dl_gemm(dev, DL_NO_TRANS, DL_TRANS, n, (size_t)C, d, 1.0f, dX, d, dW, d, 0.0f, dZ, (size_t)C));
    unsigned blocks = (unsigned)((n + BLOCK - 1) / BLOCK);
    softmax_argmax_kernel<<<blocks, BLOCK, 0, (cudaStream_t)dev->stream>>>(dZ, db, n, C, dpred);
    DL_LAUNCH_CHECK();
    return DL_OK;
}
