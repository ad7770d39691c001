/* fsdp.c — lab 06, tasks 4 and 5: the all-gather and the reduce-scatter
 * started without waiting, and FSDP on them: every layer sharded on its own,
 * whole only while forward or backward needs it, its gradient
 * reduce-scattered to its owners. */
#include "shard.h"


dl_status shard_all_gather_start(dl_comm *c, const dl_device *dev, float *buf, size_t n, shard_pending *p)
{
    if (c == NULL || dev == NULL || p == NULL || (n > 0 && buf == NULL) || dl_comm_size(c) > SHARD_MAX_RANKS)
        return dl_error_set(DL_ERR_ARG, "shard_all_gather_start: need a comm of at most %d ranks, a device, a "
                                        "buffer and a pending record", SHARD_MAX_RANKS);
    return DL_TODO("lab06 task 4: P - 1 exchanges started at once, none waited for");
}

dl_status shard_reduce_scatter_start(dl_comm *c, const dl_device *dev, const float *grad, size_t n, float *out,
                                     float *scratch, shard_pending *p)
{
    int world = c != NULL ? dl_comm_size(c) : 1, me = c != NULL ? dl_comm_rank(c) : 0;
    if (c == NULL || dev == NULL || p == NULL || world > SHARD_MAX_RANKS ||
        (n > 0 && (grad == NULL || (shard_count(n, world, me) > 0 && out == NULL) || (world > 1 && scratch == NULL))))
        return dl_error_set(DL_ERR_ARG, "shard_reduce_scatter_start: need a comm of at most %d ranks, a device, "
                                        "the gradient, its shard, the slots and a pending record", SHARD_MAX_RANKS);
    return DL_TODO("lab06 task 4: P - 1 exchanges of the owners' shards started at once");
}

dl_status shard_wait(dl_comm *c, const dl_device *dev, shard_pending *p)
{
    if (c == NULL || dev == NULL || p == NULL)
        return dl_error_set(DL_ERR_ARG, "shard_wait: need a comm, a device and a pending record");
    return DL_TODO("lab06 task 4: wait for every request, then the reduce-scatter's sum and mean");
}


dl_status fsdp_init(fsdp_state *f)
{
    if (f == NULL || f->comm == NULL || f->model == NULL || f->mem == NULL || dl_comm_size(f->comm) > SHARD_MAX_RANKS)
        return dl_error_set(DL_ERR_ARG, "fsdp_init: the state needs a comm of at most %d ranks, a model and a ledger",
                            SHARD_MAX_RANKS);
    return DL_TODO("lab06 task 5: every layer's three shards, its slice of the start, the hooks");
}

dl_status fsdp_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    fsdp_state *f = ctx;
    (void)f; return DL_TODO("lab06 task 5: the layer gathered into the views, the next on its way");
}

dl_status fsdp_post(void *ctx, int layer, dl_mlp_phase phase)
{
    fsdp_state *f = ctx;
    (void)f; return DL_TODO("lab06 task 5: the layer's gathered parameters freed");
}

void fsdp_grad_ready(void *ctx, int layer, void *grad, size_t count)
{
    fsdp_state *f = ctx;
    (void)f; // TODO(lab06 task 5): the previous layer's reduce-scatter done, this one's started
}

dl_status fsdp_step(fsdp_state *f, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    if (f == NULL || f->model == NULL || opt == NULL)
        return dl_error_set(DL_ERR_ARG, "fsdp_step: a state from fsdp_init and an optimizer are needed");
    return DL_TODO("lab06 task 5: forward and backward through your hooks, the last reduce-scatter, the shards' steps");
}

void fsdp_free(fsdp_state *f)
{
    if (f == NULL || f->model == NULL)
        return;
    // TODO(lab06 task 5): wait for what is in flight, free every buffer, remove the hooks
}
