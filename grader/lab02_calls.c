/* lab02_calls.c — lab 02's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). Where an
 * output holds pointers (a split, a report), the status is recorded first,
 * and what a pointer points to only when the call succeeded. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // malloc

#include "dl/device.h" // dl_dev_stats_get
#include "eval.h"
#include "grader.h" // GR_FAIL
#include "lab02_ref.h" // gr_softmax_cuda_waits
#include "replay.h"

#define T1 "lab02 task 1"
#define T2 "lab02 task 2"
#define T3 "lab02 task 3"
#define T4 "lab02 task 4"
#define T5 "lab02 task 5"
#define T6 "lab02 task 6"
#define T7 "lab02 task 7"

// ---- tasks 1 and 2: splits ----

GR_DECLARE(eval_approximate_mode);
dl_status GR_FN(eval_approximate_mode)(const size_t *counts, int C, size_t n_draws, dl_rng *r, size_t *out)
{
    gr_call c;
    gr_call_begin(&c, "eval_approximate_mode", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_approximate_mode)(counts, C, n_draws, r, out);
    gr_out(&c, r, sizeof *r); // the generator moved on
    gr_out(&c, out, (C > 0 ? (size_t)C : 0) * sizeof *out);
    return gr_call_end(&c, st);
}

GR_DECLARE(eval_split_stratified);
dl_status GR_FN(eval_split_stratified)(const int32_t *y, size_t n, int C, const double frac[3], uint64_t seed,
                                       dl_split *out)
{
    gr_call c;
    gr_call_begin(&c, "eval_split_stratified", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_split_stratified)(y, n, C, frac, seed, out);
    gr_out(&c, &st, sizeof st);
    if (st == DL_OK) {
        size_t *idx = out->idx;
        gr_out(&c, out, sizeof *out);
        int parts = out->n_parts < 0 ? 0 : out->n_parts > DL_SPLIT_MAX_PARTS ? DL_SPLIT_MAX_PARTS : out->n_parts;
        size_t total = out->offset[parts] < n ? out->offset[parts] : n;
        if (!gr_call_live(&c)) { // the judge never reads past what was recorded
            for (int p = 0; p <= DL_SPLIT_MAX_PARTS; p++)
                out->offset[p] = out->offset[p] < total ? out->offset[p] : total;
            out->n_parts = parts;
        }
        out->idx = gr_out_alloc(&c, idx, total * sizeof *idx);
    }
    return gr_call_end(&c, st);
}

GR_DECLARE(eval_kfold_stratified);
dl_status GR_FN(eval_kfold_stratified)(const int32_t *y, size_t n, int C, int k, uint64_t seed, int32_t *fold)
{
    gr_call c;
    gr_call_begin(&c, "eval_kfold_stratified", T2);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_kfold_stratified)(y, n, C, k, seed, fold);
    gr_out(&c, fold, n * sizeof *fold);
    return gr_call_end(&c, st);
}

// ---- tasks 3 and 4: confusion matrix and report ----

GR_DECLARE(eval_confusion);
dl_status GR_FN(eval_confusion)(const int32_t *y_true, const int32_t *y_pred, size_t n, int C, int64_t *cm)
{
    gr_call c;
    gr_call_begin(&c, "eval_confusion", T3);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_confusion)(y_true, y_pred, n, C, cm);
    size_t cc = C > 0 ? (size_t)C : 0;
    gr_out(&c, cm, cc * cc * sizeof *cm);
    return gr_call_end(&c, st);
}

/* A report's contents: its scalars and its (C,) arrays; the pointers stay the caller's. */
static void out_report(gr_call *c, eval_report *r, int C)
{
    eval_report keep = *r;
    gr_out(c, r, sizeof *r);
    r->precision = keep.precision;
    r->recall = keep.recall;
    r->f1 = keep.f1;
    r->support = keep.support;
    r->C = keep.C;
    size_t cc = C > 0 ? (size_t)C : 0;
    gr_out(c, r->precision, cc * sizeof *r->precision);
    gr_out(c, r->recall, cc * sizeof *r->recall);
    gr_out(c, r->f1, cc * sizeof *r->f1);
    gr_out(c, r->support, cc * sizeof *r->support);
}

GR_DECLARE(eval_report_from_confusion);
dl_status GR_FN(eval_report_from_confusion)(const int64_t *cm, int C, eval_report *r)
{
    gr_call c;
    gr_call_begin(&c, "eval_report_from_confusion", T4);
    int cap = r->C; // what eval_report_alloc made room for
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_report_from_confusion)(cm, C, r);
    out_report(&c, r, cap);
    return gr_call_end(&c, st);
}

// ---- task 5: softmax regression ----

GR_DECLARE(softmax_loss_grad_cpu);
dl_status GR_FN(softmax_loss_grad_cpu)(const float *X, const int32_t *y, size_t n, size_t d, int C, const float *W,
                                       const float *b, float lambda, float *gW, float *gb, double *loss, float *work)
{
    gr_call c;
    gr_call_begin(&c, "softmax_loss_grad_cpu", T5);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(softmax_loss_grad_cpu)(X, y, n, d, C, W, b, lambda, gW, gb, loss, work);
    size_t cc = C > 0 ? (size_t)C : 0;
    gr_out(&c, gW, cc * d * sizeof *gW);
    gr_out(&c, gb, cc * sizeof *gb);
    gr_out(&c, loss, sizeof *loss);
    return gr_call_end(&c, st);
}

/* Set by every recorded softmax_loss_grad_cuda call: how often the host
 * waited for the device inside it (dl/device.h's counters, taken around the
 * real call in the worker; the judge reads the record). */
uint64_t gr_softmax_cuda_waits;

GR_DECLARE(softmax_loss_grad_cuda);
dl_status GR_FN(softmax_loss_grad_cuda)(const dl_device *dev, const float *dX, const int32_t *dy, size_t n, size_t d,
                                        int C, const float *dW, const float *db, float lambda, float *dgW, float *dgb,
                                        double *dloss, float *dwork)
{
    gr_call c;
    gr_call_begin(&c, "softmax_loss_grad_cuda", T5);
    dl_status st = DL_OK;
    uint64_t waits = 0;
    if (gr_call_live(&c)) {
        dl_dev_stats before, after;
        dl_dev_stats_get(&before);
        st = GR_REAL(softmax_loss_grad_cuda)(dev, dX, dy, n, d, C, dW, db, lambda, dgW, dgb, dloss, dwork);
        dl_dev_stats_get(&after);
        waits = after.syncs - before.syncs;
    }
    gr_out(&c, &waits, sizeof waits);
    gr_softmax_cuda_waits = waits;
    size_t cc = C > 0 ? (size_t)C : 0;
    gr_out_dev(&c, dev, dgW, cc * d * sizeof *dgW);
    gr_out_dev(&c, dev, dgb, cc * sizeof *dgb);
    gr_out_dev(&c, dev, dloss, sizeof *dloss);
    return gr_call_end(&c, st);
}

GR_DECLARE(softmax_train);
dl_status GR_FN(softmax_train)(softmax_engine *e, const softmax_config *cfg, softmax_model *m, double *train_loss)
{
    gr_call c;
    gr_call_begin(&c, "softmax_train", T5);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(softmax_train)(e, cfg, m, train_loss);
    size_t cc = m->C > 0 ? (size_t)m->C : 0;
    gr_out(&c, m->W, cc * m->d * sizeof *m->W);
    gr_out(&c, m->b, cc * sizeof *m->b);
    gr_out(&c, train_loss, (cfg->epochs > 0 ? (size_t)cfg->epochs : 0) * sizeof *train_loss);
    gr_out(&c, &e->calls, sizeof e->calls);
    return gr_call_end(&c, st);
}

GR_DECLARE(softmax_predict);
dl_status GR_FN(softmax_predict)(const float *X, size_t n, const softmax_model *m, int32_t *pred)
{
    gr_call c;
    gr_call_begin(&c, "softmax_predict", T5);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(softmax_predict)(X, n, m, pred);
    gr_out(&c, pred, n * sizeof *pred);
    return gr_call_end(&c, st);
}

// ---- task 6: the validation curve calls back into the test ----

enum { CB_TRAIN = 1, CB_SCORE = 2, CB_RELEASE = 3 };
#define MAX_MODELS 256

typedef struct proxy {
    const eval_trainer *t;
    const eval_curve *curve;
    void *models[MAX_MODELS]; /* what train() returned, in order */
    int n;
} proxy;

static int32_t model_index(const proxy *p, const void *model)
{
    for (int k = 0; k < p->n; k++) {
        if (p->models[k] == model)
            return k;
    }
    return -1;
}

static dl_status rec_train(void *ctx, double lambda, void **model)
{
    proxy *p = ctx;
    gr_call *c = gr_call_current();
    gr_cb_begin(c, CB_TRAIN);
    gr_out(c, &lambda, sizeof lambda);
    dl_status st = p->t->train(p->t->ctx, lambda, model);
    if (p->n < MAX_MODELS)
        p->models[p->n++] = st == DL_OK ? *model : NULL;
    return st;
}

static dl_status rec_score(void *ctx, void *model, int split, eval_report *r)
{
    proxy *p = ctx;
    gr_call *c = gr_call_current();
    gr_cb_begin(c, CB_SCORE);
    int32_t args[4] = {model_index(p, model), split, r == &p->curve->test, r != NULL ? r->C : -1};
    gr_out(c, args, sizeof args);
    return p->t->score(p->t->ctx, model, split, r);
}

static void rec_release(void *ctx, void *model)
{
    proxy *p = ctx;
    gr_call *c = gr_call_current();
    gr_cb_begin(c, CB_RELEASE);
    int32_t k = model_index(p, model);
    gr_out(c, &k, sizeof k);
    p->t->release(p->t->ctx, model);
}

/* The judge makes the same calls into its own trainer, models matched by order. */
static void replay_trainer(gr_call *c, const eval_trainer *t, eval_curve *curve)
{
    void *models[MAX_MODELS];
    int n = 0, id;
    while (gr_cb_next(c, &id)) {
        if (id == CB_TRAIN) {
            double lambda;
            gr_out(c, &lambda, sizeof lambda);
            void *model = NULL;
            dl_status st = t->train(t->ctx, lambda, &model);
            if (n < MAX_MODELS)
                models[n++] = st == DL_OK ? model : NULL;
            continue;
        }
        int32_t a[4] = {-1, 0, 0, 0};
        gr_out(c, a, (id == CB_SCORE ? 4 : 1) * sizeof a[0]);
        if (a[0] < 0 || a[0] >= n || models[a[0]] == NULL)
            GR_FAIL("your code passed %s a model that train() did not return",
                    id == CB_SCORE ? "score()" : "release()");
        if (id == CB_RELEASE) {
            t->release(t->ctx, models[a[0]]);
            continue;
        }
        if (a[2]) {
            t->score(t->ctx, models[a[0]], a[1], &curve->test);
            continue;
        }
        if (a[3] < 1 || a[3] > 4096)
            GR_FAIL("your code passed score() a report for %d classes", a[3]);
        eval_report tmp;
        eval_report_alloc(&tmp, a[3]);
        t->score(t->ctx, models[a[0]], a[1], &tmp);
        eval_report_free(&tmp);
    }
}

GR_DECLARE(eval_validation_curve);
dl_status GR_FN(eval_validation_curve)(const eval_trainer *t, eval_curve *curve)
{
    gr_call c;
    gr_call_begin(&c, "eval_validation_curve", T6);
    dl_status st = DL_OK;
    if (gr_call_live(&c)) {
        proxy p = {t, curve, {NULL}, 0};
        eval_trainer rec = {&p, rec_train, rec_score, rec_release};
        st = GR_REAL(eval_validation_curve)(&rec, curve);
    } else {
        replay_trainer(&c, t, curve);
    }
    size_t n = curve->n > 0 ? (size_t)curve->n : 0;
    gr_out(&c, &curve->chosen, sizeof curve->chosen);
    gr_out(&c, curve->val_macro_f1, n * sizeof *curve->val_macro_f1);
    gr_out(&c, curve->val_accuracy, n * sizeof *curve->val_accuracy);
    out_report(&c, &curve->test, curve->test.C);
    return gr_call_end(&c, st);
}

// ---- task 7: drift ----

GR_DECLARE(eval_psi);
dl_status GR_FN(eval_psi)(const float *ref, size_t n_ref, const float *cur, size_t n_cur, size_t d, int bins,
                          double *psi)
{
    gr_call c;
    gr_call_begin(&c, "eval_psi", T7);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(eval_psi)(ref, n_ref, cur, n_cur, d, bins, psi);
    gr_out(&c, psi, d * sizeof *psi);
    return gr_call_end(&c, st);
}
