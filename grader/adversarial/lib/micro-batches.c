/* micro-batches.c — lab 05's accumulation as the reference does it:
 * reducer_reset() readies the reducer for a step (nothing started, no layer
 * ready, no error); run_micro_batches() runs forward, loss and backward on
 * each of r->accum micro-batches (ddp_grad_ready told to talk on the last
 * alone), then ddp_finish, and puts their mean loss in *loss unless NULL. */
#include "ddp.h"

static void reducer_reset(ddp_reducer *r)
{
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
}

static dl_status run_micro_batches(ddp_reducer *r, const ddp_micro *mb, double *loss)
{
    double sum = 0;
    reducer_reset(r);
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
    return DL_OK;
}
