/* test_half.c — binary16 conversions: round trip, ties to even, subnormals,
 * overflow, and agreement with an independent conversion. */
#include "tests.h"

#include <math.h> // isnan
#include <stdint.h> // uint16_t, uint32_t

#include "dl/half.h" // dl_f2h, dl_h2f, dl_half_bits

static uint16_t f2h_bits(float f)
{
    return dl_half_bits(dl_f2h(f));
}

START_TEST(every_half_round_trips)
{
    fails fl = {0, ""};
    int nans = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        float f = dl_h2f(dl_half_from_bits((uint16_t)h));
        int is_nan_pattern = ref16_is_nan(REF_HALF, h);
        FAIL_IF(&fl, (isnan(f) != 0) != is_nan_pattern, "0x%04x -> %g", h, (double)f);
        if (is_nan_pattern) {
            nans++;
            FAIL_IF(&fl, !isnan(dl_h2f(dl_f2h(f))), "NaN 0x%04x lost its NaN-ness", h);
            continue;
        }
        FAIL_IF(&fl, (double)f != ref16_value(REF_HALF, (uint16_t)h), "h2f(0x%04x) = %.10g, expected %.10g", h,
                (double)f, ref16_value(REF_HALF, (uint16_t)h));
        FAIL_IF(&fl, f2h_bits(f) != h, "0x%04x -> %g -> 0x%04x", h, (double)f, f2h_bits(f));
    }
    ck_assert_no_fails(&fl);
    ck_assert_int_eq(nans, 2 * 1023);
}
END_TEST

START_TEST(midpoints_round_to_even)
{
    fails fl = {0, ""};
    ref16_check_midpoints(REF_HALF, f2h_bits, &fl);
    ck_assert_no_fails(&fl);
}
END_TEST

START_TEST(subnormals_and_overflow)
{
    ck_assert_uint_eq(f2h_bits(0x1p-24f), 0x0001); // smallest subnormal stays
    ck_assert_uint_eq(f2h_bits(0x1p-25f), 0x0000); // tie between 0 and 2^-24: even
    ck_assert_uint_eq(f2h_bits(-0x1p-25f), 0x8000); // keeps the sign
    ck_assert_uint_eq(f2h_bits(3.0f * 0x1p-26f), 0x0001); // 0.75 ulp rounds up
    ck_assert_uint_eq(f2h_bits(0x1p-26f), 0x0000); // 0.25 ulp rounds down
    ck_assert_uint_eq(f2h_bits(1.5f * 0x1p-24f), 0x0002); // tie between 1 and 2 ulps: even
    ck_assert_uint_eq(f2h_bits(1023.0f * 0x1p-24f), 0x03ff); // largest subnormal
    ck_assert_uint_eq(f2h_bits(0x1p-14f), 0x0400); // smallest normal
    ck_assert_uint_eq(f2h_bits(0x1p-14f - 0x1p-25f), 0x0400); // tie up into the normals
    ck_assert_uint_eq(f2h_bits(DL_HALF_MIN_SUBNORMAL), 0x0001);
    ck_assert_uint_eq(f2h_bits(DL_HALF_MIN_NORMAL), 0x0400);
    ck_assert_uint_eq(f2h_bits(1e-30f), 0x0000);
    ck_assert_uint_eq(f2h_bits(1.0f), 0x3c00);
    ck_assert_uint_eq(f2h_bits(-2.0f), 0xc000);
    ck_assert_uint_eq(f2h_bits(65504.0f), 0x7bff);
    ck_assert_uint_eq(f2h_bits(DL_HALF_MAX), 0x7bff);
    ck_assert_uint_eq(f2h_bits(65519.99f), 0x7bff);
    ck_assert_uint_eq(f2h_bits(65520.0f), 0x7c00);
    ck_assert_uint_eq(f2h_bits(-65520.0f), 0xfc00);
    ck_assert_uint_eq(f2h_bits(1e10f), 0x7c00);
    ck_assert_uint_eq(f2h_bits(INFINITY), 0x7c00);
    ck_assert_uint_eq(f2h_bits(-INFINITY), 0xfc00);
    ck_assert(isnan(dl_h2f(dl_f2h(NAN))));
    ck_assert_double_eq(dl_h2f(dl_half_from_bits(0x0001)), 0x1p-24);
    ck_assert_double_eq(dl_h2f(dl_half_from_bits(0x7bff)), 65504.0);
}
END_TEST

START_TEST(agrees_with_independent_conversion)
{
    fails fl = {0, ""};
    // Bit patterns spread over the whole float range (every exponent).
    for (uint32_t i = 0; i < (1u << 22); i++)
        ref16_check_float(REF_HALF, f2h_bits, i * 2654435761u, &fl);
    // Dense around the half range: exponents 2^-27 .. 2^18, with the low 13
    // bits of the mantissa often at, just under or just over a tie.
    const uint32_t low13[4] = {0, 0x1000, 0x0fff, 0x1001};
    for (uint32_t i = 0; i < (1u << 21); i++) {
        uint32_t e = 100 + i % 46, sign = (i / 46) & 1, k = (i / 92) & 3;
        uint32_t m = mix32(i) & 0x7fffff;
        if (k != 0)
            m = (m & ~0x1fffu) | low13[k];
        ref16_check_float(REF_HALF, f2h_bits, (sign << 31) | (e << 23) | m, &fl);
    }
    ck_assert_no_fails(&fl);
}
END_TEST

START_TEST(bulk_conversions_match_scalar)
{
    float src[64], back[64];
    dl_half h[64];
    for (int i = 0; i < 64; i++)
        src[i] = f32_from_bits(mix32((uint32_t)i) & 0xbfffffffu) * 1e-3f;
    dl_f32_to_f16(src, h, 64);
    dl_f16_to_f32(h, back, 64);
    for (int i = 0; i < 64; i++) {
        ck_assert_uint_eq(dl_half_bits(h[i]), f2h_bits(src[i]));
        ck_assert(back[i] == dl_h2f(h[i]) || (isnan(back[i]) && isnan(dl_h2f(h[i]))));
    }
    ck_assert_uint_eq(sizeof(dl_half), 2);
}
END_TEST

Suite *half_suite(void)
{
    return suite_of("half", tcase_with_timeout("half", 30),
                    TESTS(every_half_round_trips, midpoints_round_to_even, subnormals_and_overflow,
                          agrees_with_independent_conversion, bulk_conversions_match_scalar));
}
