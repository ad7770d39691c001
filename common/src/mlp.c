/* mlp.c — the kit's MLP: GEMMs through dl_gemm (fp32) or dl_gemm_ex (the
 * 16-bit path: fp16 or bf16) on either device, the element-wise parts as CPU
 * loops here or CUDA kernels (mlp_cuda.cu) that call the same DL_HD functions
 * (dl/nn_math.h; the 16-bit path's in dl/mlp.h). */
#include "dl/mlp.h"

#include <math.h> // sqrt, isfinite
#include <stdlib.h> // malloc, free
#include <string.h> // memset, memcpy

#include "backend.h" // dl_cuda_*_ kernels
#include "dl/blas.h" // dl_gemm, dl_gemv, dl_gemm_ex
#include "dl/data.h" // dl_npy_write_f32
#include "dl/nn_math.h" // dl_softmax_xent_row, dl_sgd_update
#include "dl/ops.h" // dl_cast
#include "dl/par.h" // dl_par_for
#include "dl/rng.h" // dl_rng
#include "dl/trace.h" // dl_trace_begin

// ---- the CPU's element-wise loops, spread over the cores (dl/par.h) ----
// Each element's result depends on that element alone: the same bits on any
// number of threads. `omp simd` (-fopenmp-simd: no OpenMP runtime) has the
// compiler vectorize them; the ReLU masks are blends, not branches (a branch
// on the sign of random activations is mispredicted half the time).

enum { PAR_GRAIN = 1 << 15 }; // elements: a piece is worth a helper's wake-up (~10 µs)

typedef struct bias_act_job {
    float *Z; // (n, out)
    const float *b; // (out,)
    size_t out;
    int relu;
} bias_act_job;

static void bias_act_rows(void *ctx, size_t lo, size_t hi)
{
    const bias_act_job *J = ctx;
    for (size_t i = lo; i < hi; i++) {
        float *restrict z = J->Z + i * J->out;
        const float *restrict b = J->b;
        if (J->relu) {
#pragma omp simd
            for (size_t j = 0; j < J->out; j++) {
                float v = z[j] + b[j];
                z[j] = v < 0.0f ? 0.0f : v;
            }
        } else {
#pragma omp simd
            for (size_t j = 0; j < J->out; j++)
                z[j] += b[j];
        }
    }
}

/* Z (n, out) += b, then ReLU when relu. */
static void cpu_bias_act(float *Z, const float *b, size_t n, size_t out, int relu)
{
    bias_act_job J = {Z, b, out, relu};
    dl_par_for(n, PAR_GRAIN / (out > 0 ? out : 1) + 1, bias_act_rows, &J);
}

typedef struct mask_job {
    float *d;
    const float *a;
} mask_job;

static void relu_mask_range(void *ctx, size_t lo, size_t hi)
{
    const mask_job *J = ctx;
    float *restrict d = J->d;
    const float *restrict a = J->a;
#pragma omp simd
    for (size_t k = lo; k < hi; k++)
        d[k] = a[k] > 0.0f ? d[k] : 0.0f;
}

/* d[k] = 0 where a[k] is not > 0 (ReLU's derivative), k < count. */
static void cpu_relu_mask(float *d, const float *a, size_t count)
{
    mask_job J = {d, a};
    dl_par_for(count, PAR_GRAIN, relu_mask_range, &J);
}

typedef struct sgd_job {
    float *p, *v;
    const float *g;
    float lr, mu, wd;
} sgd_job;

static void sgd_range(void *ctx, size_t lo, size_t hi)
{
    const sgd_job *J = ctx;
    float *restrict p = J->p, *restrict v = J->v;
    const float *restrict g = J->g;
#pragma omp simd
    for (size_t k = lo; k < hi; k++)
        dl_sgd_update(&p[k], &v[k], g[k], J->lr, J->mu, J->wd);
}

/* dl_sgd_update on n elements. */
static void cpu_sgd(float *p, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    sgd_job J = {p, v, g, lr, mu, wd};
    dl_par_for(n, PAR_GRAIN, sgd_range, &J);
}

static int on_gpu(const dl_mlp *m)
{
    return m->dev->kind == DL_DEVICE_CUDA;
}

static void free16(dl_mlp *m)
{
    dl_free(m->dev, m->params16);
    dl_free(m->dev, m->grads16);
    for (int l = 0; l < m->n_layers; l++)
        dl_free(m->dev, m->act16[l]);
    dl_free(m->dev, m->x16);
    dl_free(m->dev, m->delta16[0]);
    dl_free(m->dev, m->delta16[1]);
    dl_free(m->dev, m->ones16);
    m->params16 = m->grads16 = m->x16 = m->delta16[0] = m->delta16[1] = m->ones16 = NULL;
    for (int l = 0; l < m->n_layers; l++) {
        m->act16[l] = NULL;
        m->layer[l].W16 = m->layer[l].b16 = m->layer[l].gW16 = m->layer[l].gb16 = NULL;
    }
}

void dl_mlp_free(dl_mlp *m)
{
    if (m->dev != NULL) {
        dl_free(m->dev, m->params);
        dl_free(m->dev, m->grads);
        dl_free(m->dev, m->velocity);
        for (int l = 0; l < m->n_layers; l++)
            dl_free(m->dev, m->act[l]);
        dl_free(m->dev, m->delta[0]);
        dl_free(m->dev, m->delta[1]);
        dl_free(m->dev, m->ones);
        dl_free(m->dev, m->loss_part);
        dl_free(m->dev, m->acc);
        free16(m);
    }
    memset(m, 0, sizeof *m);
}

static dl_status fill(const dl_mlp *m, float *p, size_t count, float v)
{
    dl_dev_count_launch(4.0 * (double)count);
    if (on_gpu(m))
        return dl_cuda_fill_(m->dev, p, count, v);
    for (size_t i = 0; i < count; i++)
        p[i] = v;
    return DL_OK;
}

dl_status dl_mlp_create(dl_mlp *m, const dl_device *dev, const size_t *sizes, int n_sizes, size_t max_batch,
                        uint64_t seed)
{
    memset(m, 0, sizeof *m);
    if (n_sizes < 2 || n_sizes > DL_MLP_MAX_LAYERS + 1 || max_batch == 0)
        return dl_error_set(DL_ERR_ARG, "mlp: %d sizes and max_batch %zu; expected 2 to %d sizes and a batch > 0",
                            n_sizes, max_batch, DL_MLP_MAX_LAYERS + 1);
    size_t widest = 0;
    for (int i = 0; i < n_sizes; i++) {
        if (sizes[i] == 0 || sizes[i] > (1u << 24))
            return dl_error_set(DL_ERR_ARG, "mlp: layer size %zu at position %d is 0 or too large", sizes[i], i);
        widest = sizes[i] > widest ? sizes[i] : widest;
    }
    if (sizes[n_sizes - 1] < 2)
        return dl_error_set(DL_ERR_ARG, "mlp: the last layer needs at least 2 classes");
    m->dev = dev;
    m->n_layers = n_sizes - 1;
    m->max_batch = max_batch;
    m->compute = DL_F32;
    m->loss_scale = 1.0f;
    size_t off = 0;
    for (int l = 0; l < m->n_layers; l++) {
        dl_mlp_layer *L = &m->layer[l];
        L->in = sizes[l];
        L->out = sizes[l + 1];
        L->offset = off;
        L->count = L->out * L->in + L->out;
        off += L->count;
    }
    m->n_params = off;
    dl_status st = dl_malloc(dev, (void **)&m->params, off * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->grads, off * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->velocity, off * sizeof(float));
    for (int l = 0; l < m->n_layers && st == DL_OK; l++)
        st = dl_malloc(dev, (void **)&m->act[l], max_batch * m->layer[l].out * sizeof(float));
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = dl_malloc(dev, (void **)&m->delta[k], max_batch * widest * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->ones, max_batch * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->loss_part, (max_batch / 256 + 2) * 2 * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->acc, DL_ACC_N * sizeof(double));
    if (st != DL_OK) {
        dl_mlp_free(m);
        return st;
    }
    for (int l = 0; l < m->n_layers; l++) {
        dl_mlp_layer *L = &m->layer[l];
        L->W = m->params + L->offset;
        L->b = L->W + L->out * L->in;
        L->gW = m->grads + L->offset;
        L->gb = L->gW + L->out * L->in;
    }
    // Kaiming-uniform weights from the seed (the same on every device), zero biases
    float *host = malloc(off * sizeof *host);
    if (host == NULL) {
        dl_mlp_free(m);
        return dl_error_set(DL_ERR_NOMEM, "mlp: out of memory");
    }
    dl_rng r;
    dl_rng_seed(&r, seed, 0x311b);
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        double bound = sqrt(6.0 / (double)L->in);
        for (size_t k = 0; k < L->out * L->in; k++)
            host[L->offset + k] = (float)((2.0 * dl_rng_uniform(&r) - 1.0) * bound);
        for (size_t k = 0; k < L->out; k++)
            host[L->offset + L->out * L->in + k] = 0.0f;
    }
    st = dl_memcpy_h2d(dev, m->params, host, off * sizeof *host);
    free(host);
    if (st == DL_OK)
        st = dl_memset0(dev, m->velocity, off * sizeof(float));
    if (st == DL_OK)
        st = dl_memset0(dev, m->grads, off * sizeof(float));
    if (st == DL_OK)
        st = dl_memset0(dev, m->acc, DL_ACC_N * sizeof(double));
    if (st == DL_OK)
        st = fill(m, m->ones, max_batch, 1.0f);
    if (st != DL_OK)
        dl_mlp_free(m);
    return st;
}

static size_t widest(const dl_mlp *m)
{
    size_t w = m->layer[0].in;
    for (int l = 0; l < m->n_layers; l++)
        w = m->layer[l].out > w ? m->layer[l].out : w;
    return w;
}

/* The 16-bit buffers (2 bytes an element, fp16 or bf16), zeroed, and the
 * layers' views into them. */
static dl_status alloc16(dl_mlp *m)
{
    const dl_device *dev = m->dev;
    size_t np = m->n_params, nb = m->max_batch, w = widest(m), e = sizeof(uint16_t);
    dl_status st = dl_malloc(dev, (void **)&m->params16, np * e);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->grads16, np * e);
    for (int l = 0; l < m->n_layers && st == DL_OK; l++)
        st = dl_malloc(dev, (void **)&m->act16[l], nb * m->layer[l].out * e);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->x16, nb * m->layer[0].in * e);
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = dl_malloc(dev, (void **)&m->delta16[k], nb * w * e);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&m->ones16, nb * e);
    if (st == DL_OK)
        st = dl_memset0(dev, m->params16, np * e);
    if (st == DL_OK)
        st = dl_memset0(dev, m->grads16, np * e);
    if (st != DL_OK) {
        free16(m);
        return st;
    }
    for (int l = 0; l < m->n_layers; l++) {
        dl_mlp_layer *L = &m->layer[l];
        L->W16 = m->params16 + L->offset;
        L->b16 = L->W16 + L->out * L->in;
        L->gW16 = m->grads16 + L->offset;
        L->gb16 = L->gW16 + L->out * L->in;
    }
    return DL_OK;
}

dl_status dl_mlp_set_precision(dl_mlp *m, dl_dtype compute)
{
    if (compute != DL_F32 && !dl_lowp(compute))
        return dl_error_set(DL_ERR_ARG, "mlp: compute precision %s; expected f32, f16 or bf16", dl_dtype_name(compute));
    if (dl_lowp(compute) && (m->pre != NULL || m->post != NULL))
        return dl_error_set(DL_ERR_ARG, "mlp: %s with per-layer hooks set: the hooks are for fp32 only",
                            dl_dtype_name(compute));
    if (dl_lowp(compute) && m->params16 == NULL) {
        DL_TRY(alloc16(m));
    } else if (dl_lowp(compute) && dl_lowp(m->compute) && compute != m->compute) {
        // the other 16-bit format: the old bits would be misread
        DL_TRY(dl_memset0(m->dev, m->params16, m->n_params * sizeof(uint16_t)));
        DL_TRY(dl_memset0(m->dev, m->grads16, m->n_params * sizeof(uint16_t)));
    }
    if (dl_lowp(compute) && compute != m->compute) // ones in the new type, for the bias GEMV
        DL_TRY(dl_cast(m->dev, m->ones16, compute, m->ones, DL_F32, m->max_batch));
    m->compute = compute;
    return DL_OK;
}

dl_status dl_mlp_set_loss_scale(dl_mlp *m, float s)
{
    if (!(isfinite(s) && s > 0.0f))
        return dl_error_set(DL_ERR_ARG, "mlp: loss scale %g; expected a finite number > 0", (double)s);
    m->loss_scale = s;
    return DL_OK;
}

static dl_status check_batch(const dl_mlp *m, size_t n)
{
    if (n == 0 || n > m->max_batch)
        return dl_error_set(DL_ERR_ARG, "mlp: a batch of %zu rows; expected 1 to max_batch = %zu", n, m->max_batch);
    return DL_OK;
}

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
        if (on_gpu(m)) {
            DL_TRY(dl_cuda_bias_act16_(m->dev, H, Z, L->b16, t, n, L->out, relu));
        } else {
            for (size_t k = 0; k < n * L->out; k++)
                dl_mlp_bias_act16_1(H, Z, L->b16, t, k, L->out, relu);
        }
        A = H;
    }
    return DL_OK;
}

dl_status dl_mlp_forward(dl_mlp *m, const float *X, size_t n)
{
    DL_TRY(check_batch(m, n));
    size_t span = dl_trace_begin(DL_EV_FORWARD, 0, 0, 0);
    if (dl_lowp(m->compute)) {
        dl_status st = forward16(m, X, n);
        if (st == DL_OK)
            m->batch = n;
        dl_trace_end(span);
        return st;
    }
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
        if (on_gpu(m)) {
            DL_TRY(dl_cuda_bias_act_(m->dev, Z, L->b, n, L->out, relu));
        } else {
            cpu_bias_act(Z, L->b, n, L->out, relu);
        }
        if (m->post != NULL)
            DL_TRY(m->post(m->hook_ctx, l, DL_MLP_FORWARD));
        A = Z;
    }
    m->batch = n;
    dl_trace_end(span);
    return DL_OK;
}

dl_status dl_mlp_loss(dl_mlp *m, const int32_t *y, size_t n, double *loss)
{
    DL_TRY(check_batch(m, n));
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
    if (on_gpu(m))
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
    if (on_gpu(m))
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
    if (on_gpu(m))
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

/* The 16-bit backward (see the contract; t = m->compute): dY = round16(g ·
 * loss_scale) into act16[L−1] (the logits are spent), then per layer gW16,
 * gb16 and dX16. */
static dl_status backward16(dl_mlp *m, size_t n, int accumulate, dl_mlp_ready_fn ready, void *ctx)
{
    dl_dtype t = m->compute;
    float beta = accumulate ? 1.0f : 0.0f;
    const dl_mlp_layer *last = &m->layer[m->n_layers - 1];
    uint16_t *dY = m->act16[m->n_layers - 1];
    const float *g = m->act[m->n_layers - 1]; // dLoss/dlogits in fp32, left by dl_mlp_loss
    dl_dev_count_launch((double)n * last->out * (4.0 + 2.0));
    if (on_gpu(m)) {
        DL_TRY(dl_cuda_scale_grad16_(m->dev, dY, t, g, n * last->out, m->loss_scale));
    } else {
        for (size_t k = 0; k < n * last->out; k++)
            dl_mlp_scale_grad16_1(dY, g, t, k, m->loss_scale);
    }
    int which = 0;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        const dl_mlp_layer *L = &m->layer[l];
        const uint16_t *A = l > 0 ? m->act16[l - 1] : m->x16; // this layer's input
        size_t span = dl_trace_begin(DL_EV_BACKWARD, l, 0, 0);
        // gW16 (out, in) = round16(dYᵀ (out, n) · A16 (n, in) [+ gW16]);  gb16 = round16(Σ_rows dY [+ gb16])
        DL_TRY(dl_gemm_ex(m->dev, DL_TRANS, DL_NO_TRANS, L->out, L->in, n, 1.0f, dY, L->out, A, L->in, t, beta, L->gW16,
                          t, L->in));
        if (on_gpu(m)) { // gb16 (out, 1) = round16(dYᵀ (out, n) · 1 [+ gb16]): a GEMV on the tensor cores
            DL_TRY(dl_gemm_ex(m->dev, DL_TRANS, DL_NO_TRANS, L->out, 1, n, 1.0f, dY, L->out, m->ones16, 1, t, beta,
                              L->gb16, t, 1));
        } else { // the same sums in row order, counted as the GEMV is
            dl_flops_add(2ull * n * L->out);
            dl_dev_count_launch(0);
            for (size_t j = 0; j < L->out; j++)
                dl_mlp_bias_grad16_1(L->gb16, dY, t, n, L->out, j, accumulate);
        }
        if (l > 0) {
            // dX16 (n, in) = round16(dY (n, out) · W16 (out, in)), masked by the 16-bit activation
            uint16_t *prev = m->delta16[which];
            which ^= 1;
            DL_TRY(dl_gemm_ex(m->dev, DL_NO_TRANS, DL_NO_TRANS, n, L->in, L->out, 1.0f, dY, L->out, L->W16, L->in, t,
                              0.0f, prev, t, L->in));
            dl_dev_count_launch(3.0 * 2.0 * (double)n * L->in); // read delta and A, write delta
            if (on_gpu(m)) {
                DL_TRY(dl_cuda_relu_mask16_(m->dev, prev, A, t, n * L->in));
            } else {
                for (size_t k = 0; k < n * L->in; k++)
                    dl_mlp_relu_mask16_1(prev, A, t, k);
            }
            dY = prev;
        }
        dl_trace_end(span); // layer l's gradient is final
        if (ready != NULL)
            ready(ctx, l, m->grads16 + L->offset, L->count);
    }
    return DL_OK;
}

dl_status dl_mlp_backward(dl_mlp *m, const float *X, size_t n, int accumulate, dl_mlp_ready_fn ready, void *ctx)
{
    DL_TRY(check_batch(m, n));
    if (n != m->batch)
        return dl_error_set(DL_ERR_ARG, "mlp: backward over %zu rows after a forward of %zu", n, m->batch);
    if (dl_lowp(m->compute))
        return backward16(m, n, accumulate, ready, ctx);
    float beta = accumulate ? 1.0f : 0.0f;
    const float *delta = m->act[m->n_layers - 1]; // dLoss/dlogits, left by dl_mlp_loss
    int which = 0;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        const dl_mlp_layer *L = &m->layer[l];
        const float *A = l > 0 ? m->act[l - 1] : X; // this layer's input
        if (m->pre != NULL)
            DL_TRY(m->pre(m->hook_ctx, l, DL_MLP_BACKWARD));
        size_t span = dl_trace_begin(DL_EV_BACKWARD, l, 0, 0);
        // gW (out, in) = deltaᵀ (out, n) · A (n, in);  gb = deltaᵀ · 1
        DL_TRY(dl_gemm(m->dev, DL_TRANS, DL_NO_TRANS, L->out, L->in, n, 1.0f, delta, L->out, A, L->in, beta, L->gW,
                       L->in));
        DL_TRY(dl_gemv(m->dev, DL_TRANS, n, L->out, 1.0f, delta, L->out, m->ones, beta, L->gb));
        if (l > 0) {
            // delta_prev (n, in) = delta (n, out) · W (out, in), masked by ReLU'(A)
            float *prev = m->delta[which];
            which ^= 1;
            DL_TRY(dl_gemm(m->dev, DL_NO_TRANS, DL_NO_TRANS, n, L->in, L->out, 1.0f, delta, L->out, L->W, L->in, 0.0f,
                           prev, L->in));
            dl_dev_count_launch(3.0 * 4.0 * (double)n * L->in); // read delta and A, write delta
            if (on_gpu(m)) {
                DL_TRY(dl_cuda_relu_mask_(m->dev, prev, A, n * L->in));
            } else {
                cpu_relu_mask(prev, A, n * L->in);
            }
            delta = prev;
        }
        dl_trace_end(span); // layer l's gradient is final
        if (ready != NULL)
            ready(ctx, l, L->gW, L->count);
        if (m->post != NULL)
            DL_TRY(m->post(m->hook_ctx, l, DL_MLP_BACKWARD));
    }
    return DL_OK;
}

/* n elements, all weights (decayed by wd) or all biases (wd 0), at p, g, v. */
static dl_status sgd_run(const dl_mlp *m, size_t n, float *p, const float *g, float *v, float lr, float mu, float wd)
{
    if (n == 0)
        return DL_OK;
    dl_dev_count_launch(5.0 * 4.0 * (double)n); // read p, g, v; write p, v
    if (on_gpu(m))
        return dl_cuda_sgd_(m->dev, p, g, v, n, lr, mu, wd);
    cpu_sgd(p, g, v, n, lr, mu, wd);
    return DL_OK;
}

dl_status dl_mlp_sgd_slice(const dl_mlp *m, size_t first, size_t count, float *p, const float *g, float *v, float lr,
                           float momentum, float weight_decay)
{
    if (count == 0)
        return DL_OK;
    if (first > m->n_params || count > m->n_params - first)
        return dl_error_set(DL_ERR_ARG, "mlp: slice %zu + %zu past the %zu parameters", first, count, m->n_params);
    if (p == NULL || g == NULL || v == NULL)
        return dl_error_set(DL_ERR_ARG, "mlp: a NULL buffer for a slice of %zu elements", count);
    size_t span = dl_trace_begin(DL_EV_OPTIM, 0, 0, 0), end = first + count;
    dl_status st = DL_OK;
    for (int l = 0; l < m->n_layers && st == DL_OK; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        size_t w0 = L->offset, b0 = L->offset + L->out * L->in, e = L->offset + L->count;
        // the slice's overlap with the layer's weights [w0, b0), then with its biases [b0, e)
        size_t a = first > w0 ? first : w0, z = end < b0 ? end : b0;
        if (a < z)
            st = sgd_run(m, z - a, p + (a - first), g + (a - first), v + (a - first), lr, momentum, weight_decay);
        a = first > b0 ? first : b0, z = end < e ? end : e;
        if (a < z && st == DL_OK)
            st = sgd_run(m, z - a, p + (a - first), g + (a - first), v + (a - first), lr, momentum, 0.0f);
    }
    dl_trace_end(span);
    return st;
}

dl_status dl_mlp_set_hooks(dl_mlp *m, dl_mlp_hook_fn pre, dl_mlp_hook_fn post, void *ctx)
{
    if (m->compute != DL_F32)
        return dl_error_set(DL_ERR_ARG, "mlp: per-layer hooks on a %s model: they are for fp32 only",
                            dl_dtype_name(m->compute));
    m->pre = pre;
    m->post = post;
    m->hook_ctx = ctx;
    return DL_OK;
}

dl_status dl_mlp_sgd(dl_mlp *m, float lr, float momentum, float weight_decay)
{
    size_t span = dl_trace_begin(DL_EV_OPTIM, 0, 0, 0);
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        size_t nw = L->out * L->in;
        float *p = m->params + L->offset, *g = m->grads + L->offset, *v = m->velocity + L->offset;
        dl_dev_count_launch(5.0 * 4.0 * (double)nw); // read p, g, v; write p, v
        dl_dev_count_launch(5.0 * 4.0 * (double)L->out);
        if (on_gpu(m)) {
            DL_TRY(dl_cuda_sgd_(m->dev, p, g, v, nw, lr, momentum, weight_decay));
            DL_TRY(dl_cuda_sgd_(m->dev, p + nw, g + nw, v + nw, L->out, lr, momentum, 0.0f));
            continue;
        }
        cpu_sgd(p, g, v, nw, lr, momentum, weight_decay);
        cpu_sgd(p + nw, g + nw, v + nw, L->count - nw, lr, momentum, 0.0f); // biases: no decay
    }
    m->steps++;
    dl_trace_end(span);
    return DL_OK;
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

dl_status dl_mlp_get_params(const dl_mlp *m, float *host)
{
    return dl_memcpy_d2h(m->dev, host, m->params, m->n_params * sizeof *host);
}

dl_status dl_mlp_set_params(dl_mlp *m, const float *host)
{
    return dl_memcpy_h2d(m->dev, m->params, host, m->n_params * sizeof *host);
}

dl_status dl_mlp_write_params(const dl_mlp *m, const char *path)
{
    float *p = malloc((m->n_params ? m->n_params : 1) * sizeof *p);
    if (p == NULL)
        return dl_error_set(DL_ERR_NOMEM, "mlp: out of memory for %zu parameters", m->n_params);
    dl_status st = dl_mlp_get_params(m, p);
    if (st == DL_OK)
        st = dl_npy_write_f32(path, p, m->n_params, 0);
    free(p);
    return st;
}

dl_status dl_mlp_get_velocity(const dl_mlp *m, float *host)
{
    return dl_memcpy_d2h(m->dev, host, m->velocity, m->n_params * sizeof *host);
}

dl_status dl_mlp_set_velocity(dl_mlp *m, const float *host)
{
    return dl_memcpy_h2d(m->dev, m->velocity, host, m->n_params * sizeof *host);
}

long dl_mlp_steps(const dl_mlp *m)
{
    return m->steps;
}

dl_status dl_mlp_set_steps(dl_mlp *m, long steps)
{
    if (steps < 0)
        return dl_error_set(DL_ERR_ARG, "mlp: step count %ld; expected >= 0", steps);
    m->steps = steps;
    return DL_OK;
}

double dl_mlp_step_flops(const dl_mlp *m, size_t n)
{
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    sizes[0] = m->layer[0].in;
    for (int l = 0; l < m->n_layers; l++)
        sizes[l + 1] = m->layer[l].out;
    dl_mlp_cost c;
    dl_mlp_step_cost(sizes, m->n_layers + 1, n, &c);
    return c.flops;
}

// ---- the cost model of a step ----

void dl_mlp_step_cost(const size_t *sizes, int n_sizes, size_t b, dl_mlp_cost *out)
{
    int L = n_sizes - 1;
    double B = (double)b, row_flops = 0, params = 0, bytes = 0;
    for (int l = 0; l < L; l++) {
        // what dl_gemm/dl_gemv count: forward, weight gradient, bias gradient, and
        // the input gradient of every layer but the first
        double io = (double)sizes[l] * (double)sizes[l + 1];
        row_flops += (l > 0 ? 6.0 : 4.0) * io + 2.0 * (double)sizes[l + 1];
        params += (double)sizes[l] * sizes[l + 1] + sizes[l + 1];
    }
    for (int l = 1; l < n_sizes; l++) {
        bytes += 2 * 4 * B * sizes[l]; // bias (+ ReLU): read and write the activations
        if (l + 1 < n_sizes)
            bytes += 3 * 4 * B * sizes[l]; // the ReLU mask in backward: delta, activation, delta
    }
    bytes += 2 * 4 * B * sizes[n_sizes - 1]; // the loss rows
    bytes += 4 * 4 * params; // SGD: parameter, gradient, velocity read, two written
    out->flops = B * row_flops;
    out->mem_bytes = bytes;
    // forward: GEMM + bias per layer; loss; backward: weight GEMM + bias GEMV per
    // layer, input GEMM + mask for all but the first; SGD: two per layer
    out->launches = 2.0 * L + 1 + 2.0 * L + 2.0 * (L - 1) + 2.0 * L;
    out->params = params;
}

dl_status dl_mlp_parse_hidden(const char *flag, const char *list, size_t *sizes, int *n_sizes)
{
    *n_sizes = 0;
    const char *s = list;
    int k = 0;
    while (*s != '\0' && k < DL_MLP_MAX_LAYERS - 1) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536 || (*end != ',' && *end != '\0'))
            break;
        sizes[1 + k++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    if (k == 0 || *s != '\0')
        return dl_error_set(DL_ERR_ARG, "%s '%s': expected 1 to %d widths from 1 to 65536, comma-separated", flag, list,
                            DL_MLP_MAX_LAYERS - 1);
    *n_sizes = k + 2;
    return DL_OK;
}
