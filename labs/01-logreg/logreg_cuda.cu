/* logreg_cuda.cu — lab 01, task 5: the loss and gradient on the GPU.
 *
 * Mirrors logreg_loss_grad_cpu line by line: cuBLAS does the two matrix-vector
 * products (through dl_gemv, row-major like on the CPU), one kernel does the
 * element-wise part and a block reduction, a second one adds the block sums
 * up. Everything stays on the device: the host waits for nothing here. */
#include <cuda_runtime.h> // cudaStream_t

#include "dl/blas.h"       // dl_gemv
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "logreg.h"
#include "logreg_math.h" // logreg_sigmoid, logreg_bce (the same code as on the CPU)

// ---- kernels ----

/* One thread per row: r_i = σ(z_i + b) − y_i written over z (in place), and
 * per block the sums of the loss terms and of r into partials[2·block + {0,1}].
 * z, y, r are (n,); partials is (2·gridDim.x,). */
__global__ void logreg_residual_kernel(const float *z, const float *y, size_t n, float b, float *r,
                                       float *partials)
{
    // TODO(lab01 task 5): r = sigmoid(z + b) - y per row, block sums of the loss terms and of r
}

/* One block of LOGREG_BLOCK threads finishes on the device what the blocks
 * summed: grad_b = (Σ_k partials[2k + 1]) / n and loss = (Σ_k partials[2k]) / n
 * + (λ/2)‖w‖² for k < blocks, in double and in a fixed order, so the same
 * partials give the same bits on every run. partials is (2·blocks,), w (d,);
 * grad_b and loss are one value each. */
__global__ void logreg_finish_kernel(const float *partials, size_t blocks, size_t n, const float *w, size_t d,
                                     float lambda, float *grad_b, double *loss)
{
    // TODO(lab01 task 5): add the block sums up in a fixed order, in double; grad_b and the loss
}

// ---- launcher ----

extern "C" dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy,
                                           size_t n, size_t d, const float *dw, float b,
                                           float lambda, float *dgrad_w, float *dgrad_b,
                                           double *dloss, float *dwork)
{
    if (dev == NULL || dev->kind != DL_DEVICE_CUDA || dX == NULL || dy == NULL || dw == NULL ||
        dgrad_w == NULL || dgrad_b == NULL || dloss == NULL || dwork == NULL || n == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_loss_grad_cuda: needs a CUDA device, device buffers and n, d > 0");
    return DL_TODO("lab01 task 5: the loss and gradient with a kernel and cuBLAS gemv");
}
