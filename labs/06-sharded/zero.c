/* zero.c — lab 06, task 3: ZeRO stage 1. Every rank keeps the whole model
 * and computes the whole gradient, but holds SGD's momentum for its own
 * shard only and updates only that shard; the all-gather hands the updated
 * shards round. */
#include "shard.h"

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    return DL_TODO("lab06 task 3: this rank's shard, its momentum and the ring's scratch, from z->mem");
}

dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    if (z == NULL || z->model == NULL || opt == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_step: a state from zero_init and an optimizer are needed");
    return DL_TODO("lab06 task 3: forward, backward, reduce-scatter, your shard's step, all-gather");
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    // TODO(lab06 task 3): give back what zero_init took, through z->mem
}
