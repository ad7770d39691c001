// attack: (refused at build: the recording calls are not the lab's API; were it built, the judge would say trace-tampered) allreduces every bucket after backward, out of the trace's sight (dl_trace_stop/start around it), and forges the overlap proof: an asynchronous allreduce span of each bucket's bytes, written with dl_trace_begin/end where the real one should have started
// lab: 05
// base: reference
// file: reducer.c
// replace: yes
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_trace_(begin|end|on|stop|start)
#include "ddp.h"
#include "dl/ops.h" // dl_scale
#include "dl/trace.h" // dl_trace_begin, dl_trace_end, dl_trace_stop, dl_trace_start

void ddp_grad_ready(void *ctx, int layer, void *grad, size_t count)
{
    ddp_reducer *r = ctx;
    (void)grad, (void)count;
    if (r == NULL || r->status != DL_OK || !r->sync)
        return;
    r->ready_from = 2 * layer;
    // the proof, forged: a span of the right bytes where each bucket is ready, and no allreduce
    while (r->next < r->n_buckets && r->bucket[r->next].first >= r->ready_from) {
        double bytes = (double)(r->bucket[r->next].count * dl_dtype_size(r->grad_type));
        dl_trace_end(dl_trace_begin(DL_EV_ALLREDUCE, 0, bytes, 1));
        r->next++;
    }
}

dl_status ddp_finish(ddp_reducer *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_finish: NULL reducer");
    dl_status st = r->status;
    int on = dl_trace_on();
    if (on)
        dl_trace_stop(); // the real work, unseen: every bucket after backward, blocking
    float div = 1.0f / ((float)dl_comm_size(r->comm) * (float)r->accum);
    for (int k = 0; st == DL_OK && k < r->n_buckets; k++) {
        const ddp_bucket *b = &r->bucket[k];
        char *view = (char *)r->grads + b->offset * dl_dtype_size(r->grad_type);
        st = dl_scale(r->model->dev, view, b->count, r->grad_type, div);
        if (st == DL_OK)
            st = dl_comm_allreduce(r->comm, view, b->count, r->grad_type, DL_RED_SUM);
    }
    if (on)
        dl_trace_start(0);
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
