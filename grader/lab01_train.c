/* lab01_train.c — lab 01's task 3 items: training. One default run on
 * breast_cancer's scaled split reaches Newton's optimum (lab01_ref.c) and
 * records its learning curve entry by entry, asking the engine once per
 * full-batch epoch; mini-batches visit every row once per epoch in a new,
 * seeded order. The table that names them is lab01.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // log, fabs, sqrt, isfinite
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "dl/rng.h" // dl_rng
#include "grader.h"
#include "lab01_ref.h" // gr_ref_*, gr_bc_load, gr_train_on, gr_visits_observe
#include "logreg.h"

/* One default run on breast_cancer's scaled split, its test split as
 * validation: what test_train_optimum and test_train_curve judge. */
typedef struct trained {
    bc_data bc;
    logreg_config cfg;
    logreg_model m;
    logreg_curve c;
} trained;

static void train_default(trained *t)
{
    gr_bc_load(&t->bc);
    t->cfg = gr_default_config();
    gr_train_on(dl_cpu(), t->bc.scaled[0], t->bc.y[0], t->bc.n[0], t->bc.d, t->bc.scaled[1], t->bc.y[1], t->bc.n[1],
                &t->cfg, &t->m, &t->c, NULL);
}

static void trained_free(trained *t)
{
    logreg_model_free(&t->m);
    logreg_curve_free(&t->c);
    gr_bc_free(&t->bc);
}

/* What a full-batch run without validation rows asked of the engine: each
 * call should be a curve entry's gradient, on the engine's own rows. */
typedef struct full_batch_calls {
    const float *X; /* the engine's resident training rows */
    size_t rows; /* copies counted only of calls on this many rows (all of them); 0: of every call */
    size_t calls, by_index, copies;
} full_batch_calls;

static void count_full_batch(void *ctx, const float *X, const float *y, const size_t *idx, size_t n)
{
    (void)y;
    full_batch_calls *fc = ctx;
    fc->calls++;
    if (idx != NULL)
        fc->by_index++;
    else if (X != fc->X && (fc->rows == 0 || n == fc->rows))
        fc->copies++;
}

GR_TEST(test_train_optimum)
{
    trained t;
    train_default(&t);
    size_t d = t.bc.d, n = t.bc.n[0];
    double *wopt = malloc(d * sizeof *wopt), bopt;
    double fopt = gr_ref_optimum(t.bc.scaled[0], t.bc.y[0], n, d, t.cfg.lambda, wopt, &bopt);
    double f = gr_ref_objective_f(t.bc.scaled[0], t.bc.y[0], n, d, t.m.w, t.m.b, t.cfg.lambda);
    double rel = (f - fopt) / fopt;
    if (!(rel <= 1e-4))
        GR_FAIL("final objective %.9g after %d epochs is %.3g relative above the optimum %.9g "
                "(Newton's method in double, lambda = %g); expected within 1e-4. The curve ends at "
                "grad_norm %.3g (tol %g)",
                f, t.c.n - 1, rel, fopt, t.cfg.lambda, t.c.n > 0 ? t.c.grad_norm[t.c.n - 1] : NAN, t.cfg.tol);
    double last = t.c.train_loss[t.c.n - 1];
    if (fabs(last - f) > 1e-5 * f)
        GR_FAIL("the curve's last train_loss %.9g is not the objective of the returned model %.9g: "
                "record the curve after each epoch's steps",
                last, f);
    free(wopt);
    trained_free(&t);
}
END_TEST

GR_TEST(test_train_curve)
{
    trained t;
    train_default(&t);
    size_t d = t.bc.d, n = t.bc.n[0];
    if (fabs(t.c.train_loss[0] - log(2.0)) > 1e-6)
        GR_FAIL("train_loss[0] = %.9g; entry 0 is the initial model w = 0, b = 0, whose loss is "
                "log 2 = 0.693147",
                t.c.train_loss[0]);
    // entry 0's gradient norm, at w = 0, b = 0, where the bias's part is large (a class share away from 0.5)
    {
        double *g0 = calloc(d, sizeof *g0), *w0 = calloc(d, sizeof *w0), gb0 = 0, ww = 0;
        gr_ref_objective(t.bc.scaled[0], t.bc.y[0], n, d, w0, 0.0, t.cfg.lambda, g0, &gb0);
        for (size_t j = 0; j < d; j++)
            ww += g0[j] * g0[j];
        double want = sqrt(ww + gb0 * gb0), got = t.c.grad_norm[0];
        free(g0), free(w0);
        if (fabs(got - sqrt(ww)) <= 1e-5 * sqrt(ww) && fabs(got - want) > 1e-5 * want)
            GR_FAIL(GR_DIAG("grad-norm-no-bias") "grad_norm[0] = %.9g is |grad_w| alone; the gradient at w = 0, b = "
                                                 "0 has dJ/db = %.6g too, and its norm is sqrt(|grad_w|^2 + "
                                                 "(dJ/db)^2) = %.9g. The tolerance stop tests the whole gradient: "
                                                 "b is a parameter too",
                    got, gb0, want);
        if (fabs(got - want) > 1e-5 * want)
            GR_FAIL("grad_norm[0] = %.9g, but the gradient at w = 0, b = 0 has norm %.9g (sqrt(|grad_w|^2 + "
                    "(dJ/db)^2), from the curve's gradient call on all training rows)",
                    got, want);
    }
    for (int k = 1; k < t.c.n; k++) {
        if (t.c.train_loss[k] > t.c.train_loss[k - 1] * (1 + 1e-7) + 1e-9)
            GR_FAIL("full-batch train_loss went up at epoch %d (%.9g -> %.9g) with lr = %g on "
                    "standardised data, where gradient descent decreases it every step",
                    k, t.c.train_loss[k - 1], t.c.train_loss[k], t.cfg.lr);
        if (!(t.c.val_acc[k] >= 0 && t.c.val_acc[k] <= 1) || !isfinite(t.c.val_loss[k]))
            GR_FAIL("epoch %d: val_loss %g, val_acc %g: expected a finite loss and an accuracy in [0, 1]", k,
                    t.c.val_loss[k], t.c.val_acc[k]);
    }
    int last = t.c.n - 1;
    if (!(t.c.grad_norm[last] < t.cfg.tol))
        GR_FAIL(GR_DIAG("no-tolerance-stop") "training ran %d epochs and ended with grad_norm %.3g, not "
                                             "below tol = %g",
                last, t.c.grad_norm[last], t.cfg.tol);
    for (int k = 0; k < last; k++) {
        if (t.c.grad_norm[k] < t.cfg.tol)
            GR_FAIL(GR_DIAG("no-tolerance-stop") "grad_norm fell below tol = %g at epoch %d but training "
                                                 "went on to epoch %d: stop as soon as it is below tol",
                    t.cfg.tol, k, last);
    }
    double gb = NAN, gn = 0;
    double *gw = calloc(d, sizeof *gw), *wd = calloc(d, sizeof *wd);
    for (size_t j = 0; j < d; j++)
        wd[j] = t.m.w[j];
    gr_ref_objective(t.bc.scaled[0], t.bc.y[0], n, d, wd, t.m.b, t.cfg.lambda, gw, &gb);
    for (size_t j = 0; j < d; j++)
        gn += gw[j] * gw[j];
    gn = sqrt(gn + gb * gb);
    if (fabs(gn - t.c.grad_norm[last]) > 1e-6 + 1e-2 * gn)
        GR_FAIL("grad_norm[%d] = %.6g but the gradient of the returned model has norm %.6g "
                "(sqrt(|grad_w|^2 + grad_b^2))",
                last, t.c.grad_norm[last], gn);
    // tol = 0: all epochs run, each with one engine call on the engine's own rows; the model passed in is the
    // last run's (as a driver's second run would pass it): training starts from w = 0, b = 0 all the same
    logreg_curve_free(&t.c);
    t.cfg.tol = 0;
    t.cfg.epochs = 25;
    logreg_engine e;
    GR_OK(logreg_engine_init(&e, dl_cpu(), t.bc.scaled[0], t.bc.y[0], n, d));
    full_batch_calls fc = {t.bc.scaled[0], 0, 0, 0, 0};
    e.observe = count_full_batch;
    e.observe_ctx = &fc;
    GR_OK(logreg_curve_alloc(&t.c, t.cfg.epochs));
    GR_OK(logreg_train(&e, NULL, NULL, 0, &t.cfg, &t.m, &t.c));
    if (t.c.n >= 1 && fabs(t.c.train_loss[0] - log(2.0)) > 1e-6)
        GR_FAIL(GR_DIAG("model-not-reset") "a second logreg_train on a model that held the first run's weights "
                                           "recorded train_loss[0] = %.9g, not log 2 = 0.693147: it started from "
                                           "those weights. Training starts from w = 0, b = 0 whatever m holds",
                t.c.train_loss[0]);
    if (t.c.n != t.cfg.epochs + 1)
        GR_FAIL("with tol = 0 and %d epochs the curve has %d entries, expected %d (initial + one per "
                "epoch)",
                t.cfg.epochs, t.c.n, t.cfg.epochs + 1);
    if (fc.copies > 0)
        GR_FAIL(GR_DIAG("full-batch-host-copy") "%zu of the %zu gradient calls of a full-batch run passed a copy "
                                                "of the training rows: the full-batch gradient must be asked for on "
                                                "the engine's own rows (e->X, e->y): a copy is uploaded again on "
                                                "every call",
                fc.copies, fc.calls);
    if (fc.calls != (size_t)t.cfg.epochs + 1)
        GR_FAIL(GR_DIAG("full-batch-second-call") "a full-batch run of %d epochs (tol 0, no validation rows) made "
                                                  "%zu gradient calls (%zu of them by index, through "
                                                  "logreg_engine_grad_rows), expected %d: one per curve entry. The "
                                                  "gradient you record for an entry is the gradient the next step "
                                                  "needs; a second call is a second wait per epoch on a GPU (by "
                                                  "index, a gather of every row too)",
                t.cfg.epochs, fc.calls, fc.by_index, t.cfg.epochs + 1);
    // in mini-batch mode too, the curve's gradient is asked for on the engine's own rows
    logreg_curve_free(&t.c);
    t.cfg.epochs = 3;
    t.cfg.batch_size = 64;
    full_batch_calls mb = {t.bc.scaled[0], n, 0, 0, 0};
    e.observe_ctx = &mb;
    GR_OK(logreg_curve_alloc(&t.c, t.cfg.epochs));
    GR_OK(logreg_train(&e, NULL, NULL, 0, &t.cfg, &t.m, &t.c));
    logreg_engine_free(&e);
    if (mb.copies > 0)
        GR_FAIL(GR_DIAG("full-batch-host-copy") "a mini-batch run (batch 64, %d epochs) passed a copy of the "
                                                "training rows to %zu of its %zu gradient calls: the curve's "
                                                "gradient on all rows must be asked for on the engine's own rows "
                                                "(e->X, e->y), in mini-batch mode too",
                t.cfg.epochs, mb.copies, mb.calls);
    free(gw), free(wd);
    trained_free(&t);
}
END_TEST

/* test_train_minibatch's observer: gr_visits_observe for the mini-batches,
 * and apart from them the calls on all n rows that are not the engine's own
 * rows (the curve's gradient on a copy). */
typedef struct minibatch_watch {
    visits v;
    size_t full_copies; /* calls on n rows passed as rows other than the resident set */
    size_t largest; /* the most rows of a call counted as a mini-batch */
} minibatch_watch;

static void watch_minibatch(void *ctx, const float *X, const float *y, const size_t *idx, size_t n)
{
    minibatch_watch *w = ctx;
    if (idx == NULL && n == w->v.n && X != w->v.resident) {
        w->full_copies++;
        return;
    }
    if (!(idx == NULL && X == w->v.resident && n == w->v.n) && n > w->largest)
        w->largest = n;
    gr_visits_observe(&w->v, X, y, idx, n);
}

GR_TEST(test_train_minibatch)
{
    // 203 rows (not a multiple of the batch), column 0 = row id / 1024, the rest informative
    size_t n = 203, d = 4, bs = 16, epochs = 6;
    dl_rng r;
    dl_rng_seed(&r, 77, 1);
    float *X = gr_rand_matrix(&r, n, d, 0.0, 1.0), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        X[i * d] = (float)i / 1024.0f; // exact in float: the id survives the gather
        y[i] = (float)(X[i * d + 1] + 0.5f * X[i * d + 2] > 0);
    }
    logreg_config cfg = {0.05, 0.01, (int)epochs, bs, 0.0, 9};
    size_t per_epoch = (n + bs - 1) / bs;
    minibatch_watch w = {{d, n, bs, X, calloc(epochs * n, sizeof(size_t)),
                          calloc(epochs * per_epoch + 8, sizeof(size_t)), 0, epochs * per_epoch + 8, epochs, 0, 0, 0},
                         0,
                         0};
    visits *v = &w.v;
    logreg_engine e;
    GR_OK(logreg_engine_init(&e, dl_cpu(), X, y, n, d));
    e.observe = watch_minibatch;
    e.observe_ctx = &w;
    logreg_model m;
    logreg_curve c;
    GR_OK(logreg_model_alloc(&m, d));
    GR_OK(logreg_curve_alloc(&c, cfg.epochs));
    GR_OK(logreg_train(&e, NULL, NULL, 0, &cfg, &m, &c));
    // (the curve's calls on all rows, copies or not, are train_curve's to grade)
    if (v->bad_size)
        GR_FAIL("a gradient call got %zu rows, more than batch_size = %zu: a mini-batch step takes at most "
                "batch_size positions of the order, and the curve's gradient on all rows is logreg_engine_grad on "
                "e->X, e->y",
                w.largest, bs);
    if (v->rows_seen != epochs * n)
        GR_FAIL(GR_DIAG("minibatch-coverage") "%zu epochs of mini-batches saw %zu rows in all, expected "
                                              "%zu (each of the %zu rows once per epoch, the last batch smaller)",
                epochs, v->rows_seen, epochs * n, n);
    if (v->batches != epochs * per_epoch)
        GR_FAIL("%zu mini-batch steps in %zu epochs, expected %zu per epoch (ceil(%zu / %zu))", v->batches, epochs,
                per_epoch, n, bs);
    for (size_t ep = 0; ep < epochs; ep++) {
        for (size_t i = 0; i < n; i++) {
            if (v->seen[ep * n + i] != 1)
                GR_FAIL(
                    GR_DIAG("minibatch-coverage") "epoch %zu used row %zu %zu times: every row "
                                                  "exactly once per epoch (sample without replacement: a permutation)",
                    ep + 1, i, v->seen[ep * n + i]);
        }
    }
    size_t same = 0;
    for (size_t ep = 1; ep < epochs; ep++) {
        int identical = 1;
        for (size_t k = 0; k < per_epoch; k++)
            identical &= v->first[ep * per_epoch + k] == v->first[k];
        same += identical;
    }
    if (same > 0)
        GR_FAIL(GR_DIAG("minibatch-no-shuffle") "%zu epoch(s) visited the batches in exactly the order of "
                                                "epoch 1: draw a new random order every epoch",
                same);
    size_t in_order = 0;
    for (size_t k = 1; k < per_epoch; k++)
        in_order += v->first[k] == v->first[k - 1] + bs;
    if (in_order + 1 == per_epoch)
        GR_FAIL(GR_DIAG("minibatch-no-shuffle") "epoch 1 took the rows in file order 0, 1, 2, ...: "
                                                "shuffle them with the seeded RNG");
    if (v->host_batches > 0)
        GR_FAIL(GR_DIAG("minibatch-host-gather") "%zu of the %zu mini-batch steps passed rows copied on the host "
                                                 "to logreg_engine_grad: on a GPU each would go up again, every "
                                                 "step. Pass the step's slice of the order to "
                                                 "logreg_engine_grad_rows: the rows stay where they live",
                v->host_batches, v->batches);
    // the objective went down, and the same seed gives the same model
    if (!(c.train_loss[c.n - 1] < 0.8 * c.train_loss[0]))
        GR_FAIL("mini-batch training did not reduce the loss: %.6g -> %.6g", c.train_loss[0], c.train_loss[c.n - 1]);
    // the same run again, from a fresh model (whether training resets the model it is given is train_curve's
    // to grade): the same seed must give the same bits
    float *w1 = malloc(d * sizeof *w1);
    memcpy(w1, m.w, d * sizeof *w1);
    memset(m.w, 0, d * sizeof *m.w);
    m.b = 0.0f;
    e.observe = NULL;
    GR_OK(logreg_train(&e, NULL, NULL, 0, &cfg, &m, &c));
    for (size_t j = 0; j < d; j++) {
        if (m.w[j] != w1[j])
            GR_FAIL("two runs with the same seed, each from w = 0, b = 0, gave different w[%zu] (%.9g vs %.9g): "
                    "the orders must come from one generator seeded once per call with cfg->seed, and nothing "
                    "else may change between runs",
                    j, (double)w1[j], (double)m.w[j]);
    }
    free(X), free(y), free(v->seen), free(v->first), free(w1);
    logreg_engine_free(&e);
    logreg_model_free(&m);
    logreg_curve_free(&c);
}
END_TEST
