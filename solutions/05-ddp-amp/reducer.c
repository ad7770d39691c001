/* reducer.c — lab 05, tasks 2 and 3: allreduce each bucket as soon as
 * backward has produced it, and accumulate micro-batches without talking. */
#include "ddp.h"
#include "dl/ops.h" // dl_scale

// ---- task 2 ----

void ddp_grad_ready(void *ctx, int layer, void *grad, size_t count)
{
    ddp_reducer *r = ctx;
    (void)grad, (void)count;
    if (r == NULL || r->status != DL_OK)
        return;
    /* BEGIN SOLUTION */
    if (!r->sync)
        return; // no_sync: the gradients stay here and accumulate
    r->ready_from = 2 * layer; // layer l holds parameters 2l (W) and 2l + 1 (b)
    int P = dl_comm_size(r->comm);
    float div = 1.0f / ((float)P * (float)r->accum);
    while (r->next < r->n_buckets && r->bucket[r->next].first >= r->ready_from) {
        const ddp_bucket *b = &r->bucket[r->next];
        // gradient_as_bucket_view: the bucket is a slice of the flat buffer, no copy
        char *view = (char *)r->grads + b->offset * dl_dtype_size(r->grad_type);
        dl_status st = dl_scale(r->model->dev, view, b->count, r->grad_type, div);
        if (st == DL_OK)
            st = dl_comm_allreduce_async(r->comm, view, b->count, r->grad_type, DL_RED_SUM, &r->req[r->next]);
        if (st != DL_OK) {
            r->status = st;
            return;
        }
        r->next++;
    }
    /* END SOLUTION */
    /* STUDENT: r->status = DL_TODO("lab05 task 2: launch the buckets whose gradients are all ready"); */
}

dl_status ddp_finish(ddp_reducer *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_finish: NULL reducer");
    /* BEGIN SOLUTION */
    dl_status st = r->status;
    for (int b = 0; b < r->next; b++) { // wait for everything started, even after a failure
        dl_status w = dl_comm_wait(r->comm, r->req[b]);
        r->req[b] = NULL;
        st = st == DL_OK ? w : st;
    }
    if (st == DL_OK && r->next != r->n_buckets)
        st = dl_error_set(DL_ERR_ARG, "ddp_finish: %d of %d buckets were started (gradients never ready?)", r->next,
                          r->n_buckets);
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab05 task 2: wait for every bucket, then get ready for the next step"); */
}

// ---- task 3 ----

dl_status ddp_step(ddp_reducer *r, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    if (r == NULL || mb == NULL || opt == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_step: NULL argument or accum < 1");
    /* BEGIN SOLUTION */
    double sum = 0;
    r->next = 0;
    r->ready_from = 2 * DL_MLP_MAX_LAYERS;
    r->status = DL_OK;
    for (int k = 0; k < r->accum; k++) {
        double l = 0;
        r->sync = k == r->accum - 1; // talk only once the last micro-batch is in
        DL_TRY(dl_mlp_forward(r->model, mb[k].X, mb[k].n));
        DL_TRY(dl_mlp_loss(r->model, mb[k].y, mb[k].n, loss != NULL ? &l : NULL)); // NULL: no wait for the device
        DL_TRY(dl_mlp_backward(r->model, mb[k].X, mb[k].n, k > 0, ddp_grad_ready, r));
        sum += l;
    }
    DL_TRY(ddp_finish(r));
    if (loss != NULL)
        *loss = sum / r->accum;
    return dl_mlp_sgd(r->model, opt->lr, opt->momentum, opt->weight_decay);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab05 task 3: accum micro-batches, communication on the last, then the step"); */
}
