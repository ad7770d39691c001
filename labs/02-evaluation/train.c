/* train.c — lab 02's driver around the student's functions: the data's
 * parts planned and split honestly, what a random split would have done,
 * the validation curve's trainer, the choice of λ, the drift, and what the
 * files are written from (see outputs.h). Not a student file; it calls the
 * student's functions, so the grader does not link it. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy

#include "dl/progress.h" // dl_progress_line
#include "dl/timer.h" // dl_now
#include "outputs.h"

// ---- the run each data set gets by default ----

/* --epochs and --train-rows left at 0. On Fashion-MNIST's 50000 training
 * rows a linear model of 7850 weights has no room to overfit: every lambda
 * only costs, lambda = 0 wins, and the validation curve would teach nothing.
 * On 1000 rows trained to convergence (300 epochs, 2400 steps) it overfits:
 * a little L2 helps, too much hurts, and the choice is made on validation
 * data. Other sets (no official test split) keep every row and 12 epochs. */
static void preset(dl_engine *E, int official_test)
{
    lab02_state *o = E->ctx;
    if (E->a.epochs == 0)
        E->a.epochs = official_test ? 300 : 12;
    if (o->train_rows == 0)
        o->train_rows = official_test ? 1000 : 0;
}

// ---- data and the honest split ----

dl_status lab02_plan(dl_engine *E)
{
    lab02_state *L = E->ctx, *o = L;
    L->d = E->data.train.d;
    L->C = E->data.train.n_classes;
    if (L->C < 2)
        return dl_error_set(DL_ERR_ARG, "--data %s has %d class: nothing to classify", E->a.data, L->C);
    // each part's share of the pool (the training rows): an official test split is kept and validation carved
    // out of train; else all three come from the pool. The data set's defaults (preset) and --train-rows
    // shrink train.
    double *frac = L->frac;
    if (E->data.has_test) {
        double vf = o->val_frac > 0 ? o->val_frac : 1.0 / 6.0;
        frac[0] = 1.0 - vf, frac[1] = vf, frac[2] = 0.0;
    } else {
        double vf = o->val_frac > 0 ? o->val_frac : 0.2;
        frac[0] = 1.0 - vf - o->test_frac, frac[1] = vf, frac[2] = o->test_frac;
    }
    preset(E, E->data.has_test);
    size_t n = E->data.train.n;
    if (o->train_rows > 0 && (double)o->train_rows < frac[0] * (double)n) // fewer rows: the rest in no part
        frac[0] = (double)o->train_rows / (double)n;
    return DL_OK;
}

dl_status lab02_split(dl_engine *E)
{
    lab02_state *L = E->ctx;
    const dl_dataset *pool = &E->data.train;
    DL_TRY(eval_split_stratified(pool->y, pool->n, L->C, L->frac, E->a.seed, &L->strat));
    DL_TRY(eval_split_random(pool->n, L->frac, E->a.seed, &L->rnd));
    for (int p = 0; p < 2; p++)
        DL_TRY(lab02_gather(pool, L->strat.idx + L->strat.offset[p], dl_split_size(&L->strat, p), &L->p[p]));
    if (E->data.has_test)
        DL_TRY(lab02_gather(&E->data.test, NULL, E->data.test.n, &L->p[2]));
    else
        DL_TRY(lab02_gather(pool, L->strat.idx + L->strat.offset[2], dl_split_size(&L->strat, 2), &L->p[2]));
    dl_progress_line(&E->pr, 0, "lab02: %s, %d classes, %zu train / %zu val / %zu test rows%s, %zu features, device %s",
                     E->data.name, L->C, L->p[0].n, L->p[1].n, L->p[2].n, E->data.has_test ? " (official test)" : "",
                     L->d, dl_device_describe(&E->dev));
    return DL_OK;
}

dl_status lab02_balance_line(dl_engine *E)
{
    lab02_state *L = E->ctx;
    DL_TRY(lab02_balance_compute(&E->data, &L->rnd, &L->strat, L->frac, L->spread_seeds, &L->bal));
    char buf[32];
    dl_progress_line(&E->pr, 0,
                     "lab02: share of the rarest class (%s) over %d seeds, std dev train/val: random %.2e/%.2e, "
                     "stratified %.2e/%.2e",
                     dl_dataset_class_name(&E->data.train, L->bal.rare, buf, sizeof buf), L->spread_seeds, L->bal.sd[0],
                     L->bal.sd[1], L->bal.sd[3], L->bal.sd[4]);
    return DL_OK;
}

// ---- the trainer the validation curve calls ----

static dl_status train_cb(void *ctx, double lambda, void **model)
{
    lab02_state *L = ctx;
    softmax_model *m = malloc(sizeof *m);
    if (m == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    dl_status st = softmax_model_alloc(m, L->d, L->C);
    softmax_config cfg = L->cfg;
    cfg.lambda = lambda;
    dl_dev_stats before, after;
    size_t calls = L->engine.calls;
    dl_dev_stats_get(&before);
    if (st == DL_OK)
        st = softmax_train(&L->engine, &cfg, m, L->curves + (size_t)L->trained * (size_t)cfg.epochs);
    dl_dev_stats_get(&after);
    if (st == DL_OK && L->trained > 0) // per step: the steady models (the first one's first step makes the batch)
        dl_run_io_steps(&L->io, &before, &after, (long)(L->engine.calls - calls));
    if (st != DL_OK) {
        softmax_model_free(m);
        free(m);
        return st;
    }
    L->trained++;
    *model = m;
    return DL_OK;
}

static dl_status score_cb(void *ctx, void *model, int split, eval_report *r)
{
    lab02_state *L = ctx;
    const lab02_part *p = &L->p[split];
    int32_t *pred = malloc((p->n ? p->n : 1) * sizeof *pred);
    int64_t *cm = malloc((size_t)L->C * (size_t)L->C * sizeof *cm);
    dl_status st = pred && cm ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    if (st == DL_OK) // where the model computes: the model goes up, the labels come back
        st = softmax_engine_predict(&L->engine, p->X, p->n, model, pred);
    if (st == DL_OK)
        st = eval_confusion(p->y, pred, p->n, L->C, cm);
    if (st == DL_OK)
        st = eval_report_from_confusion(cm, L->C, r);
    if (st == DL_OK && split == EVAL_TEST) { // keep the chosen model's matrix for the plot
        memcpy(L->test_cm, cm, (size_t)L->C * (size_t)L->C * sizeof *cm);
        L->test_scored++;
    }
    free(pred), free(cm);
    return st;
}

static void release_cb(void *ctx, void *model)
{
    (void)ctx;
    softmax_model_free(model);
    free(model);
}

// ---- the validation curve: one model per lambda, chosen on validation, tested once ----

/* Trains one model per λ on the training part, scores each on validation,
 * and the chosen one (only it) on test; says what it chose. */
dl_status lab02_choose(dl_engine *E)
{
    lab02_state *L = E->ctx;
    const dl_args *a = &E->a;
    dl_progress *pr = &E->pr;
    int nl = L->nl;
    L->cfg = (softmax_config){a->lr, 0.0, a->epochs, (size_t)a->batch_size, a->seed};
    L->curve = (eval_curve){nl, L->lambdas, L->val_f1, L->val_acc, -1, {0}};
    L->curves = calloc((size_t)nl * (size_t)(a->epochs > 0 ? a->epochs : 1), sizeof *L->curves);
    L->test_cm = calloc((size_t)L->C * (size_t)L->C, sizeof *L->test_cm);
    if (L->curves == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    DL_TRY(eval_report_alloc(&L->curve.test, L->C));
    if (L->test_cm == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    dl_dev_stats_get(&L->io.start);
    DL_TRY(softmax_engine_init(&L->engine, &E->dev, L->p[0].X, L->p[0].y, L->p[0].n, L->d, L->C));
    for (int p = EVAL_VAL; p <= EVAL_TEST; p++) // the parts the models are scored on: uploaded once, here
        DL_TRY(softmax_engine_hold(&L->engine, L->p[p].X, L->p[p].y, L->p[p].n));
    dl_dev_stats_get(&L->io.resident);
    double t0 = dl_now();
    eval_trainer tr = {L, train_cb, score_cb, release_cb};
    dl_status st = eval_validation_curve(&tr, &L->curve);
    L->train_s = dl_now() - t0;
    dl_dev_stats_get(&L->io.end);
    L->io.epochs = L->trained * a->epochs;
    DL_TRY(st);
    const eval_curve *cv = &L->curve;
    if (cv->chosen < 0 || cv->chosen >= nl)
        return dl_error_set(DL_ERR_RANGE, "eval_validation_curve chose index %d of %d", cv->chosen, nl);
    if (L->test_scored != 1)
        return dl_error_set(DL_ERR_RANGE,
                            "eval_validation_curve scored %d model(s) on the test split; expected "
                            "exactly one, the chosen model",
                            L->test_scored);
    for (int k = 0; k < nl; k++)
        dl_progress_line(pr, 0, "lambda %-8g val macro-F1 %.4f  val accuracy %.4f%s", L->lambdas[k], L->val_f1[k],
                         L->val_acc[k], k == cv->chosen ? "  <- chosen" : "");
    dl_progress_line(pr, 1,
                     "lab02: chose lambda %g on validation; test accuracy %.4f, macro-F1 %.4f (%d models, %.1f s)",
                     L->lambdas[cv->chosen], cv->test.accuracy, cv->test.macro_f1, nl, L->train_s);
    if (cv->test.zero_division > 0)
        dl_progress_line(pr, 1, "lab02: note: %d class(es) had an undefined precision or recall (0/0, reported as 0)",
                         cv->test.zero_division);
    return DL_OK;
}

// ---- drift: train vs val and train vs test ----

dl_status lab02_drift(dl_engine *E)
{
    lab02_state *L = E->ctx;
    for (int k = 0; k < 2; k++) {
        L->psi[k] = calloc(L->d ? L->d : 1, sizeof(double));
        if (L->psi[k] == NULL)
            return dl_error_set(DL_ERR_NOMEM, "out of memory");
        DL_TRY(eval_psi(L->p[0].X, L->p[0].n, L->p[1 + k].X, L->p[1 + k].n, L->d, L->psi_bins, L->psi[k]));
    }
    L->nworst = L->d < 5 ? (int)L->d : 5;
    lab02_worst_features(L->psi[1], L->d, L->worst, L->nworst);
    dl_progress_line(&E->pr, 0,
                     "lab02: drift train->test: largest PSI %.4f (feature %zu); PSI < 0.1 is usually read as stable",
                     L->psi[1][L->worst[0]], L->worst[0]);
    return DL_OK;
}

// ---- what the files are written from ----

void lab02_results_fill(dl_engine *E)
{
    lab02_state *L = E->ctx;
    L->res = (lab02_results){E->a.out,
                             E->a.json,
                             E->a.plot,
                             &E->data,
                             dl_device_describe(&E->dev),
                             {L->p[0].n, L->p[1].n, L->p[2].n},
                             E->a.lr,
                             E->a.epochs,
                             E->a.batch_size,
                             E->a.seed,
                             L->lambdas,
                             L->nl,
                             &L->curve,
                             L->curves,
                             L->test_cm,
                             &L->bal,
                             {L->psi[0], L->psi[1]},
                             L->d,
                             L->psi_bins,
                             L->worst,
                             L->nworst,
                             L->train_s,
                             &L->io};
}
