/* mlp_cuda.cu — the MLP's element-wise kernels; each thread calls the same
 * DL_HD function as the CPU loop in mlp.c (dl/nn_math.h; the 16-bit path's
 * in dl/mlp.h). GEMMs are not here: mlp.c sends them through dl_gemm and
 * dl_gemm_ex (cuBLAS). */
#include <cuda_runtime.h> // cudaStream_t
#include <stdlib.h> // malloc

#include "../backend.h" // dl_cuda_*_
#include "dl/cuda_check.h" // DL_LAUNCH_CHECK
#include "dl/mlp.h" // dl_mlp_bias_act16_1, dl_mlp_scale_grad16_1, ...
#include "dl/nn_math.h" // dl_softmax_xent_row, dl_sgd_update

#define BLOCK 256

static unsigned blocks_for(size_t n)
{
    return (unsigned)((n + BLOCK - 1) / BLOCK);
}

static cudaStream_t stream_of(const dl_device *dev)
{
    return (cudaStream_t)dev->stream;
}

// ---- kernels ----

__global__ void fill_kernel(float *p, size_t n, float v)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

/* Z (n, out) += b per row, then ReLU when relu. */
__global__ void bias_act_kernel(float *Z, const float *b, size_t n, size_t out, int relu)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n * out)
        return;
    float v = Z[k] + b[k % out];
    Z[k] = relu && v < 0.0f ? 0.0f : v;
}

__global__ void relu_mask_kernel(float *delta, const float *A, size_t n)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n && !(A[k] > 0.0f))
        delta[k] = 0.0f;
}

/* One thread per row; per block, the loss sum and the count of bad labels. */
__global__ void xent_kernel(float *Z, const int32_t *y, size_t n, int C, float scale, float *part)
{
    __shared__ float s_loss[BLOCK];
    __shared__ float s_bad[BLOCK];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    float loss = 0.0f, bad = 0.0f;
    if (i < n) {
        int yi = y[i];
        if (yi < 0 || yi >= C)
            bad = 1.0f;
        else
            loss = dl_softmax_xent_row(Z + i * (size_t)C, C, yi, scale);
    }
    s_loss[t] = loss;
    s_bad[t] = bad;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            s_loss[t] += s_loss[t + s];
            s_bad[t] += s_bad[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        part[2 * blockIdx.x] = s_loss[0];
        part[2 * blockIdx.x + 1] = s_bad[0];
    }
}

/* One thread: the block sums part[2k], part[2k + 1] added in block order in
 * double (as the host added them), the batch's mean loss into acc. */
__global__ void xent_finish_kernel(const float *part, unsigned nb, size_t n, double *acc)
{
    double s = 0.0, bad = 0.0;
    for (unsigned k = 0; k < nb; k++) {
        s += part[2 * k];
        bad += part[2 * k + 1];
    }
    acc[DL_ACC_STEP] += s / (double)n;
    acc[DL_ACC_BAD] += bad;
    acc[DL_ACC_LAST] = s / (double)n; // this batch's
    acc[DL_ACC_LAST_BAD] = bad;
}

/* One thread: commit (mode 0) or drop (1) the step's sum, or reset (2). */
__global__ void loss_ctl_kernel(double *acc, int mode, int per, double value)
{
    if (mode == 0)
        acc[DL_ACC_TOTAL] = acc[DL_ACC_TOTAL] + acc[DL_ACC_STEP] / per;
    if (mode == 2) {
        acc[DL_ACC_TOTAL] = value;
        acc[DL_ACC_BAD] = 0;
    }
    acc[DL_ACC_STEP] = 0;
}

/* One thread per row: 1 when its argmax is its label; per block a sum, added to *right. */
__global__ void count_right_kernel(const float *Z, const int32_t *y, size_t n, size_t C, double *right)
{
    __shared__ unsigned s_right[BLOCK];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    s_right[t] = i < n && dl_argmax_row(Z + i * C, C) == y[i] ? 1u : 0u;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            s_right[t] += s_right[t + s];
        __syncthreads();
    }
    if (t == 0 && s_right[0] > 0)
        atomicAdd(right, (double)s_right[0]); // whole numbers: exact in any order
}

__global__ void sgd_kernel(float *p, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        dl_sgd_update(&p[k], &v[k], g[k], lr, mu, wd);
}

// ---- kernels of the 16-bit path (t: DL_F16 or DL_BF16, the same in every thread) ----

/* H (n, out) = round16(Z + b per row), ReLU when relu; Z is the fp32 GEMM sum. */
__global__ void bias_act16_kernel(void *H, const float *Z, const void *b, dl_dtype t, size_t n, size_t out, int relu)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n * out)
        dl_mlp_bias_act16_1(H, Z, b, t, k, out, relu);
}

/* dY (n,) = round16(g · s) */
__global__ void scale_grad16_kernel(void *dY, dl_dtype t, const float *g, size_t n, float s)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        dl_mlp_scale_grad16_1(dY, g, t, k, s);
}

__global__ void relu_mask16_kernel(void *delta, const void *A, dl_dtype t, size_t n)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        dl_mlp_relu_mask16_1(delta, A, t, k);
}

// ---- launchers ----

extern "C" dl_status dl_cuda_fill_(const dl_device *dev, float *p, size_t count, float v)
{
    if (count == 0)
        return DL_OK;
    fill_kernel<<<blocks_for(count), BLOCK, 0, stream_of(dev)>>>(p, count, v);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_bias_act_(const dl_device *dev, float *Z, const float *b, size_t n, size_t out, int relu)
{
    bias_act_kernel<<<blocks_for(n * out), BLOCK, 0, stream_of(dev)>>>(Z, b, n, out, relu);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_relu_mask_(const dl_device *dev, float *delta, const float *A, size_t count)
{
    relu_mask_kernel<<<blocks_for(count), BLOCK, 0, stream_of(dev)>>>(delta, A, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_xent_(const dl_device *dev, float *Z, const int32_t *y, size_t n, int C, float scale,
                                   float *part, double *acc, double *loss)
{
    unsigned nb = blocks_for(n);
    cudaStream_t s = stream_of(dev);
    xent_kernel<<<nb, BLOCK, 0, s>>>(Z, y, n, C, scale, part);
    DL_LAUNCH_CHECK();
    xent_finish_kernel<<<1, 1, 0, s>>>(part, nb, n, acc);
    DL_LAUNCH_CHECK();
    if (loss == NULL)
        return DL_OK; // no wait: the running loss is read by dl_mlp_loss_take
    // the wait first (watched): a copy into pageable memory such as last waits
    // for the stream inside cudaMemcpyAsync, where no watch sees a peer gone
    DL_TRY(dl_cuda_host_wait_(s, "reading the loss back"));
    double last[2] = {0, 0}; // DL_ACC_LAST, DL_ACC_LAST_BAD
    DL_CUDA_CHECK(cudaMemcpyAsync(last, acc + DL_ACC_LAST, sizeof last, cudaMemcpyDeviceToHost, s));
    DL_CUDA_CHECK(cudaStreamSynchronize(s));
    if (last[1] > 0)
        return dl_error_set(DL_ERR_RANGE, "mlp: %.0f label(s) outside [0, %d)", last[1], C);
    *loss = last[0];
    return DL_OK;
}

extern "C" dl_status dl_cuda_loss_ctl_(const dl_device *dev, double *acc, int mode, int per, double value)
{
    loss_ctl_kernel<<<1, 1, 0, stream_of(dev)>>>(acc, mode, per, value);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_count_right_(const dl_device *dev, const float *Z, const int32_t *y, size_t n, size_t C,
                                          double *right)
{
    if (n == 0)
        return DL_OK;
    count_right_kernel<<<blocks_for(n), BLOCK, 0, stream_of(dev)>>>(Z, y, n, C, right);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_sgd_(const dl_device *dev, float *p, const float *g, float *v, size_t count, float lr,
                                  float mu, float wd)
{
    if (count == 0)
        return DL_OK;
    sgd_kernel<<<blocks_for(count), BLOCK, 0, stream_of(dev)>>>(p, g, v, count, lr, mu, wd);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_bias_act16_(const dl_device *dev, void *H, const float *Z, const void *b, dl_dtype t,
                                         size_t n, size_t out, int relu)
{
    if (n * out == 0)
        return DL_OK;
    bias_act16_kernel<<<blocks_for(n * out), BLOCK, 0, stream_of(dev)>>>(H, Z, b, t, n, out, relu);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_scale_grad16_(const dl_device *dev, void *dY, dl_dtype t, const float *g, size_t count,
                                           float s)
{
    if (count == 0)
        return DL_OK;
    scale_grad16_kernel<<<blocks_for(count), BLOCK, 0, stream_of(dev)>>>(dY, t, g, count, s);
    DL_LAUNCH_CHECK();
    return DL_OK;
}

extern "C" dl_status dl_cuda_relu_mask16_(const dl_device *dev, void *delta, const void *A, dl_dtype t, size_t count)
{
    if (count == 0)
        return DL_OK;
    relu_mask16_kernel<<<blocks_for(count), BLOCK, 0, stream_of(dev)>>>(delta, A, t, count);
    DL_LAUNCH_CHECK();
    return DL_OK;
}
