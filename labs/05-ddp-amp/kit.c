/* kit.c — lab 05's provided helpers; see kit.h. Not a student file. */
#include "kit.h"

#include <string.h> // memset

#include "dl/ops.h" // dl_scale

int kit_param_counts(const dl_mlp *m, size_t *counts)
{
    for (int l = 0; l < m->n_layers; l++) {
        counts[2 * l] = m->layer[l].out * m->layer[l].in;
        counts[2 * l + 1] = m->layer[l].out;
    }
    return 2 * m->n_layers;
}

int kit_per_param_buckets(const dl_mlp *m, ddp_bucket *out)
{
    size_t counts[DDP_MAX_PARAMS], off[DDP_MAX_PARAMS], at = 0;
    int n = kit_param_counts(m, counts);
    for (int p = 0; p < n; p++) {
        off[p] = at;
        at += counts[p];
    }
    for (int k = 0; k < n; k++) {
        int p = n - 1 - k;
        out[k] = (ddp_bucket){.first = p, .last = p, .offset = off[p], .count = counts[p]};
    }
    return n;
}

dl_status kit_flat_step(dl_comm *c, dl_mlp *m, int accum, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    double sum = 0;
    for (int k = 0; k < accum; k++) {
        double l = 0;
        DL_TRY(dl_mlp_forward(m, mb[k].X, mb[k].n));
        DL_TRY(dl_mlp_loss(m, mb[k].y, mb[k].n, &l));
        DL_TRY(dl_mlp_backward(m, mb[k].X, mb[k].n, k > 0, NULL, NULL));
        sum += l;
    }
    if (accum > 1)
        DL_TRY(dl_scale(m->dev, m->grads, m->n_params, DL_F32, 1.0f / (float)accum));
    DL_TRY(dl_comm_allreduce(c, m->grads, m->n_params, DL_F32, DL_RED_AVG));
    *loss = sum / accum;
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}

void kit_sim_layers(const dl_mlp *m, size_t n, dl_sim_layer *layers)
{
    double B = (double)n;
    for (int l = 0; l < m->n_layers; l++) {
        double in = (double)m->layer[l].in, out = (double)m->layer[l].out;
        int last = l + 1 == m->n_layers;
        dl_sim_layer *s = &layers[l];
        memset(s, 0, sizeof *s);
        // forward: the GEMM, then bias and ReLU read and write the activations
        s->fwd_flops = 2 * B * in * out;
        s->fwd_bytes = 2 * 4 * B * out + (last ? 2 * 4 * B * out : 0); // + the loss rows on the last layer
        s->fwd_launches = 2 + last;
        // backward: the weight GEMM, the bias GEMV, and but for layer 0 the
        // input's gradient GEMM and the ReLU mask (delta, activation, delta)
        s->bwd_flops = 2 * B * in * out + 2 * B * out + (l > 0 ? 2 * B * in * out : 0);
        s->bwd_bytes = l > 0 ? 3 * 4 * B * in : 0;
        s->bwd_launches = 2 + (l > 0 ? 2 : 0);
    }
}

void kit_sim_optim(const dl_mlp *m, double *bytes, double *launches)
{
    *bytes = 5.0 * 4 * (double)m->n_params; // parameter, gradient, velocity read; two written
    *launches = 2.0 * m->n_layers;
}

int kit_recorded_buckets(const dl_span *ev, size_t n, long step, dl_sim_bucket *out, int max)
{
    int nb = 0, last_layer = -1, in_backward = 0;
    for (size_t i = 0; i < n && nb < max; i++) {
        if (ev[i].step != step)
            continue;
        if (ev[i].kind == DL_EV_FORWARD) {
            last_layer = -1;
            in_backward = 0;
        } else if (ev[i].kind == DL_EV_BACKWARD) {
            last_layer = ev[i].id;
            in_backward = 1;
        } else if (ev[i].kind == DL_EV_ALLREDUCE && in_backward) {
            // a bucket started after layer 0's backward went at its end
            out[nb++] = (dl_sim_bucket){.bytes = ev[i].bytes, .after_layer = last_layer == 0 ? -1 : last_layer};
        }
    }
    return nb;
}

int kit_structural_buckets(const ddp_bucket *b, int nb, size_t elem_size, dl_sim_bucket *out)
{
    for (int k = 0; k < nb; k++) {
        int layer = b[k].first / 2;
        out[k] = (dl_sim_bucket){.bytes = (double)(b[k].count * elem_size), .after_layer = layer == 0 ? -1 : layer};
    }
    return nb;
}
