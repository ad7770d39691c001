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
    (void)s, (void)epoch; // TODO(lab03 task 1): remember the epoch: every epoch needs a new order
}

size_t ddp_sampler_num_samples(const ddp_sampler *s)
{
    if (s == NULL || s->world < 1)
        return 0;
    return 0; // TODO(lab03 task 1): ceil(n / world), or floor with drop_last
}


dl_status ddp_sampler_indices(const ddp_sampler *s, size_t *out)
{
    if (s == NULL || out == NULL || s->world < 1 || s->rank < 0 || s->rank >= s->world || s->n == 0)
        return dl_error_set(DL_ERR_ARG, "ddp_sampler_indices: need n > 0 and 0 <= rank < world");
    if (s->labels != NULL && s->C < 1)
        return dl_error_set(DL_ERR_ARG, "ddp_sampler_indices: stratified shards need C >= 1");
    return DL_TODO("lab03 task 1: this rank's shard of a seeded permutation, padded, rows r::world");
}
