/* softmax_cuda.cu — lab 02, task 5: softmax regression's loss and gradient on the GPU.
 *
 * softmax_loss_grad_cuda computes what softmax_loss_grad_cpu computes, on
 * device arrays (the contract: eval.h; the handout: Task 5, on the GPU):
 * gW and gb, and the finished loss in the device double *dloss; the same
 * bits on every call with the same inputs; all of it queued on dev's stream,
 * with no copy to or from the host and no wait. The kernels and how they
 * share the work are yours to design; the workspace dwork is yours within
 * softmax_cuda_work_floats(n, C) floats. Tools that queue on dev's stream and
 * never wait: dl_gemm, dl_gemv (dl/blas.h), dl_memcpy_d2d (dl/device.h). */
#include <cuda_runtime.h> // cudaStream_t

#include "dl/blas.h"       // dl_gemm, dl_gemv: row-major, on dev's stream
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "eval.h"
#include "softmax_math.h" // softmax_xent_row: DL_HD, the same code as on the CPU

// ---- kernels ----

// TODO(lab02 task 5): the kernels softmax_loss_grad_cuda launches, on dev's stream

// ---- launcher ----

extern "C" dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy,
                                            size_t n, size_t d, int C, const float *dW,
                                            const float *db, float lambda, float *dgW, float *dgb,
                                            double *dloss, float *dwork)
{
    if (dev == NULL || dev->kind != DL_DEVICE_CUDA || dX == NULL || dy == NULL || dW == NULL ||
        db == NULL || dgW == NULL || dgb == NULL || dloss == NULL || dwork == NULL || n == 0 || d == 0 || C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_loss_grad_cuda: needs a CUDA device, device buffers, n, d > 0, C >= 2");
    return DL_TODO("lab02 task 5: the softmax loss and gradient on the GPU, finished on the device");
}
