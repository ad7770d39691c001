/* lab03_calls.c — lab 03's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). Most of lab
 * 03 is judged from the driver's runs; these are the functions its tests
 * call in-process, plus dl_comm_stats_get, whose counters the student's
 * calls change. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // malloc

#include "ddp.h"
#include "replay.h"

#define T1 "lab03 task 1"
#define T2 "lab03 task 2"
#define T3 "lab03 task 3"
#define T4 "lab03 task 4"
#define T5 "lab03 task 5"
#define T6 "lab03 task 6"

// ---- task 1: the sampler ----

GR_DECLARE(ddp_sampler_set_epoch);
void GR_FN(ddp_sampler_set_epoch)(ddp_sampler *s, int epoch)
{
    gr_call c;
    gr_call_begin(&c, "ddp_sampler_set_epoch", T1);
    if (gr_call_live(&c))
        GR_REAL(ddp_sampler_set_epoch)(s, epoch);
    const int32_t *labels = s->labels; // the caller's array: keep the pointer
    gr_out(&c, s, sizeof *s); // the whole struct: the student may set any field
    s->labels = labels;
    gr_call_end(&c, DL_OK);
}

GR_DECLARE(ddp_sampler_num_samples);
size_t GR_FN(ddp_sampler_num_samples)(const ddp_sampler *s)
{
    gr_call c;
    gr_call_begin(&c, "ddp_sampler_num_samples", T1);
    size_t n = 0;
    if (gr_call_live(&c))
        n = GR_REAL(ddp_sampler_num_samples)(s);
    gr_out(&c, &n, sizeof n);
    gr_call_end(&c, DL_OK);
    return n;
}

GR_DECLARE(ddp_sampler_indices);
/* The grader's buffers hold s->n + 1 entries; the contract fills
 * num_samples <= n of them (ceil(n / P), or floor with drop_last). */
dl_status GR_FN(ddp_sampler_indices)(const ddp_sampler *s, size_t *out)
{
    gr_call c;
    gr_call_begin(&c, "ddp_sampler_indices", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_sampler_indices)(s, out);
    size_t P = s->world > 0 ? (size_t)s->world : 1;
    size_t per = s->drop_last ? s->n / P : (s->n + P - 1) / P;
    gr_out(&c, out, (per < s->n ? per : s->n) * sizeof *out);
    return gr_call_end(&c, st);
}

// ---- tasks 2-4: the collectives (judged from the driver's runs) ----

GR_DECLARE(ddp_scaler_fit);
dl_status GR_FN(ddp_scaler_fit)(dl_comm *cm, const float *X, size_t n_local, size_t d, float *mean, float *scale)
{
    gr_call c;
    gr_call_begin(&c, "ddp_scaler_fit", T2);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_scaler_fit)(cm, X, n_local, d, mean, scale);
    gr_out(&c, mean, d * sizeof *mean);
    gr_out(&c, scale, d * sizeof *scale);
    return gr_call_end(&c, st);
}

static void out_params(gr_call *c, dl_mlp *m)
{
    float *h = malloc((m->n_params + 1) * sizeof *h);
    if (gr_call_live(c))
        dl_mlp_get_params(m, h);
    gr_out(c, h, m->n_params * sizeof *h);
    if (!gr_call_live(c))
        dl_mlp_set_params(m, h);
    free(h);
}

GR_DECLARE(ddp_broadcast_params);
dl_status GR_FN(ddp_broadcast_params)(dl_comm *cm, dl_mlp *m)
{
    gr_call c;
    gr_call_begin(&c, "ddp_broadcast_params", T3);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_broadcast_params)(cm, m);
    out_params(&c, m);
    return gr_call_end(&c, st);
}

GR_DECLARE(ddp_sync_grads);
dl_status GR_FN(ddp_sync_grads)(dl_comm *cm, dl_mlp *m)
{
    gr_call c;
    gr_call_begin(&c, "ddp_sync_grads", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_sync_grads)(cm, m);
    float *h = malloc((m->n_params + 1) * sizeof *h);
    if (gr_call_live(&c))
        dl_memcpy_d2h(m->dev, h, m->grads, m->n_params * sizeof *h);
    gr_out(&c, h, m->n_params * sizeof *h);
    if (!gr_call_live(&c))
        dl_memcpy_h2d(m->dev, m->grads, h, m->n_params * sizeof *h);
    free(h);
    return gr_call_end(&c, st);
}

// ---- task 5: the learning rate ----

GR_DECLARE(ddp_lr_at);
double GR_FN(ddp_lr_at)(const ddp_lr_config *cfg, long t)
{
    gr_call c;
    gr_call_begin(&c, "ddp_lr_at", T5);
    double lr = 0;
    if (gr_call_live(&c))
        lr = GR_REAL(ddp_lr_at)(cfg, t);
    gr_out(&c, &lr, sizeof lr);
    gr_call_end(&c, DL_OK);
    return lr;
}

// ---- task 6: timing ----

GR_DECLARE(ddp_epoch_begin);
dl_status GR_FN(ddp_epoch_begin)(dl_comm *cm, double *t0)
{
    gr_call c;
    gr_call_begin(&c, "ddp_epoch_begin", T6);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_epoch_begin)(cm, t0);
    gr_out(&c, t0, sizeof *t0);
    return gr_call_end(&c, st);
}

GR_DECLARE(ddp_epoch_end);
dl_status GR_FN(ddp_epoch_end)(dl_comm *cm, double t0, double compute_s, ddp_timing *out)
{
    gr_call c;
    gr_call_begin(&c, "ddp_epoch_end", T6);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_epoch_end)(cm, t0, compute_s, out);
    double *per = out->per_rank_compute; // the caller's array: keep the pointer
    gr_out(&c, out, sizeof *out);
    out->per_rank_compute = per;
    gr_out(&c, per, (size_t)dl_comm_size(cm) * sizeof *per);
    return gr_call_end(&c, st);
}

/* The counters are changed by the library calls the student's code makes. */
GR_DECLARE(dl_comm_stats_get);
void GR_FN(dl_comm_stats_get)(const dl_comm *cm, dl_comm_stats *s)
{
    gr_call c;
    gr_call_begin(&c, "dl_comm_stats_get", "the communication counters");
    if (gr_call_live(&c))
        GR_REAL(dl_comm_stats_get)(cm, s);
    gr_out(&c, s, sizeof *s);
    gr_call_end(&c, DL_OK);
}
