/* test_bandwidth.c — the bandwidth formula against its closed forms for
 * P = 1..8 (nccl-tests' busbw factors), the α–β time, and invalid input. */
#include "tests.h"

#include <math.h> // isnan, fabs

#include "dl/bandwidth.h"

START_TEST(test_busbw_factors_closed_form)
{
    for (int P = 1; P <= 8; P++) {
        // written out as fractions, not through the library's arithmetic
        double ar = (double)(2 * P - 2) / P, half = (double)(P - 1) / P;
        ck_assert_msg(dl_bw_factor(DL_BW_ALLREDUCE, P) == ar, "allreduce P=%d: %.17g, expected %.17g", P,
                      dl_bw_factor(DL_BW_ALLREDUCE, P), ar);
        ck_assert_msg(dl_bw_factor(DL_BW_REDUCE_SCATTER, P) == half, "reduce-scatter P=%d", P);
        ck_assert_msg(dl_bw_factor(DL_BW_ALLGATHER, P) == half, "all-gather P=%d", P);
        ck_assert_msg(dl_bw_factor(DL_BW_BROADCAST, P) == 1.0, "broadcast P=%d", P);
        ck_assert_int_eq(dl_bw_ring_steps(DL_BW_ALLREDUCE, P), 2 * (P - 1));
        ck_assert_int_eq(dl_bw_ring_steps(DL_BW_REDUCE_SCATTER, P), P - 1);
        ck_assert_int_eq(dl_bw_ring_steps(DL_BW_ALLGATHER, P), P - 1);
        ck_assert_int_eq(dl_bw_ring_steps(DL_BW_BROADCAST, P), P - 1);
        // an allreduce is a reduce-scatter then an all-gather: its factor is their sum
        ck_assert(fabs(dl_bw_factor(DL_BW_ALLREDUCE, P) -
                       (dl_bw_factor(DL_BW_REDUCE_SCATTER, P) + dl_bw_factor(DL_BW_ALLGATHER, P))) < 1e-15);
    }
    // P = 1: nothing crosses a link (busbw 0), except broadcast's P-free formula
    ck_assert(dl_bw_factor(DL_BW_ALLREDUCE, 1) == 0 && dl_bw_factor(DL_BW_ALLGATHER, 1) == 0);
    ck_assert(dl_bw_factor(DL_BW_BROADCAST, 1) == 1);
    // the familiar values: 4 ranks, allreduce 1.5; 8 ranks, 1.75
    ck_assert(dl_bw_factor(DL_BW_ALLREDUCE, 4) == 1.5 && dl_bw_factor(DL_BW_ALLREDUCE, 8) == 1.75);
    ck_assert_str_eq(dl_bw_coll_name(DL_BW_REDUCE_SCATTER), "reduce_scatter");
    ck_assert_str_eq(dl_bw_coll_name(DL_BW_COLL_COUNT), "?");
}
END_TEST

START_TEST(test_algbw_busbw)
{
    // 1 GB allreduce in 0.1 s on 4 ranks: algbw 10 GB/s, busbw 15 GB/s
    ck_assert(dl_bw_algbw(1e9, 0.1) == 1e9 / 0.1);
    ck_assert(dl_bw_busbw(DL_BW_ALLREDUCE, 4, 1e9, 0.1) == 1e9 / 0.1 * 1.5);
    ck_assert(dl_bw_busbw(DL_BW_BROADCAST, 4, 1e9, 0.1) == dl_bw_algbw(1e9, 0.1));
    ck_assert(dl_bw_busbw(DL_BW_ALLREDUCE, 1, 1e9, 0.1) == 0);
    ck_assert(dl_bw_algbw(0, 1) == 0);
    ck_assert(isnan(dl_bw_algbw(1, 0)) && isnan(dl_bw_algbw(1, -1)) && isnan(dl_bw_algbw(-1, 1)));
    ck_assert(isnan(dl_bw_factor(DL_BW_ALLREDUCE, 0)) && isnan(dl_bw_factor(DL_BW_COLL_COUNT, 4)));
    ck_assert(isnan(dl_bw_busbw(DL_BW_ALLREDUCE, 0, 1, 1)));
    ck_assert_int_eq(dl_bw_ring_steps(DL_BW_ALLREDUCE, 0), -1);
    ck_assert_int_eq(dl_bw_ring_steps(DL_BW_COLL_COUNT, 4), -1);
}
END_TEST

START_TEST(test_alpha_beta_seconds)
{
    // 10 allreduces moving 4e7 bytes in all on 4 ranks, 5 us per hop, 12 GB/s:
    // 10 * 6 hops * 5e-6 + 1.5 * 4e7 / 12e9
    double t = dl_bw_seconds(DL_BW_ALLREDUCE, 4, 10, 4e7, 5e-6, 12e9);
    ck_assert_msg(fabs(t - (3e-4 + 5e-3)) < 1e-15, "allreduce time %.17g", t);
    t = dl_bw_seconds(DL_BW_ALLGATHER, 2, 3, 1e6, 1e-5, 1e9);
    ck_assert_msg(fabs(t - (3 * 1e-5 + 0.5 * 1e6 / 1e9)) < 1e-15, "allgather time %.17g", t);
    t = dl_bw_seconds(DL_BW_BROADCAST, 3, 1, 1e6, 0, 1e9);
    ck_assert(fabs(t - 1e-3) < 1e-15);
    for (int c = 0; c < DL_BW_COLL_COUNT; c++)
        ck_assert_msg(dl_bw_seconds((dl_bw_coll)c, 1, 5, 1e9, 1e-5, 1e9) == 0, "%s on one rank",
                      dl_bw_coll_name((dl_bw_coll)c));
    ck_assert(dl_bw_seconds(DL_BW_ALLREDUCE, 4, 0, 0, 1e-5, 1e9) == 0);
    ck_assert(isnan(dl_bw_seconds(DL_BW_ALLREDUCE, 0, 1, 1, 1, 1)));
    ck_assert(isnan(dl_bw_seconds(DL_BW_COLL_COUNT, 2, 1, 1, 1, 1)));
}
END_TEST

Suite *bandwidth_suite(void)
{
    return suite_of("bandwidth", tcase_with_timeout("formula", 10),
                    TESTS(test_busbw_factors_closed_form, test_algbw_busbw, test_alpha_beta_seconds));
}
