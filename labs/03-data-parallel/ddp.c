/* ddp.c — lab 03, tasks 3 to 6: same start, gradient averaging, the learning
 * rate, and timing. */
#include <math.h> // cos

#include "ddp.h"
#include "dl/timer.h" // dl_now

// ---- task 3 ----

dl_status ddp_broadcast_params(dl_comm *c, dl_mlp *m)
{
    if (c == NULL || m == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_broadcast_params: NULL argument");
    return DL_TODO("lab03 task 3: broadcast rank 0's parameters");
}

// ---- task 4 ----

dl_status ddp_sync_grads(dl_comm *c, dl_mlp *m)
{
    if (c == NULL || m == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_sync_grads: NULL argument");
    return DL_TODO("lab03 task 4: average the gradients over the ranks");
}

// ---- task 5 ----

double ddp_lr_at(const ddp_lr_config *c, long t)
{
    if (c == NULL || c->base_batch == 0 || t < 0)
        return 0.0;
    return 0.0; // TODO(lab03 task 5): linear scaling with the global batch, warmup, then the schedule
}

// ---- task 6 ----

dl_status ddp_epoch_begin(dl_comm *c, double *t0)
{
    if (c == NULL || t0 == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_epoch_begin: NULL argument");
    return DL_TODO("lab03 task 6: a barrier, then the start time");
}

dl_status ddp_epoch_end(dl_comm *c, double t0, double compute_s, ddp_timing *out)
{
    if (c == NULL || out == NULL || out->per_rank_compute == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_epoch_end: NULL argument or per_rank_compute not allocated");
    return DL_TODO("lab03 task 6: a barrier, the epoch time, every rank's compute time, the imbalance");
}
