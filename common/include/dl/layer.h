/* dl/layer.h — one linear layer of the kit's MLP (a dl_mlp_layer view) on
 * its own, forward and backward, for the labs that split a model by hand
 * (lab 07: a layer's shard is a smaller layer). The same arithmetic as
 * dl_mlp's fp32 path, through dl_gemm/dl_gemv (so dl_flops counts it), on
 * any device: the pointers are dev's (host memory on the CPU).
 *
 * Contract
 * - A layer maps in → out with W (out, in) row-major, b (out,) or NULL;
 *   gW (out, in) and gb (out,) or NULL receive its gradients.
 * - dl_layer_forward(dev, L, X, n, flags, Y): Y (n, out) = X·Wᵀ, then, with
 *   DL_LAYER_BIAS, + b on every row, then, with DL_LAYER_RELU, max(·, 0).
 *   DL_LAYER_BIAS with L->b NULL is DL_ERR_ARG.
 * - dl_layer_bias_act(dev, Y, b, n, out, relu): Y (n, out) += b on every
 *   row, then ReLU when relu.
 * - dl_layer_relu_mask(dev, d, A, count): d[k] = 0 where A[k] is not > 0
 *   (ReLU's derivative, from the ReLU's output A).
 * - dl_layer_backward(dev, L, X, n, dY, ones, dX): with X the forward's
 *   input and dY (n, out) the gradient at its output (before any ReLU of
 *   the next step: the caller masks it first): gW = dYᵀ·X; gb = dY's column
 *   sums when L->gb is not NULL (ones: n ones on dev); dX (n, in) = dY·W
 *   when dX is not NULL. Overwrites, never accumulates.
 * - dl_layer_sgd(dev, p, g, v, count, lr, momentum, wd): dl_mlp_sgd's
 *   update (dl_sgd_update) on count elements: pass wd = 0 for a bias.
 * - The loss at the logits, where they are: dl_layer_loss_init(w, dev,
 *   max_n) makes the scratch (freed by dl_layer_loss_free) for batches of up
 *   to max_n rows; dl_layer_xent(w, Z, y, n, C, scale, loss), Z (n, C) and
 *   y (n,) on w's device, makes every row of Z the gradient at its logits,
 *   (softmax − onehot)·scale, as dl_mlp_loss leaves it, and *loss the mean
 *   over the rows of the cross-entropy (one wait); dl_layer_right(w, Z, y,
 *   n, C, right) adds to *right the rows whose argmax (the first of equal
 *   maxima) is their label (one wait). A label outside [0, C) is
 *   DL_ERR_RANGE for dl_layer_xent, a row not right for dl_layer_right.
 *   The rows' losses are added in double on the CPU, in float within a
 *   block of 256 on a GPU and the blocks in double (dl_mlp_loss's sums): the
 *   gradients are the same bits on both, the loss within rounding.
 * - DL_ERR_ARG for a NULL pointer that is needed or n = 0; otherwise the
 *   device's status.
 */
#ifndef DL_LAYER_H
#define DL_LAYER_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t

#include "dl/device.h" // dl_device
#include "dl/mlp.h" // dl_mlp_layer
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

enum { DL_LAYER_BIAS = 1, DL_LAYER_RELU = 2 };

dl_status dl_layer_forward(const dl_device *dev, const dl_mlp_layer *L, const float *X, size_t n, unsigned flags,
                           float *Y);
dl_status dl_layer_bias_act(const dl_device *dev, float *Y, const float *b, size_t n, size_t out, int relu);
dl_status dl_layer_relu_mask(const dl_device *dev, float *d, const float *A, size_t count);
dl_status dl_layer_backward(const dl_device *dev, const dl_mlp_layer *L, const float *X, size_t n, const float *dY,
                            const float *ones, float *dX);
dl_status dl_layer_sgd(const dl_device *dev, float *p, const float *g, float *v, size_t count, float lr, float momentum,
                       float wd);

typedef struct dl_layer_loss {
    const dl_device *dev;
    size_t max_n;
    float *part; /* on a GPU: two floats a block of rows */
    double *acc; /* on a GPU: the MLP's accumulator slots (backend.h) */
} dl_layer_loss;

dl_status dl_layer_loss_init(dl_layer_loss *w, const dl_device *dev, size_t max_n);
dl_status dl_layer_xent(dl_layer_loss *w, float *Z, const int32_t *y, size_t n, size_t C, float scale, double *loss);
dl_status dl_layer_right(dl_layer_loss *w, const float *Z, const int32_t *y, size_t n, size_t C, double *right);
void dl_layer_loss_free(dl_layer_loss *w);

#ifdef __cplusplus
}
#endif
#endif /* DL_LAYER_H */
