/* ddp.h — lab 03: from four serial copies to one data-parallel model.
 *
 * This header is the contract between your code (sampler.c, dscaler.c,
 * ddp.c), the driver (main.c, which owns the training loop and also runs the
 * classic first attempt as --mode naive) and the grader. Do not change it;
 * the handout (README.md) explains each task.
 *
 * Conventions
 * - P ranks (dl_comm_size) each hold the whole dataset in memory and train
 *   one copy of the model (dl_mlp). Data parallelism = each rank computes the
 *   gradient of its own shard of every global batch; the gradients are
 *   averaged across ranks, so all P copies take the same step.
 * - Every function returns DL_OK or a failure status with dl_last_error() set;
 *   a skeleton returns DL_ERR_TODO.
 */
#ifndef LAB03_DDP_H
#define LAB03_DDP_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, uint64_t

#include "dl/comm.h" // dl_comm
#include "dl/mlp.h" // dl_mlp
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

// ---- task 1: the distributed sampler (sampler.c) ----

#define DDP_SAMPLER_STREAM 0xd15c /* the RNG stream of the sampler's permutations */

typedef struct ddp_sampler {
    size_t n; /* rows in the dataset */
    int rank, world; /* this rank, the number of ranks */
    uint64_t seed;
    int epoch; /* set by ddp_sampler_set_epoch before each epoch */
    int shuffle; /* 1: a new permutation every epoch; 0: 0, 1, 2, ... */
    int drop_last; /* 1: drop the tail; 0: pad by repeating from the start */
    const int32_t *labels; /* non-NULL: stratified shards (labels in [0, C)) */
    int C;
} ddp_sampler;

/* Remembers the epoch; the next ddp_sampler_indices uses seed + epoch. */
void ddp_sampler_set_epoch(ddp_sampler *s, int epoch);

/* Rows per rank per epoch, equal on every rank: ceil(n / world), or
 * floor(n / world) with drop_last. */
size_t ddp_sampler_num_samples(const ddp_sampler *s);

/* This rank's rows for the current epoch, PyTorch DistributedSampler's
 * semantics: the order is dl_rng_permutation of 0..n-1 after
 * dl_rng_seed(&r, seed + epoch, DDP_SAMPLER_STREAM) (or 0..n-1 without
 * shuffle); it is padded to num_samples·world by repeating its first rows
 * (as many times round as needed when n < world), or cut to that length with
 * drop_last; rank r takes positions r, r + world,
 * r + 2·world, ... . out holds num_samples indices.
 * Stratified (labels != NULL): the rows of each class c = 0, 1, ... in the
 * order of that permutation are dealt round-robin to the ranks, the count
 * continuing from class to class (so per class, and in total, ranks differ by
 * at most one row); each rank's list is then padded by repeating its first
 * rows (or cut) to num_samples (a rank dealt no row, which happens only when
 * n < world, takes the row at position rank mod n of that dealt order) and,
 * with shuffle, permuted by
 * dl_rng_shuffle after dl_rng_seed(&r, seed + epoch, DDP_SAMPLER_STREAM + 1 + rank). */
dl_status ddp_sampler_indices(const ddp_sampler *s, size_t *out);

// ---- task 2: the distributed scaler (dscaler.c) ----

/* Standard-scaler statistics of the rows of all ranks together: each rank
 * has n_local rows X (n_local, d). Each rank computes its count, mean and M2
 * (sum of squared deviations) per feature in double, two passes; the ranks
 * allgather them and merge them in rank order with Chan et al.'s formula
 *     n = n_a + n_b,  δ = mean_b − mean_a,
 *     mean = mean_a + δ·n_b/n,  M2 = M2_a + M2_b + δ²·n_a·n_b/n,
 * so every rank gets the same mean and population std (ddof 0; 1 where the
 * std is 0), equal to lab 01's scaler on all rows. mean, scale: (d,) floats. */
dl_status ddp_scaler_fit(dl_comm *c, const float *X, size_t n_local, size_t d, float *mean, float *scale);

// ---- task 3: the same start on every rank (ddp.c) ----

/* Rank 0's parameters to every rank (one broadcast of m->params). */
dl_status ddp_broadcast_params(dl_comm *c, dl_mlp *m);

// ---- task 4: gradient synchronisation (ddp.c) ----

/* After backward: every rank's m->grads becomes the average over the ranks
 * (one allreduce of all n_params gradients). */
dl_status ddp_sync_grads(dl_comm *c, dl_mlp *m);

// ---- task 5: the learning rate (ddp.c) ----

typedef struct ddp_lr_config {
    double base_lr; /* tuned for one rank at base_batch */
    size_t base_batch;
    size_t global_batch; /* per-rank batch × ranks */
    long warmup_steps; /* 0 = no warmup */
    long total_steps; /* for the cosine schedule */
    int cosine; /* 0: constant after warmup; 1: cosine decay to 0 at total_steps */
} ddp_lr_config;

/* The learning rate of optimizer step t (0-based). Linear scaling:
 * peak = base_lr · global_batch / base_batch. Warmup: peak · (t + 1) / W for
 * t < W. After: peak, or peak · (1 + cos(π·(t − W)/(T − W)))/2 for
 * W <= t < T (0 from T on) with cosine. */
double ddp_lr_at(const ddp_lr_config *c, long t);

// ---- task 6: timing (ddp.c) ----

typedef struct ddp_timing {
    double epoch_s; /* barrier to barrier, the same on every rank */
    double compute_s; /* this rank's compute time in the epoch */
    double *per_rank_compute; /* (world,) every rank's compute time (caller allocates) */
    double imbalance; /* slowest rank's compute / mean compute */
} ddp_timing;

/* Barrier, then *t0 = dl_now(). */
dl_status ddp_epoch_begin(dl_comm *c, double *t0);
/* Barrier; epoch_s = the largest (dl_now() − t0) over the ranks; gathers
 * every rank's compute_s; imbalance = max / mean of them (1 when all equal). */
dl_status ddp_epoch_end(dl_comm *c, double t0, double compute_s, ddp_timing *out);

#ifdef __cplusplus
}
#endif
#endif /* LAB03_DDP_H */
