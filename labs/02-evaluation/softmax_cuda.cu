/* softmax_cuda.cu — lab 02, task 5: softmax regression's loss and gradient on the GPU.
 *
 * Mirrors softmax_loss_grad_cpu line by line: cuBLAS does the matrix products
 * (through dl_gemm / dl_gemv, row-major as on the CPU), one kernel does the
 * per-row softmax with the same softmax_xent_row as the CPU, and block-sums
 * the loss; a second kernel adds the block sums, in order, in double, as the
 * CPU's loop does, so nothing is read back here: the caller reads gW, gb and
 * the loss together, once. */
#include <cuda_runtime.h> // cudaStream_t

#include "dl/blas.h"       // dl_gemm, dl_gemv
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "eval.h"
#include "softmax_math.h" // softmax_xent_row (the same code as on the CPU)

// ---- kernels ----

/* One thread per row i < n: z_i += b, loss_i = softmax_xent_row(z_i), so Z
 * becomes P − Y in place; ones[i] = 1 (for the bias gradient's gemv); per
 * block the sum of the loss terms into partials[block]. Z is (n, C). */
__global__ void softmax_rows_kernel(float *Z, const int32_t *y, const float *b, size_t n, int C,
                                    float *ones, float *partials)
{
    // TODO(lab02 task 5): one thread per row: add b, softmax_xent_row, block-sum the loss
}

/* One thread: *loss = (the partials[0..blocks) added one after another, in
 * double) / n + (λ/2)·‖W‖², ‖W‖² in partials[blocks]: the CPU's sum, in a
 * fixed order, so every run gives the same bits. Launched <<<1, 1>>>. */
__global__ void softmax_loss_kernel(const float *partials, size_t blocks, size_t n, float lambda, double *loss)
{
    // TODO(lab02 task 5): add the block sums in order, in double, and finish the loss
}

// ---- launcher ----

extern "C" dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy,
                                            size_t n, size_t d, int C, const float *dW,
                                            const float *db, float lambda, float *dgW, float *dgb,
                                            double *dloss, float *dwork)
{
    if (dev == NULL || dev->kind != DL_DEVICE_CUDA || dX == NULL || dy == NULL || dW == NULL ||
        db == NULL || dgW == NULL || dgb == NULL || dloss == NULL || dwork == NULL || n == 0 || d == 0 || C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_loss_grad_cuda: needs a CUDA device, device buffers, n, d > 0, C >= 2");
    return DL_TODO("lab02 task 5: the softmax loss and gradient with a kernel and cuBLAS GEMM");
}
