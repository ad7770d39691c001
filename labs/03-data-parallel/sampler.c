/* sampler.c — lab 03, task 1: the distributed sampler. */
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
