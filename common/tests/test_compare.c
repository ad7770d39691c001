/* test_compare.c — allclose: the worst element, masking, non-finite results, the report. */
#include "tests.h"

#include <math.h> // NAN, INFINITY

#include "dl/compare.h" // dl_allclose_f32/f64, dl_cmp_format

START_TEST(worst_element_and_percent)
{
    const double ref[5] = {1, 2, 3, 4, -10};
    const float got[5] = {1.0f, 2.01f, 3.0f, 4.5f, -10.05f};
    dl_cmp r;
    // Thresholds 0.01·|ref|: errors 0, 0.01, 0, 0.5, 0.05 are 0%, ~50%, 0%, 1250%, ~50%.
    ck_assert_int_eq(dl_allclose_f32(got, ref, 5, 0.0, 0.01, &r), 0);
    ck_assert_uint_eq(r.n, 5);
    ck_assert_uint_eq(r.n_bad, 1);
    ck_assert_uint_eq(r.n_masked, 0);
    ck_assert_uint_eq(r.worst, 3);
    ck_assert_double_eq(r.worst_got, 4.5);
    ck_assert_double_eq(r.worst_ref, 4.0);
    ck_assert_double_eq_tol(r.worst_pct, 1250.0, 1e-9);
    ck_assert_double_eq(r.atol, 0.0);
    ck_assert_double_eq(r.rtol, 0.01);
    ck_assert_int_eq(r.n_show, 1);
    ck_assert_uint_eq(r.show_idx[0], 3);
    // atol counts too: 0.5 + 0.01·4 covers the error at [3].
    ck_assert_int_eq(dl_allclose_f32(got, ref, 5, 0.5, 0.01, &r), 1);
    ck_assert_uint_eq(r.n_bad, 0);
    ck_assert_uint_eq(r.worst, 3);
    ck_assert_double_eq_tol(r.worst_pct, 100.0 * 0.5 / 0.54, 1e-6);
    ck_assert_int_eq(dl_allclose_f32(got, ref, 5, 0.0, 0.01, NULL), 0);
}
END_TEST

START_TEST(masked_and_non_finite)
{
    const double ref[5] = {NAN, 1.0, INFINITY, 2.0, 3.0};
    const double got[5] = {123.0, 1.0, 5.0, 2.0, 3.0};
    dl_cmp r;
    ck_assert_int_eq(dl_allclose_f64(got, ref, 5, 1e-6, 1e-6, &r), 1);
    ck_assert_uint_eq(r.n_masked, 2);
    ck_assert_uint_eq(r.n_bad, 0);
    // A non-finite result where the reference is finite is always wrong,
    // and it is the worst however loose the tolerance.
    const double bad[5] = {123.0, 1.5, 5.0, NAN, 3.0};
    ck_assert_int_eq(dl_allclose_f64(bad, ref, 5, 1e9, 1e9, &r), 0);
    ck_assert_uint_eq(r.n_bad, 1);
    ck_assert_uint_eq(r.worst, 3);
    ck_assert(isnan(r.worst_got));
    ck_assert(isinf(r.worst_pct));
    const float inf_got[2] = {INFINITY, 1.0f};
    const double fin[2] = {1.0, 1.0};
    ck_assert_int_eq(dl_allclose_f32(inf_got, fin, 2, 1e30, 0, &r), 0);
    ck_assert_uint_eq(r.worst, 0);
    // Zero tolerance: exact equality passes, anything else fails.
    const double exact[2] = {1.0, 2.0};
    ck_assert_int_eq(dl_allclose_f64(exact, exact, 2, 0, 0, &r), 1);
    ck_assert_double_eq(r.worst_pct, 0.0);
    const double off[2] = {1.0, nextafter(2.0, 3.0)};
    ck_assert_int_eq(dl_allclose_f64(off, exact, 2, 0, 0, &r), 0);
    ck_assert_uint_eq(r.worst, 1);
    // Nothing to compare.
    ck_assert_int_eq(dl_allclose_f64(NULL, NULL, 0, 0, 0, &r), 1);
    ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(first_mismatches_and_format)
{
    double ref[10], got[10];
    for (int i = 0; i < 10; i++) {
        ref[i] = i;
        got[i] = (i % 2) ? i + 1.0 : i; // odd elements off by 1
    }
    got[7] = 7.0 + 3.0;
    dl_cmp r;
    ck_assert_int_eq(dl_allclose_f64(got, ref, 10, 0.1, 0.0, &r), 0);
    ck_assert_uint_eq(r.n_bad, 5);
    ck_assert_int_eq(r.n_show, DL_CMP_SHOW);
    const size_t first[4] = {1, 3, 5, 7};
    for (int i = 0; i < DL_CMP_SHOW; i++) {
        ck_assert_uint_eq(r.show_idx[i], first[i]);
        ck_assert_double_eq(r.show_ref[i], (double)first[i]);
    }
    ck_assert_uint_eq(r.worst, 7);
    char buf[512];
    dl_cmp_format(&r, "grad_w", buf, sizeof buf);
    ck_assert_has(buf, "grad_w: 5 of 10 elements");
    ck_assert_has(buf, "worst [7] got 10 want 7");
    ck_assert_has(buf, "3000%");
    ck_assert_has(buf, "first: [1] got 2 want 1, [3] got 4 want 3");
    // A short buffer is cut, not overrun.
    char small[24];
    memset(small, 'z', sizeof small);
    dl_cmp_format(&r, "grad_w", small, 16);
    ck_assert_uint_eq(strlen(small), 15);
    ck_assert_int_eq(small[17], 'z');
}
END_TEST

Suite *compare_suite(void)
{
    return suite_of("compare", tcase_with_timeout("compare", 10),
                    TESTS(worst_element_and_percent, masked_and_non_finite, first_mismatches_and_format));
}
