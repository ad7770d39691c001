/* mlp_sgd.c — the MLP's optimizer step: SGD with momentum and weight decay
 * (dl_sgd_update) over all the parameters, or over one slice of them. */
#include "dl/mlp.h"

#include "backend.h" // dl_cuda_sgd_
#include "dl/trace.h" // dl_trace_begin, dl_trace_end
#include "mlp_impl.h" // mlp_on_gpu, dl_mlp_cpu_sgd_

/* n elements, all weights (decayed by wd) or all biases (wd 0), at p, g, v. */
static dl_status sgd_run(const dl_mlp *m, size_t n, float *p, const float *g, float *v, float lr, float mu, float wd)
{
    if (n == 0)
        return DL_OK;
    dl_dev_count_launch(5.0 * 4.0 * (double)n); // read p, g, v; write p, v
    if (mlp_on_gpu(m))
        return dl_cuda_sgd_(m->dev, p, g, v, n, lr, mu, wd);
    dl_mlp_cpu_sgd_(p, g, v, n, lr, mu, wd);
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

/* Every layer's weights (decayed) and biases (not), on m's device. */
static dl_status sgd_all(dl_mlp *m, float lr, float momentum, float weight_decay)
{
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        size_t nw = L->out * L->in;
        float *p = m->params + L->offset, *g = m->grads + L->offset, *v = m->velocity + L->offset;
        dl_dev_count_launch(5.0 * 4.0 * (double)nw); // read p, g, v; write p, v
        dl_dev_count_launch(5.0 * 4.0 * (double)L->out);
        if (mlp_on_gpu(m)) {
            DL_TRY(dl_cuda_sgd_(m->dev, p, g, v, nw, lr, momentum, weight_decay));
            DL_TRY(dl_cuda_sgd_(m->dev, p + nw, g + nw, v + nw, L->out, lr, momentum, 0.0f));
            continue;
        }
        dl_mlp_cpu_sgd_(p, g, v, nw, lr, momentum, weight_decay);
        dl_mlp_cpu_sgd_(p + nw, g + nw, v + nw, L->count - nw, lr, momentum, 0.0f); // biases: no decay
    }
    return DL_OK;
}

dl_status dl_mlp_sgd(dl_mlp *m, float lr, float momentum, float weight_decay)
{
    size_t span = dl_trace_begin(DL_EV_OPTIM, 0, 0, 0);
    dl_status st = sgd_all(m, lr, momentum, weight_decay);
    if (st == DL_OK)
        m->steps++;
    dl_trace_end(span); // on every path
    return st;
}
