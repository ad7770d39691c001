/* kit.h — lab 07's kit: a block's buffers (kit.c, which the grader links
 * too) and the tensor-parallel model the driver trains from your blocks
 * (model.c). Not a student file.
 *
 * - tp_block_init(b, c, dev, in, hidden, out, max_batch) sets b's sizes and
 *   this rank's hidden units (tp.h: dl_ring_offset) and allocates every
 *   buffer of b on dev, zeroed, but ones (ones). DL_ERR_ARG for a zero
 *   size or hidden < P (a rank with no unit); DL_ERR_NOMEM. tp_block_free
 *   frees them and zeroes b (a zeroed block may be freed).
 * - A model of 2K layers (the kit's MLP, dl/mlp.h) is K blocks: block k is
 *   layers 2k (split by columns) and 2k + 1 (by rows); between two blocks
 *   the ReLU is applied to the whole output, on every rank.
 * - tp_model_init(M, c, dev, ref, max_batch): the blocks of ref's layers,
 *   each shard taken from ref by your tp_shard; momentum buffers zeroed.
 *   tp_model_step(M, X, y, n, lr, mu, wd, &loss): forward (your
 *   tp_forward, block by block), the mean cross-entropy on the logits
 *   (whole on every rank), backward (your tp_backward, dX for every block
 *   but the first), then dl_mlp_sgd's update on each shard (wd on weights
 *   only). tp_model_right(M, X, y, n, &right) adds the rows predicted right.
 * - tp_model_diff(M, ref, &diff): the largest |difference| between each
 *   rank's shards and the shards your tp_shard takes from ref now, over
 *   every parameter of every rank (collective: the same on every rank).
 * - tp_model_dump(M, dir): each block's shards as DIR/rR_bK_NAME.npy (NAME:
 *   W1 b1 W2 b2; R the rank, K the block).
 * - Traffic, in closed form: tp_model_allreduces() per step (one forward
 *   per block and one backward per block but the first), tp_model_bytes(M, n)
 *   the bytes this rank sends in a step of n rows (dl_ring_bytes of each).
 * - tp_selftest(c, dev, seed, dir): the grader's check of tasks 1-3 on a
 *   small block (TP_CHECK_* sizes, uneven over 2 to 4 ranks): the whole
 *   block from dl_mlp_create(seed), X and dY from seed; writes each rank's
 *   shard, Y, dX and gradients to DIR/rR_NAME.npy (NAME: W1 b1 W2 b2 Y dX
 *   gW1 gb1 gW2 gb2).
 */
#ifndef LAB07_KIT_H
#define LAB07_KIT_H

#include <stdint.h> // uint64_t, int32_t

#include "dl/layer.h" // dl_layer_loss
#include "dl/mlp.h" // dl_mlp
#include "tp.h" // tp_block

#define TP_MAX_BLOCKS (DL_MLP_MAX_LAYERS / 2)
#define TP_CHECK_IN 6
#define TP_CHECK_HIDDEN 7
#define TP_CHECK_OUT 5
#define TP_CHECK_ROWS 4

/* The kit's helpers (kit.c): kit_alloc, count floats (at least one) of dev,
 * zeroed; kit_max_diff, *d = the largest of *d and |a[i] − b[i]| over count
 * floats of dev (NaN wins); kit_dump, DIR/rR_NAME.npy of rows × cols floats
 * of dev (NULL: the host's). Each returns the first failure. */
dl_status kit_alloc(const dl_device *dev, float **p, size_t count);
dl_status kit_max_diff(const dl_device *dev, const float *a, const float *b, size_t count, double *d);
dl_status kit_dump(const char *dir, int r, const char *name, const dl_device *dev, const float *a, size_t rows,
                   size_t cols);

dl_status tp_block_init(tp_block *b, dl_comm *c, const dl_device *dev, size_t in, size_t hidden, size_t out,
                        size_t max_batch);
void tp_block_free(tp_block *b);

typedef struct tp_model {
    int K; /* blocks */
    tp_block blk[TP_MAX_BLOCKS];
    float *vel[TP_MAX_BLOCKS][4]; /* momentum of col.W, col.b, row.W, row.b */
    float *x[TP_MAX_BLOCKS +
             1]; /* x[k] (max_batch, in_k): block k's input (x[0]: the batch's, not owned); x[K]: the logits */
    float *dx[TP_MAX_BLOCKS + 1]; /* dx[k]: the gradient at x[k] */
    dl_layer_loss loss; /* the loss's scratch, beside the logits */
    size_t max_batch, classes;
} tp_model;

dl_status tp_model_init(tp_model *M, dl_comm *c, const dl_device *dev, const dl_mlp *ref, size_t max_batch);
void tp_model_free(tp_model *M);
dl_status tp_model_step(tp_model *M, const float *X, const int32_t *y, size_t n, float lr, float mu, float wd,
                        double *loss);
dl_status tp_model_right(tp_model *M, const float *X, const int32_t *y, size_t n, double *right);
dl_status tp_model_diff(tp_model *M, const dl_mlp *ref, double *diff);
int tp_model_allreduces(const tp_model *M);
uint64_t tp_model_bytes(const tp_model *M, size_t n);
dl_status tp_model_dump(const tp_model *M, const char *dir);
dl_status tp_check_inputs(const dl_device *dev, uint64_t seed, dl_mlp *whole, float *X, float *dY);
dl_status tp_selftest(dl_comm *c, const dl_device *dev, uint64_t seed, const char *dir);

#endif /* LAB07_KIT_H */
