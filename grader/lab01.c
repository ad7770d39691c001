/* lab01.c — grader for lab 01: logistic regression with feature scaling.
 *
 * Every reference is computed by the grader itself in double precision
 * (lab01_ref.c): the scaler by two passes, the objective and gradient by the
 * stable formula, the optimum by Newton's method (IRLS) with a line search.
 * Tolerances (|got − ref| ≤ atol + rtol·|ref|) are stated at each check and
 * in the handout; float32 results are held to about 1e-5 relative. Task 3's
 * items (training) are lab01_train.c's, task 5's (the GPU) lab01_gpu.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // exp, log, fabs, sqrt, isnan, isfinite
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/device.h" // dl_device_open
#include "dl/rng.h" // dl_rng
#include "grader.h"
#include "lab01_ref.h" // gr_ref_*, gr_bc_load, gr_train_on, gr_make_problem
#include "logreg.h"

// ---- task 1: the scaler ----

/* Fits the student's scaler on X and compares with the reference. */
static void check_fit(const char *what, const float *X, size_t n, size_t d)
{
    logreg_scaler s;
    GR_OK(logreg_scaler_alloc(&s, d));
    GR_OK(logreg_scaler_fit(X, n, d, &s));
    double *mean = malloc(d * sizeof *mean), *sd = malloc(d * sizeof *sd), *scale = malloc(d * sizeof *scale);
    gr_ref_scaler(X, n, d, mean, sd);
    for (size_t j = 0; j < d; j++) {
        scale[j] = sd[j] > 0 ? sd[j] : 1.0;
        if (isnan(s.mean[j]))
            GR_FAIL(GR_DIAG("scaler-nan") "%s: mean[%zu] is NaN: NaN entries must be skipped, not summed "
                                          "(the column has %s)",
                    what, j, "missing values");
        if (!(s.scale[j] > 0) || !isfinite(s.scale[j]))
            GR_FAIL(GR_DIAG("scaler-zero-variance") "%s: scale[%zu] = %g: a constant (or all-NaN) column "
                                                    "must get scale 1, never 0, inf or NaN",
                    what, j, (double)s.scale[j]);
        if (sd[j] > 0 && n > 1) {
            double ratio = s.scale[j] / sd[j], ddof1 = sqrt((double)n / (double)(n - 1));
            if (fabs(ratio - ddof1) < 1e-4 * ddof1 && fabs(ratio - 1.0) > 1e-4)
                GR_FAIL(GR_DIAG("scaler-ddof") "%s: scale[%zu] = %.7g is the sample std (ddof=1, divide "
                                               "by n-1); the scaler uses the population std (ddof=0): %.7g",
                        what, j, (double)s.scale[j], sd[j]);
        }
    }
    char msg[64];
    snprintf(msg, sizeof msg, "%s: mean", what);
    GR_ALLCLOSE_F32(msg, s.mean, mean, d, 1e-6, 1e-6, "");
    snprintf(msg, sizeof msg, "%s: scale", what);
    dl_cmp c;
    if (!dl_allclose_f32(s.scale, scale, d, 1e-7, 1e-4, &c)) {
        char buf[1024];
        dl_cmp_format(&c, msg, buf, sizeof buf);
        double rel = fabs(c.worst_got - c.worst_ref) / c.worst_ref;
        if (mean[c.worst] != 0 && fabs(mean[c.worst]) > 1e3 * c.worst_ref)
            GR_FAIL(GR_DIAG("scaler-cancellation") "%s (relative error %.2g). This column is a large "
                                                   "offset plus small noise: E[x^2] - E[x]^2 cancels catastrophically. "
                                                   "Use two passes "
                                                   "(mean, then squared deviations) with double accumulators",
                    buf, rel);
        GR_FAIL("%s", buf);
    }
    free(mean), free(sd), free(scale);
    logreg_scaler_free(&s);
}

START_TEST(test_scaler_stats)
{
    dl_rng r;
    dl_rng_seed(&r, 101, 1);
    // mixed scales, like breast_cancer (0.05 .. 4000)
    size_t n = 200, d = 6;
    float *X = gr_rand_matrix(&r, n, d, 0.0, 1.0);
    const double sc[6] = {0.05, 1.0, 30.0, 4000.0, 1e-3, 7.0};
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++)
            X[i * d + j] = (float)(X[i * d + j] * sc[j] + 3.0 * sc[j]);
    }
    check_fit("mixed scales", X, n, d);
    // constant column and a column with NaNs, one all NaN
    for (size_t i = 0; i < n; i++) {
        X[i * d + 1] = 2.5f;
        if (i % 7 == 3)
            X[i * d + 2] = NAN;
        X[i * d + 4] = NAN;
    }
    check_fit("constant, NaN and all-NaN columns", X, n, d);
    // one row: every std is 0 → scale 1, mean = the row
    check_fit("a single row", X, 1, d);
    // huge offset + small variance: exactly representable float steps around 1e6
    for (size_t i = 0; i < n; i++) {
        X[i * d + 0] = 1e6f + 0.0625f * (float)(i % 5);
        X[i * d + 3] = -3e6f + 0.25f * (float)(i % 3);
    }
    check_fit("1e6 + small noise", X, n, d);
    free(X);
    // bad input
    logreg_scaler s;
    GR_OK(logreg_scaler_alloc(&s, 3));
    float one[3] = {1, 2, 3};
    dl_status st = logreg_scaler_fit(one, 0, 3, &s);
    logreg_scaler_free(&s);
    if (st == DL_ERR_TODO)
        GR_FAIL("logreg_scaler_fit: %s", dl_last_error());
    ck_assert_msg(st == DL_ERR_ARG, "logreg_scaler_fit with n = 0 returned %s, expected DL_ERR_ARG",
                  dl_status_name(st));
}
END_TEST

START_TEST(test_scaler_transform)
{
    dl_rng r;
    dl_rng_seed(&r, 202, 1);
    size_t n = 120, m = 40, d = 5;
    float *A = gr_rand_matrix(&r, n, d, 10.0, 2.0); // training rows
    float *B = gr_rand_matrix(&r, m, d, 25.0, 7.0); // other rows: a different mean and spread
    for (size_t i = 0; i < n; i++)
        A[i * d + 3] = 4.0f; // a constant training column
    B[2 * d + 1] = NAN;
    B[7 * d + 4] = NAN;
    // the statistics come from the grader's own fit (the judge's stand-in for logreg_scaler_fit), so this item
    // grades transform alone: a slip in fit costs scaler_stats, not this item too
    double ma[5], sa[5], mb[5], sb[5];
    gr_ref_scaler(A, n, d, ma, sa);
    gr_ref_scaler(B, m, d, mb, sb);
    logreg_scaler s;
    GR_OK(logreg_scaler_alloc(&s, d));
    for (size_t j = 0; j < d; j++) {
        s.mean[j] = (float)ma[j];
        s.scale[j] = sa[j] > 0 ? (float)sa[j] : 1.0f;
    }
    float *out = malloc(m * d * sizeof *out);
    for (size_t k = 0; k < m * d; k++)
        out[k] = -999.0f;
    GR_OK(logreg_scaler_transform(&s, B, m, out));
    double *want = malloc(m * d * sizeof *want), *leak = malloc(m * d * sizeof *leak);
    double *var = malloc(m * d * sizeof *var);
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < d; j++) {
            double x = B[i * d + j], scale = sa[j] > 0 ? sa[j] : 1.0;
            want[i * d + j] = isnan(x) ? 0.0 : (x - ma[j]) / scale;
            leak[i * d + j] = isnan(x) ? 0.0 : (x - mb[j]) / (sb[j] > 0 ? sb[j] : 1.0);
            var[i * d + j] = isnan(x) ? 0.0 : (x - ma[j]) / (scale * scale);
        }
    }
    for (size_t k = 0; k < m * d; k++) {
        if (isnan(B[k]) && isnan(out[k]))
            GR_FAIL(
                GR_DIAG("nan-not-imputed") "row %zu, feature %zu was NaN and is still NaN after "
                                           "transform: impute it with the training mean, i.e. 0 after standardising",
                k / d, k % d);
        if (isnan(B[k]) && out[k] != 0.0f)
            GR_FAIL(GR_DIAG("nan-not-imputed") "row %zu, feature %zu was NaN and became %g; the "
                                               "training mean standardises to exactly 0",
                    k / d, k % d, (double)out[k]);
    }
    if (!dl_allclose_f32(out, want, m * d, 1e-5, 1e-5, NULL)) {
        if (dl_allclose_f32(out, leak, m * d, 1e-4, 1e-4, NULL))
            GR_FAIL(GR_DIAG(
                "scaler-leakage") "transform standardised the rows with *their own* mean "
                                  "and std, not the fitted training statistics: test rows leak into preprocessing, "
                                  "and a single test row would become all zeros");
        if (dl_allclose_f32(out, var, m * d, 1e-4, 1e-4, NULL))
            GR_FAIL(GR_DIAG("scaler-wrong-stats") "transform divided by the variance (std squared), "
                                                  "not by the std");
        dl_cmp c;
        dl_allclose_f32(out, want, m * d, 1e-5, 1e-5, &c);
        char buf[1024];
        dl_cmp_format(&c, "transform(B) with A's statistics", buf, sizeof buf);
        GR_FAIL(GR_DIAG("scaler-wrong-stats") "%s", buf);
    }
    // in place gives the same
    float *inplace = malloc(m * d * sizeof *inplace);
    memcpy(inplace, B, m * d * sizeof *inplace);
    GR_OK(logreg_scaler_transform(&s, inplace, m, inplace));
    GR_ALLCLOSE_F32("transform in place (out == X)", inplace, want, m * d, 1e-5, 1e-5, "");
    free(A), free(B), free(out), free(want), free(leak), free(var), free(inplace);
    logreg_scaler_free(&s);
}
END_TEST

// ---- task 2: loss and gradient ----

/* The student's CPU loss and gradient on p, compared with the reference.
 * sum_rtol > 0: the problem has many rows, and a loss whose error is a
 * little above sum_rtol (relative) is the sum's, not the terms'. */
static void check_loss_grad(const problem *p, const char *what, double sum_rtol)
{
    size_t n = p->n, d = p->d;
    float *gw = malloc(d * sizeof *gw), *work = malloc(n * sizeof *work);
    float gb = NAN;
    double loss = NAN;
    GR_OK(logreg_loss_grad_cpu(p->X, p->y, n, d, p->w, p->b, p->lambda, gw, &gb, &loss, work));
    double *wd = malloc(d * sizeof *wd), *rgw = malloc(d * sizeof *rgw), rgb;
    for (size_t j = 0; j < d; j++)
        wd[j] = p->w[j];
    double rl = gr_ref_objective(p->X, p->y, n, d, wd, p->b, p->lambda, rgw, &rgb);
    double pen_b = 0.5 * p->lambda * (double)p->b * p->b;
    if (!isfinite(loss))
        GR_FAIL("%s: loss is %g, expected %.9g", what, loss, rl);
    if (p->lambda > 0 && p->b != 0 && fabs(loss - (rl + pen_b)) < 1e-6 * fabs(rl) + 1e-9 &&
        fabs(pen_b) > 1e-4 * fabs(rl))
        GR_FAIL(GR_DIAG("bias-penalised") "%s: loss %.9g = J + (lambda/2) b^2: the bias b must not be "
                                          "penalised (expected %.9g)",
                what, loss, rl);
    if (p->lambda > 0 && p->b != 0 && fabs(gb - (rgb + p->lambda * p->b)) < 1e-6 + 1e-5 * fabs(rgb) &&
        fabs(p->lambda * p->b) > 1e-3 * (fabs(rgb) + 1e-6))
        GR_FAIL(GR_DIAG("bias-penalised") "%s: grad_b %.7g = mean residual + lambda*b: the bias is not "
                                          "penalised (expected %.7g)",
                what, (double)gb, rgb);
    double rel = fabs(loss - rl) / fabs(rl);
    if (sum_rtol > 0 && rel > sum_rtol && rel < 1e-3)
        GR_FAIL(GR_DIAG("loss-float-sum") "%s: loss %.12g, expected %.12g: %.2g relative, where the problems with "
                                          "fewer rows matched. A float running sum of %zu terms loses digits as it "
                                          "grows (near 2e5 a float's step is 0.016): add the loss terms into a double",
                what, loss, rl, rel, n);
    if (fabs(loss - rl) > 1e-6 + 1e-5 * fabs(rl))
        GR_FAIL("%s: loss %.9g, expected %.9g (double reference; tolerance 1e-6 + 1e-5 relative)", what, loss, rl);
    double rgn = 0.0, gn = 0.0;
    for (size_t j = 0; j < d; j++) {
        rgn += fabs(rgw[j] - p->lambda * wd[j]);
        gn += fabs(gw[j] - p->lambda * p->w[j]);
    }
    if (n > 4 && rgn > 0 && fabs(gn / rgn - (double)n) < 1e-3 * n)
        GR_FAIL(GR_DIAG("grad-not-averaged") "%s: the data part of grad_w is %zu (= n) times too large: "
                                             "the gradient must be the mean over rows, (1/n) X^T r, like the loss",
                what, n);
    dl_cmp c;
    if (!dl_allclose_f32(gw, rgw, d, 1e-6, 1e-5, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "grad_w", buf, sizeof buf);
        int no_l2 = p->lambda > 0;
        for (size_t j = 0; j < d; j++)
            no_l2 &= fabs(gw[j] - (rgw[j] - p->lambda * wd[j])) <= 1e-6 + 1e-5 * fabs(rgw[j]);
        if (no_l2)
            GR_FAIL(GR_DIAG("no-l2-gradient") "%s: %s; grad_w lacks the penalty's gradient lambda*w", what, buf);
        GR_FAIL("%s: %s", what, buf);
    }
    if (fabs(gb - rgb) > 1e-6 + 1e-5 * fabs(rgb))
        GR_FAIL("%s: grad_b %.9g, expected %.9g", what, (double)gb, rgb);
    // finite differences of the student's own loss agree with the student's gradient
    float *wp = malloc(d * sizeof *wp);
    memcpy(wp, p->w, d * sizeof *wp);
    float gtmp_b;
    for (size_t j = 0; j < d && j < 4; j++) {
        double lp, lm;
        float h = 1e-2f;
        wp[j] = p->w[j] + h;
        GR_OK(logreg_loss_grad_cpu(p->X, p->y, n, d, wp, p->b, p->lambda, gw, &gtmp_b, &lp, work));
        wp[j] = p->w[j] - h;
        GR_OK(logreg_loss_grad_cpu(p->X, p->y, n, d, wp, p->b, p->lambda, gw, &gtmp_b, &lm, work));
        wp[j] = p->w[j];
        double fd = (lp - lm) / ((double)(p->w[j] + h) - (double)(p->w[j] - h));
        if (fabs(fd - rgw[j]) > 1e-4 + 1e-2 * fabs(rgw[j]))
            GR_FAIL("%s: a finite difference of your loss along w[%zu] is %.6g but the gradient is "
                    "%.6g: loss and gradient disagree",
                    what, j, fd, rgw[j]);
    }
    free(gw), free(work), free(wd), free(rgw), free(wp);
}

START_TEST(test_loss_grad)
{
    // Logits of size about 1.5 (weights ~ N(0, 1.5^2 / d)): the formula, the means and the penalty are
    // graded here; large logits, where float precision decides, are loss_extreme's. The last problem has
    // 2^18 rows: its loss must match to SUM_RTOL, which a double sum of float terms meets (about 4e-9 here)
    // and a float running sum of that many terms does not (8.5e-6 here).
    enum { BIG = 1 << 18 };
    const double SUM_RTOL = 1e-7;
    const struct {
        uint64_t seed;
        size_t n, d;
        float lambda;
    } cases[] = {
        {1, 37, 5, 0.1f}, {2, 300, 30, 0.01f}, {3, 1, 3, 0.5f},
        {4, 64, 1, 0.0f}, {5, 513, 7, 1e-3f},  {6, BIG, 2, 0.01f},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        problem p =
            gr_make_problem(cases[k].seed, cases[k].n, cases[k].d, cases[k].lambda, 1.5 / sqrt((double)cases[k].d));
        char what[96];
        snprintf(what, sizeof what, "n=%zu d=%zu lambda=%g", p.n, p.d, (double)p.lambda);
        check_loss_grad(&p, what, p.n == BIG ? SUM_RTOL : 0.0);
        gr_free_problem(&p);
    }
}
END_TEST

START_TEST(test_loss_extreme)
{
    // one feature, w = 1, b = 0: z_i = X_i. Logits from -1e4 to 1e4, both labels.
    const float zs[] = {1000.0f, -1000.0f, 1e4f, -1e4f, 25.0f, -25.0f, 88.8f, -88.8f, 104.0f, 0.0f};
    size_t nz = sizeof zs / sizeof zs[0];
    for (int label = 0; label <= 1; label++) {
        for (size_t k = 0; k < nz; k++) {
            float X = zs[k], y = (float)label, w = 1.0f, gw = NAN, gb = NAN, work;
            double loss = NAN;
            GR_OK(logreg_loss_grad_cpu(&X, &y, 1, 1, &w, 0.0f, 0.0f, &gw, &gb, &loss, &work));
            double want = gr_ref_bce(zs[k], y), sig = gr_ref_sigmoid(zs[k]), r = sig - y;
            if (!isfinite(loss))
                GR_FAIL(
                    GR_DIAG("naive-log-sigmoid") "z = %g, y = %d: loss %g is not finite. sigmoid(z) rounds to "
                                                 "exactly 0 or 1 in float (then log is log 0 = -inf), and exp of a "
                                                 "number above 88.7 is inf: write bce with no log of a probability and "
                                                 "no exp of a positive number",
                    (double)zs[k], label, loss);
            if (!isfinite(gb) || !isfinite(gw))
                GR_FAIL(GR_DIAG("sigmoid-overflow") "z = %g, y = %d: grad_b %g, grad_w %g: not finite. "
                                                    "exp(z) / (1 + exp(z)) is inf/inf = NaN for large z: write the "
                                                    "sigmoid so that exp only ever sees -|z|",
                        (double)zs[k], label, (double)gb, (double)gw);
            if (fabs(loss - want) > 1e-5 + 1e-6 * fabs(want))
                GR_FAIL(GR_DIAG("naive-log-sigmoid") "z = %g, y = %d: loss %.9g, expected %.9g (far from 0, a "
                                                     "row costs |z| on the wrong side of 0 and 0 on the right "
                                                     "side)",
                        (double)zs[k], label, loss, want);
            // A row far on the right side costs log(1 + e^-|z|), a tiny but normal float at |z| = 25: it must
            // keep its digits (the loss is graded relative to itself there).
            if (want < 1e-3 && want > 1e-37 && fabs(loss - want) > 1e-4 * want)
                GR_FAIL(GR_DIAG("loss-log1p") "z = %g, y = %d: loss %.9g, expected %.9g: the row is on the right "
                                              "side, and its loss, log(1 + t) with t = e^-|z| = %.3g, is about t. In "
                                              "float 1 + t rounds to 1 for t below 6e-8, so logf(1 + t) is 0; "
                                              "log1pf(t) keeps t",
                        (double)zs[k], label, loss, want, exp(-fabs((double)zs[k])));
            if (fabs(gb - r) > 1e-6 || fabs(gw - r * X) > 1e-6 * fabs(X) + 1e-6)
                GR_FAIL(GR_DIAG("sigmoid-overflow") "z = %g, y = %d: grad_b %.9g, expected sigmoid(z) - y = "
                                                    "%.9g",
                        (double)zs[k], label, (double)gb, r);
            // y = 0: grad_b = sigma(z), which a float holds to its own precision down to 1.4e-45 (a subnormal
            // below 1.2e-38: sigma(-88.8) = 2.7e-39); the sum of one residual is that residual.
            if (label == 0 && fabs(gb - sig) > 1e-3 * sig + 2e-45)
                GR_FAIL(GR_DIAG("sigmoid-underflow") "z = %g, y = 0: grad_b %.9g, expected sigmoid(z) = %.9g, a "
                                                     "float (a subnormal one, below 1.2e-38). 1 / (1 + exp(-z)) "
                                                     "overflows exp for z below -88.7 and returns 0: write the "
                                                     "sigmoid so that exp only ever sees -|z|",
                        (double)zs[k], (double)gb, sig);
        }
    }
}
END_TEST

// ---- task 3: training (lab01_train.c) ----

GR_TEST_DECLARE(test_train_optimum);
GR_TEST_DECLARE(test_train_curve);
GR_TEST_DECLARE(test_train_minibatch);

// ---- task 4: prediction ----

/* The student's task-2 sigmoid at z, read through its loss and gradient on one row (x = z, w = 1, b = 0,
 * y = 0: grad_b = sigma(z)); NAN when that call fails. */
static float own_sigmoid(float z)
{
    float x = z, y = 0.0f, w = 1.0f, gw = NAN, gb = NAN, work;
    double loss;
    if (logreg_loss_grad_cpu(&x, &y, 1, 1, &w, 0.0f, 0.0f, &gw, &gb, &loss, &work) != DL_OK)
        return NAN;
    return gb;
}

START_TEST(test_predict)
{
    problem p = gr_make_problem(11, 50, 6, 0.0f, 3.0);
    p.X[0] = 1e4f; // a huge logit
    p.X[6] = -1e4f;
    logreg_model m;
    GR_OK(logreg_model_alloc(&m, p.d));
    memcpy(m.w, p.w, p.d * sizeof(float));
    m.b = p.b;
    float *prob = malloc(p.n * sizeof *prob);
    GR_OK(logreg_predict_proba(p.X, p.n, p.d, &m, prob));
    double *want = malloc(p.n * sizeof *want);
    for (size_t i = 0; i < p.n; i++) {
        double z = p.b;
        for (size_t j = 0; j < p.d; j++)
            z += (double)p.X[i * p.d + j] * p.w[j];
        want[i] = gr_ref_sigmoid(z);
        if (prob[i] >= 0.0f && prob[i] <= 1.0f && fabs(prob[i] - want[i]) <= 1e-6 + 1e-5 * want[i])
            continue;
        // A wrong p where the sigmoid of Task 2 (logreg_math.h, which predict shares) is wrong too is Task 2's
        // mistake, and loss_extreme's to charge: this row is not graded here.
        float own = own_sigmoid((float)z);
        if (fabs(z) > 80 && !(own >= 0.0f && own <= 1.0f && fabs(own - want[i]) <= 1e-6 + 1e-5 * want[i])) {
            gr_note("p[%zu] = %g for z = %g; your logreg_sigmoid gives %g there too: that is Task 2's mistake "
                    "(loss_extreme), not graded here\n",
                    i, (double)prob[i], z, (double)own);
            want[i] = prob[i];
            continue;
        }
        if (!(prob[i] >= 0.0f && prob[i] <= 1.0f))
            GR_FAIL(GR_DIAG("sigmoid-overflow") "p[%zu] = %g for z = %g: a probability must lie in [0, 1]%s", i,
                    (double)prob[i], z,
                    fabs(z) > 80 ? " (your logreg_sigmoid is right there: compute p with it, not with a sigmoid of "
                                   "predict's own)"
                                 : "");
    }
    GR_ALLCLOSE_F32("predict_proba", prob, want, p.n, 1e-6, 1e-5, "");
    free(prob), free(want);
    logreg_model_free(&m);
    gr_free_problem(&p);
}
END_TEST

START_TEST(test_test_accuracy)
{
    // the accuracy of the judge's own optimum (Newton's method on the rows the grader's scaler standardised, its
    // stand-ins for Tasks 1 to 3) on the test split, counted by your logreg_accuracy
    bc_data bc;
    gr_bc_load(&bc);
    size_t d = bc.d, nt = bc.n[2];
    logreg_config cfg = gr_default_config();
    double *wopt = malloc(d * sizeof *wopt), bopt;
    gr_ref_optimum(bc.scaled[0], bc.y[0], bc.n[0], d, cfg.lambda, wopt, &bopt);
    logreg_model m;
    GR_OK(logreg_model_alloc(&m, d));
    for (size_t j = 0; j < d; j++)
        m.w[j] = (float)wopt[j];
    m.b = (float)bopt;
    size_t right = 0;
    for (size_t i = 0; i < nt; i++) {
        double z = m.b;
        for (size_t j = 0; j < d; j++)
            z += (double)bc.scaled[2][i * d + j] * m.w[j];
        right += (z >= 0) == (bc.y[2][i] >= 0.5f);
    }
    double acc = -1;
    GR_OK(logreg_accuracy(bc.scaled[2], bc.y[2], nt, d, &m, &acc));
    // your accuracy may rest on your predict_proba (predict grades that): counted from your own
    // probabilities is right too
    float *prob = malloc(nt * sizeof *prob);
    size_t own = nt + 1;
    if (logreg_predict_proba(bc.scaled[2], nt, d, &m, prob) == DL_OK) {
        own = 0;
        for (size_t i = 0; i < nt; i++)
            own += (prob[i] >= 0.5f) == (bc.y[2][i] >= 0.5f);
    }
    double want = (double)right / (double)nt;
    if (fabs(acc - want) > 1e-12 && fabs(acc - (double)own / (double)nt) > 1e-12)
        GR_FAIL("accuracy %.6g on breast_cancer's %zu test rows with the optimal model, expected %zu/%zu = %.6g "
                "(the rows whose prediction, class 1 when p >= 0.5, equals the label)",
                acc, nt, right, nt, want);
    gr_note("test accuracy of the optimum: %.4f (%zu of %zu)\n", acc, right, nt);
    // the threshold: z = 0 gives p = 0.5, which predicts class 1
    float x0[2] = {0.0f, 0.0f}, y1[2] = {1.0f, 1.0f};
    logreg_model m1;
    GR_OK(logreg_model_alloc(&m1, 1));
    GR_OK(logreg_accuracy(x0, y1, 2, 1, &m1, &acc));
    if (acc != 1.0)
        GR_FAIL("two rows with p = 0.5 exactly and label 1 scored accuracy %g: predict class 1 when p >= 0.5", acc);
    free(wopt), free(prob);
    logreg_model_free(&m);
    logreg_model_free(&m1);
    gr_bc_free(&bc);
}
END_TEST

START_TEST(test_scaling_matters)
{
    // the lesson of the lab, from the learning curves: same lr, raw vs standardised features
    bc_data bc;
    gr_bc_load(&bc);
    size_t d = bc.d, n = bc.n[0];
    logreg_config cfg = gr_default_config();
    cfg.epochs = 300;
    cfg.tol = 0;
    logreg_model m;
    logreg_curve raw, sc;
    gr_train_on(dl_cpu(), bc.raw[0], bc.y[0], n, d, NULL, NULL, 0, &cfg, &m, &raw, NULL);
    logreg_model_free(&m);
    gr_train_on(dl_cpu(), bc.scaled[0], bc.y[0], n, d, NULL, NULL, 0, &cfg, &m, &sc, NULL);
    logreg_model_free(&m);
    int ups = 0;
    double worst = 0;
    for (int k = 1; k < raw.n; k++) {
        ups += raw.train_loss[k] > raw.train_loss[k - 1];
        if (raw.train_loss[k] > worst)
            worst = raw.train_loss[k];
    }
    double end_raw = raw.train_loss[raw.n - 1], end_sc = sc.train_loss[sc.n - 1];
    if (!isfinite(end_raw))
        GR_FAIL("the unscaled run's loss became %g: the grader's loss (this item runs your training on it) stays "
                "finite for any finite weights, so a weight or the bias became inf or NaN",
                end_raw);
    if (!(end_sc < 0.2) || !(end_raw > 1.0 && ups >= 10))
        GR_FAIL("at lr = %g for %d epochs, expected the standardised run to converge (final loss %.4g, "
                "want < 0.2) and the raw-feature run not to (final loss %.4g, want > 1; it rose in %d "
                "epochs, want >= 10)",
                cfg.lr, cfg.epochs, end_sc, end_raw, ups);
    gr_note("raw features: loss %.4g after %d epochs (peak %.4g, up %d times); standardised: %.4g\n", end_raw,
            cfg.epochs, worst, ups, end_sc);
    logreg_curve_free(&raw);
    logreg_curve_free(&sc);
    gr_bc_free(&bc);
}
END_TEST

/* The GPU tiers' items (lab01_gpu.c). */
GR_TEST_DECLARE(test_gpu_loss_grad);
GR_TEST_DECLARE(test_gpu_train);

// ---- the table ----

static const gr_item items[] = {
    GR_ITEM(test_scaler_stats, "scaler_stats",
            "scaler mean/std match a double reference (NaN, constant, 1 row, 1e6 offset)", 10, GR_CPU, NULL,
            "skip NaNs when you sum and when you count; divide by the count, not count - 1; mean first, then "
            "squared deviations, both in double; scale 1 where the std is 0",
            "task-1-a-nan-aware-standard-scaler-20-points", 30, GR_WORKER),
    GR_ITEM(test_scaler_transform, "scaler_transform",
            "transform applies the fitted statistics (the grader's fit); NaN -> 0", 10, GR_CPU, NULL,
            "transform applies only the fitted s->mean and s->scale; if it computes any statistic of the rows "
            "it is given, remove that; a NaN input becomes 0",
            "task-1-a-nan-aware-standard-scaler-20-points", 30, GR_WORKER),
    GR_ITEM(test_loss_grad, "loss_grad",
            "loss and gradient match a double reference and finite differences (up to 2^18 rows)", 15, GR_CPU, NULL,
            "every data term is a mean over the n rows; the penalty and its gradient use w, never b; add the loss "
            "terms in double; if a finite difference disagrees, your loss and your gradient are different functions",
            "task-2-a-stable-loss-and-its-gradient-25-points", 30, GR_WORKER),
    GR_ITEM(test_loss_extreme, "loss_extreme", "loss and gradient finite and accurate from |z| = 25 to 1e4", 10, GR_CPU,
            NULL,
            "no log of a probability and no exp of a positive number: rewrite the loss and the sigmoid so that "
            "exp only sees -|z|; a tiny t needs log1pf(t), not logf(1 + t)",
            "task-2-a-stable-loss-and-its-gradient-25-points", 30, GR_WORKER),
    GR_ITEM(gr_test_train_optimum, "train_optimum",
            "full-batch GD reaches the optimum (within 1e-4 of Newton's), on the grader's loss", 15, GR_CPU, NULL,
            "start from w = 0, b = 0 and step against the gradient; a last grad_norm far above tol means the run "
            "stopped too early or diverged",
            "task-3-training-with-a-learning-curve-30-points", 60, GR_WORKER),
    GR_ITEM(gr_test_train_curve, "train_curve",
            "learning curve entries, monotone descent, tolerance stop, one engine call per epoch", 5, GR_CPU,
            "train_optimum",
            "record entry 0 before any step and one entry after each epoch's steps; the norm is of the whole "
            "gradient, b's part included; test the tolerance before each epoch, not after it; start every run from "
            "w = 0, b = 0; a full-batch epoch asks the engine once, on e->X and e->y, and steps with the gradient "
            "it recorded",
            "task-3-training-with-a-learning-curve-30-points", 60, GR_WORKER),
    GR_ITEM(gr_test_train_minibatch, "train_minibatch",
            "mini-batches: every row once per epoch, new order each epoch, seeded", 10, GR_CPU, NULL,
            "draw a new order at the start of every epoch from one generator seeded once; step on consecutive "
            "slices of batch_size positions of it, the last one shorter, each through logreg_engine_grad_rows",
            "task-3-training-with-a-learning-curve-30-points", 60, GR_WORKER),
    GR_ITEM(test_predict, "predict", "probabilities match a double reference, also for logits of 1e4", 10, GR_CPU, NULL,
            "p = sigma(x.w + b) with the stable sigmoid of logreg_math.h, so p stays in [0, 1] for huge logits",
            "task-4-prediction-and-accuracy-15-points", 30, GR_WORKER),
    GR_ITEM(test_test_accuracy, "test_accuracy",
            "accuracy of the optimal model on breast_cancer's test rows; p = 0.5 is class 1", 5, GR_CPU, NULL,
            "count the rows whose prediction (class 1 when p >= 0.5) equals the label, and divide by n",
            "task-4-prediction-and-accuracy-15-points", 60, GR_WORKER),
    GR_ITEM(test_scaling_matters, "scaling_matters", "same lr: standardised converges, raw features do not", 5, GR_CPU,
            "train_optimum",
            "run build/labs/lab01 and look at scaling.png: the raw run should bounce near 1e5 with a finite loss; "
            "inf or NaN there means the loss is not stable yet",
            "what-the-plots-show", 60, GR_WORKER),
    GR_ITEM(gr_test_gpu_loss_grad, "gpu_loss_grad", "CUDA loss/gradient equal the double reference (odd n, d = 1)", 10,
            GR_GPU1, NULL,
            "rows past n contribute 0; every thread of a block reaches every __syncthreads; the block sums are "
            "added on the device, in a fixed order, and nothing waits; compare each step with Task 2's CPU version",
            "task-5-the-same-on-the-gpu-15-points", 60, GR_WORKER),
    GR_ITEM(gr_test_gpu_train, "gpu_train", "training on the GPU tracks the CPU learning curve", 5, GR_GPU1,
            "gpu_loss_grad", "the training loop is the same; only the engine's device differs",
            "task-5-the-same-on-the-gpu-15-points", 120, GR_WORKER),
};

GR_LAB("01", "logistic regression on one GPU, with feature scaling", "01-logreg", items);
