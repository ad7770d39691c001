/* dl/sampler.h — the kit's distributed sampler: which rows each rank trains
 * on in each epoch, with PyTorch DistributedSampler's semantics.
 *
 * Contract
 * - Lab 03's students write this (ddp_sampler_* in labs/03-data-parallel);
 *   this is the kit's copy for the labs after it, with the same fields and
 *   exactly the same rows for the same settings (the same seeds and RNG
 *   streams), so a later lab trains on what lab 03's reference would give.
 * - dl_sampler_num_samples: rows per rank per epoch, equal on every rank:
 *   ceil(n / world), or floor(n / world) with drop_last; 0 for world < 1 or
 *   a NULL sampler. Cannot fail.
 * - dl_sampler_indices fills out (num_samples entries) with this rank's rows
 *   of the current epoch:
 *     order: dl_rng_permutation of 0..n-1 after dl_rng_seed(&r, seed + epoch,
 *       DL_SAMPLER_STREAM) with shuffle, else 0, 1, ..., n-1;
 *     plain: the order padded to num_samples·world by repeating its first
 *       rows (or cut to that length with drop_last); rank r takes positions
 *       r, r + world, r + 2·world, ...;
 *     stratified (labels != NULL): the rows of class 0, then class 1, ... in
 *       that order are dealt round-robin to the ranks, the count running on
 *       from class to class (per class and in total, ranks differ by at most
 *       one row); each rank's list is then padded by repeating its first rows
 *       (or cut) to num_samples and, with shuffle, shuffled by dl_rng_shuffle
 *       after dl_rng_seed(&r, seed + epoch, DL_SAMPLER_STREAM + 1 + rank).
 * - Failure: DL_ERR_ARG for n = 0, world < 1, a rank outside [0, world), a
 *   NULL out, or labels with C < 1; DL_ERR_RANGE for a label outside [0, C)
 *   (named with its row); DL_ERR_NOMEM. out's contents are then unspecified.
 * - Deterministic: the same fields give the same rows on every machine.
 */
#ifndef DL_SAMPLER_H
#define DL_SAMPLER_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, uint64_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

#define DL_SAMPLER_STREAM 0xd15c /* the RNG stream of the permutations (lab 03's DDP_SAMPLER_STREAM) */

typedef struct dl_sampler {
    size_t n; /* rows in the dataset */
    int rank, world; /* this rank, the number of ranks */
    uint64_t seed;
    int epoch; /* set by dl_sampler_set_epoch before each epoch */
    int shuffle; /* 1: a new permutation every epoch; 0: 0, 1, 2, ... */
    int drop_last; /* 1: drop the tail; 0: pad by repeating from the start */
    const int32_t *labels; /* non-NULL: stratified shards (labels (n,) in [0, C)) */
    int C;
} dl_sampler;

/* Remembers the epoch; the next dl_sampler_indices uses seed + epoch. */
void dl_sampler_set_epoch(dl_sampler *s, int epoch);
size_t dl_sampler_num_samples(const dl_sampler *s);
dl_status dl_sampler_indices(const dl_sampler *s, size_t *out);

#ifdef __cplusplus
}
#endif
#endif /* DL_SAMPLER_H */
