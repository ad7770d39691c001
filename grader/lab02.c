/* lab02.c — grader for lab 02: honest evaluation.
 *
 * Counts (splits, folds, confusion matrices) must match exactly; metrics are
 * checked against a double-precision reference computed from the
 * confusion matrix (1e-12, lab02_ref.c); the softmax loss and gradient against a double
 * reference and finite differences (1e-6 + 1e-5 relative). Random tie-breaks
 * are not predicted: the split checks verify the largest-remainder property
 * itself, and that ties do fall both ways over seeds. The gpu1 items are
 * lab02_gpu.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // exp, log, fabs, isfinite, floor
#include <stdio.h> // snprintf, printf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "dl/data.h" // dl_data_load
#include "dl/device.h"
#include "dl/rng.h"
#include "eval.h"
#include "grader.h"
#include "lab02_ref.h" // gr_reference_report, gr_ref_softmax, gr_ref_psi, gr_planted_*

/* Checks a 3-part stratified split of y against the contract. */
static void check_split(const char *what, const int32_t *y, size_t n, int C, const double frac[3], uint64_t seed)
{
    dl_split sp;
    GR_OK(eval_split_stratified(y, n, C, frac, seed, &sp));
    size_t sizes[3];
    GR_OK(eval_part_sizes(n, frac, sizes));
    for (int p = 0; p < 3; p++) {
        if (dl_split_size(&sp, p) != sizes[p])
            GR_FAIL("%s: part %d has %zu rows, expected %zu (eval_part_sizes)", what, p, dl_split_size(&sp, p),
                    sizes[p]);
    }
    char *seen = calloc(n ? n : 1, 1);
    size_t *left = calloc((size_t)C, sizeof *left), *got = calloc((size_t)C, sizeof *got);
    for (size_t i = 0; i < n; i++)
        left[y[i]]++;
    for (int p = 0; p < 3; p++) {
        memset(got, 0, (size_t)C * sizeof *got);
        for (size_t k = sp.offset[p]; k < sp.offset[p + 1]; k++) {
            size_t r = sp.idx[k];
            if (r >= n)
                GR_FAIL("%s: index %zu is out of range (n = %zu)", what, r, n);
            if (seen[r]++)
                GR_FAIL("%s: row %zu appears twice: the parts must be disjoint", what, r);
            got[y[r]]++;
        }
        char why[400];
        if (!gr_is_approx_mode(left, C, sizes[p], got, why, sizeof why))
            GR_FAIL(
                GR_DIAG(
                    "split-not-stratified") "%s, part %d: %s. Per class, a part takes the floor of "
                                            "count * size / total, and the leftover rows go to the largest remainders",
                what, p, why);
        for (int c = 0; c < C; c++)
            left[c] -= got[c];
    }
    size_t assigned = sp.offset[3];
    if (frac[0] + frac[1] + frac[2] > 1 - 1e-9 && assigned != n)
        GR_FAIL("%s: %zu of %zu rows assigned; with fractions summing to 1 the split must be complete", what, assigned,
                n);
    // same seed, same split; another seed, another permutation
    dl_split again, other;
    GR_OK(eval_split_stratified(y, n, C, frac, seed, &again));
    if (again.offset[3] != sp.offset[3] || memcmp(again.idx, sp.idx, sp.offset[3] * sizeof *sp.idx) != 0)
        GR_FAIL("%s: two calls with seed %llu gave different splits", what, (unsigned long long)seed);
    GR_OK(eval_split_stratified(y, n, C, frac, seed + 1, &other));
    if (n > 20 && memcmp(other.idx, sp.idx, sp.offset[3] * sizeof *sp.idx) == 0)
        GR_FAIL("%s: seeds %llu and %llu gave the same permutation: the seed must drive the shuffle", what,
                (unsigned long long)seed, (unsigned long long)seed + 1);
    int sorted = n > 20 && C > 1;
    for (size_t k = 1; k < sizes[0] && sorted; k++)
        sorted = y[sp.idx[k]] >= y[sp.idx[k - 1]];
    if (sorted)
        GR_FAIL("%s: the train part is sorted by class: shuffle each part", what);
    free(seen), free(left), free(got);
    dl_split_free(&sp), dl_split_free(&again), dl_split_free(&other);
}

// ---- task 1: the split ----

START_TEST(test_approximate_mode)
{
    const struct {
        size_t counts[5];
        int C;
        size_t draws;
    } cases[] = {
        {{10, 20, 30}, 3, 6},       {{7, 3, 2}, 3, 6},       {{1, 1, 1}, 3, 2}, {{5, 3}, 2, 4},
        {{100, 1, 1, 1, 1}, 5, 50}, {{4, 4, 4, 4, 4}, 5, 7}, {{9}, 1, 4},       {{3, 0, 3}, 3, 3},
    };
    dl_rng r;
    dl_rng_seed(&r, 5, 5);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t got[5] = {0};
        GR_OK(eval_approximate_mode(cases[k].counts, cases[k].C, cases[k].draws, &r, got));
        char why[400];
        if (!gr_is_approx_mode(cases[k].counts, cases[k].C, cases[k].draws, got, why, sizeof why))
            GR_FAIL(GR_DIAG("split-not-stratified") "approximate_mode case %zu (%zu draws): %s", k, cases[k].draws,
                    why);
    }
    // ties are broken at random: over seeds, each of the tied classes gets the extra row
    size_t counts[3] = {1, 1, 1}, wins[3] = {0, 0, 0};
    for (uint64_t s = 0; s < 60; s++) {
        size_t got[3];
        dl_rng_seed(&r, s, 7);
        GR_OK(eval_approximate_mode(counts, 3, 1, &r, got));
        for (int c = 0; c < 3; c++)
            wins[c] += got[c];
    }
    if (wins[0] == 0 || wins[1] == 0 || wins[2] == 0)
        GR_FAIL(GR_DIAG("split-ties-not-random") "3 classes of 1 row, 1 draw, 60 seeds: the draw went to the "
                                                 "classes %zu/%zu/%zu times; a tie must be broken with the RNG, not by "
                                                 "class order",
                wins[0], wins[1], wins[2]);
    size_t bad[2] = {3, 5}, out[2];
    dl_status st = eval_approximate_mode(bad, 2, 9, &r, out);
    ck_assert_msg(st == DL_ERR_ARG, "9 draws from 8 rows returned %s, expected DL_ERR_ARG", dl_status_name(st));
}
END_TEST

START_TEST(test_split_exact)
{
    const double f1[3] = {0.5, 0.25, 0.25}, f2[3] = {0.7, 0.15, 0.15}, f3[3] = {0.6, 0.2, 0.2};
    const double f4[3] = {0.5, 0.2, 0.1}; // sums to 0.8: 20% of the rows unused
    size_t c1[3] = {7, 3, 3}, c2[2] = {980, 20}, c3[1] = {37};
    size_t n;
    int32_t *y = gr_labels_from_counts(c1, 3, &n, 1);
    check_split("classes of 7/3/3 rows, fractions .5/.25/.25", y, n, 3, f1, 3);
    free(y);
    y = gr_labels_from_counts(c2, 2, &n, 2);
    check_split("980 vs 20 rows (2% rare), fractions .6/.2/.2", y, n, 2, f3, 4);
    check_split("980 vs 20 rows, fractions .7/.15/.15", y, n, 2, f2, 5);
    check_split("980 vs 20 rows, fractions .5/.2/.1 (not complete)", y, n, 2, f4, 6);
    free(y);
    y = gr_labels_from_counts(c3, 1, &n, 3);
    check_split("one class", y, n, 1, f2, 7);
    free(y);
    size_t many[40];
    dl_rng r;
    dl_rng_seed(&r, 9, 9);
    for (int c = 0; c < 40; c++)
        many[c] = 3 + (size_t)dl_rng_below(&r, 40);
    y = gr_labels_from_counts(many, 40, &n, 4);
    check_split("40 classes of 3..42 rows", y, n, 40, f3, 8);
    free(y);
}
END_TEST

START_TEST(test_split_errors)
{
    size_t c1[3] = {10, 10, 2}, n;
    int32_t *y = gr_labels_from_counts(c1, 3, &n, 1);
    dl_split sp;
    const double ok[3] = {0.6, 0.2, 0.2}, over[3] = {0.7, 0.3, 0.2}, neg[3] = {1.2, -0.1, -0.1};
    dl_status st = eval_split_stratified(y, n, 3, ok, 1, &sp);
    if (st == DL_ERR_TODO)
        GR_FAIL("%s", dl_last_error());
    ck_assert_msg(st == DL_ERR_ARG,
                  "a class of 2 rows and 3 non-empty parts returned %s, expected DL_ERR_ARG "
                  "(it cannot appear in every part)",
                  dl_status_name(st));
    c1[2] = 10;
    free(y);
    y = gr_labels_from_counts(c1, 3, &n, 1);
    st = eval_split_stratified(y, n, 3, over, 1, &sp);
    ck_assert_msg(st == DL_ERR_ARG, "fractions summing to 1.2 returned %s, expected DL_ERR_ARG", dl_status_name(st));
    st = eval_split_stratified(y, n, 3, neg, 1, &sp);
    ck_assert_msg(st == DL_ERR_ARG, "negative fractions returned %s, expected DL_ERR_ARG", dl_status_name(st));
    y[4] = 7;
    st = eval_split_stratified(y, n, 3, ok, 1, &sp);
    ck_assert_msg(st == DL_ERR_RANGE, "label 7 with 3 classes returned %s, expected DL_ERR_RANGE", dl_status_name(st));
    free(y);
}
END_TEST

START_TEST(test_kfold)
{
    size_t counts[4] = {53, 17, 5, 101}, n;
    int32_t *y = gr_labels_from_counts(counts, 4, &n, 11);
    int32_t *fold = malloc(n * sizeof *fold);
    for (int k = 2; k <= 5; k++) {
        for (size_t i = 0; i < n; i++)
            fold[i] = -1;
        GR_OK(eval_kfold_stratified(y, n, 4, k, 3, fold));
        size_t per[4][5] = {{0}};
        for (size_t i = 0; i < n; i++) {
            if (fold[i] < 0 || fold[i] >= k)
                GR_FAIL("k = %d: row %zu is in fold %d", k, i, fold[i]);
            per[y[i]][fold[i]]++;
        }
        for (int c = 0; c < 4; c++) {
            size_t lo = (size_t)-1, hi = 0;
            for (int f = 0; f < k; f++) {
                lo = per[c][f] < lo ? per[c][f] : lo;
                hi = per[c][f] > hi ? per[c][f] : hi;
            }
            if (hi - lo > 1)
                GR_FAIL(GR_DIAG("kfold-unbalanced") "k = %d: class %d (%zu rows) has %zu to %zu rows per fold; "
                                                    "per class the folds may differ by at most one",
                        k, c, counts[c], lo, hi);
        }
    }
    int32_t *again = malloc(n * sizeof *again);
    GR_OK(eval_kfold_stratified(y, n, 4, 5, 3, fold));
    GR_OK(eval_kfold_stratified(y, n, 4, 5, 3, again));
    if (memcmp(fold, again, n * sizeof *fold) != 0)
        GR_FAIL("k-fold with the same seed gave different folds");
    dl_status st = eval_kfold_stratified(y, n, 4, 6, 3, fold);
    ck_assert_msg(st == DL_ERR_ARG, "k = 6 with a class of 5 rows returned %s, expected DL_ERR_ARG",
                  dl_status_name(st));
    st = eval_kfold_stratified(y, n, 4, 1, 3, fold);
    ck_assert_msg(st == DL_ERR_ARG, "k = 1 returned %s, expected DL_ERR_ARG", dl_status_name(st));
    free(y), free(fold), free(again);
}
END_TEST

// ---- tasks 3 and 4: confusion matrix and metrics ----

START_TEST(test_confusion)
{
    int C = 7;
    size_t n = 500;
    int32_t *t = malloc(n * sizeof *t), *p = malloc(n * sizeof *p);
    dl_rng r;
    dl_rng_seed(&r, 21, 2);
    for (size_t i = 0; i < n; i++) {
        t[i] = (int32_t)dl_rng_below(&r, (uint64_t)C);
        p[i] = dl_rng_uniform(&r) < 0.6 ? t[i] : (int32_t)dl_rng_below(&r, 3); // skewed errors: not symmetric
    }
    int64_t cm[49], ref[49] = {0};
    for (size_t i = 0; i < n; i++)
        ref[t[i] * C + p[i]]++;
    GR_OK(eval_confusion(t, p, n, C, cm));
    int same = 1, transposed = 1;
    for (int a = 0; a < C; a++) {
        for (int b = 0; b < C; b++) {
            same &= cm[a * C + b] == ref[a * C + b];
            transposed &= cm[a * C + b] == ref[b * C + a];
        }
    }
    if (!same && transposed)
        GR_FAIL(GR_DIAG("confusion-transposed") "the matrix is transposed: rows must be the true class, columns "
                                                "the prediction (cm[t*C + p])");
    for (int k = 0; k < C * C && !same; k++) {
        if (cm[k] != ref[k])
            GR_FAIL("cm[true %d][pred %d] = %lld, expected %lld (counted row by row)", k / C, k % C, (long long)cm[k],
                    (long long)ref[k]);
    }
    int64_t keep[49];
    memcpy(keep, cm, sizeof cm);
    p[17] = 9;
    dl_status st = eval_confusion(t, p, n, C, cm);
    ck_assert_msg(st == DL_ERR_RANGE, "a prediction of 9 with 7 classes returned %s, expected DL_ERR_RANGE",
                  dl_status_name(st));
    ck_assert_msg(memcmp(keep, cm, sizeof cm) == 0, "after a label error the matrix was changed; leave it untouched");
    p[17] = 0;
    t[3] = -1;
    st = eval_confusion(t, p, n, C, cm);
    ck_assert_msg(st == DL_ERR_RANGE, "a true label of -1 returned %s, expected DL_ERR_RANGE", dl_status_name(st));
    free(t), free(p);
}
END_TEST

static void check_report(const char *what, const int64_t *cm, int C)
{
    eval_report rep;
    GR_OK(eval_report_alloc(&rep, C));
    GR_OK(eval_report_from_confusion(cm, C, &rep));
    ref_report ref;
    gr_reference_report(cm, C, &ref);
    const double got_all[] = {rep.macro_p,  rep.macro_r,    rep.macro_f1,   rep.micro_p,     rep.micro_r,
                              rep.micro_f1, rep.weighted_p, rep.weighted_r, rep.weighted_f1, rep.accuracy};
    const double want_all[] = {ref.macro[0], ref.macro[1],    ref.macro[2],    ref.micro[0],    ref.micro[1],
                               ref.micro[2], ref.weighted[0], ref.weighted[1], ref.weighted[2], ref.acc};
    const char *names[] = {"macro precision", "macro recall", "macro F1",           "micro precision",
                           "micro recall",    "micro F1",     "weighted precision", "weighted recall",
                           "weighted F1",     "accuracy"};
    for (int c = 0; c < C; c++) {
        if (!isfinite(rep.precision[c]) || !isfinite(rep.recall[c]) || !isfinite(rep.f1[c]))
            GR_FAIL(GR_DIAG("zero-division") "%s: class %d has precision %g, recall %g, F1 %g: a 0/0 must be "
                                             "reported as 0 and counted in zero_division, never NaN",
                    what, c, rep.precision[c], rep.recall[c], rep.f1[c]);
    }
    for (int k = 0; k < 10; k++) {
        if (!isfinite(got_all[k]))
            GR_FAIL(GR_DIAG("zero-division") "%s: %s is %g (a 0/0 leaked into an average)", what, names[k], got_all[k]);
    }
    if (fabs(rep.macro_f1 - ref.micro[2]) < 1e-12 && fabs(ref.macro[2] - ref.micro[2]) > 1e-6)
        GR_FAIL(GR_DIAG("macro-as-micro") "%s: macro F1 %.6f equals the micro F1: macro is the plain mean of the "
                                          "per-class F1 (%.6f), micro pools TP/FP/FN over classes",
                what, rep.macro_f1, ref.macro[2]);
    if (fabs(rep.macro_f1 - ref.weighted[2]) < 1e-12 && fabs(ref.macro[2] - ref.weighted[2]) > 1e-6)
        GR_FAIL(GR_DIAG("macro-as-weighted") "%s: macro F1 %.6f is weighted by support; macro weighs each class "
                                             "equally (%.6f)",
                what, rep.macro_f1, ref.macro[2]);
    for (int c = 0; c < C; c++) {
        if (fabs(rep.precision[c] - ref.p[c]) > 1e-12 || fabs(rep.recall[c] - ref.r[c]) > 1e-12 ||
            fabs(rep.f1[c] - ref.f1[c]) > 1e-12)
            GR_FAIL("%s: class %d: P/R/F1 %.6f/%.6f/%.6f, expected %.6f/%.6f/%.6f", what, c, rep.precision[c],
                    rep.recall[c], rep.f1[c], ref.p[c], ref.r[c], ref.f1[c]);
        int64_t row = 0;
        for (int k = 0; k < C; k++)
            row += cm[c * C + k];
        if (rep.support[c] != row)
            GR_FAIL("%s: support of class %d is %lld, expected %lld (the row sum)", what, c, (long long)rep.support[c],
                    (long long)row);
    }
    for (int k = 0; k < 10; k++) {
        if (fabs(got_all[k] - want_all[k]) > 1e-12)
            GR_FAIL("%s: %s %.9f, expected %.9f", what, names[k], got_all[k], want_all[k]);
    }
    if (rep.zero_division != ref.zero)
        GR_FAIL(GR_DIAG("zero-division") "%s: zero_division = %d, expected %d (classes with a 0/0 precision or "
                                         "recall)",
                what, rep.zero_division, ref.zero);
    eval_report_free(&rep);
}

START_TEST(test_metrics)
{
    const int64_t a[9] = {50, 3, 7, 10, 20, 0, 5, 5, 40}; // ordinary
    const int64_t b[9] = {30, 0, 10, 5, 0, 5, 8, 0, 12}; // class 1 never predicted, never right
    const int64_t c[9] = {10, 2, 0, 3, 9, 0, 0, 0, 0}; // class 2 absent and never predicted
    const int64_t z[4] = {0, 0, 0, 0}; // empty
    const int64_t big[16] = {900, 50, 30, 20, 10, 80, 5, 5, 1, 2, 6, 1, 40, 3, 2, 35}; // imbalanced
    check_report("3 classes", a, 3);
    check_report("a class never predicted", b, 3);
    check_report("a class absent from the truth", c, 3);
    check_report("an empty matrix", z, 2);
    check_report("4 imbalanced classes", big, 4);
}
END_TEST

// ---- task 5: softmax ----

static void check_softmax(const sproblem *p, const char *what)
{
    size_t wd = (size_t)p->C * p->d;
    float *gW = malloc(wd * sizeof *gW), *gb = malloc((size_t)p->C * sizeof *gb);
    float *work = malloc(p->n * (size_t)p->C * sizeof *work);
    double loss = NAN;
    GR_OK(softmax_loss_grad_cpu(p->X, p->y, p->n, p->d, p->C, p->W, p->b, p->lambda, gW, gb, &loss, work));
    double *rgW = malloc(wd * sizeof *rgW), *rgb = malloc((size_t)p->C * sizeof *rgb);
    double rl = gr_ref_softmax(p->X, p->y, p->n, p->d, p->C, p->W, p->b, p->lambda, rgW, rgb);
    if (!isfinite(loss))
        GR_FAIL(GR_DIAG("softmax-no-max-shift") "%s: loss is %g (expected %.6g): exp of a large logit overflows; "
                                                "subtract the row's max logit before exp",
                what, loss, rl);
    for (size_t k = 0; k < wd; k++) {
        if (!isfinite(gW[k]))
            GR_FAIL(GR_DIAG("softmax-no-max-shift") "%s: gW[%zu] is %g: exp overflowed; subtract the row max", what, k,
                    (double)gW[k]);
    }
    if (fabs(loss - rl) > 1e-6 + 1e-5 * fabs(rl))
        GR_FAIL("%s: loss %.9g, expected %.9g (double reference; tolerance 1e-6 + 1e-5 relative)", what, loss, rl);
    char w2[160];
    snprintf(w2, sizeof w2, "%s: gW", what);
    GR_ALLCLOSE_F32(w2, gW, rgW, wd, 1e-6, 1e-4, "");
    snprintf(w2, sizeof w2, "%s: gb", what);
    GR_ALLCLOSE_F32(w2, gb, rgb, (size_t)p->C, 1e-6, 1e-4, "");
    // a finite difference of the student's own loss along two weights
    float *Wp = malloc(wd * sizeof *Wp);
    memcpy(Wp, p->W, wd * sizeof *Wp);
    for (size_t k = 0; k < wd && k < 2; k++) {
        double lp, lm;
        Wp[k] = p->W[k] + 1e-2f;
        GR_OK(softmax_loss_grad_cpu(p->X, p->y, p->n, p->d, p->C, Wp, p->b, p->lambda, gW, gb, &lp, work));
        Wp[k] = p->W[k] - 1e-2f;
        GR_OK(softmax_loss_grad_cpu(p->X, p->y, p->n, p->d, p->C, Wp, p->b, p->lambda, gW, gb, &lm, work));
        Wp[k] = p->W[k];
        double fd = (lp - lm) / ((double)(p->W[k] + 1e-2f) - (double)(p->W[k] - 1e-2f));
        if (fabs(fd - rgW[k]) > 1e-4 + 1e-2 * fabs(rgW[k]))
            GR_FAIL("%s: a finite difference of your loss along W[%zu] is %.6g, the gradient %.6g", what, k, fd,
                    rgW[k]);
    }
    free(gW), free(gb), free(work), free(rgW), free(rgb), free(Wp);
}

START_TEST(test_softmax_loss_grad)
{
    const struct {
        uint64_t seed;
        size_t n, d;
        int C;
        float lambda;
        double ws;
    } cases[] = {
        {1, 37, 5, 3, 0.1f, 0.5},
        {2, 200, 30, 10, 0.01f, 0.3},
        {3, 1, 4, 2, 0.0f, 1.0},
        {4, 65, 1, 7, 1e-3f, 2.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sproblem p = gr_make_sproblem(cases[k].seed, cases[k].n, cases[k].d, cases[k].C, cases[k].lambda, cases[k].ws);
        char what[96];
        snprintf(what, sizeof what, "n=%zu d=%zu C=%d lambda=%g", p.n, p.d, p.C, (double)p.lambda);
        check_softmax(&p, what);
        gr_free_sproblem(&p);
    }
    // logits of +-1e4: one feature of 1, weights of 1e4 scale
    sproblem p = gr_make_sproblem(9, 20, 1, 4, 0.0f, 1.0);
    for (size_t i = 0; i < p.n; i++)
        p.X[i] = 1.0f;
    const float big[4] = {1e4f, -1e4f, 5e3f, 0.0f};
    memcpy(p.W, big, sizeof big);
    check_softmax(&p, "logits of +-1e4");
    gr_free_sproblem(&p);
}
END_TEST

START_TEST(test_softmax_train)
{
    dl_data data;
    GR_OK(dl_data_load("fashion_mnist", &data));
    size_t n = 50000 < data.train.n ? 50000 : data.train.n, d = data.train.d;
    softmax_engine e;
    GR_OK(softmax_engine_init(&e, dl_cpu(), data.train.X, data.train.y, n, d, 10));
    softmax_model m;
    GR_OK(softmax_model_alloc(&m, d, 10));
    enum { EPOCHS = 12 };
    softmax_config cfg = {0.2, 0.0, EPOCHS, 128, 1};
    /* train_loss has cfg.epochs entries; one more leaves room for a write one past the end, so that a shifted
     * curve fails by name rather than by a smashed stack. A loss is never negative: -1 marks "not written". */
    const double unset = -1.0;
    double losses[EPOCHS + 1];
    for (int k = 0; k <= EPOCHS; k++)
        losses[k] = unset;
    GR_OK(softmax_train(&e, &cfg, &m, losses));
    size_t steps = (n + 127) / 128;
    if (e.calls != (size_t)cfg.epochs * steps)
        GR_FAIL("%zu gradient calls for %d epochs of %zu rows in batches of 128; expected %zu", e.calls, cfg.epochs, n,
                (size_t)cfg.epochs * steps);
    int later = 1; // entries 1 .. EPOCHS-1 hold losses
    for (int k = 1; k < EPOCHS; k++)
        later &= losses[k] > 0;
    if (!(losses[0] > 0) && later) { // the first epoch's mean loss starts near log 10: 0 or -1 is no loss
        char first[48] = "was never written";
        if (losses[0] != unset)
            snprintf(first, sizeof first, "is %g", losses[0]);
        GR_FAIL(GR_DIAG("train-loss-shifted") "train_loss[0] %s, while train_loss[1..%d] hold losses: the curve "
                                              "looks shifted by one (train_loss[epoch + 1]?), which also writes one "
                                              "entry past the caller's array. train_loss has cfg->epochs entries from "
                                              "0: the first epoch's loss is train_loss[0]; there is no entry for the "
                                              "untrained model, unlike lab 01's curve",
                first, EPOCHS - 1);
    }
    for (int k = 0; k < EPOCHS; k++) {
        if (losses[k] == unset)
            GR_FAIL("train_loss[%d] (epoch %d of %d) was never written: one entry per epoch, from train_loss[0]", k,
                    k + 1, EPOCHS);
    }
    if (!(losses[EPOCHS - 1] < losses[0]))
        GR_FAIL("the mean training loss did not fall: train_loss[0] (epoch 1) %.4f, train_loss[%d] (epoch %d) %.4f",
                losses[0], EPOCHS - 1, EPOCHS, losses[EPOCHS - 1]);
    int32_t *pred = malloc(data.test.n * sizeof *pred);
    GR_OK(softmax_predict(data.test.X, data.test.n, &m, pred));
    int64_t cm[100] = {0};
    for (size_t i = 0; i < data.test.n; i++) {
        if (pred[i] < 0 || pred[i] >= 10)
            GR_FAIL("softmax_predict gave class %d for test row %zu", pred[i], i);
        cm[data.test.y[i] * 10 + pred[i]]++;
    }
    ref_report ref;
    gr_reference_report(cm, 10, &ref);
    gr_note("Fashion-MNIST test accuracy %.4f, macro-F1 %.4f (lr 0.2, 12 epochs, batch 128)\n", ref.acc, ref.macro[2]);
    if (!(ref.acc >= 0.83))
        GR_FAIL("test accuracy %.4f on Fashion-MNIST after 12 epochs (macro-F1 %.4f); expected at least 0.83", ref.acc,
                ref.macro[2]);
    free(pred);
    softmax_model_free(&m);
    softmax_engine_free(&e);
    dl_data_free(&data);
}
END_TEST

// ---- task 6: the validation curve, with planted scores ----

static void run_planted(const double *lambdas, const double *val, const double *test, int n, int want)
{
    planted pl = {n, val, test, lambdas, 0, 0, 0, -1, 0, 0, 0, {0}};
    eval_trainer t = {&pl, gr_planted_train, gr_planted_score, gr_planted_release};
    double vf[16], va[16];
    eval_curve curve = {n, lambdas, vf, va, -1, {0}};
    GR_OK(eval_report_alloc(&curve.test, 3));
    GR_OK(eval_validation_curve(&t, &curve));
    if (pl.test_scored > 1)
        GR_FAIL(GR_DIAG("lambda-chosen-on-test") "the test split was scored %d times: score it once, for the "
                                                 "model chosen on validation data (choosing on test makes the test "
                                                 "score optimistic)",
                pl.test_scored);
    if (pl.test_scored == 0)
        GR_FAIL("the chosen model was never scored on the test split (curve->test must hold its report)");
    if (curve.chosen != want) {
        int best_test = 0;
        for (int k = 1; k < n; k++)
            best_test = test[k] > test[best_test] ? k : best_test;
        if (curve.chosen == best_test)
            GR_FAIL(GR_DIAG("lambda-chosen-on-test") "chose lambda %g, the best on the *test* split; the best on "
                                                     "validation is %g",
                    lambdas[curve.chosen], lambdas[want]);
        GR_FAIL("chose index %d (lambda %g); the best validation macro-F1 is at index %d (lambda %g; the first on "
                "ties)",
                curve.chosen, curve.chosen >= 0 ? lambdas[curve.chosen] : NAN, want, lambdas[want]);
    }
    if (pl.test_model != want)
        GR_FAIL(GR_DIAG("lambda-chosen-on-test") "the test split was scored with the model of lambda %g, not the "
                                                 "chosen %g",
                lambdas[pl.test_model], lambdas[want]);
    if (pl.test_before_all_val)
        GR_FAIL(GR_DIAG("lambda-chosen-on-test") "the test split was scored before every lambda had its validation "
                                                 "score");
    for (int k = 0; k < n; k++) {
        if (vf[k] != val[k])
            GR_FAIL("val_macro_f1[%d] = %g, expected the validation score %g", k, vf[k], val[k]);
    }
    if (fabs(curve.test.macro_f1 - test[want]) > 0)
        GR_FAIL("curve->test.macro_f1 = %g, expected the chosen model's test score %g", curve.test.macro_f1,
                test[want]);
    if (pl.released != pl.trained || pl.live != 0)
        GR_FAIL("%d model(s) trained, %d released: release every model", pl.trained, pl.released);
    if (pl.trained != n)
        GR_FAIL("%d model(s) trained for a grid of %d lambdas", pl.trained, n);
    eval_report_free(&curve.test);
}

START_TEST(test_lambda_on_validation)
{
    const double lambdas[5] = {0.0, 1e-4, 1e-3, 1e-2, 1e-1};
    const double val[5] = {0.70, 0.80, 0.75, 0.72, 0.60}; // best on validation: 1e-4
    const double test[5] = {0.90, 0.78, 0.74, 0.70, 0.59}; // planted: best on test is 0
    run_planted(lambdas, val, test, 5, 1);
    const double val2[5] = {0.5, 0.6, 0.8, 0.8, 0.7}; // a tie: the first
    const double test2[5] = {0.5, 0.6, 0.7, 0.95, 0.7};
    run_planted(lambdas, val2, test2, 5, 2);
    const double one[1] = {0.3}, v1[1] = {0.5}, t1[1] = {0.4};
    run_planted(one, v1, t1, 1, 0);
}
END_TEST

// ---- task 7: PSI ----

START_TEST(test_psi)
{
    size_t na = 2000, nb = 1500, d = 4;
    float *a = malloc(na * d * sizeof *a), *b = malloc(nb * d * sizeof *b);
    dl_rng r;
    dl_rng_seed(&r, 31, 3);
    for (size_t i = 0; i < na; i++) {
        a[i * d + 0] = (float)dl_rng_normal(&r);
        a[i * d + 1] = (float)dl_rng_normal(&r);
        a[i * d + 2] = 3.0f; // constant
        a[i * d + 3] = i % 10 == 0 ? NAN : (float)dl_rng_uniform(&r);
    }
    for (size_t i = 0; i < nb; i++) {
        b[i * d + 0] = (float)dl_rng_normal(&r); // same distribution
        b[i * d + 1] = (float)(dl_rng_normal(&r) * 1.5 + 1.0); // drifted, partly beyond the reference range
        b[i * d + 2] = 3.0f;
        b[i * d + 3] = (float)dl_rng_uniform(&r) * 0.5f;
    }
    double psi[4], want[4];
    GR_OK(eval_psi(a, na, b, nb, d, 10, psi));
    for (size_t j = 0; j < d; j++)
        want[j] = gr_ref_psi(a, na, b, nb, d, j, 10);
    dl_cmp c;
    if (!dl_allclose_f64(psi, want, d, 1e-9, 1e-6, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "PSI per feature", buf, sizeof buf);
        GR_FAIL("%s (features: same distribution, drifted, constant, with NaNs)", buf);
    }
    if (!(psi[1] > 0.1 && psi[0] < 0.05))
        GR_FAIL("PSI %g for an unchanged feature and %g for a drifted one: the drifted one must stand out", psi[0],
                psi[1]);
    free(a), free(b);
}
END_TEST

// ---- gpu1 tier (lab02_gpu.c) ----

GR_TEST_DECLARE(test_gpu_softmax);
GR_TEST_DECLARE(test_gpu_train);

// ---- the table ----

static const gr_item items[] = {
    GR_ITEM(test_approximate_mode, "approximate_mode", "approximate mode: floors, largest remainders, random ties", 10,
            GR_CPU, NULL,
            "each class gets the floor of its exact share; leftover draws go one each to the largest remainders; "
            "classes tied at the same remainder are ordered at random, not by index",
            "task-1-the-stratified-split-25-points", 30, GR_WORKER),
    GR_ITEM(test_split_exact, "split_exact", "stratified split: exact per-class counts, disjoint, complete, seeded", 10,
            GR_CPU, "approximate_mode",
            "compute val's counts from what train left and test's from what val left; deal each class's rows out "
            "separately; shuffle each part",
            "task-1-the-stratified-split-25-points", 30, GR_WORKER),
    GR_ITEM(test_split_errors, "split_errors", "stratified split: the error cases return their status", 5, GR_CPU, NULL,
            "check before allocating: a class smaller than the number of non-empty parts and fractions over 1 or "
            "negative are DL_ERR_ARG, a label out of range is DL_ERR_RANGE",
            "task-1-the-stratified-split-25-points", 30, GR_WORKER),
    GR_ITEM(test_kfold, "kfold", "stratified k-fold: per-class fold counts differ by at most one", 10, GR_CPU, NULL,
            "deal each class's shuffled rows over the folds separately, not the rows by index; k above the "
            "smallest class is an error",
            "task-2-stratified-k-fold-10-points", 30, GR_WORKER),
    GR_ITEM(test_confusion, "confusion", "confusion matrix equals a brute-force count (rows = truth)", 10, GR_CPU, NULL,
            "rows are the true class, columns the prediction; zero the matrix first; check every label before "
            "counting any",
            "task-3-the-confusion-matrix-10-points", 30, GR_WORKER),
    GR_ITEM(test_metrics, "metrics", "per-class P/R/F1 and macro/micro/weighted averages, zero division", 15, GR_CPU,
            NULL,
            "precision reads down a column, recall along a row; a 0/0 is 0 and counts its class once; macro is "
            "the plain mean, micro pools the counts, weighted uses the support",
            "task-4-per-class-metrics-and-averages-15-points", 30, GR_WORKER),
    GR_ITEM(test_softmax_loss_grad, "softmax_loss_grad",
            "softmax loss and gradient: double reference, finite differences, logits of 1e4", 15, GR_CPU, NULL,
            "subtract the row's largest logit before any exp and never take the log of a probability; every data "
            "term is a mean over n; the penalty is on W only",
            "task-5-softmax-regression-40-points", 60, GR_WORKER),
    GR_ITEM(test_softmax_train, "softmax_train", "softmax regression reaches test accuracy >= 0.83 on Fashion-MNIST",
            10, GR_CPU, "softmax_loss_grad",
            "a new order every epoch; exactly one engine call per batch and no other; step against the gradient; "
            "train_loss[k] is epoch k's mean loss, k from 0 (cfg->epochs entries)",
            "task-5-softmax-regression-40-points", 180, GR_WORKER),
    GR_ITEM(test_lambda_on_validation, "lambda_on_validation",
            "lambda chosen on validation; test scored once, for that model", 10, GR_CPU, NULL,
            "choose on EVAL_VAL (the first best on ties); score EVAL_TEST once, after every validation score, "
            "for the chosen model only",
            "task-6-the-validation-curve-10-points", 30, GR_WORKER),
    GR_ITEM(test_psi, "psi", "population stability index matches a double reference", 5, GR_CPU, NULL,
            "bins from the reference's [min, max] only, values beyond it in the end bins; skip NaNs; floor each "
            "share at 1e-4 before the log",
            "task-7-drift-between-splits-5-points", 30, GR_WORKER),
    GR_ITEM(gr_test_gpu_softmax, "gpu_softmax", "CUDA softmax loss/gradient equal the double reference", 10, GR_GPU1,
            NULL,
            "each row's loss counted once and nothing from past row n; sum in an order fixed by n (no atomics); "
            "finish the loss on the device and return without waiting; compare each step with softmax_loss_grad_cpu",
            "task-5-softmax-regression-40-points", 60, GR_WORKER),
    GR_ITEM(gr_test_gpu_train, "gpu_train", "training on the GPU reaches the CPU's accuracy", 5, GR_GPU1, "gpu_softmax",
            "the training loop is the same; only the engine's device differs", "task-5-softmax-regression-40-points",
            180, GR_WORKER),
};

GR_LAB("02", "honest evaluation: stratified splits, confusion matrices, softmax regression", "02-evaluation", items);
