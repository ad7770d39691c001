/* test_lr.c — the kit's learning-rate schedule against hand-computed values:
 * linear scaling, warmup, constant and cosine phases, and the edge cases. */
#include "tests.h"

#include <math.h> // cos, fabs

#include "dl/lr.h"

#define PI 3.14159265358979323846

static void expect_lr(const dl_lr_config *c, long t, double want)
{
    double got = dl_lr_at(c, t);
    ck_assert_msg(fabs(got - want) <= 1e-15 + 1e-15 * fabs(want), "step %ld: lr %.17g, expected %.17g", t, got, want);
}

START_TEST(linear_scaling_and_warmup)
{
    // peak = 0.1 · 1024 / 256 = 0.4, reached over 4 warmup steps
    dl_lr_config c = {0.1, 256, 1024, 4, 100, 0};
    expect_lr(&c, 0, 0.1);
    expect_lr(&c, 1, 0.2);
    expect_lr(&c, 2, 0.3);
    expect_lr(&c, 3, 0.4);
    expect_lr(&c, 4, 0.4);
    expect_lr(&c, 99, 0.4);
    expect_lr(&c, 5000, 0.4); // constant: no end
    dl_lr_config none = {0.024, 4096, 16384, 0, 10, 0};
    expect_lr(&none, 0, 0.096); // no warmup: the peak at once
    dl_lr_config smaller = {0.1, 512, 128, 0, 0, 0};
    expect_lr(&smaller, 7, 0.025); // a smaller global batch scales down
}
END_TEST

START_TEST(cosine_decay)
{
    // peak 0.4, warmup 4, cosine to 0 at step 12: the decay spans 8 steps
    dl_lr_config c = {0.1, 256, 1024, 4, 12, 1};
    expect_lr(&c, 1, 0.2); // warmup is unchanged
    expect_lr(&c, 4, 0.4); // cos 0 = 1
    expect_lr(&c, 6, 0.4 * 0.5 * (1 + cos(PI / 4)));
    expect_lr(&c, 8, 0.4 * 0.5 * (1 + cos(PI / 2))); // half way: peak / 2
    ck_assert(fabs(dl_lr_at(&c, 8) - 0.2) < 1e-15);
    expect_lr(&c, 11, 0.4 * 0.5 * (1 + cos(7 * PI / 8)));
    expect_lr(&c, 12, 0.0);
    expect_lr(&c, 13, 0.0);
    dl_lr_config short_run = {0.1, 256, 1024, 4, 4, 1};
    expect_lr(&short_run, 3, 0.4); // total <= warmup: warmup, then 0
    expect_lr(&short_run, 4, 0.0);
}
END_TEST

START_TEST(edge_cases_give_zero)
{
    dl_lr_config c = {0.1, 0, 1024, 4, 12, 0};
    expect_lr(&c, 3, 0.0); // base_batch 0
    c.base_batch = 256;
    expect_lr(&c, -1, 0.0);
    ck_assert(dl_lr_at(NULL, 0) == 0.0);
}
END_TEST

Suite *lr_suite(void)
{
    return suite_of("lr", tcase_with_timeout("lr", 10),
                    TESTS(linear_scaling_and_warmup, cosine_decay, edge_cases_give_zero));
}
