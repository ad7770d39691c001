/* test_ops.c — dl_add and dl_copy on the CPU against references computed in
 * double precision: fp32, fp16 and bf16 sums bit for bit, the rounding cases that
 * tell one rounding per addition from the alternatives, and the refusals;
 * casts, scaling, and dl_unscale's values and inf/NaN flag.
 * The CUDA kernels are compared with these CPU results in the GPU tier. */
#include "tests.h"

#include <math.h> // ldexp, isnan, signbit
#include <stdint.h> // uint16_t, uint32_t
#include <stdlib.h> // malloc

#include "dl/bf16.h" // dl_bf16, dl_f2bf, dl_bf2f, dl_bf16_bits
#include "dl/half.h" // dl_half, dl_f2h, dl_h2f, dl_half_bits
#include "dl/ops.h" // dl_add, dl_copy
#include "dl/rng.h" // dl_rng

static double b2d(dl_bf16 b)
{
    return (double)dl_bf2f(b);
}

static double h2d(dl_half h)
{
    return (double)dl_h2f(h);
}

/* Equal as values, with the sign of zero; any NaN equals any NaN. */
static int same(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

/* dl_add of a 16-bit type t against the model f: every value as dst, against
 * sources spread over all exponents and mantissas (every 127th pattern, and
 * both zeros); each sum must be the exact one rounded once. */
static void add_against_double(dl_dtype t, ref16 f)
{
    size_t n = 65536;
    uint16_t *d = malloc(n * sizeof *d), *s = malloc(n * sizeof *s);
    fails fl = {0, ""};
    for (uint32_t sb = 0; sb < 65536; sb += 127) {
        for (int z = 0; z < (sb == 0 ? 2 : 1); z++) {
            uint16_t src_bits = z ? 0x8000 : (uint16_t)sb;
            for (size_t i = 0; i < n; i++) {
                d[i] = (uint16_t)i;
                s[i] = src_bits;
            }
            ck_assert_st(dl_add(dl_cpu(), d, s, n, t), DL_OK);
            for (size_t i = 0; i < n; i++) {
                // double's signed zeros are IEEE's
                double want = ref16_round(f, ref16_value(f, (uint16_t)i) + ref16_value(f, src_bits));
                double got = ref16_value(f, d[i]);
                FAIL_IF(&fl, !same(got, want), "0x%04x + 0x%04x = 0x%04x (%g), expected %g", (unsigned)i,
                        (unsigned)src_bits, (unsigned)d[i], got, want);
            }
        }
    }
    ck_assert_msg(fl.n == 0, "%zu %s sums differ from the double reference; first: %s", fl.n, dl_dtype_name(t),
                  fl.first);
    free(d), free(s);
}

// ---- fp32 ----

START_TEST(test_add_f32_against_double)
{
    // specials and neighbours of the edges, then random values over many binades
    const float edge[] = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          1e-45f,
                          -1e-45f,
                          1.17549435e-38f,
                          3.4028235e38f,
                          -3.4028235e38f,
                          INFINITY,
                          -INFINITY,
                          16777216.0f,
                          1.0f + 1.1920929e-7f,
                          0.1f,
                          3.0f};
    enum { NE = sizeof edge / sizeof edge[0], NR = 20000 };
    size_t n = NE * NE + NR;
    float *d = malloc(n * sizeof *d), *s = malloc(n * sizeof *s), *d0 = malloc(n * sizeof *d0);
    for (size_t i = 0; i < NE; i++) {
        for (size_t j = 0; j < NE; j++) {
            d[i * NE + j] = edge[i];
            s[i * NE + j] = edge[j];
        }
    }
    dl_rng r;
    dl_rng_seed(&r, 7, 1);
    for (size_t k = NE * NE; k < n; k++) {
        d[k] = (float)((dl_rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)(dl_rng_uniform(&r) * 120) - 60));
        s[k] = (float)((dl_rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)(dl_rng_uniform(&r) * 120) - 60));
    }
    memcpy(d0, d, n * sizeof *d);
    ck_assert_st(dl_add(dl_cpu(), d, s, n, DL_F32), DL_OK);
    for (size_t k = 0; k < n; k++) {
        // the double sum of two floats rounded to float is the correctly rounded
        // sum (53 >= 2*24 + 2 bits: double rounding is innocuous)
        double want = (double)(float)((double)d0[k] + (double)s[k]);
        ck_assert_msg(same(d[k], want), "f32 [%zu]: %.9g + %.9g = %.9g, expected %.9g", k, (double)d0[k], (double)s[k],
                      (double)d[k], want);
    }
    // in place doubles; count 0 does nothing, even with NULL pointers
    float x[3] = {1.5f, -2.0f, 3e38f};
    ck_assert_st(dl_add(dl_cpu(), x, x, 3, DL_F32), DL_OK);
    ck_assert(x[0] == 3.0f && x[1] == -4.0f && isinf(x[2]));
    ck_assert_st(dl_add(dl_cpu(), NULL, NULL, 0, DL_F32), DL_OK);
    free(d), free(s), free(d0);
}
END_TEST

// ---- fp16 ----

START_TEST(test_add_f16_against_double)
{
    add_against_double(DL_F16, REF_HALF);
}
END_TEST

/* The cases that tell "fp32 sum, rounded once to binary16" from the other
 * ways an fp16 addition goes wrong. */
START_TEST(test_add_f16_rounding_cases)
{
    static const struct {
        float a, b, want;
        const char *what;
    } cases[] = {
        {2048, 1, 2048, "a tie rounds to the even neighbour (2049 -> 2048, not 2050)"},
        {2048, 3, 2052, "a tie rounds to the even neighbour (2051 -> 2052, truncation gives 2050)"},
        {1, 0.00048828125f, 1, "half an ulp above 1 ties down to 1 (1 + 2^-11)"},
        {1, 0.000732421875f, 1.0009765625f, "more than half an ulp rounds up (1 + 1.5*2^-11)"},
        {5.9604644775390625e-08f, 5.9604644775390625e-08f, 1.1920928955078125e-07f,
         "subnormals are kept, not flushed (2^-24 + 2^-24 = 2^-23)"},
        {6.097555160522461e-05f, 5.9604644775390625e-08f, 6.103515625e-05f,
         "the largest subnormal plus 2^-24 is the smallest normal"},
        {65504, 8, 65504, "below the overflow midpoint stays at 65504"},
        {65504, 16, INFINITY, "the overflow midpoint 65520 ties to even: +inf"},
        {-65504, -32, -INFINITY, "overflows to -inf"},
        {1, -1, 0, "x + (-x) is +0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dl_half d = dl_f2h(cases[k].a), s = dl_f2h(cases[k].b);
        ck_assert_msg(h2d(d) == cases[k].a && h2d(s) == cases[k].b, "case %zu: inputs are not binary16", k);
        ck_assert_st(dl_add(dl_cpu(), &d, &s, 1, DL_F16), DL_OK);
        ck_assert_msg(same(h2d(d), cases[k].want), "%s: got %.10g", cases[k].what, h2d(d));
        ck_assert_msg(same(ref16_round(REF_HALF, (double)cases[k].a + cases[k].b), cases[k].want), "reference: %s",
                      cases[k].what);
    }
    // -0 + -0 keeps its sign
    dl_half nz = dl_f2h(-0.0f), nz2 = dl_f2h(-0.0f);
    ck_assert_st(dl_add(dl_cpu(), &nz, &nz2, 1, DL_F16), DL_OK);
    ck_assert(dl_half_bits(nz) == 0x8000);
}
END_TEST

/* A reduction of several arrays with dl_add rounds after every addition, as a
 * ring's reduce-scatter does on P ranks: 1 + 4 * 2^-12 stays 1 (each 2^-12 is
 * below half an ulp of 1), where summing in fp32 and rounding once gives
 * 1 + 2^-10. The reference follows the same steps in double. */
START_TEST(test_add_f16_rounds_each_addition)
{
    enum { N = 4, P = 5 }; // P arrays: acc, then 4 more added one call at a time
    const float addend = 0.000244140625f; // 2^-12
    dl_half acc[N], part[N];
    for (int i = 0; i < N; i++)
        acc[i] = dl_f2h(1.0f + 2.0f * (float)i); // 1, 3, 5, 7
    double ref[N], fp32_once[N];
    float fp32_sum[N];
    for (int i = 0; i < N; i++) {
        ref[i] = h2d(acc[i]);
        fp32_sum[i] = dl_h2f(acc[i]);
    }
    for (int k = 1; k < P; k++) {
        for (int i = 0; i < N; i++)
            part[i] = dl_f2h(addend);
        ck_assert_st(dl_add(dl_cpu(), acc, part, N, DL_F16), DL_OK);
        for (int i = 0; i < N; i++) {
            ref[i] = ref16_round(REF_HALF, ref[i] + h2d(part[i]));
            fp32_sum[i] += dl_h2f(part[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        fp32_once[i] = h2d(dl_f2h(fp32_sum[i]));
        ck_assert_msg(h2d(acc[i]) == ref[i], "[%d]: got %.10g, expected %.10g (rounded after every addition)", i,
                      h2d(acc[i]), ref[i]);
    }
    // the case is crafted so that rounding once would differ
    ck_assert_msg(ref[0] == 1.0 && fp32_once[0] == 1.0009765625, "crafted case: per-addition %.10g, once %.10g", ref[0],
                  fp32_once[0]);
}
END_TEST

START_TEST(test_add_refuses)
{
    float f[4] = {1, 2, 3, 4};
    double g[2] = {1, 2};
    ck_assert_st(dl_add(dl_cpu(), g, g, 2, DL_F64), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "f64");
    ck_assert_st(dl_add(dl_cpu(), f, f, 2, DL_I32), DL_ERR_ARG);
    ck_assert_st(dl_add(dl_cpu(), f, f, 2, DL_DTYPE_COUNT), DL_ERR_ARG);
    ck_assert_st(dl_add(dl_cpu(), NULL, f, 2, DL_F32), DL_ERR_ARG);
    ck_assert_st(dl_add(dl_cpu(), f, NULL, 2, DL_F32), DL_ERR_ARG);
    ck_assert_st(dl_add(NULL, f, f, 2, DL_F32), DL_ERR_ARG);
    // a partial overlap would depend on the order of the loop: refused, untouched
    ck_assert_st(dl_add(dl_cpu(), f + 1, f, 3, DL_F32), DL_ERR_ARG);
    ck_assert(f[0] == 1 && f[1] == 2 && f[2] == 3 && f[3] == 4);
    ck_assert_st(dl_add(dl_cpu(), f + 2, f, 2, DL_F32), DL_OK); // adjacent, not overlapping
    ck_assert(f[2] == 4 && f[3] == 6);
}
END_TEST

// ---- bf16 ----

START_TEST(test_add_bf16_against_double)
{
    add_against_double(DL_BF16, REF_BF16);
}
END_TEST

/* Casts between the three float types, scaling and accumulating in bf16:
 * each rounds once to nearest even. */
START_TEST(test_bf16_cast_scale_accumulate)
{
    float f[6] = {1.0f + 0x1p-8f, 1.0f + 0x3p-8f, 0.1f, 1e-30f, 3.4e38f, -7.0f};
    dl_bf16 b[6];
    float back[6];
    ck_assert_st(dl_cast(dl_cpu(), b, DL_BF16, f, DL_F32, 6), DL_OK);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(same(b2d(b[i]), ref16_round(REF_BF16, f[i])), "cast %a: got %a", (double)f[i], b2d(b[i]));
    ck_assert(isinf(b2d(b[4]))); // above the largest bf16 plus half an ulp
    ck_assert_st(dl_cast(dl_cpu(), back, DL_F32, b, DL_BF16, 6), DL_OK);
    for (int i = 0; i < 6; i++)
        ck_assert(same(back[i], b2d(b[i])));
    // fp16 <-> bf16: exact to fp32, rounded once; 1 + 2^-10 is fp16 but not bf16,
    // 1e-30 is bf16 but underflows in fp16
    dl_half h[2] = {dl_f2h(1.0f + 0x1p-10f), dl_f2h(-3.0f)}, h2[2];
    dl_bf16 hb[2];
    ck_assert_st(dl_cast(dl_cpu(), hb, DL_BF16, h, DL_F16, 2), DL_OK);
    ck_assert(b2d(hb[0]) == 1.0 && b2d(hb[1]) == -3.0);
    dl_bf16 tiny[2] = {dl_f2bf(1e-30f), dl_f2bf(0.5f)};
    ck_assert_st(dl_cast(dl_cpu(), h2, DL_F16, tiny, DL_BF16, 2), DL_OK);
    ck_assert(h2d(h2[0]) == 0.0 && h2d(h2[1]) == 0.5);
    // scale: the product in fp32, rounded once
    dl_bf16 sc[3] = {dl_f2bf(3.0f), dl_f2bf(1.0f + 0x1p-7f), dl_f2bf(0x1p-133f)};
    ck_assert_st(dl_scale(dl_cpu(), sc, 3, DL_BF16, 0.5f), DL_OK);
    ck_assert(b2d(sc[0]) == 1.5 && b2d(sc[1]) == 0.5 + 0x1p-8 && b2d(sc[2]) == 0.0);
    // accumulate: 256 + 1 + 1 + 1 in bf16 additions stays 256 (each 257 ties to
    // even), in fp32 it is 259, rounded once to bf16: 260
    dl_bf16 x[1] = {dl_f2bf(256.0f)}, one[1] = {dl_f2bf(1.0f)}, out[1];
    float acc[1] = {256.0f};
    for (int k = 0; k < 3; k++) {
        ck_assert_st(dl_accumulate(dl_cpu(), acc, one, 1, DL_BF16), DL_OK);
        ck_assert_st(dl_add(dl_cpu(), x, one, 1, DL_BF16), DL_OK);
    }
    ck_assert(acc[0] == 259.0f && b2d(x[0]) == 256.0);
    ck_assert_st(dl_cast(dl_cpu(), out, DL_BF16, acc, DL_F32, 1), DL_OK);
    ck_assert(b2d(out[0]) == 260.0);
    // refusals
    double d[2] = {1, 2};
    ck_assert_st(dl_cast(dl_cpu(), b, DL_BF16, d, DL_F64, 2), DL_ERR_ARG);
    ck_assert_st(dl_cast(dl_cpu(), b, DL_BF16, b + 1, DL_F16, 2), DL_ERR_ARG); // overlap
}
END_TEST

/* dl_unscale from bf16: the values bit for bit (one fp32 multiply of an exact
 * widening) and the flag for inf and NaN anywhere. */
START_TEST(test_unscale_bf16)
{
    enum { N = 1000 };
    dl_rng r;
    dl_rng_seed(&r, 12, 5);
    dl_bf16 *b = malloc(N * sizeof *b);
    float *dst = malloc(N * sizeof *dst);
    for (size_t i = 0; i < N; i++)
        b[i] = dl_f2bf((float)ldexp(2.0 * dl_rng_uniform(&r) - 1.0, (int)dl_rng_below(&r, 200) - 130));
    const float inv[] = {1.0f / 65536.0f, 0.3f, 1.0f};
    for (int t = 0; t < 3; t++) {
        int inf = -1;
        ck_assert_st(dl_unscale(dl_cpu(), b, DL_BF16, dst, N, inv[t], &inf), DL_OK);
        ck_assert_int_eq(inf, 0);
        for (size_t i = 0; i < N; i++)
            ck_assert_msg(dst[i] == (float)(b2d(b[i]) * inv[t]), "bf16 [%zu]: %g x %g = %.9g", i, b2d(b[i]),
                          (double)inv[t], (double)dst[i]);
    }
    const float bad[] = {INFINITY, -INFINITY, NAN};
    const size_t at[] = {0, 517, N - 1};
    for (int k = 0; k < 3; k++) {
        dl_bf16 keep = b[at[k]];
        b[at[k]] = dl_f2bf(bad[k]);
        int inf = 0;
        ck_assert_st(dl_unscale(dl_cpu(), b, DL_BF16, dst, N, 0.5f, &inf), DL_OK);
        ck_assert_msg(inf == 1, "bf16 %g at %zu: found_inf %d", (double)bad[k], at[k], inf);
        ck_assert(same(dst[at[k]], (double)bad[k] * 0.5));
        b[at[k]] = keep;
    }
    // 3e38 fits bf16 but doubling overflows fp32: flagged
    dl_bf16 big = dl_f2bf(3e38f);
    float out = 0;
    int inf = 0;
    ck_assert_st(dl_unscale(dl_cpu(), &big, DL_BF16, &out, 1, 2.0f, &inf), DL_OK);
    ck_assert(inf == 1 && isinf(out));
    ck_assert_st(dl_unscale(dl_cpu(), dst, DL_BF16, dst, 2, 1.0f, &inf), DL_ERR_ARG); // bf16 in place
    free(b), free(dst);
}
END_TEST

// ---- copy ----

START_TEST(test_copy)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {0};
    ck_assert_st(dl_copy(dl_cpu(), b, a, 5, DL_F64), DL_OK);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    dl_half h[3] = {dl_f2h(1), dl_f2h(-2), dl_f2h(6e-8f)}, h2[3];
    ck_assert_st(dl_copy(dl_cpu(), h2, h, 3, DL_F16), DL_OK);
    ck_assert(memcmp(h, h2, sizeof h) == 0);
    // memmove semantics, both directions
    int32_t v[6] = {0, 1, 2, 3, 4, 5};
    ck_assert_st(dl_copy(dl_cpu(), v + 1, v, 5, DL_I32), DL_OK);
    ck_assert(v[0] == 0 && v[1] == 0 && v[2] == 1 && v[5] == 4);
    ck_assert_st(dl_copy(dl_cpu(), v, v + 1, 5, DL_I32), DL_OK);
    ck_assert(v[0] == 0 && v[1] == 1 && v[4] == 4 && v[5] == 4);
    ck_assert_st(dl_copy(dl_cpu(), v, v, 6, DL_I32), DL_OK);
    ck_assert_st(dl_copy(dl_cpu(), NULL, NULL, 0, DL_I64), DL_OK);
    ck_assert_st(dl_copy(dl_cpu(), v, NULL, 1, DL_I32), DL_ERR_ARG);
    ck_assert_st(dl_copy(dl_cpu(), v, v, 1, DL_DTYPE_COUNT), DL_ERR_ARG);
    ck_assert_st(dl_copy(NULL, v, v, 1, DL_I32), DL_ERR_ARG);
}
END_TEST

// ---- an fp32 sum of fp16 arrays, and the casts ----

START_TEST(test_accumulate_and_cast)
{
    // 2048 + 1 + 1 + 1: fp16 additions keep 2048 (each 2049 is a tie, rounded to
    // even); an fp32 sum rounded once gives 2051 -> 2052
    dl_half x[2] = {dl_f2h(2048.0f), dl_f2h(-0.5f)}, one[2] = {dl_f2h(1.0f), dl_f2h(0.25f)}, h16[2];
    float acc[2];
    ck_assert_st(dl_cast(dl_cpu(), acc, DL_F32, x, DL_F16, 2), DL_OK);
    ck_assert(acc[0] == 2048.0f && acc[1] == -0.5f);
    memcpy(h16, x, sizeof x);
    for (int k = 0; k < 3; k++) {
        ck_assert_st(dl_accumulate(dl_cpu(), acc, one, 2, DL_F16), DL_OK);
        ck_assert_st(dl_add(dl_cpu(), h16, one, 2, DL_F16), DL_OK);
    }
    ck_assert(acc[0] == 2051.0f && acc[1] == 0.25f);
    ck_assert_msg(dl_h2f(h16[0]) == 2048.0f, "f16 additions: %g", (double)dl_h2f(h16[0]));
    dl_half out[2];
    ck_assert_st(dl_cast(dl_cpu(), out, DL_F16, acc, DL_F32, 2), DL_OK);
    ck_assert_msg(dl_h2f(out[0]) == 2052.0f && dl_h2f(out[1]) == 0.25f, "rounded once: %g %g", (double)dl_h2f(out[0]),
                  (double)dl_h2f(out[1]));
    // f32 into the accumulator is a plain fp32 addition
    float f[2] = {0.5f, 1e-8f};
    ck_assert_st(dl_accumulate(dl_cpu(), acc, f, 2, DL_F32), DL_OK);
    ck_assert(acc[0] == 2051.5f && acc[1] == 0.25f + 1e-8f);
    // the cast rounds to nearest even, keeps subnormals, overflows to inf
    float g[4] = {0.1f, 6e-8f, 70000.0f, -2049.0f};
    dl_half gh[4];
    ck_assert_st(dl_cast(dl_cpu(), gh, DL_F16, g, DL_F32, 4), DL_OK);
    ck_assert((double)dl_h2f(gh[0]) == 0.0999755859375 && dl_h2f(gh[1]) == 5.9604644775390625e-08f);
    ck_assert(isinf(dl_h2f(gh[2])) && dl_h2f(gh[3]) == -2048.0f);
    // same type: a copy; refusals
    float c[2];
    ck_assert_st(dl_cast(dl_cpu(), c, DL_F32, f, DL_F32, 2), DL_OK);
    ck_assert(c[0] == 0.5f && c[1] == 1e-8f);
    double d[2] = {1, 2};
    ck_assert_st(dl_cast(dl_cpu(), c, DL_F32, d, DL_F64, 2), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "f64");
    ck_assert_st(dl_accumulate(dl_cpu(), acc, d, 2, DL_F64), DL_ERR_ARG);
    ck_assert_st(dl_accumulate(dl_cpu(), acc, acc, 2, DL_F32), DL_ERR_ARG); // overlap
    ck_assert_st(dl_accumulate(dl_cpu(), NULL, NULL, 0, DL_F16), DL_OK);
}
END_TEST

// ---- scaling in place ----

START_TEST(test_scale)
{
    float f[3] = {3.0f, -1e-30f, 0.25f};
    ck_assert_st(dl_scale(dl_cpu(), f, 3, DL_F32, 0.25f), DL_OK);
    ck_assert(f[0] == 0.75f && f[1] == -2.5e-31f && f[2] == 0.0625f);
    // fp16: the product in fp32, rounded once; 2049 x 1 rounds to 2048 (tie to even)
    // and 0.5 x 2^-24 underflows to 0 (a subnormal halved past the smallest)
    dl_half h[3] = {dl_f2h(3.0f), dl_f2h(2048.0f), dl_f2h(5.9604644775390625e-08f)};
    ck_assert_st(dl_scale(dl_cpu(), h, 3, DL_F16, 0.5f), DL_OK);
    ck_assert_msg(dl_h2f(h[0]) == 1.5f && dl_h2f(h[1]) == 1024.0f && dl_h2f(h[2]) == 0.0f, "%g %g %g",
                  (double)dl_h2f(h[0]), (double)dl_h2f(h[1]), (double)dl_h2f(h[2]));
    ck_assert_st(dl_scale(dl_cpu(), NULL, 0, DL_F32, 2.0f), DL_OK);
    ck_assert_st(dl_scale(dl_cpu(), f, 3, DL_F32, (float)INFINITY), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "finite");
    ck_assert_st(dl_scale(dl_cpu(), f, 3, DL_I32, 2.0f), DL_ERR_ARG);
    ck_assert_st(dl_scale(dl_cpu(), NULL, 3, DL_F32, 2.0f), DL_ERR_ARG);
}
END_TEST

// ---- unscaling with the inf/NaN check (AMP) ----

/* Values against one multiply in double rounded to float (a single fp32
 * multiply is correctly rounded, so they are equal bit for bit), from fp32
 * and fp16 sources; then the flag for +inf, -inf and NaN in either source
 * type and for a product that overflows; dst is written in full even then. */
START_TEST(test_unscale)
{
    enum { N = 1000 };
    dl_rng r;
    dl_rng_seed(&r, 11, 5);
    float *f = malloc(N * sizeof *f), *dst = malloc(N * sizeof *dst);
    dl_half *h = malloc(N * sizeof *h);
    for (size_t i = 0; i < N; i++) {
        f[i] = (float)ldexp(2.0 * dl_rng_uniform(&r) - 1.0, (int)dl_rng_below(&r, 30) - 24);
        h[i] = dl_f2h(f[i] * 64.0f); // subnormal to 2^11: no overflow
    }
    const float inv[] = {1.0f / 65536.0f, 0.3f, 1.0f};
    for (int t = 0; t < 3; t++) {
        int inf = -1;
        ck_assert_st(dl_unscale(dl_cpu(), f, DL_F32, dst, N, inv[t], &inf), DL_OK);
        ck_assert_int_eq(inf, 0);
        for (size_t i = 0; i < N; i++)
            ck_assert_msg(dst[i] == (float)((double)f[i] * inv[t]), "f32 [%zu]: %g x %g = %.9g", i, (double)f[i],
                          (double)inv[t], (double)dst[i]);
        inf = -1;
        ck_assert_st(dl_unscale(dl_cpu(), h, DL_F16, dst, N, inv[t], &inf), DL_OK);
        ck_assert_int_eq(inf, 0);
        for (size_t i = 0; i < N; i++)
            ck_assert_msg(dst[i] == (float)(h2d(h[i]) * inv[t]), "f16 [%zu]: %g x %g = %.9g", i, h2d(h[i]),
                          (double)inv[t], (double)dst[i]);
    }
    // one non-finite element anywhere sets the flag; the rest is still unscaled
    const float bad[] = {INFINITY, -INFINITY, NAN};
    const size_t at[] = {0, 517, N - 1};
    for (int b = 0; b < 3; b++) {
        float keep = f[at[b]];
        dl_half keeph = h[at[b]];
        f[at[b]] = bad[b];
        h[at[b]] = dl_f2h(bad[b]);
        for (int t = 0; t < 2; t++) {
            int inf = 0;
            memset(dst, 0, N * sizeof *dst);
            ck_assert_st(dl_unscale(dl_cpu(), t ? (const void *)h : f, t ? DL_F16 : DL_F32, dst, N, 0.5f, &inf), DL_OK);
            ck_assert_msg(inf == 1, "%s %g at %zu: found_inf %d", t ? "f16" : "f32", (double)bad[b], at[b], inf);
            ck_assert(same(dst[at[b]], (double)bad[b] * 0.5));
            size_t other = at[b] == 0 ? 1 : 0;
            ck_assert(dst[other] == (t ? dl_h2f(h[other]) : f[other]) * 0.5f);
        }
        f[at[b]] = keep;
        h[at[b]] = keeph;
    }
    // overflow of a finite value's product; inv_scale 0 turns inf into NaN, still flagged
    float big[2] = {3e38f, 1.0f}, out[2];
    int inf = 0;
    ck_assert_st(dl_unscale(dl_cpu(), big, DL_F32, out, 2, 2.0f, &inf), DL_OK);
    ck_assert(inf == 1 && isinf(out[0]) && out[1] == 2.0f);
    big[0] = INFINITY, inf = 0;
    ck_assert_st(dl_unscale(dl_cpu(), big, DL_F32, out, 2, 0.0f, &inf), DL_OK);
    ck_assert(inf == 1 && isnan(out[0]) && out[1] == 0.0f);
    // in place (fp32); count 0 clears the flag and needs no buffers
    big[0] = 4.0f, inf = 1;
    ck_assert_st(dl_unscale(dl_cpu(), big, DL_F32, big, 2, 0.25f, &inf), DL_OK);
    ck_assert(inf == 0 && big[0] == 1.0f && big[1] == 0.25f);
    inf = 1;
    ck_assert_st(dl_unscale(dl_cpu(), NULL, DL_F16, NULL, 0, 1.0f, &inf), DL_OK);
    ck_assert_int_eq(inf, 0);
    // refusals leave dst and the flag alone
    inf = 7;
    out[0] = 5.0f;
    double d[2] = {1, 2};
    ck_assert_st(dl_unscale(dl_cpu(), d, DL_F64, out, 2, 1.0f, &inf), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "f64");
    ck_assert_st(dl_unscale(dl_cpu(), f, DL_F32, out, 2, NAN, &inf), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "finite");
    ck_assert_st(dl_unscale(dl_cpu(), f, DL_F32, out, 2, INFINITY, &inf), DL_ERR_ARG);
    ck_assert_st(dl_unscale(dl_cpu(), f, DL_F32, out, 2, 1.0f, NULL), DL_ERR_ARG);
    ck_assert_st(dl_unscale(dl_cpu(), NULL, DL_F32, out, 2, 1.0f, &inf), DL_ERR_ARG);
    ck_assert_st(dl_unscale(dl_cpu(), f, DL_F32, f + 1, 2, 1.0f, &inf), DL_ERR_ARG); // overlap, not equal
    ck_assert_st(dl_unscale(dl_cpu(), dst, DL_F16, dst, 2, 1.0f, &inf), DL_ERR_ARG); // f16 in place
    ck_assert(inf == 7 && out[0] == 5.0f);
    free(f), free(dst), free(h);
}
END_TEST

Suite *ops_suite(void)
{
    return suite_of("ops", tcase_with_timeout("add_copy", 30),
                    TESTS(test_add_f32_against_double, test_add_f16_against_double, test_add_f16_rounding_cases,
                          test_add_f16_rounds_each_addition, test_add_refuses, test_add_bf16_against_double,
                          test_bf16_cast_scale_accumulate, test_unscale_bf16, test_copy, test_accumulate_and_cast,
                          test_scale, test_unscale));
}
