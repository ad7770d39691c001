/* late-reducer.c — for a reducer.c that does the real work after backward
 * (needs micro-batches): allreduce_every_bucket() scales and allreduces each
 * bucket, blocking, and returns the first failure; ddp_step() is the
 * reference's. */
#include "ddp.h"
#include "dl/ops.h" // dl_scale

static dl_status allreduce_every_bucket(ddp_reducer *r)
{
    float div = 1.0f / ((float)dl_comm_size(r->comm) * (float)r->accum);
    dl_status st = DL_OK;
    for (int k = 0; st == DL_OK && k < r->n_buckets; k++) {
        const ddp_bucket *b = &r->bucket[k];
        char *view = (char *)r->grads + b->offset * dl_dtype_size(r->grad_type);
        st = dl_scale(r->model->dev, view, b->count, r->grad_type, div);
        if (st == DL_OK)
            st = dl_comm_allreduce(r->comm, view, b->count, r->grad_type, DL_RED_SUM);
    }
    return st;
}

dl_status ddp_step(ddp_reducer *r, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    if (r == NULL || mb == NULL || opt == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_step: NULL argument or accum < 1");
    DL_TRY(run_micro_batches(r, mb, loss));
    return dl_mlp_sgd(r->model, opt->lr, opt->momentum, opt->weight_decay);
}
