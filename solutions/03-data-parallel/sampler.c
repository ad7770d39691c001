/* sampler.c — lab 03, task 1: the distributed sampler.
 *
 * The contract (ddp.h declares it; README.md#task-1-the-distributed-sampler-20-points
 * works it through on n = 10 rows and 3 ranks):
 * - The epoch's order: a permutation of 0..n-1 from a dl_rng seeded with
 *   seed + epoch on stream DDP_SAMPLER_STREAM, the same on every rank (or
 *   0, 1, ..., n-1 without shuffle). Only set_epoch makes it change.
 * - Every rank gets num_samples rows, whatever its rank: ceil(n / world), or
 *   floor(n / world) with drop_last. Equal counts mean equal step counts, so
 *   every step's allreduce is answered by every rank.
 * - Without labels, rank r takes positions r, r + world, r + 2·world, ... of
 *   the order; a position past its end wraps round to its start (padding,
 *   as many times round as n < world needs); drop_last stops before the end.
 * - With labels (stratified), the same positions of the order "by class":
 *   class 0's rows in the epoch's order, then class 1's, ... A rank's rows
 *   before the end are its own; it repeats them from its first to reach
 *   num_samples (or cuts them). A rank with none of its own (only when
 *   n < world) takes position r mod n, as the wrap-round above would.
 *   With shuffle, the rank's num_samples rows are then shuffled on stream
 *   DDP_SAMPLER_STREAM + 1 + rank (seed + epoch), so its batches are not
 *   sorted by class. A label outside [0, C) is DL_ERR_RANGE.
 * - Free what you allocate on every path. */
#include <stdlib.h> // malloc, free

#include "ddp.h"
#include "dl/rng.h" // dl_rng

void ddp_sampler_set_epoch(ddp_sampler *s, int epoch)
{
    /* BEGIN SOLUTION */
    s->epoch = epoch;
    /* END SOLUTION */
    /* STUDENT: (void)s, (void)epoch; // TODO(lab03 task 1): remember the epoch: every epoch needs a new order */
}

size_t ddp_sampler_num_samples(const ddp_sampler *s)
{
    if (s == NULL || s->world < 1)
        return 0;
    /* BEGIN SOLUTION */
    size_t P = (size_t)s->world;
    return s->drop_last ? s->n / P : (s->n + P - 1) / P;
    /* END SOLUTION */
    /* STUDENT: return 0; // TODO(lab03 task 1): ceil(n / world), or floor with drop_last */
}

/* BEGIN SOLUTION */
/* A rank's list of m >= 1 rows brought to exactly want rows: repeated from its start, or cut. */
static void fit_length(const size_t *list, size_t m, size_t want, size_t *out)
{
    for (size_t k = 0; k < want; k++)
        out[k] = list[k % m];
}
/* END SOLUTION */

dl_status ddp_sampler_indices(const ddp_sampler *s, size_t *out)
{
    if (s == NULL || out == NULL || s->world < 1 || s->rank < 0 || s->rank >= s->world || s->n == 0)
        return dl_error_set(DL_ERR_ARG, "ddp_sampler_indices: need n > 0 and 0 <= rank < world");
    if (s->labels != NULL && s->C < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_sampler_indices: stratified shards need C >= 1");
    /* BEGIN SOLUTION */
    size_t n = s->n, P = (size_t)s->world, r = (size_t)s->rank;
    size_t per = ddp_sampler_num_samples(s);
    size_t *perm = malloc(n * sizeof *perm);
    if (perm == NULL)
        return dl_error_set(DL_ERR_NOMEM, "ddp_sampler_indices: out of memory");
    dl_rng rng;
    if (s->shuffle) {
        dl_rng_seed(&rng, s->seed + (uint64_t)s->epoch, DDP_SAMPLER_STREAM);
        dl_rng_permutation(&rng, perm, n);
    } else {
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
    }
    if (s->labels == NULL) {
        // padded (or cut) to per·P, then every P-th position from this rank's
        for (size_t k = 0; k < per; k++)
            out[k] = perm[(r + k * P) % n];
        free(perm);
        return DL_OK;
    }
    // stratified: deal each class round-robin, the count running on across classes.
    // With n < P, rank r >= n is dealt nothing: the deal goes round again and
    // gives it position r mod n, the row of rank r mod n (r mod n = r when n >= P).
    size_t *mine = malloc((n / P + 2) * sizeof *mine), m = 0, pos = 0, take = r % n;
    if (mine == NULL) {
        free(perm);
        return dl_error_set(DL_ERR_NOMEM, "ddp_sampler_indices: out of memory");
    }
    for (int c = 0; c < s->C; c++) {
        for (size_t i = 0; i < n; i++) {
            int32_t y = s->labels[perm[i]];
            if (y < 0 || y >= s->C) {
                dl_status st = dl_error_set(DL_ERR_RANGE,
                                            "ddp_sampler_indices: label %d of row %zu is outside "
                                            "[0, %d)",
                                            y, perm[i], s->C);
                free(perm), free(mine);
                return st;
            }
            if (y != c)
                continue;
            if (pos % P == take)
                mine[m++] = perm[i];
            pos++;
        }
    }
    fit_length(mine, m, per, out);
    if (s->shuffle) { // the rows of a shard must not come sorted by class
        dl_rng_seed(&rng, s->seed + (uint64_t)s->epoch, DDP_SAMPLER_STREAM + 1 + r);
        dl_rng_shuffle(&rng, out, per);
    }
    free(perm), free(mine);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab03 task 1: this rank's shard of a seeded permutation, padded, rows r::world"); */
}
