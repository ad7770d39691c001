/* ddp.c — lab 03, tasks 3 to 6: same start, gradient averaging, the learning
 * rate, and timing.
 *
 * The contract (ddp.h declares it; README.md has a section per task):
 * - Every function here is called by every rank, and every collective in it
 *   must be too: in the same order, with the same count and dtype.
 * - m->params and m->grads are flat buffers on the model's device (device
 *   pointers on a GPU): hand them to dl_comm as they are; never read them on
 *   the host. Host variables (a time, a count) go to dl_comm as they are too.
 * - Task 3: afterwards every rank holds rank 0's parameters, bit for bit.
 * - Task 4: afterwards every rank's gradient is the mean of the ranks'
 *   gradients, the gradient of the global batch's mean loss: the same bits on
 *   every rank, and the same step as one rank at P times the batch.
 * - Task 5: a pure function of the config and the step: linear scaling by
 *   global_batch / base_batch, a warmup already above 0 at step 0, then
 *   constant or a half cosine down to 0 at total_steps. M_PI is not declared
 *   under -std=c11; acos(-1.0) is the double nearest π.
 * - Task 6: the epoch is timed from a point every rank has reached to a point
 *   every rank has reached, and every rank reports the same epoch time; the
 *   imbalance is the slowest rank's compute time over the mean (1 if equal). */
#include <math.h> // cos, acos

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
