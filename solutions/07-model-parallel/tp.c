/* tp.c — lab 07, tasks 1-3: a block's shard, its forward and its backward,
 * split the way Megatron-LM splits an MLP (tp.h has the contract). */
#include "tp.h"

dl_status tp_shard(tp_block *b, const dl_mlp_layer *first, const dl_mlp_layer *second)
{
    if (b == NULL || first == NULL || second == NULL || first->in != b->in || first->out != b->hidden ||
        second->in != b->hidden || second->out != b->out)
        return dl_error_set(DL_ERR_ARG, "tp_shard: the layers are not the block's (%zu -> %zu -> %zu)",
                            b != NULL ? b->in : 0, b != NULL ? b->hidden : 0, b != NULL ? b->out : 0);
    /* BEGIN SOLUTION */
    // layer 1 by columns of the output: its rows h0 .. h0 + h - 1, one contiguous block, and their biases
    DL_TRY(dl_copy(b->dev, b->col.W, first->W + b->h0 * b->in, b->h * b->in, DL_F32));
    DL_TRY(dl_copy(b->dev, b->col.b, first->b + b->h0, b->h, DL_F32));
    // layer 2 by rows of its input: in each of its out rows, the h weights that read this rank's units
    for (size_t o = 0; o < b->out; o++)
        DL_TRY(dl_copy(b->dev, b->row.W + o * b->h, second->W + o * b->hidden + b->h0, b->h, DL_F32));
    return dl_copy(b->dev, b->row.b, second->b, b->out, DL_F32); // the whole bias: added once, after the sum
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 1: rank r's part of each layer"); */
}

dl_status tp_forward(tp_block *b, const float *X, size_t n, float *Y)
{
    if (b == NULL || X == NULL || Y == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_forward: need a block, X, Y and 1 <= n <= max_batch");
    /* BEGIN SOLUTION */
    // f is the identity forward: X is already whole on every rank
    DL_TRY(dl_layer_forward(b->dev, &b->col, X, n, DL_LAYER_BIAS | DL_LAYER_RELU, b->act));
    DL_TRY(dl_layer_forward(b->dev, &b->row, b->act, n, 0, Y)); // this rank's part of the sum over hidden units
    DL_TRY(dl_ring_allreduce(b->comm, b->dev, Y, n * b->out, DL_F32, b->scratch)); // g: the sum over ranks
    return dl_layer_bias_act(b->dev, Y, b->row.b, n, b->out, 0); // once, after the sum
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 2: the block's output, whole on every rank"); */
}

dl_status tp_backward(tp_block *b, const float *X, size_t n, const float *dY, float *dX)
{
    if (b == NULL || X == NULL || dY == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_backward: need a block, X, dY and 1 <= n <= max_batch");
    /* BEGIN SOLUTION */
    // g is the identity backward: dY is whole on every rank, and so is the bias's gradient
    DL_TRY(dl_layer_backward(b->dev, &b->row, b->act, n, dY, b->ones, b->delta));
    DL_TRY(dl_layer_relu_mask(b->dev, b->delta, b->act, n * b->h));
    DL_TRY(dl_layer_backward(b->dev, &b->col, X, n, b->delta, b->ones, dX));
    if (dX == NULL)
        return DL_OK;
    // f: each rank's dX holds the paths through its own hidden units only; the whole gradient is their sum
    return dl_ring_allreduce(b->comm, b->dev, dX, n * b->in, DL_F32, b->scratch);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 3: the gradients, and dX whole on every rank"); */
}
