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
    /* BEGIN SOLUTION */
    return dl_comm_broadcast(c, m->params, m->n_params, DL_F32, 0);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 3: broadcast rank 0's parameters"); */
}

// ---- task 4 ----

dl_status ddp_sync_grads(dl_comm *c, dl_mlp *m)
{
    if (c == NULL || m == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_sync_grads: NULL argument");
    /* BEGIN SOLUTION */
    return dl_comm_allreduce(c, m->grads, m->n_params, DL_F32, DL_RED_AVG);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 4: average the gradients over the ranks"); */
}

// ---- task 5 ----

double ddp_lr_at(const ddp_lr_config *c, long t)
{
    if (c == NULL || c->base_batch == 0 || t < 0)
        return 0.0;
    /* BEGIN SOLUTION */
    double peak = c->base_lr * (double)c->global_batch / (double)c->base_batch; // linear scaling
    long W = c->warmup_steps;
    if (t < W)
        return peak * (double)(t + 1) / (double)W;
    if (!c->cosine)
        return peak;
    if (t >= c->total_steps || c->total_steps <= W)
        return 0.0;
    return peak * 0.5 * (1.0 + cos(acos(-1.0) * (double)(t - W) / (double)(c->total_steps - W)));
    /* END SOLUTION */
    /* STUDENT: return 0.0; // TODO(lab03 task 5): linear scaling with the global batch, warmup, then the schedule */
}

// ---- task 6 ----

dl_status ddp_epoch_begin(dl_comm *c, double *t0)
{
    if (c == NULL || t0 == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_epoch_begin: NULL argument");
    /* BEGIN SOLUTION */
    DL_TRY(dl_comm_barrier(c)); // everyone starts together
    *t0 = dl_now();
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 6: a barrier, then the start time"); */
}

dl_status ddp_epoch_end(dl_comm *c, double t0, double compute_s, ddp_timing *out)
{
    if (c == NULL || out == NULL || out->per_rank_compute == NULL)
        return dl_error_set(DL_ERR_ARG, "ddp_epoch_end: NULL argument or per_rank_compute not allocated");
    /* BEGIN SOLUTION */
    DL_TRY(dl_comm_barrier(c)); // the epoch ends when the slowest rank ends
    double epoch = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(c, &epoch, 1, DL_F64, DL_RED_MAX));
    DL_TRY(dl_comm_allgather(c, &compute_s, out->per_rank_compute, 1, DL_F64));
    int P = dl_comm_size(c);
    double mx = 0, sum = 0;
    for (int r = 0; r < P; r++) {
        mx = out->per_rank_compute[r] > mx ? out->per_rank_compute[r] : mx;
        sum += out->per_rank_compute[r];
    }
    out->epoch_s = epoch;
    out->compute_s = compute_s;
    out->imbalance = sum > 0 ? mx / (sum / P) : 1.0;
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 6: a barrier, the epoch time, every rank's compute time, the imbalance"); */
}
