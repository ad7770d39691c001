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
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c);
    size_t w = 2 * d + 1; // per rank: count, then d means, then d M2s
    double *mine = calloc(w, sizeof *mine), *all = calloc(w * (size_t)P, sizeof *all);
    if (mine == NULL || all == NULL) {
        free(mine), free(all);
        return dl_error_set(DL_ERR_NOMEM, "ddp_scaler_fit: out of memory");
    }
    double *mu = mine + 1, *m2 = mine + 1 + d;
    mine[0] = (double)n_local;
    for (size_t i = 0; i < n_local; i++) // pass 1: local means
        for (size_t j = 0; j < d; j++)
            mu[j] += X[i * d + j];
    for (size_t j = 0; j < d && n_local > 0; j++)
        mu[j] /= (double)n_local;
    for (size_t i = 0; i < n_local; i++) // pass 2: local squared deviations
        for (size_t j = 0; j < d; j++) {
            double dev = X[i * d + j] - mu[j];
            m2[j] += dev * dev;
        }
    dl_status st = dl_comm_allgather(c, mine, all, w, DL_F64);
    if (st == DL_OK) {
        // Chan et al.: merge rank by rank, in rank order, so every rank computes the same bits
        double n = all[0];
        double *gm = all + 1, *g2 = all + 1 + d; // rank 0's, merged into in place
        for (int r = 1; r < P; r++) {
            const double *o = all + (size_t)r * w;
            double nb = o[0];
            if (nb == 0)
                continue;
            double tot = n + nb;
            for (size_t j = 0; j < d; j++) {
                double delta = o[1 + j] - gm[j];
                gm[j] += delta * nb / tot;
                g2[j] += o[1 + d + j] + delta * delta * n * nb / tot;
            }
            n = tot;
        }
        if (n == 0)
            st = dl_error_set(DL_ERR_ARG, "ddp_scaler_fit: no rows on any rank");
        for (size_t j = 0; st == DL_OK && j < d; j++) {
            double sd = sqrt(g2[j] / n); // ddof = 0
            mean[j] = (float)gm[j];
            scale[j] = sd > 0 ? (float)sd : 1.0f;
        }
    }
    free(mine), free(all);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 2: merge every rank's count, mean and M2 (Chan's formula)"); */
}
