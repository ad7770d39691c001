// attack: (refused at build: the recording calls are not the lab's API; were it built, the judge would say trace-tampered) allreduces every bucket after backward, out of the trace's sight (dl_trace_stop/start around it), and forges the overlap proof: an asynchronous allreduce span of each bucket's bytes, written with dl_trace_begin/end where the real one should have started
// lab: 05
// base: reference
// file: reducer.c
// replace: yes
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_trace_(begin|end|on|stop|start)
// with: micro-batches late-reducer
#include "ddp.h"
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
    if (st == DL_OK)
        st = allreduce_every_bucket(r);
    if (on)
        dl_trace_start(0);
    reducer_reset(r);
    return st;
}
