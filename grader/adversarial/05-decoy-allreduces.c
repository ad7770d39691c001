// attack: allreduces every bucket after backward (blocking), and passes the overlap proof with decoys: during backward, an asynchronous allreduce of each bucket's size on a scratch buffer, so the trace shows the right bytes in the right places — all with the documented transport
// lab: 05
// base: reference
// file: reducer.c
// replace: yes
// paths: grade
// lose: overlap projection
// expect: outside the gradient buffer
// with: micro-batches late-reducer
#include <stdlib.h> // calloc

#include "ddp.h"

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
    if (st == DL_OK)
        st = allreduce_every_bucket(r); // the real work: every bucket after backward, blocking
    reducer_reset(r);
    return st;
}
