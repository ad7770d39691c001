/* dl/rng.h — a seeded random number generator with the same stream everywhere.
 *
 * Contract
 * - PCG32 (O'Neill, XSH-RR, 64-bit state): the integer stream depends only on
 *   (seed, stream id), so the same seed gives the same numbers on every
 *   machine, compiler and rank. dl_rng_uniform and dl_rng_below are derived
 *   from the integers with exact arithmetic and are bit-identical everywhere;
 *   dl_rng_normal uses libm's log/sqrt/cos (equal to the last bit on glibc).
 * - dl_rng_below(r, bound) is unbiased (Lemire's multiply-and-reject) and
 *   requires bound > 0. dl_rng_permutation fills idx with a Fisher–Yates
 *   shuffle of 0..n-1.
 * - None of these can fail.
 */
#ifndef DL_RNG_H
#define DL_RNG_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t, uint32_t

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_rng {
    uint64_t state;
    uint64_t inc;
} dl_rng;

void dl_rng_seed(dl_rng *r, uint64_t seed, uint64_t stream);
uint32_t dl_rng_u32(dl_rng *r);
uint64_t dl_rng_u64(dl_rng *r);
/* Uniform integer in [0, bound); bound must be > 0. */
uint64_t dl_rng_below(dl_rng *r, uint64_t bound);
/* Uniform double in [0, 1) with 53 random bits. */
double dl_rng_uniform(dl_rng *r);
/* Standard normal (Box–Muller; one value per call, two uniforms each). */
double dl_rng_normal(dl_rng *r);
/* idx[i] = a uniformly random permutation of 0..n-1. */
void dl_rng_permutation(dl_rng *r, size_t *idx, size_t n);
/* Shuffles a[0..n) in place (Fisher–Yates). */
void dl_rng_shuffle(dl_rng *r, size_t *a, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DL_RNG_H */
