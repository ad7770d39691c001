/* test_fmt.c — shares never print as "-0.0%", byte counts with binary
 * prefixes. */
#include "tests.h"

#include <math.h> // signbit, isnan, NAN, INFINITY
#include <stdio.h> // snprintf

#include "dl/fmt.h" // dl_pct, dl_fmt_bytes

/* s formatted as printf("%.*f%%") after dl_pct. */
static const char *pct(double share, int decimals)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "%.*f%%", decimals, dl_pct(share, decimals));
    return buf;
}

START_TEST(pct_no_negative_zero)
{
    // what the helper is for: each of these prints "-0.0%" without it
    const double tiny[] = {-0.0, -1e-300, -1e-12, -1e-9, -4e-4, -4.9e-4};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        char raw[64];
        snprintf(raw, sizeof raw, "%.1f%%", 100 * tiny[i]);
        ck_assert_str_eq(raw, "-0.0%"); // the test would prove nothing otherwise
        ck_assert_str_eq(pct(tiny[i], 1), "0.0%");
        ck_assert(!signbit(dl_pct(tiny[i], 1)));
    }
    ck_assert_str_eq(pct(-0.004, 0), "0%");
    ck_assert_str_eq(pct(-1e-7, 3), "0.000%");
    ck_assert(dl_pct(-0.004, -2) == 0 && !signbit(dl_pct(-0.004, -2))); // decimals below 0 count as 0
    ck_assert(dl_pct(-0.006, -2) == 100 * -0.006);
    // a share that shows as negative keeps its sign and value
    ck_assert_str_eq(pct(-0.002, 1), "-0.2%");
    ck_assert_str_eq(pct(-0.006, 0), "-1%");
    ck_assert_str_eq(pct(-0.25, 1), "-25.0%");
    ck_assert(dl_pct(-0.002, 1) == 100 * -0.002);
    // everything else is 100 x share
    ck_assert_str_eq(pct(0.123, 1), "12.3%");
    ck_assert_str_eq(pct(1e-12, 1), "0.0%");
    ck_assert(dl_pct(0.37, 2) == 100 * 0.37 && dl_pct(2.5, 0) == 250);
    ck_assert(isnan(dl_pct(NAN, 1)));
    ck_assert(dl_pct(-INFINITY, 1) == -INFINITY && dl_pct(INFINITY, 1) == INFINITY);
}
END_TEST

START_TEST(bytes_binary_prefixes)
{
    char b[32];
    ck_assert_str_eq(dl_fmt_bytes(0, b, sizeof b), "0 B");
    ck_assert_str_eq(dl_fmt_bytes(8, b, sizeof b), "8 B");
    ck_assert_str_eq(dl_fmt_bytes(1000, b, sizeof b), "1000 B");
    ck_assert_str_eq(dl_fmt_bytes(1024, b, sizeof b), "1 KiB");
    ck_assert_str_eq(dl_fmt_bytes(65536, b, sizeof b), "64 KiB");
    ck_assert_str_eq(dl_fmt_bytes(100000, b, sizeof b), "97.7 KiB"); // a decimal size is not "100 KiB"
    ck_assert_str_eq(dl_fmt_bytes(1536.0 * 1024, b, sizeof b), "1.5 MiB");
    ck_assert_str_eq(dl_fmt_bytes(64.0 * 1048576, b, sizeof b), "64 MiB");
    ck_assert_str_eq(dl_fmt_bytes(1048575, b, sizeof b), "1024 KiB"); // not "1.02e+03 KiB"
    ck_assert_str_eq(dl_fmt_bytes(2.0 * 1073741824, b, sizeof b), "2 GiB");
    ck_assert_str_eq(dl_fmt_bytes(-1, b, sizeof b), "-1 B");
    ck_assert_str_eq(dl_fmt_bytes(65536, b, 4), "64 "); // truncated, terminated
    ck_assert(dl_fmt_bytes(8, b, 0) == b);
}
END_TEST

Suite *fmt_suite(void)
{
    return suite_of("fmt", tcase_with_timeout("fmt", 10), TESTS(pct_no_negative_zero, bytes_binary_prefixes));
}
