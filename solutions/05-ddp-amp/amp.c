/* amp.c — lab 05, task 5: one mixed-precision step — fp16 forward and
 * backward, fp32 master weights, the loss scaled, every rank deciding alike. */
#include <stdint.h> // int32_t

#include "amp.h"
#include "dl/ops.h" // dl_cast, dl_unscale

dl_status amp_step(ddp_reducer *r, amp_scaler *s, const ddp_micro *mb, const ddp_sgd *opt, double *loss, int *skipped)
{
    if (r == NULL || r->model == NULL || s == NULL || mb == NULL || opt == NULL || skipped == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "amp_step: NULL argument or accum < 1");
    /* BEGIN SOLUTION */
    dl_mlp *m = r->model;
    // the weights the forward sees: the fp32 masters rounded to the model's 16-bit type, afresh each step
    DL_TRY(dl_cast(m->dev, m->params16, m->compute, m->params, DL_F32, m->n_params));
    DL_TRY(dl_mlp_set_loss_scale(m, s->scale));
    double sum = 0;
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
    for (int k = 0; k < r->accum; k++) {
        double l = 0;
        r->sync = k == r->accum - 1;
        DL_TRY(dl_mlp_forward(m, mb[k].X, mb[k].n));
        DL_TRY(dl_mlp_loss(m, mb[k].y, mb[k].n, loss != NULL ? &l : NULL)); // NULL: no wait for the device
        DL_TRY(dl_mlp_backward(m, mb[k].X, mb[k].n, k > 0, ddp_grad_ready, r));
        sum += l;
    }
    DL_TRY(ddp_finish(r)); // the 16-bit buckets, summed over the ranks
    if (loss != NULL)
        *loss = sum / r->accum;
    // unscale into the fp32 gradients the optimizer reads, and look for inf/NaN
    int found = 0;
    DL_TRY(dl_unscale(m->dev, r->grads, r->grad_type, m->grads, m->n_params, 1.0f / s->scale, &found));
    // The buckets were summed before this check, so every rank holds the same
    // values and finds the same thing. The flag is reduced anyway: one int,
    // and the decision must not rest on where an inf came from.
    int32_t flag = found;
    DL_TRY(dl_comm_allreduce(r->comm, &flag, 1, DL_I32, DL_RED_MAX));
    DL_TRY(amp_scaler_update(s, flag != 0, skipped));
    if (*skipped)
        return DL_OK; // master weights, momentum and step count stay as they were
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab05 task 5: the fp16 step with fp32 master weights and the loss scaler"); */
}
