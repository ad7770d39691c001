/* test_rng.c — PCG32 reference values, determinism, and the derived distributions. */
#include "tests.h"

#include <math.h> // fabs
#include <stdint.h> // uint32_t
#include <stdlib.h> // calloc, free

#include "dl/rng.h" // dl_rng_*

START_TEST(pcg32_reference_stream)
{
    // pcg32-demo (pcg-c-basic): pcg32_srandom_r(&rng, 42, 54).
    const uint32_t want[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    dl_rng r;
    dl_rng_seed(&r, 42, 54);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(dl_rng_u32(&r) == want[i], "value %d differs from pcg32-demo", i);
}
END_TEST

START_TEST(same_seed_same_stream)
{
    dl_rng a, b, c, d;
    dl_rng_seed(&a, 7, 1);
    dl_rng_seed(&b, 7, 1);
    dl_rng_seed(&c, 8, 1);
    dl_rng_seed(&d, 7, 2);
    int diff_seed = 0, diff_stream = 0, diff_same = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = dl_rng_u32(&a);
        diff_same += x != dl_rng_u32(&b);
        diff_seed += x != dl_rng_u32(&c);
        diff_stream += x != dl_rng_u32(&d);
    }
    ck_assert_int_eq(diff_same, 0);
    ck_assert_int_gt(diff_seed, 990);
    ck_assert_int_gt(diff_stream, 990);
}
END_TEST

START_TEST(u64_and_uniform_are_exact)
{
    dl_rng r, copy;
    dl_rng_seed(&r, 123, 9);
    for (int i = 0; i < 1000; i++) {
        copy = r;
        uint64_t hi = dl_rng_u32(&copy);
        uint64_t lo = dl_rng_u32(&copy);
        dl_rng c2 = r;
        ck_assert_uint_eq(dl_rng_u64(&c2), (hi << 32) | lo);
        double want = (double)(((hi << 32) | lo) >> 11) * 0x1.0p-53;
        double u = dl_rng_uniform(&r);
        ck_assert_msg(u == want, "uniform %d: %.17g, expected %.17g", i, u, want);
    }
}
END_TEST

START_TEST(uniform_in_unit_interval)
{
    dl_rng r;
    dl_rng_seed(&r, 5, 0);
    double sum = 0, lo = 1, hi = 0;
    const int n = 1000000;
    int outside = 0;
    for (int i = 0; i < n; i++) {
        double u = dl_rng_uniform(&r);
        outside += !(u >= 0.0 && u < 1.0);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    ck_assert_int_eq(outside, 0);
    ck_assert_double_lt(fabs(sum / n - 0.5), 0.003);
    ck_assert_double_lt(lo, 1e-4);
    ck_assert_double_gt(hi, 1.0 - 1e-4);
}
END_TEST

/* Pearson's chi-square of counts against equal expected counts. */
static double chi_square(const size_t *counts, int k, size_t n)
{
    double e = (double)n / k, x2 = 0;
    for (int i = 0; i < k; i++)
        x2 += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
    return x2;
}

START_TEST(below_in_range_and_uniform)
{
    dl_rng r;
    dl_rng_seed(&r, 2024, 3);
    uint64_t or_all = 0;
    for (int i = 0; i < 1000; i++)
        or_all |= dl_rng_below(&r, 1);
    ck_assert_uint_eq(or_all, 0);
    size_t counts[11] = {0};
    const size_t n = 200000;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = dl_rng_below(&r, 10);
        counts[v < 10 ? v : 10]++;
    }
    ck_assert_uint_eq(counts[10], 0);
    // 9 degrees of freedom: P(X2 > 40) is about 1e-5; the seed is fixed anyway.
    double x2 = chi_square(counts, 10, n);
    ck_assert_msg(x2 < 40.0, "chi-square %.2f over 10 bins", x2);
    // A bound of 3·2^62 leaves a quarter of the 64-bit range to reject; a
    // modulo reduction would put half of the draws into the lowest third.
    const uint64_t big = 3ull << 62;
    size_t thirds[4] = {0};
    const size_t m = 60000;
    for (size_t i = 0; i < m; i++) {
        uint64_t v = dl_rng_below(&r, big);
        thirds[v < big ? v >> 62 : 3]++;
    }
    ck_assert_uint_eq(thirds[3], 0);
    x2 = chi_square(thirds, 3, m);
    ck_assert_msg(x2 < 30.0, "chi-square %.2f over thirds of 3*2^62: %zu %zu %zu", x2, thirds[0], thirds[1], thirds[2]);
}
END_TEST

START_TEST(permutation_is_a_permutation)
{
    const size_t n = 1000;
    size_t *idx = malloc(n * sizeof *idx);
    unsigned char *seen = calloc(n, 1);
    dl_rng r;
    dl_rng_seed(&r, 11, 0);
    dl_rng_permutation(&r, idx, n);
    size_t fixed = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_lt(idx[i], n);
        ck_assert_msg(!seen[idx[i]], "%zu appears twice", idx[i]);
        seen[idx[i]] = 1;
        fixed += idx[i] == i;
    }
    ck_assert_uint_lt(fixed, 10); // about one fixed point is expected
    // The same seed shuffles the same way; shuffle keeps the multiset of values.
    size_t *again = malloc(n * sizeof *again);
    dl_rng_seed(&r, 11, 0);
    dl_rng_permutation(&r, again, n);
    ck_assert_mem_eq(idx, again, n * sizeof *idx);
    size_t vals[6] = {10, 20, 30, 40, 50, 60}, sum = 0;
    dl_rng_shuffle(&r, vals, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_uint_eq(vals[i] % 10, 0);
        sum += vals[i];
    }
    ck_assert_uint_eq(sum, 210);
    dl_rng_permutation(&r, idx, 1);
    ck_assert_uint_eq(idx[0], 0);
    dl_rng_permutation(&r, idx, 0);
    free(idx), free(again), free(seen);
}
END_TEST

START_TEST(permutation_positions_are_uniform)
{
    // Where element 0 of a 5-permutation lands, over many shuffles.
    size_t counts[5] = {0}, idx[5];
    dl_rng r;
    dl_rng_seed(&r, 99, 4);
    const size_t n = 50000;
    for (size_t t = 0; t < n; t++) {
        dl_rng_permutation(&r, idx, 5);
        for (int i = 0; i < 5; i++)
            counts[i] += idx[i] == 0;
    }
    double x2 = chi_square(counts, 5, n);
    ck_assert_msg(x2 < 30.0, "chi-square %.2f", x2);
}
END_TEST

START_TEST(normal_moments)
{
    dl_rng r;
    dl_rng_seed(&r, 31337, 0);
    const int n = 200000;
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double x = dl_rng_normal(&r);
        s += x;
        s2 += x * x;
    }
    ck_assert(isfinite(s) && isfinite(s2));
    double mean = s / n, var = s2 / n - mean * mean;
    ck_assert_msg(fabs(mean) < 0.01, "mean %.5f", mean);
    ck_assert_msg(fabs(var - 1.0) < 0.02, "variance %.5f", var);
}
END_TEST

Suite *rng_suite(void)
{
    return suite_of("rng", tcase_with_timeout("rng", 20),
                    TESTS(pcg32_reference_stream, same_seed_same_stream, u64_and_uniform_are_exact,
                          uniform_in_unit_interval, below_in_range_and_uniform, permutation_is_a_permutation,
                          permutation_positions_are_uniform, normal_moments));
}
