/* test_bf16.c — bfloat16 conversions: every value's round trip, ties to even,
 * subnormals, overflow, NaN, and agreement bit for bit with an independent
 * conversion in double arithmetic, for conversions and for dl_bf16_add. */
#include "tests.h"

#include <float.h> // FLT_MAX
#include <math.h> // isnan
#include <stdint.h> // uint16_t, uint32_t

#include "dl/bf16.h" // dl_f2bf, dl_bf2f, dl_bf16_bits, dl_bf16_add
#include "dl/dtype.h" // DL_BF16, dl_dtype_size, dl_dtype_name
#include "dl/lowp.h" // dl_lowp_get, dl_lowp_put

static uint16_t f2bf_bits(float f)
{
    return dl_bf16_bits(dl_f2bf(f));
}

START_TEST(every_bf16_round_trips)
{
    fails fl = {0, ""};
    int nans = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = dl_bf2f(dl_bf16_from_bits((uint16_t)h));
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        FAIL_IF(&fl, u != h << 16, "bf2f(0x%04x) has bits 0x%08x, expected the top half", h, u);
        FAIL_IF(&fl, (isnan(f) != 0) != ref16_is_nan(REF_BF16, h), "0x%04x -> %g", h, (double)f);
        if (ref16_is_nan(REF_BF16, h)) {
            nans++;
            uint16_t back = f2bf_bits(f);
            FAIL_IF(&fl, !ref16_is_nan(REF_BF16, back) || (back & 0x0040) == 0 || (back & 0x8000) != (h & 0x8000),
                    "NaN 0x%04x -> 0x%04x: expected a quiet NaN of the same sign", h, back);
            FAIL_IF(&fl, (h & 0x0040) && back != h, "quiet NaN 0x%04x -> 0x%04x: expected unchanged", h, back);
            continue;
        }
        FAIL_IF(&fl, (double)f != ref16_value(REF_BF16, (uint16_t)h), "bf2f(0x%04x) = %.10g, expected %.10g", h,
                (double)f, ref16_value(REF_BF16, (uint16_t)h));
        FAIL_IF(&fl, f2bf_bits(f) != h, "0x%04x -> %g -> 0x%04x", h, (double)f, f2bf_bits(f));
    }
    ck_assert_no_fails(&fl);
    ck_assert_int_eq(nans, 2 * 127);
}
END_TEST

START_TEST(midpoints_round_to_even)
{
    fails fl = {0, ""};
    ref16_check_midpoints(REF_BF16, f2bf_bits, &fl);
    ck_assert_no_fails(&fl);
}
END_TEST

START_TEST(specials_subnormals_and_overflow)
{
    ck_assert_uint_eq(f2bf_bits(1.0f), 0x3f80);
    ck_assert_uint_eq(f2bf_bits(-2.0f), 0xc000);
    ck_assert_uint_eq(f2bf_bits(0.0f), 0x0000);
    ck_assert_uint_eq(f2bf_bits(-0.0f), 0x8000);
    ck_assert_uint_eq(f2bf_bits(1.0f + 0x1p-8f), 0x3f80); // a tie: to even (down)
    ck_assert_uint_eq(f2bf_bits(1.0f + 0x3p-8f), 0x3f82); // a tie: to even (up)
    ck_assert_uint_eq(f2bf_bits(1.0f + 0x1p-8f + 0x1p-23f), 0x3f81); // just above the tie
    ck_assert_uint_eq(f2bf_bits(0x1p-133f), 0x0001); // smallest subnormal stays
    ck_assert_uint_eq(f2bf_bits(0x1p-134f), 0x0000); // tie between 0 and 2^-133: even
    ck_assert_uint_eq(f2bf_bits(0x3p-135f), 0x0001); // 0.75 ulp rounds up
    ck_assert_uint_eq(f2bf_bits(0x1p-149f), 0x0000); // fp32's smallest subnormal underflows
    ck_assert_uint_eq(f2bf_bits(-0x1p-149f), 0x8000); // keeps the sign
    ck_assert_uint_eq(f2bf_bits(DL_BF16_MIN_SUBNORMAL), 0x0001);
    ck_assert_uint_eq(f2bf_bits(DL_BF16_MIN_NORMAL), 0x0080);
    ck_assert_uint_eq(f2bf_bits(DL_BF16_MAX), 0x7f7f);
    ck_assert_uint_eq(f2bf_bits(0x1.fep127f), 0x7f7f);
    ck_assert_uint_eq(f2bf_bits(0x1.fefffep127f), 0x7f7f); // below the overflow midpoint
    ck_assert_uint_eq(f2bf_bits(0x1.ffp127f), 0x7f80); // the midpoint ties to even: inf
    ck_assert_uint_eq(f2bf_bits(FLT_MAX), 0x7f80);
    ck_assert_uint_eq(f2bf_bits(-FLT_MAX), 0xff80);
    ck_assert_uint_eq(f2bf_bits(INFINITY), 0x7f80);
    ck_assert_uint_eq(f2bf_bits(-INFINITY), 0xff80);
    // a NaN whose payload is only in the low 16 bits must not become inf
    ck_assert_uint_eq(f2bf_bits(f32_from_bits(0x7f800001u)), 0x7fc0);
    ck_assert_uint_eq(f2bf_bits(f32_from_bits(0xff800001u)), 0xffc0);
    ck_assert_uint_eq(f2bf_bits(f32_from_bits(0x7fa00000u)), 0x7fe0); // signalling: made quiet, payload kept
    ck_assert(isnan(dl_bf2f(dl_f2bf(NAN))));
    ck_assert_double_eq(dl_bf2f(dl_bf16_from_bits(0x0001)), 0x1p-133);
    ck_assert_double_eq(dl_bf2f(dl_bf16_from_bits(0x7f7f)), 0x1.fep127);
    // fp16 underflows here; bf16 does not
    ck_assert_double_eq(dl_bf2f(dl_f2bf(1e-10f)), ref16_value(REF_BF16, ref16_bits(REF_BF16, 1e-10f)));
    ck_assert(dl_bf2f(dl_f2bf(1e-30f)) != 0.0f);
    ck_assert_uint_eq(sizeof(dl_bf16), 2);
    ck_assert_uint_eq(dl_dtype_size(DL_BF16), 2);
    ck_assert_str_eq(dl_dtype_name(DL_BF16), "bf16");
}
END_TEST

/* About 6.3 million floats: bit patterns over the whole range, then dense
 * near ties (the low 16 bits at, just under or just over 0x8000). */
START_TEST(agrees_with_independent_conversion)
{
    fails fl = {0, ""};
    for (uint32_t i = 0; i < (1u << 22); i++)
        ref16_check_float(REF_BF16, f2bf_bits, i * 2654435761u, &fl);
    const uint32_t low16[4] = {0x8000, 0x7fff, 0x8001, 0};
    for (uint32_t i = 0; i < (1u << 21); i++) {
        uint32_t u = mix32(i);
        u = (u & 0xffff0000u) | low16[i & 3];
        if ((i & 3) == 3)
            u = mix32(i ^ 0x5bd1e995u);
        ref16_check_float(REF_BF16, f2bf_bits, u, &fl);
    }
    ck_assert_no_fails(&fl);
}
END_TEST

/* dl_bf16_add against the exact sum rounded once (in double: exact while the
 * exponents are within 45 of each other; beyond that the smaller addend is
 * far below half an ulp and double's rounding does not change the bf16). */
START_TEST(add_is_correctly_rounded)
{
    fails fl = {0, ""};
    for (uint32_t i = 0; i < (1u << 21); i++) {
        uint32_t r = mix32(i * 0x9e3779b9u + 1);
        uint16_t a = (uint16_t)(r >> 16), b = (uint16_t)r;
        if (i & 1) // same neighbourhood: cancellations and carries
            b = (uint16_t)((a & 0xff80) ^ (r & 0x807f));
        if (ref16_is_nan(REF_BF16, a) || ref16_is_nan(REF_BF16, b))
            continue;
        double exact = ref16_value(REF_BF16, a) + ref16_value(REF_BF16, b);
        uint16_t got = dl_bf16_bits(dl_bf16_add(dl_bf16_from_bits(a), dl_bf16_from_bits(b)));
        if (isnan(exact)) { // inf + -inf
            FAIL_IF(&fl, !ref16_is_nan(REF_BF16, got), "0x%04x + 0x%04x = 0x%04x, expected NaN", a, b, got);
            continue;
        }
        uint16_t want = ref16_bits(REF_BF16, exact);
        if (exact == 0.0) // x + (-x) is +0; -0 + -0 is -0
            want = (a & b & 0x8000) ? 0x8000 : 0;
        FAIL_IF(&fl, got != want, "0x%04x + 0x%04x = 0x%04x, expected 0x%04x", a, b, got, want);
    }
    ck_assert_no_fails(&fl);
}
END_TEST

START_TEST(bulk_and_by_dtype_match_scalar)
{
    float src[64], back[64];
    dl_bf16 h[64];
    for (int i = 0; i < 64; i++)
        src[i] = f32_from_bits(mix32((uint32_t)i) & 0xbfffffffu) * 1e-3f;
    dl_f32_to_bf16(src, h, 64);
    dl_bf16_to_f32(h, back, 64);
    for (int i = 0; i < 64; i++) {
        ck_assert_uint_eq(dl_bf16_bits(h[i]), f2bf_bits(src[i]));
        ck_assert(back[i] == dl_bf2f(h[i]) || (isnan(back[i]) && isnan(dl_bf2f(h[i]))));
        ck_assert(dl_lowp_get(h, (size_t)i, DL_BF16) == back[i] || isnan(back[i]));
    }
    dl_bf16 one;
    dl_half oneh;
    dl_lowp_put(&one, 0, DL_BF16, 1.0f + 0x1p-8f);
    dl_lowp_put(&oneh, 0, DL_F16, 1.0f + 0x1p-8f);
    ck_assert_uint_eq(dl_bf16_bits(one), 0x3f80); // rounded to 8 bits
    ck_assert(dl_h2f(oneh) == 1.0f + 0x1p-8f); // fp16 keeps 11
    ck_assert(dl_lowp(DL_F16) && dl_lowp(DL_BF16) && !dl_lowp(DL_F32));
}
END_TEST

Suite *bf16_suite(void)
{
    return suite_of("bf16", tcase_with_timeout("bf16", 30),
                    TESTS(every_bf16_round_trips, midpoints_round_to_even, specials_subnormals_and_overflow,
                          agrees_with_independent_conversion, add_is_correctly_rounded,
                          bulk_and_by_dtype_match_scalar));
}
