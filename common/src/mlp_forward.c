/* mlp_forward.c — the MLP's forward pass (fp32 or 16-bit), its loss and the
 * running sums behind it, the count of right answers and predict. */
#include "dl/mlp.h"

#include <stdlib.h> // malloc, free

#include "backend.h" // dl_cuda_*_ kernels
#include "dl/blas.h" // dl_gemm, dl_gemm_ex
#include "dl/nn_math.h" // dl_softmax_xent_row, dl_argmax_row
#include "dl/ops.h" // dl_cast
#include "dl/trace.h" // dl_trace_begin, dl_trace_end
#include "mlp_impl.h" // mlp_on_gpu, dl_mlp_check_batch_, dl_mlp_cpu_bias_act_

/* The 16-bit forward (t = m->compute): X rounded to t, then per layer the
 * fp32 GEMM sum (in delta[0], free in forward) + bias, ReLU, rounded once
 * into act16[l]. */
static dl_status forward16(dl_mlp *m, const float *X, size_t n)
{
    dl_dtype t = m->compute;
    DL_TRY(dl_cast(m->dev, m->x16, t, X, DL_F32, n * m->layer[0].in));
    const uint16_t *A = m->x16;
    float *Z = m->delta[0];
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        uint16_t *H = m->act16[l];
        int relu = l + 1 < m->n_layers;
        // Z (n, out) = A16 (n, in) · W16ᵀ in fp32, then H = round16(Z + b16), ReLU
        DL_TRY(dl_gemm_ex(m->dev, DL_NO_TRANS, DL_TRANS, n, L->out, L->in, 1.0f, A, L->in, L->W16, L->in, t, 0.0f, Z,
                          DL_F32, L->out));
        dl_dev_count_launch((double)n * L->out * (4.0 + 2.0)); // read Z, write H
        if (mlp_on_gpu(m)) {
            DL_TRY(dl_cuda_bias_act16_(m->dev, H, Z, L->b16, t, n, L->out, relu));
        } else {
            for (size_t k = 0; k < n * L->out; k++)
                dl_mlp_bias_act16_1(H, Z, L->b16, t, k, L->out, relu);
        }
        A = H;
    }
    return DL_OK;
}

/* The fp32 forward: per layer Z = A · Wᵀ + b, ReLU but on the last, the
 * per-layer hooks around it. */
static dl_status forward32(dl_mlp *m, const float *X, size_t n)
{
    const float *A = X;
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        float *Z = m->act[l];
        int relu = l + 1 < m->n_layers;
        if (m->pre != NULL)
            DL_TRY(m->pre(m->hook_ctx, l, DL_MLP_FORWARD));
        // Z (n, out) = A (n, in) · Wᵀ, then + b and ReLU
        DL_TRY(dl_gemm(m->dev, DL_NO_TRANS, DL_TRANS, n, L->out, L->in, 1.0f, A, L->in, L->W, L->in, 0.0f, Z, L->out));
        dl_dev_count_launch(2.0 * 4.0 * (double)n * L->out); // read and write Z
        if (mlp_on_gpu(m)) {
            DL_TRY(dl_cuda_bias_act_(m->dev, Z, L->b, n, L->out, relu));
        } else {
            dl_mlp_cpu_bias_act_(Z, L->b, n, L->out, relu);
        }
        if (m->post != NULL)
            DL_TRY(m->post(m->hook_ctx, l, DL_MLP_FORWARD));
        A = Z;
    }
    return DL_OK;
}

dl_status dl_mlp_forward(dl_mlp *m, const float *X, size_t n)
{
    DL_TRY(dl_mlp_check_batch_(m, n));
    size_t span = dl_trace_begin(DL_EV_FORWARD, 0, 0, 0);
    dl_status st = dl_lowp(m->compute) ? forward16(m, X, n) : forward32(m, X, n);
    if (st == DL_OK)
        m->batch = n;
    dl_trace_end(span); // on every path
    return st;
}

dl_status dl_mlp_loss(dl_mlp *m, const int32_t *y, size_t n, double *loss)
{
    DL_TRY(dl_mlp_check_batch_(m, n));
    if (n != m->batch)
        return dl_error_set(DL_ERR_ARG, "mlp: loss over %zu rows after a forward of %zu", n, m->batch);
    const dl_mlp_layer *L = &m->layer[m->n_layers - 1];
    float *Z = m->act[m->n_layers - 1];
    int C = (int)L->out;
    float scale = 1.0f / (float)n; // the gradient of the *mean* loss
    if (dl_lowp(m->compute)) // the 16-bit logits, exactly, into the fp32 path's buffer
        DL_TRY(dl_cast(m->dev, Z, DL_F32, m->act16[m->n_layers - 1], m->compute, n * L->out));
    dl_dev_count_launch(2.0 * 4.0 * (double)n * C + 4.0 * (double)n); // the rows, in place, and the labels
    dl_dev_count_launch(0); // the batch's sum added to the running loss
    if (loss != NULL)
        dl_dev_count_sync(); // the value is read back
    if (mlp_on_gpu(m))
        return dl_cuda_xent_(m->dev, Z, y, n, C, scale, m->loss_part, m->acc, loss);
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= C)
            return dl_error_set(DL_ERR_RANGE, "mlp: label %d of row %zu is outside [0, %d)", y[i], i, C);
        s += dl_softmax_xent_row(Z + i * (size_t)C, C, y[i], scale);
    }
    m->acc[DL_ACC_STEP] += s / (double)n;
    m->acc[DL_ACC_LAST] = s / (double)n;
    if (loss != NULL)
        *loss = s / (double)n;
    return DL_OK;
}

/* The slots [first, first + count) of m->acc, read into out (one wait on CUDA). */
static dl_status read_acc(const dl_mlp *m, int first, int count, double *out)
{
    return dl_memcpy_d2h(m->dev, out, m->acc + first, (size_t)count * sizeof *out);
}

/* The step's and total's bookkeeping: mode 0 commits, 1 drops, 2 resets to value. */
static dl_status loss_ctl(dl_mlp *m, int mode, int per, double value)
{
    dl_dev_count_launch(0);
    if (mlp_on_gpu(m))
        return dl_cuda_loss_ctl_(m->dev, m->acc, mode, per, value);
    double *a = m->acc;
    if (mode == 0)
        a[DL_ACC_TOTAL] = a[DL_ACC_TOTAL] + a[DL_ACC_STEP] / per;
    if (mode == 2) {
        a[DL_ACC_TOTAL] = value;
        a[DL_ACC_BAD] = 0;
    }
    a[DL_ACC_STEP] = 0;
    return DL_OK;
}

dl_status dl_mlp_loss_commit(dl_mlp *m, int keep, int per, double *step_loss)
{
    if (per < 1)
        return dl_error_set(DL_ERR_ARG, "mlp: a step of %d micro-batches; expected at least 1", per);
    if (step_loss != NULL) {
        double sum = 0;
        DL_TRY(read_acc(m, DL_ACC_STEP, 1, &sum));
        *step_loss = sum / per;
    }
    return loss_ctl(m, keep ? 0 : 1, per, 0);
}

dl_status dl_mlp_loss_reset(dl_mlp *m, double total)
{
    return loss_ctl(m, 2, 1, total);
}

dl_status dl_mlp_loss_total(dl_mlp *m, double *total)
{
    double v[2] = {0, 0}; // DL_ACC_TOTAL, DL_ACC_BAD
    DL_TRY(read_acc(m, DL_ACC_TOTAL, 2, v));
    if (v[1] > 0)
        return dl_error_set(DL_ERR_RANGE, "mlp: %.0f label(s) outside [0, %zu) since the running loss was reset", v[1],
                            m->layer[m->n_layers - 1].out);
    *total = v[0];
    return DL_OK;
}

dl_status dl_mlp_count_right(dl_mlp *m, const float *X, const int32_t *y, size_t n)
{
    DL_TRY(dl_mlp_forward(m, X, n));
    const dl_mlp_layer *L = &m->layer[m->n_layers - 1];
    float *Z = m->act[m->n_layers - 1];
    size_t C = L->out;
    if (dl_lowp(m->compute)) // the 16-bit logits, exactly: the same argmax as dl_mlp_predict
        DL_TRY(dl_cast(m->dev, Z, DL_F32, m->act16[m->n_layers - 1], m->compute, n * C));
    dl_dev_count_launch(4.0 * (double)n * (C + 1));
    if (mlp_on_gpu(m))
        return dl_cuda_count_right_(m->dev, Z, y, n, C, m->acc + DL_ACC_RIGHT);
    double right = 0;
    for (size_t i = 0; i < n; i++)
        right += dl_argmax_row(Z + i * C, C) == y[i];
    m->acc[DL_ACC_RIGHT] += right;
    return DL_OK;
}

dl_status dl_mlp_take_right(dl_mlp *m, double *right)
{
    *right = 0;
    DL_TRY(read_acc(m, DL_ACC_RIGHT, 1, right));
    return dl_memset0(m->dev, m->acc + DL_ACC_RIGHT, sizeof(double));
}

dl_status dl_mlp_predict(dl_mlp *m, const float *X, size_t n, int32_t *pred)
{
    size_t C = m->layer[m->n_layers - 1].out;
    float *logits = malloc(m->max_batch * C * sizeof *logits);
    if (logits == NULL)
        return dl_error_set(DL_ERR_NOMEM, "mlp: out of memory");
    dl_status st = DL_OK;
    size_t in = m->layer[0].in;
    for (size_t start = 0; start < n && st == DL_OK; start += m->max_batch) {
        size_t nb = n - start < m->max_batch ? n - start : m->max_batch;
        st = dl_mlp_forward(m, X + start * in, nb);
        if (st == DL_OK && dl_lowp(m->compute)) // the 16-bit logits, exactly: the same argmax
            st = dl_cast(m->dev, m->act[m->n_layers - 1], DL_F32, m->act16[m->n_layers - 1], m->compute, nb * C);
        if (st == DL_OK)
            st = dl_memcpy_d2h(m->dev, logits, m->act[m->n_layers - 1], nb * C * sizeof *logits);
        for (size_t i = 0; st == DL_OK && i < nb; i++)
            pred[start + i] = dl_argmax_row(logits + i * C, C);
    }
    free(logits);
    return st;
}
