/* amp.h — lab 05, part 2: mixed precision with a dynamic loss scaler.
 *
 * This header is the contract between your code (scaler.c, amp.c), the
 * driver (main.c: --amp off|fp16|fp16-noscale|bf16) and the grader. Do not change
 * it; the handout (README.md, part 2) explains each task.
 *
 * Conventions
 * - The model runs in a 16-bit type, m->compute: DL_F16 (--amp fp16 and
 *   fp16-noscale) or DL_BF16 (--amp bf16), set by the driver with
 *   dl_mlp_set_precision (dl/mlp.h). Its forward and backward read the
 *   16-bit copy of the weights m->params16 and write 16-bit gradients
 *   m->grads16, the logits' gradient multiplied by m->loss_scale before it
 *   is rounded. Write your step for m->compute, not for fp16 alone: the
 *   grader runs it in both. The fp32 master weights
 *   m->params, the momentum m->velocity and the fp32 gradients m->grads that
 *   dl_mlp_sgd reads stay fp32; nothing copies between the two sides unless
 *   your step does (the driver's underflow probe, --probe-every, runs before
 *   your step and leaves the 16-bit weights and the fp32 gradients zeroed).
 * - The reducer of part 1 allreduces the buckets of r->grads in r->grad_type:
 *   the model's 16-bit type, half the bytes of fp32 (the driver sets them;
 *   see ddp.h).
 * - Every function returns DL_OK or a failure status with dl_last_error()
 *   set; a skeleton returns DL_ERR_TODO.
 */
#ifndef LAB05_AMP_H
#define LAB05_AMP_H

#include "ddp.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- task 4: the dynamic loss scaler (scaler.c) ----

/* torch.amp.GradScaler's state and its settings. The driver fills every
 * field before the first step: scale = init (2^16), growth_tracker = 0,
 * growth_factor 2, backoff_factor 0.5, growth_interval --growth-interval
 * (2000). --amp fp16-noscale runs the same code with scale 1 and both
 * factors 1: the scale never moves; so does --amp bf16 (bfloat16 has fp32's
 * range: like PyTorch's autocast to bfloat16, it needs no loss scale). */
typedef struct amp_scaler {
    float scale; /* the loss is multiplied by this before backward */
    long growth_tracker; /* good steps in a row since the last overflow or growth */
    float growth_factor, backoff_factor;
    long growth_interval;
} amp_scaler;

/* Task 4. After a step's gradients were checked: found_inf = 1 when any of
 * them (on any rank) was inf or NaN, else 0. Updates the scale and the
 * tracker as GradScaler.update() does, and sets *skip = 1 when the optimizer
 * step must be skipped, 0 when it must be taken (GradScaler.step()'s
 * decision). The scale has no lower bound. DL_ERR_ARG for a NULL pointer. */
dl_status amp_scaler_update(amp_scaler *s, int found_inf, int *skip);

// ---- task 5: one mixed-precision step (amp.c) ----

/* Task 5. One optimizer step of the bucketed DDP model in 16 bits with fp32
 * master weights, over r->accum micro-batches mb[0..accum) as ddp_step
 * does: the weights the forward uses are the master weights rounded to
 * m->compute (fp16 or bf16);
 * the loss is scaled by s->scale before backward; the 16-bit gradients are
 * allreduced in their buckets, overlapped with backward; then they are
 * unscaled into the fp32 gradients and checked for inf/NaN; every rank takes
 * the same decision (skip, or the SGD step on the master weights) and the
 * scaler is updated once; the model keeps the loss scale its backward used.
 * *loss = the mean of the micro-batches' losses on this rank (dl_mlp_loss's
 * values: the scale enters only in backward); loss may be NULL, as
 * ddp_step's — then nothing but the inf/NaN flag is read back from the
 * device: on a GPU the step's one wait. *skipped = 1 when the step was
 * skipped (the master weights, the momentum and the optimizer's step count
 * unchanged), else 0. */
dl_status amp_step(ddp_reducer *r, amp_scaler *s, const ddp_micro *mb, const ddp_sgd *opt, double *loss, int *skipped);

#ifdef __cplusplus
}
#endif
#endif /* LAB05_AMP_H */
