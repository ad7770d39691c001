/* tp.c — lab 07, tasks 1-3: a block's shard, its forward and its backward,
 * split the way Megatron-LM splits an MLP (tp.h has the contract). */
#include "tp.h"

dl_status tp_shard(tp_block *b, const dl_mlp_layer *first, const dl_mlp_layer *second)
{
    if (b == NULL || first == NULL || second == NULL || first->in != b->in || first->out != b->hidden ||
        second->in != b->hidden || second->out != b->out)
        return dl_error_set(DL_ERR_ARG, "tp_shard: the layers are not the block's (%zu -> %zu -> %zu)",
                            b != NULL ? b->in : 0, b != NULL ? b->hidden : 0, b != NULL ? b->out : 0);
    return DL_TODO("lab07 task 1: rank r's part of each layer");
}

dl_status tp_forward(tp_block *b, const float *X, size_t n, float *Y)
{
    if (b == NULL || X == NULL || Y == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_forward: need a block, X, Y and 1 <= n <= max_batch");
    return DL_TODO("lab07 task 2: the block's output, whole on every rank");
}

dl_status tp_backward(tp_block *b, const float *X, size_t n, const float *dY, float *dX)
{
    if (b == NULL || X == NULL || dY == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_backward: need a block, X, dY and 1 <= n <= max_batch");
    return DL_TODO("lab07 task 3: the gradients, and dX whole on every rank");
}
