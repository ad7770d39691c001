// attack: the AMP step decides skip on each rank's own inf/NaN check and never reduces the flag over the ranks (the handout's rule); the summed buckets agree, so every decision matches
// lab: 05
// base: reference
// file: amp.c
// replace: yes
// paths: grade
// lose: amp_skip
// expect: flag-not-reduced
// with: micro-batches
#include "amp.h"
#include "dl/ops.h" // dl_cast, dl_unscale

dl_status amp_step(ddp_reducer *r, amp_scaler *s, const ddp_micro *mb, const ddp_sgd *opt, double *loss, int *skipped)
{
    if (r == NULL || r->model == NULL || s == NULL || mb == NULL || opt == NULL || skipped == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "amp_step: NULL argument or accum < 1");
    dl_mlp *m = r->model;
    DL_TRY(dl_cast(m->dev, m->params16, m->compute, m->params, DL_F32, m->n_params));
    DL_TRY(dl_mlp_set_loss_scale(m, s->scale));
    DL_TRY(run_micro_batches(r, mb, loss));
    int found = 0;
    DL_TRY(dl_unscale(m->dev, r->grads, r->grad_type, m->grads, m->n_params, 1.0f / s->scale, &found));
    DL_TRY(amp_scaler_update(s, found, skipped)); // the sums agree on every rank: no need to share the flag
    if (*skipped)
        return DL_OK;
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}
