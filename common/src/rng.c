/* rng.c — PCG32 (XSH-RR), https://www.pcg-random.org, and what is built on it. */
#include "dl/rng.h"

#include <math.h> // log, sqrt, cos

#define PCG_MULT 6364136223846793005ull

void dl_rng_seed(dl_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0u;
    r->inc = (stream << 1u) | 1u;
    (void)dl_rng_u32(r);
    r->state += seed;
    (void)dl_rng_u32(r);
}

uint32_t dl_rng_u32(dl_rng *r)
{
    uint64_t old = r->state;
    r->state = old * PCG_MULT + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

uint64_t dl_rng_u64(dl_rng *r)
{
    uint64_t hi = dl_rng_u32(r);
    return (hi << 32) | dl_rng_u32(r);
}

uint64_t dl_rng_below(dl_rng *r, uint64_t bound)
{
    // Lemire, "Fast Random Integer Generation in an Interval" (2019).
    unsigned __int128 m = (unsigned __int128)dl_rng_u64(r) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = (0 - bound) % bound;
        while (low < threshold) {
            m = (unsigned __int128)dl_rng_u64(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double dl_rng_uniform(dl_rng *r)
{
    return (double)(dl_rng_u64(r) >> 11) * 0x1.0p-53;
}

double dl_rng_normal(dl_rng *r)
{
    double u1 = 1.0 - dl_rng_uniform(r); // (0, 1]: log is finite
    double u2 = dl_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void dl_rng_shuffle(dl_rng *r, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)dl_rng_below(r, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

void dl_rng_permutation(dl_rng *r, size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    dl_rng_shuffle(r, idx, n);
}
