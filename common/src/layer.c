/* layer.c — dl/layer.h: one linear layer, forward and backward, on the
 * kit's GEMMs and the MLP's element-wise loops and kernels. */
#include "dl/layer.h"

#include "backend.h" // dl_cuda_bias_act_, dl_cuda_relu_mask_, dl_cuda_sgd_, dl_cuda_xent_, DL_ACC_*
#include "dl/blas.h" // dl_gemm, dl_gemv
#include "dl/nn_math.h" // dl_softmax_xent_row, dl_argmax_row
#include "mlp_impl.h" // dl_mlp_cpu_bias_act_, dl_mlp_cpu_relu_mask_, dl_mlp_cpu_sgd_

static int on_gpu(const dl_device *dev)
{
    return dev->kind == DL_DEVICE_CUDA;
}

dl_status dl_layer_bias_act(const dl_device *dev, float *Y, const float *b, size_t n, size_t out, int relu)
{
    if (dev == NULL || Y == NULL || b == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "dl_layer_bias_act: need a device, Y, b and n > 0");
    if (on_gpu(dev))
        return dl_cuda_bias_act_(dev, Y, b, n, out, relu);
    dl_mlp_cpu_bias_act_(Y, b, n, out, relu);
    return DL_OK;
}

dl_status dl_layer_forward(const dl_device *dev, const dl_mlp_layer *L, const float *X, size_t n, unsigned flags,
                           float *Y)
{
    if (dev == NULL || L == NULL || L->W == NULL || X == NULL || Y == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "dl_layer_forward: need a device, a layer with W, X, Y and n > 0");
    if ((flags & DL_LAYER_BIAS) && L->b == NULL)
        return dl_error_set(DL_ERR_ARG, "dl_layer_forward: DL_LAYER_BIAS on a layer without b");
    DL_TRY(dl_gemm(dev, DL_NO_TRANS, DL_TRANS, n, L->out, L->in, 1.0f, X, L->in, L->W, L->in, 0.0f, Y, L->out));
    if (flags & DL_LAYER_BIAS)
        return dl_layer_bias_act(dev, Y, L->b, n, L->out, (flags & DL_LAYER_RELU) != 0);
    if (!(flags & DL_LAYER_RELU))
        return DL_OK;
    // ReLU without a bias: max(Y, 0) is Y masked by itself
    return dl_layer_relu_mask(dev, Y, Y, n * L->out);
}

dl_status dl_layer_relu_mask(const dl_device *dev, float *d, const float *A, size_t count)
{
    if (dev == NULL || (count > 0 && (d == NULL || A == NULL)))
        return dl_error_set(DL_ERR_ARG, "dl_layer_relu_mask: need a device, d and A");
    if (on_gpu(dev))
        return dl_cuda_relu_mask_(dev, d, A, count);
    dl_mlp_cpu_relu_mask_(d, A, count);
    return DL_OK;
}

dl_status dl_layer_backward(const dl_device *dev, const dl_mlp_layer *L, const float *X, size_t n, const float *dY,
                            const float *ones, float *dX)
{
    if (dev == NULL || L == NULL || L->W == NULL || L->gW == NULL || X == NULL || dY == NULL || n == 0 ||
        (L->gb != NULL && ones == NULL))
        return dl_error_set(DL_ERR_ARG, "dl_layer_backward: need a device, a layer with W and gW, X, dY, n > 0 "
                                        "(and ones for gb)");
    DL_TRY(dl_gemm(dev, DL_TRANS, DL_NO_TRANS, L->out, L->in, n, 1.0f, dY, L->out, X, L->in, 0.0f, L->gW, L->in));
    if (L->gb != NULL)
        DL_TRY(dl_gemv(dev, DL_TRANS, n, L->out, 1.0f, dY, L->out, ones, 0.0f, L->gb));
    if (dX == NULL)
        return DL_OK;
    return dl_gemm(dev, DL_NO_TRANS, DL_NO_TRANS, n, L->in, L->out, 1.0f, dY, L->out, L->W, L->in, 0.0f, dX, L->in);
}

dl_status dl_layer_sgd(const dl_device *dev, float *p, const float *g, float *v, size_t count, float lr, float momentum,
                       float wd)
{
    if (dev == NULL || (count > 0 && (p == NULL || g == NULL || v == NULL)))
        return dl_error_set(DL_ERR_ARG, "dl_layer_sgd: need a device and p, g, v");
    if (count == 0)
        return DL_OK;
    if (on_gpu(dev))
        return dl_cuda_sgd_(dev, p, g, v, count, lr, momentum, wd);
    dl_mlp_cpu_sgd_(p, g, v, count, lr, momentum, wd);
    return DL_OK;
}

// ---- the loss at the logits ----

dl_status dl_layer_loss_init(dl_layer_loss *w, const dl_device *dev, size_t max_n)
{
    *w = (dl_layer_loss){dev, max_n, NULL, NULL};
    if (dev == NULL || max_n == 0)
        return dl_error_set(DL_ERR_ARG, "dl_layer_loss_init: need a device and max_n > 0");
    if (!on_gpu(dev))
        return DL_OK;
    dl_status st = dl_malloc(dev, (void **)&w->part, (max_n / 256 + 2) * 2 * sizeof(float));
    st = st == DL_OK ? dl_malloc(dev, (void **)&w->acc, DL_ACC_N * sizeof(double)) : st;
    st = st == DL_OK ? dl_memset0(dev, w->acc, DL_ACC_N * sizeof(double)) : st;
    if (st != DL_OK)
        dl_layer_loss_free(w);
    return st;
}

static dl_status loss_args(const dl_layer_loss *w, const float *Z, const int32_t *y, size_t n, size_t C,
                           const double *out, const char *fn)
{
    if (w == NULL || w->dev == NULL || Z == NULL || y == NULL || out == NULL || n == 0 || C == 0)
        return dl_error_set(DL_ERR_ARG, "%s: need the scratch, Z, y, the result's place and n, C > 0", fn);
    if (n > w->max_n)
        return dl_error_set(DL_ERR_ARG, "%s: %zu rows, the scratch was made for %zu", fn, n, w->max_n);
    return DL_OK;
}

/* The first row whose label is outside [0, C), as DL_ERR_RANGE; DL_OK when there is none. */
static dl_status labels_in_range(const int32_t *y, size_t n, size_t C)
{
    for (size_t i = 0; i < n; i++)
        if (y[i] < 0 || (size_t)y[i] >= C)
            return dl_error_set(DL_ERR_RANGE, "label %d of row %zu is outside [0, %zu)", y[i], i, C);
    return DL_OK;
}

dl_status dl_layer_xent(dl_layer_loss *w, float *Z, const int32_t *y, size_t n, size_t C, float scale, double *loss)
{
    DL_TRY(loss_args(w, Z, y, n, C, loss, "dl_layer_xent"));
    dl_dev_count_launch(2.0 * 4.0 * (double)n * (double)C + 4.0 * (double)n); // the rows, in place, and the labels
    dl_dev_count_sync(); // the loss is read back
    if (on_gpu(w->dev))
        return dl_cuda_xent_(w->dev, Z, y, n, (int)C, scale, w->part, w->acc, loss);
    DL_TRY(labels_in_range(y, n, C));
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += dl_softmax_xent_row(Z + i * C, (int)C, y[i], scale);
    *loss = s / (double)n;
    return DL_OK;
}

dl_status dl_layer_right(dl_layer_loss *w, const float *Z, const int32_t *y, size_t n, size_t C, double *right)
{
    DL_TRY(loss_args(w, Z, y, n, C, right, "dl_layer_right"));
    dl_dev_count_launch(4.0 * (double)n * (double)C + 4.0 * (double)n); // the logits and the labels, read
    if (!on_gpu(w->dev)) {
        dl_dev_count_sync(); // the count is read back (on a GPU dl_memcpy_d2h counts it)
        for (size_t i = 0; i < n; i++)
            *right += dl_argmax_row(Z + i * C, C) == y[i];
        return DL_OK;
    }
    double got = 0;
    DL_TRY(dl_memset0(w->dev, w->acc + DL_ACC_RIGHT, sizeof got));
    DL_TRY(dl_cuda_count_right_(w->dev, Z, y, n, C, w->acc + DL_ACC_RIGHT));
    DL_TRY(dl_memcpy_d2h(w->dev, &got, w->acc + DL_ACC_RIGHT, sizeof got)); // waits for the device
    *right += got;
    return DL_OK;
}

void dl_layer_loss_free(dl_layer_loss *w)
{
    if (w->dev != NULL) {
        dl_free(w->dev, w->part);
        dl_free(w->dev, w->acc);
    }
    *w = (dl_layer_loss){0};
}
