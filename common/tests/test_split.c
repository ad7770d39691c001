/* test_split.c — the stratified split: per-class largest-remainder sizes,
 * disjoint and complete parts, determinism, and rejected arguments. */
#include "tests.h"

#include <math.h> // NAN
#include <stdlib.h> // malloc, free

#include "dl/rng.h" // dl_rng (shuffled labels)
#include "dl/split.h" // dl_split_stratified

/* Largest remainder in exact integer arithmetic, fractions given in
 * thousandths: floors of count·f, then one each by largest remainder, ties to
 * the earlier part. */
static void ref_sizes(size_t count, const int *permille, int parts, size_t *out)
{
    size_t given = 0, rem[DL_SPLIT_MAX_PARTS] = {0};
    int used[DL_SPLIT_MAX_PARTS] = {0};
    for (int p = 0; p < parts; p++) {
        out[p] = count * (size_t)permille[p] / 1000;
        rem[p] = count * (size_t)permille[p] % 1000;
        given += out[p];
    }
    // The remainders sum to less than parts·1000, so no part gets two extra rows.
    while (given < count) {
        int best = 0;
        while (used[best])
            best++;
        for (int p = best + 1; p < parts; p++)
            if (!used[p] && rem[p] > rem[best])
                best = p;
        used[best] = 1;
        out[best]++;
        given++;
    }
}

/* Labels with the given class counts, in a shuffled order. */
static int32_t *make_labels(const size_t *counts, int classes, size_t *n)
{
    *n = 0;
    for (int c = 0; c < classes; c++)
        *n += counts[c];
    int32_t *y = malloc(*n * sizeof *y);
    size_t k = 0;
    for (int c = 0; c < classes; c++)
        for (size_t i = 0; i < counts[c]; i++)
            y[k++] = c;
    dl_rng r;
    dl_rng_seed(&r, 404, 0);
    for (size_t i = *n; i > 1; i--) {
        size_t j = (size_t)dl_rng_below(&r, i);
        int32_t t = y[i - 1];
        y[i - 1] = y[j];
        y[j] = t;
    }
    return y;
}

static void check_split(const size_t *counts, int classes, const int *permille, int parts)
{
    size_t n;
    int32_t *y = make_labels(counts, classes, &n);
    double fr[DL_SPLIT_MAX_PARTS];
    for (int p = 0; p < parts; p++)
        fr[p] = permille[p] / 1000.0;
    dl_split s;
    ck_assert_st(dl_split_stratified(y, n, classes, fr, parts, 7, &s), DL_OK);
    ck_assert_int_eq(s.n_parts, parts);
    ck_assert_uint_eq(s.offset[0], 0);
    ck_assert_uint_eq(s.offset[parts], n);
    unsigned char *seen = calloc(n ? n : 1, 1);
    for (int p = 0; p < parts; p++) {
        size_t got[16] = {0};
        for (size_t i = s.offset[p]; i < s.offset[p + 1]; i++) {
            size_t r = s.idx[i];
            ck_assert_uint_lt(r, n);
            ck_assert_msg(!seen[r], "row %zu is in two parts", r);
            seen[r] = 1;
            got[y[r]]++;
        }
        for (int c = 0; c < classes; c++) {
            size_t want[DL_SPLIT_MAX_PARTS];
            ref_sizes(counts[c], permille, parts, want);
            ck_assert_msg(got[c] == want[p], "class %d (%zu rows), part %d of %d/1000: %zu rows, expected %zu", c,
                          counts[c], p, permille[p], got[c], want[p]);
        }
    }
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(seen[i], "row %zu is in no part", i);
    free(seen);
    dl_split_free(&s);
    ck_assert_ptr_null(s.idx);
    free(y);
}

START_TEST(largest_remainder_sizes)
{
    const size_t bc[2] = {212, 357}; // breast_cancer
    const size_t odd[5] = {37, 8, 2, 53, 5};
    const size_t tiny[3] = {1, 0, 3};
    const int f622[3] = {600, 200, 200}, f712[3] = {700, 100, 200}, f7_15_15[3] = {700, 150, 150};
    const int f55[2] = {500, 500}, f1[1] = {1000}, f0[3] = {0, 1000, 0};
    const int f4[4] = {250, 250, 250, 250}, f8[8] = {125, 125, 125, 125, 125, 125, 125, 125};
    check_split(bc, 2, f622, 3);
    check_split(bc, 2, f712, 3);
    check_split(odd, 5, f622, 3);
    check_split(odd, 5, f712, 3); // 8·0.7 = 5.6 and 8·0.2 = 1.6: a tie in exact arithmetic
    check_split(odd, 5, f7_15_15, 3);
    check_split(odd, 5, f55, 2);
    check_split(odd, 5, f1, 1);
    check_split(odd, 5, f0, 3);
    check_split(odd, 5, f4, 4);
    check_split(odd, 5, f8, 8);
    check_split(tiny, 3, f712, 3);
}
END_TEST

START_TEST(same_seed_same_split)
{
    const size_t counts[3] = {100, 50, 25};
    size_t n;
    int32_t *y = make_labels(counts, 3, &n);
    const double fr[3] = {0.6, 0.2, 0.2};
    dl_split a, b, c;
    ck_assert_st(dl_split_stratified(y, n, 3, fr, 3, 11, &a), DL_OK);
    ck_assert_st(dl_split_stratified(y, n, 3, fr, 3, 11, &b), DL_OK);
    ck_assert_st(dl_split_stratified(y, n, 3, fr, 3, 12, &c), DL_OK);
    ck_assert_mem_eq(a.idx, b.idx, n * sizeof *a.idx);
    ck_assert_mem_eq(a.offset, c.offset, sizeof a.offset); // sizes depend on the labels only
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += a.idx[i] == c.idx[i];
    ck_assert_uint_lt(same, n / 10);
    // Rows within a part are mixed, not grouped by class.
    size_t changes = 0;
    for (size_t i = a.offset[0] + 1; i < a.offset[1]; i++)
        changes += y[a.idx[i]] != y[a.idx[i - 1]];
    ck_assert_uint_gt(changes, 20);
    dl_split_free(&a), dl_split_free(&b), dl_split_free(&c);
    free(y);
}
END_TEST

static void expect_fail(const int32_t *y, size_t n, int classes, const double *fr, int parts, dl_status want,
                        const char *reason)
{
    dl_split s, zero;
    memset(&s, 0xab, sizeof s);
    memset(&zero, 0, sizeof zero);
    ck_assert_st(dl_split_stratified(y, n, classes, fr, parts, 1, &s), want);
    ck_assert_has(dl_last_error(), reason);
    ck_assert(memcmp(&s, &zero, sizeof s) == 0);
}

START_TEST(rejected_arguments)
{
    const int32_t y[6] = {0, 1, 0, 1, 1, 0}, bad[3] = {0, 2, 1}, neg[2] = {0, -1};
    const double low[3] = {0.5, 0.2, 0.2}, high[2] = {0.7, 0.4}, negf[2] = {-0.1, 1.1};
    const double big[2] = {1.5, -0.5}, ok[2] = {0.5, 0.5}, nan2[2] = {NAN, 1.0};
    expect_fail(y, 6, 2, low, 3, DL_ERR_ARG, "sum to 0.9");
    expect_fail(y, 6, 2, high, 2, DL_ERR_ARG, "sum to 1.1");
    expect_fail(y, 6, 2, negf, 2, DL_ERR_ARG, "fraction 0 is -0.1");
    expect_fail(y, 6, 2, big, 2, DL_ERR_ARG, "fraction 0 is 1.5");
    expect_fail(y, 6, 2, nan2, 2, DL_ERR_ARG, "fraction 0");
    expect_fail(y, 6, 2, ok, 0, DL_ERR_ARG, "0 parts");
    expect_fail(y, 6, 2, ok, DL_SPLIT_MAX_PARTS + 1, DL_ERR_ARG, "parts");
    expect_fail(bad, 3, 2, ok, 2, DL_ERR_RANGE, "label 2 of row 1 is out of range [0, 2)");
    expect_fail(neg, 2, 2, ok, 2, DL_ERR_RANGE, "label -1 of row 1");
    // Within 1e-9 of 1 is accepted.
    const double near1[2] = {0.5, 0.5 + 1e-12};
    dl_split s;
    ck_assert_st(dl_split_stratified(y, 6, 2, near1, 2, 1, &s), DL_OK);
    ck_assert_uint_eq(dl_split_size(&s, 0) + dl_split_size(&s, 1), 6);
    dl_split_free(&s);
}
END_TEST

/* A held-out part: a stratified half of every class, disjoint from the rest, and the rows travel with their labels. */
START_TEST(hold_out_and_standardise)
{
    dl_dataset src;
    ck_assert_st(dl_dataset_alloc(&src, 41, 2, 3), DL_OK);
    for (size_t i = 0; i < 41; i++) { // class counts 21, 14, 6; row i holds i, 10·i
        src.y[i] = i < 21 ? 0 : i < 35 ? 1 : 2;
        src.X[2 * i] = (float)i;
        src.X[2 * i + 1] = (float)(10 * i);
    }
    dl_dataset held, rest;
    ck_assert_st(dl_split_hold_out(&src, 0.5, 7, &held, &rest), DL_OK);
    ck_assert_uint_eq(held.n + rest.n, 41);
    size_t counts[3];
    dl_dataset_class_counts(&held, counts);
    ck_assert(counts[0] == 11 && counts[1] == 7 && counts[2] == 3); // ties of the remainder go to the first part
    char *seen = calloc(41, 1);
    for (size_t i = 0; i < held.n + rest.n; i++) {
        const dl_dataset *ds = i < held.n ? &held : &rest;
        size_t k = i < held.n ? i : i - held.n, row = (size_t)ds->X[2 * k];
        ck_assert(row < 41 && !seen[row]++);
        ck_assert(ds->X[2 * k + 1] == (float)(10 * row) && ds->y[k] == src.y[row]);
    }
    free(seen);
    dl_dataset again, rest2;
    ck_assert_st(dl_split_hold_out(&src, 0.5, 7, &again, &rest2), DL_OK);
    ck_assert(memcmp(again.X, held.X, held.n * 2 * sizeof(float)) == 0); // the same seed, the same rows
    const float mean[2] = {1, 10}, scale[2] = {2, 5};
    dl_dataset_standardise(&again, mean, scale);
    for (size_t k = 0; k < again.n; k++)
        ck_assert(again.X[2 * k] == (held.X[2 * k] - 1) / 2 && again.X[2 * k + 1] == (held.X[2 * k + 1] - 10) / 5);
    dl_dataset_free(&again), dl_dataset_free(&rest2), dl_dataset_free(&held), dl_dataset_free(&rest);
    ck_assert_st(dl_split_hold_out(&src, 0.0, 7, &held, &rest), DL_ERR_ARG); // nothing held out
    ck_assert_has(dl_last_error(), "leaves a part empty");
    ck_assert(held.X == NULL && rest.X == NULL);
    ck_assert_st(dl_split_hold_out(&src, 1.5, 7, &held, &rest), DL_ERR_ARG);
    dl_dataset_free(&src);
}
END_TEST

Suite *split_suite(void)
{
    return suite_of("split", tcase_with_timeout("split", 20),
                    TESTS(largest_remainder_sizes, same_seed_same_split, rejected_arguments, hold_out_and_standardise));
}
