/* logreg_cuda.cu — lab 01, task 5: the loss and gradient on the GPU.
 *
 * Mirrors logreg_loss_grad_cpu line by line: cuBLAS does the two matrix-vector
 * products (through dl_gemv, row-major like on the CPU), one kernel does the
 * element-wise part and a block reduction, the host adds the block sums. */
#include <cuda_runtime.h> // cudaStream_t
#include <stdlib.h>       // malloc, free

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
    /* BEGIN SOLUTION */
    __shared__ float s_loss[LOGREG_BLOCK];
    __shared__ float s_r[LOGREG_BLOCK];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    float loss = 0.0f, res = 0.0f;
    if (i < n) {
        float zi = z[i] + b;
        loss = logreg_bce(zi, y[i]); // term 1: the data term
        res = logreg_sigmoid(zi) - y[i];
        r[i] = res;
    }
    s_loss[t] = loss;
    s_r[t] = res;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { // tree reduction in shared memory
        if (t < s) {
            s_loss[t] += s_loss[t + s];
            s_r[t] += s_r[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        partials[2 * blockIdx.x] = s_loss[0];
        partials[2 * blockIdx.x + 1] = s_r[0];
    }
    /* END SOLUTION */
    /* STUDENT: // TODO(lab01 task 5): r = sigmoid(z + b) - y per row, block sums of the loss terms and of r */
}

// ---- launcher ----

extern "C" dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy,
                                           size_t n, size_t d, const float *dw, float b,
                                           float lambda, float *dgrad_w, float *grad_b,
                                           double *loss, float *dwork)
{
    if (dev == NULL || dev->kind != DL_DEVICE_CUDA || dX == NULL || dy == NULL || dw == NULL ||
        dgrad_w == NULL || grad_b == NULL || loss == NULL || dwork == NULL || n == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_loss_grad_cuda: needs a CUDA device, device buffers and n, d > 0");
    /* BEGIN SOLUTION */
    size_t blocks = (n + LOGREG_BLOCK - 1) / LOGREG_BLOCK;
    float *dz = dwork;                  // (n,): z = Xw, then the residual r
    float *dpart = dwork + n;           // (2·blocks,) block sums, then (1,) ‖w‖²
    float *dww = dpart + 2 * blocks;
    cudaStream_t stream = (cudaStream_t)dev->stream;
    DL_TRY(dl_gemv(dev, DL_NO_TRANS, n, d, 1.0f, dX, d, dw, 0.0f, dz));
    logreg_residual_kernel<<<(unsigned)blocks, LOGREG_BLOCK, 0, stream>>>(dz, dy, n, b, dz, dpart);
    DL_LAUNCH_CHECK();
    // grad_w = (1/n) Xᵀr + λw: start from w, let gemv scale it by beta = λ
    DL_TRY(dl_memcpy_d2d(dev, dgrad_w, dw, d * sizeof(float)));
    DL_TRY(dl_gemv(dev, DL_TRANS, n, d, 1.0f / (float)n, dX, d, dz, lambda, dgrad_w));
    DL_TRY(dl_gemv(dev, DL_NO_TRANS, 1, d, 1.0f, dw, d, dw, 0.0f, dww)); // ‖w‖² as a 1×d gemv
    size_t np = 2 * blocks + 1;
    float *part = (float *)malloc(np * sizeof(float));
    if (part == NULL)
        return dl_error_set(DL_ERR_NOMEM, "logreg_loss_grad_cuda: out of host memory");
    dl_status st = dl_memcpy_d2h(dev, part, dpart, np * sizeof(float)); // waits for the stream
    if (st == DL_OK) {
        double loss_sum = 0.0, r_sum = 0.0;
        for (size_t k = 0; k < blocks; k++) {
            loss_sum += part[2 * k];
            r_sum += part[2 * k + 1];
        }
        *grad_b = (float)(r_sum / (double)n); // the bias is not penalised
        *loss = loss_sum / (double)n + 0.5 * (double)lambda * part[2 * blocks]; // term 2: the penalty
    }
    free(part);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 5: the loss and gradient with a kernel and cuBLAS gemv"); */
}
