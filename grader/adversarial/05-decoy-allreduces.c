// attack: allreduces every bucket after backward (blocking), and passes the overlap proof with decoys: during backward, an asynchronous allreduce of each bucket's size on a scratch buffer, so the trace shows the right bytes in the right places — all with the documented transport
// lab: 05
// base: reference
// file: reducer.c
// replace: yes
// lose: overlap projection
// expect: outside the gradient buffer
#include <stdlib.h> // calloc

#include "ddp.h"
#include "dl/ops.h" // dl_scale

static void *decoy; // as large as the gradients, never read

void ddp_grad_ready(void *ctx, int layer, void *grad, size_t count)
{
    ddp_reducer *r = ctx;
    (void)grad, (void)count;
    if (r == NULL || r->status != DL_OK || !r->sync)
        return;
    if (decoy == NULL)
        decoy = calloc(r->model->n_params, 4);
    r->ready_from = 2 * layer;
    while (r->next < r->n_buckets && r->bucket[r->next].first >= r->ready_from) {
        const ddp_bucket *b = &r->bucket[r->next];
        dl_status st = dl_comm_allreduce_async(r->comm, decoy, b->count, r->grad_type, DL_RED_SUM, &r->req[r->next]);
        if (st != DL_OK) {
            r->status = st;
            return;
        }
        r->next++;
    }
}

dl_status ddp_finish(ddp_reducer *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_finish: NULL reducer");
    dl_status st = r->status;
    for (int k = 0; k < r->next; k++) {
        dl_status w = dl_comm_wait(r->comm, r->req[k]);
        r->req[k] = NULL;
        st = st == DL_OK ? w : st;
    }
    // the real work: every bucket after backward, blocking
    float div = 1.0f / ((float)dl_comm_size(r->comm) * (float)r->accum);
    for (int k = 0; st == DL_OK && k < r->n_buckets; k++) {
        const ddp_bucket *b = &r->bucket[k];
        char *view = (char *)r->grads + b->offset * dl_dtype_size(r->grad_type);
        st = dl_scale(r->model->dev, view, b->count, r->grad_type, div);
        if (st == DL_OK)
            st = dl_comm_allreduce(r->comm, view, b->count, r->grad_type, DL_RED_SUM);
    }
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
    return st;
}

dl_status ddp_step(ddp_reducer *r, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    if (r == NULL || mb == NULL || opt == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_step: NULL argument or accum < 1");
    double sum = 0;
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
    for (int k = 0; k < r->accum; k++) {
        double l = 0;
        r->sync = k == r->accum - 1;
        DL_TRY(dl_mlp_forward(r->model, mb[k].X, mb[k].n));
        DL_TRY(dl_mlp_loss(r->model, mb[k].y, mb[k].n, loss != NULL ? &l : NULL));
        DL_TRY(dl_mlp_backward(r->model, mb[k].X, mb[k].n, k > 0, ddp_grad_ready, r));
        sum += l;
    }
    DL_TRY(ddp_finish(r));
    if (loss != NULL)
        *loss = sum / r->accum;
    return dl_mlp_sgd(r->model, opt->lr, opt->momentum, opt->weight_decay);
}
