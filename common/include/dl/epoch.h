/* dl/epoch.h — what one epoch of data-parallel training did, for the metrics
 * and the projection: the loss, the rows and steps of every rank, the work
 * counted while the steps ran, and the barrier-bracketed epoch clock.
 *
 * Contract
 * - A dl_epoch counts one rank's epoch. dl_epoch_begin zeroes it and this
 *   rank's counters (dl_flops_reset, dl_comm_stats_reset): call it after
 *   whatever opens the epoch (its barrier is not the steps' traffic).
 *   dl_epoch_step adds one optimizer step on `rows` rows whose mean loss was
 *   `loss`. The driver brackets its compute with dl_timer_start/stop on
 *   e->compute. dl_epoch_stop reads the counters the steps moved — the
 *   FLOPs of dl_gemm/dl_gemv and the collectives of dl_comm — before any
 *   collective that is not training (the closing barrier, the checks).
 * - dl_epoch_reduce (collective) fills dl_epoch_sums:
 *     loss        Σ loss·rows / Σ rows over every rank's steps (NAN: no rows)
 *     local_loss  the same over this rank's steps only
 *     rows_min, rows_max   the fewest and most rows a rank processed
 *     w           the workload to project (dl/project.h): this rank's FLOPs,
 *                 steps, collectives (allreduce blocking + async; broadcast +
 *                 allgather) and rows, mem_bytes and launches = steps × the
 *                 given per-step cost, dataset = dataset_rows. The slowest
 *                 rank sets the pace: when another rank counted more FLOPs,
 *                 w takes its FLOPs and scales the rows by the same ratio.
 *   All but local_loss and w's collectives are the same on every rank.
 *   It fails with the status of a failed collective.
 * - The kit's epoch clock (lab 03's task 6, for the labs after it; lab 03's
 *   students write their own): dl_epoch_clock_begin is a barrier, then
 *   *t0 = dl_now(); dl_epoch_clock_end is a barrier, then epoch_s = the
 *   largest dl_now() − t0 over the ranks (the same on every rank), every
 *   rank's compute_s gathered into per_rank (P values, the caller's array,
 *   or NULL) and imbalance = their max / mean (1 when the mean is 0).
 * - dl_steady_seconds(t, n, stride): of the n epoch times t[k·stride] (a
 *   column of a row-major table, or stride 1), the median of those after
 *   the first, which pays the warm-up (first touches, caches), or the only
 *   one when n = 1; NAN when n < 1. Cannot fail.
 * - dl_loss_exploded(loss, best, classes): 1 when an epoch's loss says the
 *   training is coming apart — not finite, above 2·ln(classes) (twice the
 *   loss of a uniform guess), or above twice best, the lowest epoch loss so
 *   far (NAN before the first) — else 0. Cannot fail.
 * - dl_epoch_ideal_workload: one rank's epoch as flat data parallelism does
 *   it, with nothing measured: n rows over P ranks (ceil(n/P) each), batches
 *   of b per rank, one allreduce of every gradient per step (none on one
 *   rank), the initial broadcast not counted. With P = 1 it is the same job
 *   on one GPU: the baseline every speedup is measured against.
 */
#ifndef DL_EPOCH_H
#define DL_EPOCH_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm, dl_comm_stats
#include "dl/project.h" // dl_workload
#include "dl/status.h" // dl_status
#include "dl/timer.h" // dl_timer

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_epoch {
    dl_comm *comm;
    dl_timer compute; /* this rank's compute, started and stopped by the driver */
    double loss_sum; /* Σ loss·rows over this rank's steps */
    double rows, steps;
    double flops; /* dl_flops() at dl_epoch_stop */
    dl_comm_stats traffic; /* the steps' collectives, at dl_epoch_stop */
} dl_epoch;

typedef struct dl_epoch_sums {
    double loss, local_loss;
    double rows_min, rows_max;
    dl_workload w;
} dl_epoch_sums;

void dl_epoch_begin(dl_epoch *e, dl_comm *c);
void dl_epoch_step(dl_epoch *e, size_t rows, double loss);
void dl_epoch_stop(dl_epoch *e);
dl_status dl_epoch_reduce(const dl_epoch *e, double step_bytes, double step_launches, double dataset_rows,
                          dl_epoch_sums *out);

dl_status dl_epoch_clock_begin(dl_comm *c, double *t0);
dl_status dl_epoch_clock_end(dl_comm *c, double t0, double compute_s, double *per_rank, double *epoch_s,
                             double *imbalance);

double dl_steady_seconds(const double *t, int n, size_t stride);
int dl_loss_exploded(double loss, double best, int classes);

void dl_epoch_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w);

#ifdef __cplusplus
}
#endif
#endif /* DL_EPOCH_H */
