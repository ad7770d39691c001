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

/* BEGIN SOLUTION */
/* The reference mirrors softmax_loss_grad_cpu line by line: cuBLAS does the
 * matrix products, one kernel the per-row softmax with the CPU's
 * softmax_xent_row and a block sum of the row losses, and a second kernel
 * adds the block sums, in block order, in double, as the CPU's loop adds the
 * rows. Workspace: Z (n·C), n ones, one partial per block, ‖W‖². */

/* One thread per row i < n: z_i += b, loss_i = softmax_xent_row(z_i), so Z
 * becomes P − Y in place; ones[i] = 1 (for the bias gradient's gemv); per
 * block the sum of the loss terms into partials[block]. Z is (n, C). */
__global__ void softmax_rows_kernel(float *Z, const int32_t *y, const float *b, size_t n, int C,
                                    float *ones, float *partials)
{
    __shared__ float s_loss[SOFTMAX_BLOCK];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    float loss = 0.0f;
    if (i < n) {
        float *z = Z + i * (size_t)C;
        for (int c = 0; c < C; c++)
            z[c] += b[c];
        loss = softmax_xent_row(z, C, y[i]); // term 1: the data term
        ones[i] = 1.0f;
    }
    s_loss[t] = loss;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { // tree reduction in shared memory
        if (t < s)
            s_loss[t] += s_loss[t + s];
        __syncthreads();
    }
    if (t == 0)
        partials[blockIdx.x] = s_loss[0];
}

/* One thread: *loss = (the partials[0..blocks) added one after another, in
 * double) / n + (λ/2)·‖W‖², ‖W‖² in partials[blocks]: the CPU's sum, in a
 * fixed order, so every run gives the same bits. Launched <<<1, 1>>>. */
__global__ void softmax_loss_kernel(const float *partials, size_t blocks, size_t n, float lambda, double *loss)
{
    double loss_sum = 0.0;
    for (size_t k = 0; k < blocks; k++)
        loss_sum += partials[k];
    *loss = loss_sum / (double)n + 0.5 * (double)lambda * partials[blocks]; // term 2: the penalty
}
/* END SOLUTION */
/* STUDENT: // TODO(lab02 task 5): the kernels softmax_loss_grad_cuda launches, on dev's stream */

// ---- launcher ----

extern "C" dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy,
                                            size_t n, size_t d, int C, const float *dW,
                                            const float *db, float lambda, float *dgW, float *dgb,
                                            double *dloss, float *dwork)
{
    if (dev == NULL || dev->kind != DL_DEVICE_CUDA || dX == NULL || dy == NULL || dW == NULL ||
        db == NULL || dgW == NULL || dgb == NULL || dloss == NULL || dwork == NULL || n == 0 || d == 0 || C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_loss_grad_cuda: needs a CUDA device, device buffers, n, d > 0, C >= 2");
    /* BEGIN SOLUTION */
    size_t blocks = (n + SOFTMAX_BLOCK - 1) / SOFTMAX_BLOCK, wd = (size_t)C * d;
    float *dZ = dwork;             // (n, C): logits, then P − Y
    float *dones = dZ + n * (size_t)C; // (n,) ones
    float *dpart = dones + n;      // (blocks,) loss sums, then (1,) ‖W‖²
    float *dww = dpart + blocks;
    cudaStream_t stream = (cudaStream_t)dev->stream;
    DL_TRY(dl_gemm(dev, DL_NO_TRANS, DL_TRANS, n, (size_t)C, d, 1.0f, dX, d, dW, d, 0.0f, dZ, (size_t)C));
    softmax_rows_kernel<<<(unsigned)blocks, SOFTMAX_BLOCK, 0, stream>>>(dZ, dy, db, n, C, dones, dpart);
    DL_LAUNCH_CHECK();
    // gW = (1/n) (P − Y)ᵀ X + λW: start from W, let the GEMM scale it by beta = λ
    DL_TRY(dl_memcpy_d2d(dev, dgW, dW, wd * sizeof(float)));
    DL_TRY(dl_gemm(dev, DL_TRANS, DL_NO_TRANS, (size_t)C, d, n, 1.0f / (float)n, dZ, (size_t)C, dX, d, lambda,
                   dgW, d));
    DL_TRY(dl_gemv(dev, DL_TRANS, n, (size_t)C, 1.0f / (float)n, dZ, (size_t)C, dones, 0.0f, dgb)); // column means
    DL_TRY(dl_gemv(dev, DL_NO_TRANS, 1, wd, 1.0f, dW, wd, dW, 0.0f, dww)); // ‖W‖² as a 1×(C·d) gemv
    softmax_loss_kernel<<<1, 1, 0, stream>>>(dpart, blocks, n, lambda, dloss); // after the gemv: same stream
    DL_LAUNCH_CHECK();
    return DL_OK; // nothing waited for: the caller's one copy back does
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 5: the softmax loss and gradient on the GPU, finished on the device"); */
}
