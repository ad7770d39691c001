/* lab01_calls.c — lab 01's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). One wrapper
 * per function of logreg.h that the student writes; each lists the
 * function's outputs in order. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // malloc

#include "dl/device.h" // dl_dev_stats_get
#include "grader.h" // GR_FAIL
#include "lab01_ref.h" // gr_logreg_cuda_waits, gr_ref_loss_grad_f32, gr_ref_accuracy_f32
#include "logreg.h"
#include "replay.h"

#define T1 "lab01 task 1"
#define T2 "lab01 task 2"
#define T3 "lab01 task 3"
#define T4 "lab01 task 4"
#define T5 "lab01 task 5"

/* Set while the student's logreg_train runs for the grader (the worker's
 * live call below): the engine's calls to the student's task-2 loss and
 * task-4 accuracy then run the judge's stand-ins (lab01_ref.h), so a
 * training item grades Task 3 alone and a slip in Task 2 or 4 costs only
 * that task's own items. The GPU engine calls the student's CUDA loss
 * (Task 5), which nothing stands in for. */
static int stand_in;

GR_DECLARE(logreg_scaler_fit);
dl_status GR_FN(logreg_scaler_fit)(const float *X, size_t n, size_t d, logreg_scaler *s)
{
    gr_call c;
    gr_call_begin(&c, "logreg_scaler_fit", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(logreg_scaler_fit)(X, n, d, s);
    gr_out(&c, s->mean, s->d * sizeof *s->mean);
    gr_out(&c, s->scale, s->d * sizeof *s->scale);
    return gr_call_end(&c, st);
}

GR_DECLARE(logreg_scaler_transform);
dl_status GR_FN(logreg_scaler_transform)(const logreg_scaler *s, const float *X, size_t n, float *out)
{
    gr_call c;
    gr_call_begin(&c, "logreg_scaler_transform", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(logreg_scaler_transform)(s, X, n, out);
    gr_out(&c, out, n * s->d * sizeof *out);
    return gr_call_end(&c, st);
}

GR_DECLARE(logreg_loss_grad_cpu);
dl_status GR_FN(logreg_loss_grad_cpu)(const float *X, const float *y, size_t n, size_t d, const float *w, float b,
                                      float lambda, float *grad_w, float *grad_b, double *loss, float *work)
{
    gr_call c;
    gr_call_begin(&c, "logreg_loss_grad_cpu", T2);
    dl_status st = DL_OK;
    if (gr_call_live(&c) && stand_in)
        st = gr_ref_loss_grad_f32(X, y, n, d, w, b, lambda, grad_w, grad_b, loss, work);
    else if (gr_call_live(&c))
        st = GR_REAL(logreg_loss_grad_cpu)(X, y, n, d, w, b, lambda, grad_w, grad_b, loss, work);
    gr_out(&c, grad_w, d * sizeof *grad_w);
    gr_out(&c, grad_b, sizeof *grad_b);
    gr_out(&c, loss, sizeof *loss);
    return gr_call_end(&c, st);
}

GR_DECLARE(logreg_loss_grad_cuda);
/* Set by every recorded logreg_loss_grad_cuda call: how often the host
 * waited for the device inside it (dl/device.h's counters, taken around the
 * real call in the worker; the judge reads the record). */
uint64_t gr_logreg_cuda_waits;

dl_status GR_FN(logreg_loss_grad_cuda)(const dl_device *dev, const float *dX, const float *dy, size_t n, size_t d,
                                       const float *dw, float b, float lambda, float *dgrad_w, float *dgrad_b,
                                       double *dloss, float *dwork)
{
    gr_call c;
    gr_call_begin(&c, "logreg_loss_grad_cuda", T5);
    dl_status st = DL_OK;
    uint64_t waits = 0;
    if (gr_call_live(&c)) {
        dl_dev_stats before, after;
        dl_dev_stats_get(&before);
        st = GR_REAL(logreg_loss_grad_cuda)(dev, dX, dy, n, d, dw, b, lambda, dgrad_w, dgrad_b, dloss, dwork);
        dl_dev_stats_get(&after);
        waits = after.syncs - before.syncs;
    }
    gr_out(&c, &waits, sizeof waits);
    gr_logreg_cuda_waits = waits;
    gr_out_dev(&c, dev, dgrad_w, d * sizeof *dgrad_w); // each copy waits for the queued work
    gr_out_dev(&c, dev, dgrad_b, sizeof *dgrad_b);
    gr_out_dev(&c, dev, dloss, sizeof *dloss);
    gr_out_dev(&c, dev, dwork, n * sizeof *dwork); // r, which the engine counts right predictions from
    return gr_call_end(&c, st);
}

// ---- training: the engine's observer is a callback into the test ----

enum { CB_OBSERVE = 1 };

typedef struct observer {
    void (*fn)(void *ctx, const float *X, const float *y, const size_t *idx, size_t n);
    void *ctx;
    const logreg_engine *e;
} observer;

/* In the worker: records the rows of each gradient call (a mini-batch by its
 * indices, the resident set by reference, other rows in full), then passes
 * them on. */
static void record_observe(void *ctx, const float *X, const float *y, const size_t *idx, size_t n)
{
    observer *o = ctx;
    gr_call *c = gr_call_current();
    gr_cb_begin(c, CB_OBSERVE);
    size_t meta[3] = {n, X == o->e->X && y == o->e->y, idx != NULL};
    gr_out(c, meta, sizeof meta);
    if (meta[2]) {
        gr_out(c, (void *)idx, n * sizeof *idx);
    } else if (!meta[1]) {
        gr_out(c, (void *)X, n * o->e->d * sizeof *X);
        gr_out(c, (void *)y, n * sizeof *y);
    }
    o->fn(o->ctx, X, y, idx, n);
}

/* In the judge: the same callbacks, in the same order, on the recorded rows. */
static void replay_observe(gr_call *c, logreg_engine *e)
{
    int id;
    while (gr_cb_next(c, &id)) {
        size_t meta[3];
        gr_out(c, meta, sizeof meta);
        if (meta[0] > (size_t)1 << 32) // the engine takes at most 2^31 - 1 rows: only a forged record has more
            GR_FAIL("grader: the recording has an engine call on %zu rows", meta[0]);
        if (meta[2]) { // indices into the resident set
            size_t *idx = malloc((meta[0] + 1) * sizeof *idx);
            gr_out(c, idx, meta[0] * sizeof *idx);
            if (e->observe != NULL)
                e->observe(e->observe_ctx, e->X, e->y, idx, meta[0]);
            free(idx);
            continue;
        }
        if (meta[1]) {
            if (e->observe != NULL)
                e->observe(e->observe_ctx, e->X, e->y, NULL, meta[0]);
            continue;
        }
        float *X = malloc((meta[0] * e->d + 1) * sizeof *X), *y = malloc((meta[0] + 1) * sizeof *y);
        gr_out(c, X, meta[0] * e->d * sizeof *X);
        gr_out(c, y, meta[0] * sizeof *y);
        if (e->observe != NULL)
            e->observe(e->observe_ctx, X, y, NULL, meta[0]);
        free(X);
        free(y);
    }
}

GR_DECLARE(logreg_train);
dl_status GR_FN(logreg_train)(logreg_engine *e, const float *Xval, const float *yval, size_t nval,
                              const logreg_config *cfg, logreg_model *m, logreg_curve *curve)
{
    gr_call c;
    gr_call_begin(&c, "logreg_train", T3);
    dl_status st = DL_OK;
    if (gr_call_live(&c)) {
        observer o = {e->observe, e->observe_ctx, e};
        if (e->observe != NULL) {
            e->observe = record_observe;
            e->observe_ctx = &o;
        }
        stand_in = 1;
        st = GR_REAL(logreg_train)(e, Xval, yval, nval, cfg, m, curve);
        stand_in = 0;
        e->observe = o.fn;
        e->observe_ctx = o.ctx;
    } else {
        replay_observe(&c, e);
    }
    gr_out(&c, m->w, m->d * sizeof *m->w);
    gr_out(&c, &m->b, sizeof m->b);
    gr_out(&c, &curve->n, sizeof curve->n);
    size_t k = (size_t)curve->capacity;
    gr_out(&c, curve->train_loss, k * sizeof *curve->train_loss);
    gr_out(&c, curve->grad_norm, k * sizeof *curve->grad_norm);
    gr_out(&c, curve->val_loss, k * sizeof *curve->val_loss);
    gr_out(&c, curve->val_acc, k * sizeof *curve->val_acc);
    gr_out(&c, &e->calls, sizeof e->calls);
    return gr_call_end(&c, st);
}

// ---- prediction ----

GR_DECLARE(logreg_predict_proba);
dl_status GR_FN(logreg_predict_proba)(const float *X, size_t n, size_t d, const logreg_model *m, float *p)
{
    gr_call c;
    gr_call_begin(&c, "logreg_predict_proba", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(logreg_predict_proba)(X, n, d, m, p);
    gr_out(&c, p, n * sizeof *p);
    return gr_call_end(&c, st);
}

GR_DECLARE(logreg_accuracy);
dl_status GR_FN(logreg_accuracy)(const float *X, const float *y, size_t n, size_t d, const logreg_model *m, double *acc)
{
    gr_call c;
    gr_call_begin(&c, "logreg_accuracy", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c) && stand_in)
        st = gr_ref_accuracy_f32(X, y, n, d, m, acc);
    else if (gr_call_live(&c))
        st = GR_REAL(logreg_accuracy)(X, y, n, d, m, acc);
    gr_out(&c, acc, sizeof *acc);
    return gr_call_end(&c, st);
}
