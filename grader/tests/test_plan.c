/* test_plan.c — the grader's run plan (plan.h) on tables shaped like the
 * labs', with any GPU count and tier filter: what runs, what a running item
 * brings along from a tier left out, what is skipped and why. The judge runs
 * items by this plan, so a GPU machine's `GR_TIERS=gpu1,gpu4` run is tested
 * here, on the CPU. Run by `make unit`. */
#include <check.h>
#include <stdlib.h> // EXIT_SUCCESS
#include <string.h> // strstr

#include "plan.h"
#include "test_grader.h" // not_built_tcase

/* Test bodies are never run here: the plan reads names, tiers and parents. */
START_TEST(never_run)
{
}
END_TEST

#define ITEM(name, tier, parent)                                     \
    {                                                                \
        name, name, 1, tier, parent, "", "", 1, GR_JUDGE, &never_run \
    }

/* Lab 05's shape: cpu items with gpu children (gpu_one_rank after
 * equivalence after buckets; gpu4_measured after overlap; amp_gpu after
 * amp_training after equivalence). */
static const gr_item lab[] = {
    ITEM("buckets", GR_CPU, NULL),
    ITEM("equivalence", GR_CPU, "buckets"),
    ITEM("overlap", GR_CPU, "buckets"),
    ITEM("gpu_one_rank", GR_GPU1, "equivalence"),
    ITEM("gpu4_measured", GR_GPU4, "overlap"),
    ITEM("scaler", GR_CPU, NULL),
    ITEM("amp_training", GR_CPU, "equivalence"),
    ITEM("amp_gpu", GR_GPU1, "amp_training"),
};
enum { N = sizeof lab / sizeof lab[0] };
enum { BUCKETS, EQUIV, OVERLAP, GPU1, GPU4, SCALER, AMP, AMP_GPU };

static gr_plan plan[N];
static char err[300];

static void make(const int *named, const char *tiers, int gpus)
{
    ck_assert_msg(gr_plan_make(lab, N, named, tiers, gpus, plan, err, sizeof err) == 0, "%s", err);
}

static void expect(int i, gr_plan_kind kind)
{
    ck_assert_msg(plan[i].kind == kind, "%s: kind %d, expected %d", lab[i].name, (int)plan[i].kind, (int)kind);
}

START_TEST(test_everything_on_the_cpu)
{
    make(NULL, NULL, 0);
    for (int i = 0; i < N; i++)
        expect(i, lab[i].tier == GR_CPU ? GR_PLAN_RUN : GR_PLAN_SKIP_GPU);
    ck_assert_int_eq(plan[GPU1].gpu_need, GPU1);
    ck_assert_int_eq(plan[BUCKETS].needed_by, -1);
}
END_TEST

/* make test-gpu on one GPU: the gpu items run, and so do the cpu items they need. */
START_TEST(test_gpu_tiers_bring_their_parents)
{
    make(NULL, "gpu1,gpu4", 1);
    expect(GPU1, GR_PLAN_RUN);
    expect(AMP_GPU, GR_PLAN_RUN);
    expect(EQUIV, GR_PLAN_NEEDED);
    expect(AMP, GR_PLAN_NEEDED);
    expect(BUCKETS, GR_PLAN_NEEDED);
    ck_assert_int_eq(plan[AMP].needed_by, AMP_GPU);
    ck_assert_int_eq(plan[BUCKETS].needed_by, EQUIV); // its child on the chain, itself needed
    ck_assert(plan[EQUIV].needed_by == GPU1 || plan[EQUIV].needed_by == AMP);
    expect(GPU4, GR_PLAN_SKIP_GPU); // one GPU: gpu4 cannot run, so overlap is not needed
    expect(OVERLAP, GR_PLAN_SKIP_TIER);
    expect(SCALER, GR_PLAN_SKIP_TIER);
    // on four GPUs gpu4_measured runs too, and brings overlap
    make(NULL, "gpu1 gpu4", 4);
    expect(GPU4, GR_PLAN_RUN);
    expect(OVERLAP, GR_PLAN_NEEDED);
    ck_assert_int_eq(plan[OVERLAP].needed_by, GPU4);
    expect(SCALER, GR_PLAN_SKIP_TIER);
}
END_TEST

/* The same filter on a machine without a GPU: nothing runs, nothing is needed. */
START_TEST(test_gpu_tiers_without_a_gpu)
{
    make(NULL, "gpu1,gpu4", 0);
    for (int i = 0; i < N; i++)
        expect(i, lab[i].tier == GR_CPU ? GR_PLAN_SKIP_TIER : GR_PLAN_SKIP_GPU);
    make(NULL, "cpu", 4); // the cpu tier alone: the gpu items are left out, whatever the GPUs
    for (int i = 0; i < N; i++)
        expect(i, lab[i].tier == GR_CPU ? GR_PLAN_RUN : GR_PLAN_SKIP_TIER);
}
END_TEST

/* Named items bring their chain; with a tier filter the chain is needed, not skipped. */
START_TEST(test_named_items)
{
    int named[N] = {0};
    named[AMP_GPU] = 1;
    make(named, NULL, 0);
    expect(AMP_GPU, GR_PLAN_SKIP_GPU);
    expect(AMP, GR_PLAN_RUN);
    expect(EQUIV, GR_PLAN_RUN);
    expect(BUCKETS, GR_PLAN_RUN);
    expect(OVERLAP, GR_PLAN_OUT);
    expect(GPU1, GR_PLAN_OUT);
    make(named, "gpu1", 1);
    expect(AMP_GPU, GR_PLAN_RUN);
    expect(AMP, GR_PLAN_NEEDED);
    expect(EQUIV, GR_PLAN_NEEDED);
    expect(BUCKETS, GR_PLAN_NEEDED);
    expect(SCALER, GR_PLAN_OUT);
}
END_TEST

/* A parent that needs more GPUs than answer skips its children (not "parent failed"). */
START_TEST(test_parent_needs_more_gpus)
{
    static const gr_item t[] = {ITEM("wide", GR_GPU4, NULL), ITEM("narrow", GR_GPU1, "wide"),
                                ITEM("after", GR_CPU, "narrow")};
    gr_plan p[3];
    ck_assert(gr_plan_make(t, 3, NULL, NULL, 1, p, err, sizeof err) == 0);
    ck_assert_int_eq(p[0].kind, GR_PLAN_SKIP_GPU);
    ck_assert_int_eq(p[1].kind, GR_PLAN_SKIP_GPU);
    ck_assert_int_eq(p[1].gpu_need, 0);
    ck_assert_int_eq(p[2].kind, GR_PLAN_SKIP_GPU);
    ck_assert_int_eq(p[2].gpu_need, 0);
    ck_assert(gr_plan_make(t, 3, NULL, "cpu", 4, p, err, sizeof err) == 0);
    ck_assert_int_eq(p[2].kind, GR_PLAN_RUN);
    ck_assert_int_eq(p[1].kind, GR_PLAN_NEEDED);
    ck_assert_int_eq(p[0].kind, GR_PLAN_NEEDED);
}
END_TEST

START_TEST(test_refusals)
{
    ck_assert(gr_plan_make(lab, N, NULL, "gpu", 1, plan, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "unknown tier 'gpu'") != NULL, "%s", err);
    ck_assert(gr_plan_make(lab, N, NULL, "cpu,gpu2", 1, plan, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "unknown tier 'gpu2'") != NULL, "%s", err);
    make(NULL, " ", 0); // blank: every tier
    expect(BUCKETS, GR_PLAN_RUN);
    static const gr_item late[] = {ITEM("child", GR_CPU, "parent"), ITEM("parent", GR_CPU, NULL)};
    gr_plan p[2];
    ck_assert(gr_plan_make(late, 2, NULL, NULL, 0, p, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "does not come before it") != NULL, "%s", err);
    static const gr_item orphan[] = {ITEM("child", GR_CPU, "nobody")};
    ck_assert(gr_plan_make(orphan, 1, NULL, NULL, 0, p, err, sizeof err) == -1);
    ck_assert_msg(strstr(err, "is not in the table") != NULL, "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grader-plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_everything_on_the_cpu);
    tcase_add_test(tc, test_gpu_tiers_bring_their_parents);
    tcase_add_test(tc, test_gpu_tiers_without_a_gpu);
    tcase_add_test(tc, test_named_items);
    tcase_add_test(tc, test_parent_needs_more_gpus);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, not_built_tcase());
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
