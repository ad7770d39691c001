/* tp.h — lab 07, part 1: tensor parallelism of an MLP block (Megatron-LM's
 * split). This header is the contract between your code (tp.c), the
 * driver (main.c) and the grader. Do not change it; the handout
 * (README.md) explains each task.
 *
 * The block. X (n, in) → Z = X·W1ᵀ + b1 → A = ReLU(Z) → Y = A·W2ᵀ + b2, Y (n,
 * out), with W1 (hidden, in), W2 (out, hidden) row-major, as the kit's MLP
 * stores a layer (dl/mlp.h: W (out, in)). No ReLU after Y: what follows the
 * block is the caller's.
 *
 * The split over the P ranks of a communicator: rank r holds the hidden
 * units h0 .. h0 + h − 1, h0 = dl_ring_offset(hidden, P, r), h = the next
 * offset minus h0 (the first hidden mod P ranks hold one unit more; a rank
 * may hold none only when hidden < P, which the kit refuses). Its shard is
 * two smaller layers of the same shape as any layer (dl_mlp_layer):
 *   col  in → h     W (h, in), b (h,): the part of layer 1 that computes its
 *                   hidden units;
 *   row  h → out    W (out, h): the part of layer 2 that reads them;
 *                   b (out,): the whole of b2, on every rank.
 * Which elements of W1 and W2 those are is task 1.
 *
 * Conventions
 * - Every function is called by every rank of b->comm with the same n,
 *   like a collective. X, Y, dY, dX and every buffer of the block are
 *   pointers of b->dev (host memory on the CPU).
 * - Compute with dl/layer.h (dl_layer_forward, dl_layer_backward,
 *   dl_layer_bias_act, dl_layer_relu_mask) and copy with dl_copy; move data
 *   between ranks only with dl_ring_allreduce (dl/ring.h) on b->comm with
 *   b->scratch: no other dl_comm call (the grader refuses them).
 * - Y and dX must be the same bits on every rank: what the ring leaves is.
 * - Every function returns DL_OK, or the status of the first call that
 *   failed. A skeleton returns DL_ERR_TODO.
 */
#ifndef LAB07_TP_H
#define LAB07_TP_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm
#include "dl/device.h" // dl_device
#include "dl/layer.h" // dl_layer_forward, dl_layer_backward, dl_layer_bias_act, dl_layer_relu_mask
#include "dl/mlp.h" // dl_mlp_layer
#include "dl/ops.h" // dl_copy, dl_add
#include "dl/ring.h" // dl_ring_allreduce, dl_ring_offset
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's shard of one block, with the buffers the kit allocated for it
 * (tp_block_init, in the driver): gradients, activations and scratch for
 * up to max_batch rows. */
typedef struct tp_block {
    dl_comm *comm;
    const dl_device *dev;
    int P, r; /* ranks, this rank */
    size_t in, hidden, out; /* the whole block's sizes */
    size_t h0, h; /* this rank's hidden units: h0 .. h0 + h − 1 */
    size_t max_batch;
    dl_mlp_layer col; /* in → h: W, b, gW, gb (each its own buffer) */
    dl_mlp_layer row; /* h → out: W (out, h); b, gb (out,): the whole bias and its gradient */
    float *act; /* (max_batch, h): yours: keep in it what backward needs of forward */
    float *delta; /* (max_batch, h): yours, for backward */
    float *ones; /* (max_batch,): ones, for dl_layer_backward's bias gradients */
    float *scratch; /* dl_ring_allreduce's scratch for up to max_batch · max(in, out) elements */
} tp_block;

// ---- task 1: the shard (tp.c) ----

/* Copies rank b->r's shard out of the whole block's two layers, first
 * (in → hidden) and second (hidden → out), both on b->dev, into b->col's
 * W and b and b->row's W and b. Leaves the gradients alone. DL_ERR_ARG
 * when the layers' sizes are not the block's. */
dl_status tp_shard(tp_block *b, const dl_mlp_layer *first, const dl_mlp_layer *second);

// ---- task 2: forward (tp.c) ----

/* Y (n, out) = the whole block's output for X (n, in), 1 <= n <=
 * b->max_batch; X is the same on every rank, and so must Y be. */
dl_status tp_forward(tp_block *b, const float *X, size_t n, float *Y);

// ---- task 3: backward (tp.c) ----

/* After tp_forward(b, X, n, ...): dY (n, out) is the loss's gradient at Y,
 * the same on every rank. Writes this rank's gradients — b->col.gW, .gb
 * (its hidden units'), b->row.gW (its columns') and b->row.gb (the whole
 * bias's, the same on every rank) — and, when dX is not NULL, dX (n, in),
 * the loss's gradient at X: the whole of it, the same on every rank. With
 * dX NULL (the first block: X is the data) nothing is sent. dY is not
 * changed. */
dl_status tp_backward(tp_block *b, const float *X, size_t n, const float *dY, float *dX);

#ifdef __cplusplus
}
#endif
#endif /* LAB07_TP_H */
