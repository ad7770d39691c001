/* mlp.c — the kit's MLP: its life (create, precision, free), its parameters
 * and their accessors. GEMMs go through dl_gemm (fp32) or dl_gemm_ex (the
 * 16-bit path: fp16 or bf16) on either device, the element-wise parts as CPU
 * loops (mlp_cpu.c) or CUDA kernels (mlp_cuda.cu) that call the same DL_HD
 * functions (dl/nn_math.h; the 16-bit path's in dl/mlp.h). The passes are
 * mlp_forward.c, mlp_backward.c and mlp_sgd.c; the cost model mlp_cost.c. */
#include "dl/mlp.h"

#include <math.h> // isfinite
#include <stdlib.h> // malloc, free, strtol
#include <string.h> // memset

#include "backend.h" // dl_cuda_fill_
#include "dl/data.h" // dl_npy_write_f32
#include "dl/ops.h" // dl_cast
#include "dl/rng.h" // dl_rng
#include "mlp_impl.h" // mlp_on_gpu, dl_mlp_check_batch_

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
    if (mlp_on_gpu(m))
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

dl_status dl_mlp_check_batch_(const dl_mlp *m, size_t n)
{
    if (n == 0 || n > m->max_batch)
        return dl_error_set(DL_ERR_ARG, "mlp: a batch of %zu rows; expected 1 to max_batch = %zu", n, m->max_batch);
    return DL_OK;
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
