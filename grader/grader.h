/* grader.h — the autograder's framework, shared by every lab's suite.
 *
 * Contract
 * - A lab's grader file (grader/labNN.c) defines `const gr_lab *gr_lab_get(void)`:
 *   its title and a table of items. One item = one Check TCase, keyed by
 *   name, declared once: its test, points, tier, parent, hint, handout
 *   section and where it runs live in the table (gr_suite builds the suite).
 * - Two programs grade (see replay.h): the judge (runner.c, no student code)
 *   runs every item and computes every verdict; the worker (worker.c, linked
 *   with the student's code) runs an item's test body for real and records
 *   the student's calls. A GR_WORKER item is first run by the worker, in the
 *   sandbox (sandbox.h), then judged on the replayed recording. A GR_JUDGE
 *   item calls no student function in-process: it runs the lab's driver (the
 *   student's code) in the sandbox with gr_run_driver (drivers.h) and judges
 *   the files it wrote.
 * - The judge runs each item's test in a forked child (Check's fork mode)
 *   with a timeout scaled by CK_TIMEOUT_MULTIPLIER. An item passes only when
 *   its test body ran to the end in the judge; a worker that stopped early
 *   (exit, crash, limit) fails the item, named ("your code exited (status 0)
 *   inside logreg_scaler_fit (lab01 task 1) before the check finished").
 * - Tiers: cpu always runs; gpu1 needs one CUDA GPU, gpu4 four. A tier that
 *   cannot run is reported SKIPPED with its points shown apart, never counted
 *   as passed. GR_TIERS=gpu1,gpu4 (any list) selects tiers, and an item that
 *   runs still brings the items it needs (its parent, and theirs) from a tier
 *   left out: they run first, counted, with a line saying which item needs
 *   them. An item whose parent ran and did not pass reports "parent failed";
 *   one whose parent cannot run here (too few GPUs) is SKIPPED. plan.h
 *   decides all of this before anything runs.
 * - Test code states what it saw: GR_FAIL("...") / ck_assert_msg. A message
 *   that matches a classic mistake carries "[diagnosis: name]" (see
 *   GR_DIAG), which the runner lists and the mutant tests look for. Lines
 *   meant for the student go through gr_note (printf in the judge, silent in
 *   the worker, so they are not printed twice).
 */
#ifndef GRADER_H
#define GRADER_H

#include <check.h> // Suite, TCase, ck_assert_msg
#include <string.h> // strcspn

#include "dl/compare.h" // dl_cmp
#include "dl/status.h" // dl_status_name, dl_last_error

typedef enum gr_tier { GR_CPU = 0, GR_GPU1 = 1, GR_GPU4 = 2 } gr_tier;
/* Where an item's test body calls the student's code: through the worker
 * (recorded, replayed), or only through drivers run in the sandbox. */
typedef enum gr_where { GR_WORKER = 0, GR_JUDGE = 1 } gr_where;

typedef struct gr_item {
    const char *name; /* TCase name: lower_snake_case, unique in the lab */
    const char *title; /* one line shown in the table */
    int points;
    gr_tier tier;
    const char *parent; /* item that must pass first, or NULL */
    const char *hint; /* shown under a failure */
    const char *section; /* handout section, e.g. "README.md §Task 1" */
    double timeout; /* seconds, before CK_TIMEOUT_MULTIPLIER */
    gr_where where;
    const TTest *const *test; /* &test_x for START_TEST(test_x): the item's body */
} gr_item;

typedef struct gr_lab {
    const char *id; /* "01" */
    const char *title; /* "logistic regression on one GPU, with feature scaling" */
    const char *dir; /* "01-logreg" */
    const gr_item *items; /* each item declared once, with its test: the suite is built from it */
    int n_items;
} gr_lab;

const gr_lab *gr_lab_get(void);

/* One row of a lab's table, its test first: GR_ITEM(test_x, "name", "title",
 * points, tier, parent, hint, "heading", timeout, where), the heading an
 * anchor of the lab's README.md. */
#define GR_ITEM(test, name, title, points, tier, parent, hint, heading, timeout, where)      \
    {                                                                                        \
        name, title, points, tier, parent, hint, "README.md#" heading, timeout, where, &test \
    }

/* After a lab's table, `static const gr_item items[]`: defines gr_lab_get()
 * for it, e.g. GR_LAB("01", "logistic regression ...", "01-logreg", items). */
#define GR_LAB(id, title, dir, items)                                                           \
    static const gr_lab gr_lab_ = {id, title, dir, items, (int)(sizeof items / sizeof *items)}; \
    const gr_lab *gr_lab_get(void)                                                              \
    {                                                                                           \
        return &gr_lab_;                                                                        \
    }                                                                                           \
    const gr_lab *gr_lab_get(void)

/* An item's test in another file of the lab than its table (grader/labNN_*.c):
 * GR_TEST(test_x) { ... } END_TEST there, as START_TEST(test_x) would be; the
 * table's file declares it with GR_TEST_DECLARE(test_x) and names it
 * &gr_test_x (the one global, gr_ like every grader symbol: no student file
 * may name it). */
#define GR_TEST(name)                                                            \
    static void name##_fn(int _i CK_ATTRIBUTE_UNUSED);                           \
    static const TTest name##_ttest = {"" #name, name##_fn, __FILE__, __LINE__}; \
    const TTest *const gr_##name = &name##_ttest;                                \
    static void name##_fn(int _i CK_ATTRIBUTE_UNUSED)
#define GR_TEST_DECLARE(name) extern const TTest *const gr_##name

/* The lab's suite: one TCase per item, named after it, with its timeout and
 * the judge's fixtures, running the item's test. */
Suite *gr_suite(void);

/* A directory that lives for the whole grading run (removed at its end), where
 * sandboxed drivers write (gr_run_driver): items may leave results there for
 * later items. */
const char *gr_scratch(void);

/* A line for the student's eyes (printf in the judge; nothing in the worker). */
void gr_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CK_TIMEOUT_MULTIPLIER, or 1. */
double gr_timeout_multiplier(void);

/* The item whose test is running (in the child). */
const gr_item *gr_current(void);

/* Fails the running test with a formatted message. */
#define GR_FAIL(...) ck_abort_msg(__VA_ARGS__)
/* "[diagnosis: name] " prefix for messages that recognise a classic mistake. */
#define GR_DIAG(name) "[diagnosis: " name "] "

/* Evaluates a dl_status call; on failure fails the test with the call, the
 * status and the library's message (for a skeleton: "not implemented yet"). */
#define GR_OK(call)                                                                                            \
    do {                                                                                                       \
        dl_status gr_st_ = (call);                                                                             \
        if (gr_st_ != DL_OK)                                                                                   \
            ck_abort_msg("%.*s(...) returned %s: %s", (int)strcspn(#call, "("), #call, dl_status_name(gr_st_), \
                         dl_last_error());                                                                     \
    } while (0)

/* Fails with dl_cmp_format's report unless got matches ref. */
#define GR_ALLCLOSE_F32(what, got, ref, n, atol, rtol, prefix)             \
    do {                                                                   \
        dl_cmp gr_c_;                                                      \
        if (!dl_allclose_f32((got), (ref), (n), (atol), (rtol), &gr_c_)) { \
            char gr_b_[1024];                                              \
            dl_cmp_format(&gr_c_, (what), gr_b_, sizeof gr_b_);            \
            ck_abort_msg("%s%s", (prefix), gr_b_);                         \
        }                                                                  \
    } while (0)

#endif /* GRADER_H */
