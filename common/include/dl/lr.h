/* dl/lr.h — the kit's learning-rate schedule for data-parallel training:
 * linear scaling with the global batch, linear warmup, then constant or
 * cosine decay.
 *
 * Contract
 * - Lab 03's students write this (ddp_lr_at in labs/03-data-parallel); this
 *   is the kit's copy for the labs after it, with the same fields and the
 *   same value, to the last bit, at every step.
 * - dl_lr_at(c, t) for optimizer step t (0-based):
 *     peak = base_lr · global_batch / base_batch            (linear scaling)
 *     t < W:              peak · (t + 1) / W                (warmup, W = warmup_steps)
 *     otherwise:          peak, or with cosine
 *       W <= t < T:       peak · (1 + cos(π·(t − W)/(T − W))) / 2
 *       t >= T or T <= W: 0                                 (T = total_steps)
 *   and 0 for a NULL config, base_batch = 0 or t < 0. Cannot fail.
 */
#ifndef DL_LR_H
#define DL_LR_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_lr_config {
    double base_lr; /* tuned for one rank at base_batch */
    size_t base_batch;
    size_t global_batch; /* per-rank batch × ranks */
    long warmup_steps; /* 0 = no warmup */
    long total_steps; /* for the cosine schedule */
    int cosine; /* 0: constant after warmup; 1: cosine decay to 0 at total_steps */
} dl_lr_config;

double dl_lr_at(const dl_lr_config *c, long t);

#ifdef __cplusplus
}
#endif
#endif /* DL_LR_H */
