/* dscaler.c — lab 03, task 2: standard-scaler statistics over all ranks.
 *
 * The contract (ddp.h declares it; README.md#task-2-the-distributed-scaler-10-points
 * merges two shards by hand):
 * - Every rank returns the same mean and scale (d floats each), equal to lab
 *   01's scaler fitted on the rows of all ranks together: the population std
 *   (ddof 0), 1 where it is 0. No rows on any rank at all is DL_ERR_ARG. A
 *   rank with n_local = 0 still makes every collective call the others make.
 * - A rank's rows reduce to three numbers per feature, in double: the count,
 *   the mean and M2, the sum of squared deviations from that mean (two
 *   passes, as in lab 01). Two such summaries merge exactly (Chan's formula,
 *   in ddp.h); sums of x and of x² do not (cancellation, lab 01).
 * - Every rank merges the P summaries in the same order, rank 0 first, or the
 *   ranks' statistics differ in the last bits.
 * - Free what you allocate on every path. */
#include <math.h>   // sqrt
#include <stdlib.h> // calloc, free

#include "ddp.h"

dl_status ddp_scaler_fit(dl_comm *c, const float *X, size_t n_local, size_t d, float *mean, float *scale)
{
    if (c == NULL || (X == NULL && n_local > 0) || mean == NULL || scale == NULL || d == 0)
        return dl_error_set(DL_ERR_ARG, "ddp_scaler_fit: NULL argument or d = 0");
    return DL_TODO("lab03 task 2: merge every rank's count, mean and M2 (Chan's formula)");
}
