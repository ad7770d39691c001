/* dl/mlp.h — the kit's multilayer perceptron for the data-parallel labs.
 *
 * Contract
 * - Layers l = 0..L−1 map in_l → out_l with W_l (out_l, in_l) row-major and
 *   b_l (out_l,); ReLU after every layer but the last; the last layer's
 *   outputs are logits of a softmax cross-entropy loss.
 * - All parameters live in one flat device buffer `params` — W_0, b_0, W_1,
 *   b_1, ... — and the gradients in `grads` with the same layout, so a whole
 *   model (or a bucket of consecutive layers) is one broadcast or one
 *   allreduce. layer[l].offset / .count give each layer's slice.
 * - Buffers (X, y, params, grads) are device pointers of dev (host pointers
 *   on the CPU). GEMMs go through dl_gemm (dl_gemm_ex in fp16/bf16 mode), so
 *   dl_flops counts them.
 * - dl_mlp_loss takes the mean over the n rows of the batch. `loss` may be
 *   NULL, and should be on a GPU inside a training step: reading the value
 *   back makes the host wait for the device. Whether or not it is read, the
 *   mean is added on the device to the step's sum; dl_mlp_loss_commit ends
 *   a step — its sum divided by the micro-batches it had is added to the
 *   running total, or dropped (a skipped step) — and dl_mlp_loss_total
 *   reads the total once (an epoch's curve: one wait), in the same double
 *   arithmetic and order as a host loop `total += step_sum / per` over the
 *   values read back, so both give the same bits. A label outside [0, C) is
 *   DL_ERR_RANGE: at the call when the value is read (and always on the
 *   CPU), else at the next dl_mlp_loss_total. dl_mlp_backward
 *   therefore leaves the gradient of that mean in grads (in fp16/bf16 mode:
 *   times loss_scale, in grads16; overwritten, not accumulated, unless
 *   accumulate = 1), and calls ready(ctx, l, slice, count)
 *   as soon as layer l's slice is final — last layer first — so an allreduce
 *   can start while the earlier layers are still being computed. The slice
 *   is in the gradient's dtype: fp32 (grads) or, in fp16/bf16 mode, grads16
 *   in m->compute.
 * - Per-layer hooks (dl_mlp_set_hooks; fp32 only), for a model whose layers
 *   are not all resident, as FSDP keeps them: forward calls pre(ctx, l,
 *   DL_MLP_FORWARD) before it reads layer l's W and b, and post(ctx, l,
 *   DL_MLP_FORWARD) once it is done with them; backward calls pre(ctx, l,
 *   DL_MLP_BACKWARD) before it reads layer l's W or writes its gW and gb,
 *   then, once layer l's gradient is final, ready (its slice is layer[l].gW
 *   then gb: count elements there, wherever the hook pointed them), then
 *   post(ctx, l, DL_MLP_BACKWARD). So a hook may point layer[l].W/b/gW/gb
 *   at buffers of its own in pre and take them back in post (W then b, gW
 *   then gb, contiguous, as in params). A hook's failure stops the pass
 *   with its status. Evaluation (dl_mlp_count_right, dl_mlp_predict) runs
 *   forward, so it calls the hooks too. dl_mlp_sgd, dl_mlp_get_params and
 *   the other whole-model calls read params and grads, not the views.
 * - dl_mlp_create initialises deterministically from the seed (Kaiming-uniform
 *   weights, zero biases): the same seed gives the same model on any device.
 * - Precision (dl_mlp_set_precision): DL_F32 (after create) computes in fp32
 *   throughout. DL_F16 is the "fp16 model, fp32 master weights" scheme of
 *   mixed-precision training (Micikevicius et al. 2018; apex O2); DL_BF16 is
 *   the same scheme with bfloat16 (dl/bf16.h) in place of fp16 everywhere
 *   below — fp32's range at 8 bits of precision, so gradients do not
 *   underflow and the loss scale can stay 1 (it still applies). The
 *   "16-bit" buffers below hold elements of m->compute: dl_half in DL_F16
 *   mode, dl_bf16 in DL_BF16 mode (hence uint16_t *, the bits: pointer
 *   arithmetic counts elements of either; read them with dl_lowp_get or
 *   dl_cast with m->compute). Either mode allocates, once
 *   (zeros; freed by dl_mlp_free), params16/grads16 (the layout of params)
 *   and 16-bit activations, input copy and scratch, which the other 16-bit
 *   mode reuses (a change between DL_F16 and DL_BF16 zeroes params16 and
 *   grads16: their bits would mean another format). Then, with round16 the
 *   rounding to m->compute (nearest even, once):
 *   - forward rounds X to 16 bits and computes every layer from params16 —
 *     which the caller fills (dl_cast from params); forward never does — as
 *     Z = round16(A·W16ᵀ + b16) (dl_gemm_ex: 16-bit in, fp32 accumulate; the
 *     bias added in fp32; one rounding) then ReLU; the logits are 16-bit;
 *   - dl_mlp_loss converts the 16-bit logits exactly to fp32 and is then the
 *     fp32 loss (same definition, same gradient kept for backward);
 *   - backward rounds that gradient once, dY = round16(((softmax − onehot)/n)
 *     · loss_scale) — where small gradients underflow to 0 unless the scale
 *     lifts them — and writes grads16 only: gW16 = round16(dYᵀ·A16 [+ gW16])
 *     with A16 the layer's 16-bit input (x16 or act16[l−1]), gb16 =
 *     round16(fp32 column sums of dY [+ gb16]) — in row order on the CPU; on
 *     CUDA a GEMV of dYᵀ by ones on the tensor cores, in cuBLAS's order, so
 *     a value may land one 16-bit ulp from the CPU's — and the next
 *     dY = round16(dY·W16), zeroed where A16 is not > 0.
 *     `grads` is not written: the caller's AMP step fills it (dl_unscale)
 *     before dl_mlp_sgd, which stays fp32 on params, grads and velocity;
 *   - ready gets grads16's slice (grad points to elements of m->compute);
 *     order and trace spans are those of fp32; dl_mlp_predict uses the
 *     16-bit logits.
 *   The element-wise steps are the DL_HD functions below, shared by the CPU
 *   loops and the CUDA kernels; dl_flops counts the 16-bit GEMMs and the bias
 *   column sums as fp32 counts GEMMs and GEMVs, so dl_mlp_step_flops holds
 *   for every precision.
 * - What a checkpoint needs besides the parameters: the momentum buffers
 *   (`velocity`, the layout of params) and the optimizer step count `steps`,
 *   which dl_mlp_sgd advances by one each time it succeeds (0 after create).
 *   Restoring params, velocity and steps into a model of the same sizes
 *   makes its next steps exactly those the saved model would have taken.
 * - Every call returns DL_OK or a failure status (DL_ERR_ARG for a batch over
 *   max_batch, a bad layer size or a label out of range; for a precision
 *   other than DL_F32/DL_F16/DL_BF16 or a loss scale that is not finite and > 0,
 *   leaving the model unchanged).
 */
#ifndef DL_MLP_H
#define DL_MLP_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, uint64_t, uint16_t

#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/hd.h" // DL_HD
#include "dl/lowp.h" // dl_lowp_get, dl_lowp_put (dl_half, dl_bf16)
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

#define DL_MLP_MAX_LAYERS 8

typedef struct dl_mlp_layer {
    size_t in, out;
    size_t offset, count; /* slice of params / grads: W then b */
    float *W, *b; /* views into params */
    float *gW, *gb; /* views into grads */
    uint16_t *W16, *b16, *gW16, *gb16; /* views into params16 / grads16 (NULL before fp16/bf16) */
} dl_mlp_layer;

/* grad: layer's slice of grads (float) or, in fp16/bf16 mode, of grads16
 * (dl_half or dl_bf16, as m->compute). */
typedef void (*dl_mlp_ready_fn)(void *ctx, int layer, void *grad, size_t count);
typedef enum dl_mlp_phase { DL_MLP_FORWARD = 0, DL_MLP_BACKWARD = 1 } dl_mlp_phase;
/* A per-layer hook (see the contract): DL_OK, or a failure that stops the pass. */
typedef dl_status (*dl_mlp_hook_fn)(void *ctx, int layer, dl_mlp_phase phase);

typedef struct dl_mlp {
    const dl_device *dev;
    int n_layers;
    dl_mlp_layer layer[DL_MLP_MAX_LAYERS];
    size_t n_params;
    float *params, *grads, *velocity; /* (n_params,) each, device */
    size_t max_batch;
    float *act[DL_MLP_MAX_LAYERS]; /* act[l]: (max_batch, out_l), layer l's output */
    float *delta[2]; /* backward scratch, (max_batch, widest) each */
    float *ones; /* (max_batch,) for the bias gradients */
    float *loss_part; /* device scratch for the loss */
    /* device (6,): the step's loss sum, the running total, labels out of
     * range seen, right predictions counted (dl_mlp_count_right), the last
     * batch's mean loss and its bad labels */
    double *acc;
    uint16_t *ones16; /* (max_batch,) ones in m->compute: the 16-bit bias gradient as a GEMV on CUDA */
    size_t batch; /* rows of the last forward */
    long steps; /* optimizer steps taken (dl_mlp_sgd calls that succeeded) */
    dl_dtype compute; /* DL_F32, DL_F16 or DL_BF16: the forward/backward precision */
    dl_mlp_hook_fn pre, post; /* per-layer hooks (dl_mlp_set_hooks), or NULL */
    void *hook_ctx;
    float loss_scale; /* the 16-bit backward multiplies the logits' gradient by it (1 after create) */
    /* The 16-bit buffers: the bits of elements of m->compute (dl_half or
     * dl_bf16), device; NULL until the first DL_F16 or DL_BF16. */
    uint16_t *params16, *grads16; /* (n_params,) each */
    uint16_t *act16[DL_MLP_MAX_LAYERS]; /* act16[l]: (max_batch, out_l); the last also holds dY */
    uint16_t *x16; /* (max_batch, in_0): X rounded to 16 bits */
    uint16_t *delta16[2]; /* 16-bit backward scratch, (max_batch, widest) each */
} dl_mlp;

// ---- the 16-bit path's element-wise steps (DL_HD: CPU loops and CUDA kernels) ----
// t is m->compute, DL_F16 or DL_BF16; each step reads and writes element k
// (or column j) of arrays of t with dl_lowp_get / dl_lowp_put, so every value
// stored is rounded once, the same on both sides.

/* H[k] = round16(Z[k] + b[k % out]) with the sum in fp32 and ReLU when relu:
 * output k of a layer of out outputs, Z the fp32 GEMM sum. */
DL_HD void dl_mlp_bias_act16_1(void *H, const float *Z, const void *b, dl_dtype t, size_t k, size_t out, int relu)
{
    float v = Z[k] + dl_lowp_get(b, k % out, t);
    dl_lowp_put(H, k, t, relu && v < 0.0f ? 0.0f : v);
}

/* dY[k] = round16(g[k] · loss_scale): the logits' gradient g (fp32), scaled. */
DL_HD void dl_mlp_scale_grad16_1(void *dY, const float *g, dl_dtype t, size_t k, float loss_scale)
{
    dl_lowp_put(dY, k, t, g[k] * loss_scale);
}

/* gb[j] = round16(Σ_i dY[i, j] [+ gb[j]]): column j of dY (n, out) summed in
 * fp32 in row order, plus the old gb[j] when accumulate, rounded once. */
DL_HD void dl_mlp_bias_grad16_1(void *gb, const void *dY, dl_dtype t, size_t n, size_t out, size_t j, int accumulate)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++)
        s += dl_lowp_get(dY, i * out + j, t);
    dl_lowp_put(gb, j, t, accumulate ? dl_lowp_get(gb, j, t) + s : s);
}

/* ReLU's mask: delta[k] becomes 0 unless the layer's activation A[k] > 0
 * (else it is left as it is). */
DL_HD void dl_mlp_relu_mask16_1(void *delta, const void *A, dl_dtype t, size_t k)
{
    if (!(dl_lowp_get(A, k, t) > 0.0f))
        dl_lowp_put(delta, k, t, 0.0f);
}

/* sizes = {in, hidden..., classes}: n_sizes - 1 layers (1..DL_MLP_MAX_LAYERS). */
dl_status dl_mlp_create(dl_mlp *m, const dl_device *dev, const size_t *sizes, int n_sizes, size_t max_batch,
                        uint64_t seed);
void dl_mlp_free(dl_mlp *m);

/* Forward pass over X (n, in): act[L−1] holds the logits. */
dl_status dl_mlp_forward(dl_mlp *m, const float *X, size_t n);
/* Mean cross-entropy of the last forward's logits against y (n,) (device),
 * added to the step's sum and, when loss is not NULL, read into *loss
 * (host; a wait on CUDA); turns the logits into the loss's gradient. */
dl_status dl_mlp_loss(dl_mlp *m, const int32_t *y, size_t n, double *loss);
/* Ends a step: total += step_sum / per when keep (per: its micro-batches,
 * >= 1), else the step's losses are dropped; the step's sum restarts. No
 * wait, unless step_loss is not NULL: then *step_loss = step_sum / per, read
 * back first (kept or not). DL_ERR_ARG for per < 1. */
dl_status dl_mlp_loss_commit(dl_mlp *m, int keep, int per, double *step_loss);
/* *total = the running total (one wait on CUDA); DL_ERR_RANGE when a label
 * out of range was seen since the last dl_mlp_loss_reset. */
dl_status dl_mlp_loss_total(dl_mlp *m, double *total);
/* Sets the running total (0 for a new epoch, a resumed run's saved total),
 * restarts the step's sum and forgets bad labels seen. No wait. */
dl_status dl_mlp_loss_reset(dl_mlp *m, double total);
/* Predicts the n rows of X (device) in one forward pass and adds to the
 * model's count how many equal y (device): the argmax of the logits, the
 * first of equal maxima, as dl_mlp_predict. No host wait. dl_mlp_take_right
 * reads the count (one wait on CUDA) and starts it again. */
dl_status dl_mlp_count_right(dl_mlp *m, const float *X, const int32_t *y, size_t n);
dl_status dl_mlp_take_right(dl_mlp *m, double *right);
/* Backward pass for the last forward/loss; see the contract for `ready`.
 * In fp16/bf16 mode X is not read: the forward's 16-bit copy of it is. */
dl_status dl_mlp_backward(dl_mlp *m, const float *X, size_t n, int accumulate, dl_mlp_ready_fn ready, void *ctx);
/* The forward/backward precision: DL_F32, DL_F16 or DL_BF16 (see the
 * contract); DL_ERR_ARG otherwise, DL_ERR_NOMEM (or the device's status) when
 * the 16-bit buffers cannot be allocated; the model is then unchanged. */
dl_status dl_mlp_set_precision(dl_mlp *m, dl_dtype compute);
/* Sets the per-layer hooks (either may be NULL; both NULL: none). DL_ERR_ARG
 * on a 16-bit model; dl_mlp_set_precision refuses DL_F16 and DL_BF16 while
 * hooks are set. */
dl_status dl_mlp_set_hooks(dl_mlp *m, dl_mlp_hook_fn pre, dl_mlp_hook_fn post, void *ctx);
/* The 16-bit backward's loss scale: finite and > 0, else DL_ERR_ARG. */
dl_status dl_mlp_set_loss_scale(dl_mlp *m, float s);
/* p −= lr·v with v = μ·v + grad + wd·p (wd on weights only, not biases);
 * then steps += 1. */
dl_status dl_mlp_sgd(dl_mlp *m, float lr, float momentum, float weight_decay);
/* dl_mlp_sgd's update on a slice of the flat parameter vector only: the
 * elements first .. first + count − 1 (first + count <= n_params), whose
 * parameters, gradients and velocities are p[0..count), g[0..count) and
 * v[0..count) on m's device (any buffers: a shard's own). Element k is
 * updated exactly as dl_mlp_sgd updates element first + k (wd only where
 * that element is a weight), so the slices of a partition together make
 * one dl_mlp_sgd bit for bit. steps is not advanced. DL_ERR_ARG for a slice
 * past the end or a NULL pointer with count > 0; count = 0 does nothing. */
dl_status dl_mlp_sgd_slice(const dl_mlp *m, size_t first, size_t count, float *p, const float *g, float *v, float lr,
                           float momentum, float weight_decay);
/* pred (host, n) = argmax of the logits of X (device, n rows). */
dl_status dl_mlp_predict(dl_mlp *m, const float *X, size_t n, int32_t *pred);
/* Copies all parameters to/from a host array of n_params floats. */
dl_status dl_mlp_get_params(const dl_mlp *m, float *host);
dl_status dl_mlp_set_params(dl_mlp *m, const float *host);
/* Writes the parameters to path as a float32 .npy of n_params values (what
 * --dump-params gives the graders). DL_ERR_NOMEM, or the copy's or the
 * writer's status (DL_ERR_IO naming the file); nothing is left at path then. */
dl_status dl_mlp_write_params(const dl_mlp *m, const char *path);
/* Copies the momentum buffers to/from a host array of n_params floats (the
 * layout of params; zeros after create). */
dl_status dl_mlp_get_velocity(const dl_mlp *m, float *host);
dl_status dl_mlp_set_velocity(dl_mlp *m, const float *host);
/* The optimizer step count, and setting it (a resumed run); DL_ERR_ARG for
 * steps < 0, leaving it unchanged. dl_mlp_steps cannot fail. */
long dl_mlp_steps(const dl_mlp *m);
dl_status dl_mlp_set_steps(dl_mlp *m, long steps);
/* FLOPs of one training step (forward + backward) on n rows, exactly as
 * dl_gemm/dl_gemv count them: n·Σ_l ((6, or 4 for l = 0)·in·out + 2·out). */
double dl_mlp_step_flops(const dl_mlp *m, size_t n);

// ---- the cost model of a step, from the layer sizes alone ----
// (the projection sweeps batch sizes and rank counts without building models)

/* What one training step (forward, loss, backward, SGD) on a batch of b rows
 * costs a model of layer sizes {in, hidden..., classes} (n_sizes of them):
 * flops as dl_mlp_step_flops counts them on b rows; mem_bytes moved by the
 * element-wise kernels (bias + ReLU reading and writing the activations,
 * the ReLU mask in backward, the loss rows, the SGD update reading
 * parameter, gradient and velocity and writing two); launches, the kernels
 * the step starts; params, the parameters (the gradient allreduce moves
 * 4·params bytes). Cannot fail (sizes must hold n_sizes >= 2 values). */
typedef struct dl_mlp_cost {
    double flops, mem_bytes, launches, params;
} dl_mlp_cost;
void dl_mlp_step_cost(const size_t *sizes, int n_sizes, size_t b, dl_mlp_cost *out);

/* Parses the hidden widths of a --hidden list ("256", "512,256": 1 to
 * DL_MLP_MAX_LAYERS − 1 widths from 1 to 65536) into sizes[1..k] and sets
 * *n_sizes = k + 2; the caller sets sizes[0] (the inputs) and sizes[k + 1]
 * (the classes) once the data is known. sizes has room for
 * DL_MLP_MAX_LAYERS + 1 values. On a bad list returns DL_ERR_ARG with
 * "FLAG 'LIST': expected ..." and leaves *n_sizes = 0. */
dl_status dl_mlp_parse_hidden(const char *flag, const char *list, size_t *sizes, int *n_sizes);

#ifdef __cplusplus
}
#endif
#endif /* DL_MLP_H */
