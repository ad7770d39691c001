/* mlp_backward.c — the MLP's backward pass, fp32 or 16-bit: each layer's
 * gradients in one trace span, handed to ready as soon as they are final. */
#include "dl/mlp.h"

#include "backend.h" // dl_cuda_*_ kernels
#include "dl/blas.h" // dl_gemm, dl_gemv, dl_gemm_ex, dl_flops_add
#include "dl/trace.h" // dl_trace_begin, dl_trace_end
#include "mlp_impl.h" // mlp_on_gpu, dl_mlp_check_batch_, dl_mlp_cpu_relu_mask_

/* Layer l's 16-bit gradients from dY (t = m->compute): gW16, gb16 and,
 * but for the first layer, dX16 into a free delta16 (*which), then *dY. */
static dl_status layer16(dl_mlp *m, int l, size_t n, int accumulate, uint16_t **dY, int *which)
{
    dl_dtype t = m->compute;
    float beta = accumulate ? 1.0f : 0.0f;
    const dl_mlp_layer *L = &m->layer[l];
    const uint16_t *A = l > 0 ? m->act16[l - 1] : m->x16; // this layer's input
    // gW16 (out, in) = round16(dYᵀ (out, n) · A16 (n, in) [+ gW16]);  gb16 = round16(Σ_rows dY [+ gb16])
    DL_TRY(dl_gemm_ex(m->dev, DL_TRANS, DL_NO_TRANS, L->out, L->in, n, 1.0f, *dY, L->out, A, L->in, t, beta, L->gW16, t,
                      L->in));
    if (mlp_on_gpu(m)) { // gb16 (out, 1) = round16(dYᵀ (out, n) · 1 [+ gb16]): a GEMV on the tensor cores
        DL_TRY(dl_gemm_ex(m->dev, DL_TRANS, DL_NO_TRANS, L->out, 1, n, 1.0f, *dY, L->out, m->ones16, 1, t, beta,
                          L->gb16, t, 1));
    } else { // the same sums in row order, counted as the GEMV is
        dl_flops_add(2ull * n * L->out);
        dl_dev_count_launch(0);
        for (size_t j = 0; j < L->out; j++)
            dl_mlp_bias_grad16_1(L->gb16, *dY, t, n, L->out, j, accumulate);
    }
    if (l == 0)
        return DL_OK;
    // dX16 (n, in) = round16(dY (n, out) · W16 (out, in)), masked by the 16-bit activation
    uint16_t *prev = m->delta16[*which];
    *which ^= 1;
    DL_TRY(dl_gemm_ex(m->dev, DL_NO_TRANS, DL_NO_TRANS, n, L->in, L->out, 1.0f, *dY, L->out, L->W16, L->in, t, 0.0f,
                      prev, t, L->in));
    dl_dev_count_launch(3.0 * 2.0 * (double)n * L->in); // read delta and A, write delta
    if (mlp_on_gpu(m)) {
        DL_TRY(dl_cuda_relu_mask16_(m->dev, prev, A, t, n * L->in));
    } else {
        for (size_t k = 0; k < n * L->in; k++)
            dl_mlp_relu_mask16_1(prev, A, t, k);
    }
    *dY = prev;
    return DL_OK;
}

/* The 16-bit backward (see the contract; t = m->compute): dY = round16(g ·
 * loss_scale) into act16[L−1] (the logits are spent), then per layer gW16,
 * gb16 and dX16. */
static dl_status backward16(dl_mlp *m, size_t n, int accumulate, dl_mlp_ready_fn ready, void *ctx)
{
    dl_dtype t = m->compute;
    const dl_mlp_layer *last = &m->layer[m->n_layers - 1];
    uint16_t *dY = m->act16[m->n_layers - 1];
    const float *g = m->act[m->n_layers - 1]; // dLoss/dlogits in fp32, left by dl_mlp_loss
    dl_dev_count_launch((double)n * last->out * (4.0 + 2.0));
    if (mlp_on_gpu(m)) {
        DL_TRY(dl_cuda_scale_grad16_(m->dev, dY, t, g, n * last->out, m->loss_scale));
    } else {
        for (size_t k = 0; k < n * last->out; k++)
            dl_mlp_scale_grad16_1(dY, g, t, k, m->loss_scale);
    }
    int which = 0;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        const dl_mlp_layer *L = &m->layer[l];
        size_t span = dl_trace_begin(DL_EV_BACKWARD, l, 0, 0);
        dl_status st = layer16(m, l, n, accumulate, &dY, &which);
        dl_trace_end(span); // layer l's gradient is final (or failed: the span closes on every path)
        DL_TRY(st);
        if (ready != NULL)
            ready(ctx, l, m->grads16 + L->offset, L->count);
    }
    return DL_OK;
}

/* Layer l's fp32 gradients from *delta: gW, gb and, but for the first layer,
 * the previous layer's delta into a free buffer (*which), then *delta. */
static dl_status layer32(dl_mlp *m, int l, const float *X, size_t n, int accumulate, const float **delta, int *which)
{
    float beta = accumulate ? 1.0f : 0.0f;
    const dl_mlp_layer *L = &m->layer[l];
    const float *A = l > 0 ? m->act[l - 1] : X; // this layer's input
    // gW (out, in) = deltaᵀ (out, n) · A (n, in);  gb = deltaᵀ · 1
    DL_TRY(
        dl_gemm(m->dev, DL_TRANS, DL_NO_TRANS, L->out, L->in, n, 1.0f, *delta, L->out, A, L->in, beta, L->gW, L->in));
    DL_TRY(dl_gemv(m->dev, DL_TRANS, n, L->out, 1.0f, *delta, L->out, m->ones, beta, L->gb));
    if (l == 0)
        return DL_OK;
    // delta_prev (n, in) = delta (n, out) · W (out, in), masked by ReLU'(A)
    float *prev = m->delta[*which];
    *which ^= 1;
    DL_TRY(dl_gemm(m->dev, DL_NO_TRANS, DL_NO_TRANS, n, L->in, L->out, 1.0f, *delta, L->out, L->W, L->in, 0.0f, prev,
                   L->in));
    dl_dev_count_launch(3.0 * 4.0 * (double)n * L->in); // read delta and A, write delta
    if (mlp_on_gpu(m)) {
        DL_TRY(dl_cuda_relu_mask_(m->dev, prev, A, n * L->in));
    } else {
        dl_mlp_cpu_relu_mask_(prev, A, n * L->in);
    }
    *delta = prev;
    return DL_OK;
}

dl_status dl_mlp_backward(dl_mlp *m, const float *X, size_t n, int accumulate, dl_mlp_ready_fn ready, void *ctx)
{
    DL_TRY(dl_mlp_check_batch_(m, n));
    if (n != m->batch)
        return dl_error_set(DL_ERR_ARG, "mlp: backward over %zu rows after a forward of %zu", n, m->batch);
    if (dl_lowp(m->compute))
        return backward16(m, n, accumulate, ready, ctx);
    const float *delta = m->act[m->n_layers - 1]; // dLoss/dlogits, left by dl_mlp_loss
    int which = 0;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        const dl_mlp_layer *L = &m->layer[l];
        if (m->pre != NULL)
            DL_TRY(m->pre(m->hook_ctx, l, DL_MLP_BACKWARD));
        size_t span = dl_trace_begin(DL_EV_BACKWARD, l, 0, 0);
        dl_status st = layer32(m, l, X, n, accumulate, &delta, &which);
        dl_trace_end(span); // layer l's gradient is final (or failed: the span closes on every path)
        DL_TRY(st);
        if (ready != NULL)
            ready(ctx, l, L->gW, L->count);
        if (m->post != NULL)
            DL_TRY(m->post(m->hook_ctx, l, DL_MLP_BACKWARD));
    }
    return DL_OK;
}
