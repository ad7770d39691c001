/* lab06.c — lab 06's grader: its items and their checks. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf

#include "dl/json.h" // dl_jv
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "shard.h"

START_TEST(test_shards)
{
    static const struct {
        size_t n;
        int P;
    } cases[] = {{10, 3}, {12, 4}, {3, 4}, {0, 2}, {1, 1}, {1000003, 8}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = cases[k].n, base = n / (size_t)cases[k].P, longer = n % (size_t)cases[k].P;
        for (int s = 0; s < cases[k].P; s++) {
            size_t want_off = (size_t)s * base + ((size_t)s < longer ? (size_t)s : longer);
            size_t want_cnt = base + ((size_t)s < longer);
            size_t off = shard_offset(n, cases[k].P, s), cnt = shard_count(n, cases[k].P, s);
            if (off != want_off || cnt != want_cnt)
                GR_FAIL("n = %zu over P = %d: shard %d is [%zu, +%zu), expected [%zu, +%zu) (the first n mod P "
                        "shards are one longer)",
                        n, cases[k].P, s, off, cnt, want_off, want_cnt);
        }
    }
}
END_TEST

START_TEST(test_driver_run)
{
    int rc = gr_run_driver(2, "run", "--epochs 1 --max-steps 5");
    if (rc != 0)
        gr_fail_run("run", rc);
    dl_jv *s = gr_summary("run");
    double diff = dl_jv_num(dl_jv_get(s, "param_diff_across_ranks"), -1);
    dl_jv_free(s);
    if (diff != 0)
        GR_FAIL("after ZeRO-1 steps on 2 ranks the ranks' parameters differ by %g", diff);
}
END_TEST

static const gr_item items[] = {
    GR_ITEM(test_shards, "shards", "shard offsets and counts: lab 04's segments, uneven P included", 10, GR_CPU, NULL,
            "the first n mod P shards hold one element more", "task-1-shards-10-points", 30, GR_WORKER),
    GR_ITEM(test_driver_run, "driver_run", "ZeRO-1 on 2 ranks: the ranks end with one model", 10, GR_CPU, "shards",
            "every rank all-gathers every updated shard", "task-3-zero-1", 120, GR_JUDGE),
};

GR_LAB("06", "Sharded data parallelism: ZeRO-1 on your own reduce-scatter and all-gather", "06-sharded", items);
