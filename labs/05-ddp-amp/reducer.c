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
    r->status = DL_TODO("lab05 task 2: launch the buckets whose gradients are all ready");
}

dl_status ddp_finish(ddp_reducer *r)
{
    if (r == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_finish: NULL reducer");
    return DL_TODO("lab05 task 2: wait for every bucket, then get ready for the next step");
}

// ---- task 3 ----

dl_status ddp_step(ddp_reducer *r, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    if (r == NULL || mb == NULL || opt == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_step: NULL argument or accum < 1");
    return DL_TODO("lab05 task 3: accum micro-batches, communication on the last, then the step");
}
