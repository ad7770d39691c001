/* train.c — lab 01's driver around the student's functions: the scaler
 * fitted and applied, a training run timed with its device counters, and the
 * test rows scored once (see outputs.h). Not a student file; it calls the
 * student's functions, so the grader does not link it. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/timer.h" // dl_now
#include "outputs.h"

dl_status lab01_scale(lab01_state *S)
{
    const lab01_split *sd = &S->sd;
    DL_TRY(logreg_scaler_alloc(&S->s, sd->d));
    DL_TRY(logreg_scaler_fit(sd->X[0], sd->n[0], sd->d, &S->s));
    for (int p = 0; p < 3; p++) {
        S->Xs[p] = malloc(sd->n[p] * sd->d * sizeof(float));
        if (S->Xs[p] == NULL)
            return dl_error_set(DL_ERR_NOMEM, "out of memory");
        DL_TRY(logreg_scaler_transform(&S->s, sd->X[p], sd->n[p], S->Xs[p]));
    }
    return DL_OK;
}

dl_status lab01_train_run(const dl_device *dev, const lab01_state *S, const float *const *X, const dl_args *a,
                          lab01_run *r)
{
    const lab01_split *sd = &S->sd;
    logreg_config cfg = {a->lr, S->lambda, a->epochs, (size_t)a->batch_size, S->tol, a->seed};
    logreg_engine e;
    memset(r, 0, sizeof *r);
    DL_TRY(logreg_model_alloc(&r->m, sd->d));
    DL_TRY(logreg_curve_alloc(&r->c, cfg.epochs));
    dl_dev_stats_get(&r->io.start);
    DL_TRY(logreg_engine_init(&e, dev, X[0], sd->y[0], sd->n[0], sd->d));
    dl_status st = logreg_engine_hold(&e, X[1], sd->y[1], sd->n[1]); // the validation rows: uploaded once
    if (st != DL_OK) {
        logreg_engine_free(&e);
        return st;
    }
    dl_dev_stats_get(&r->io.resident); // the data is where the model reads it
    e.step_io = &r->io; // and the engine adds each mini-batch step's counters
    double t0 = dl_now();
    st = logreg_train(&e, X[1], sd->y[1], sd->n[1], &cfg, &r->m, &r->c);
    dl_dev_stats_get(&r->io.end);
    r->io.epochs = r->c.n - 1;
    dl_device_sync(dev);
    r->seconds = dl_now() - t0;
    logreg_engine_free(&e);
    if (st == DL_OK && (r->c.n < 1 || r->c.n > r->c.capacity))
        st = dl_error_set(DL_ERR_RANGE, "logreg_train recorded %d curve entries, expected 1 to %d", r->c.n,
                          r->c.capacity);
    return st;
}

dl_status lab01_test_scores(lab01_state *S)
{
    const lab01_split *sd = &S->sd;
    const float *Xt = S->no_scale ? sd->X[2] : S->Xs[2], *yt = sd->y[2];
    size_t n = sd->n[2], d = sd->d;
    DL_TRY(logreg_accuracy(Xt, yt, n, d, &S->main_run.m, &S->test_acc));
    logreg_engine e;
    float *g = malloc(d * sizeof *g), gb;
    dl_status st = logreg_engine_init(&e, dl_cpu(), Xt, yt, n, d);
    if (st == DL_OK) {
        st = logreg_engine_grad(&e, Xt, yt, n, S->main_run.m.w, S->main_run.m.b, 0.0f, g, &gb, &S->test_loss);
        logreg_engine_free(&e);
    }
    free(g);
    return st;
}
