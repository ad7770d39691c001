/* main.c — lab 01's driver: load, split, scale, train, evaluate, plot.
 *
 *   build/labs/lab01                 your code on breast_cancer
 *   build/solutions/lab01            the reference
 *   build/labs/lab01 --no-scale      train on the raw features (the lesson)
 *   build/labs/lab01 --help          every flag
 *
 * Writes into --out: metrics.csv (the learning curve), scaling.csv (scaled vs
 * raw training loss at the same lr), summary.json, and the plots; outputs.c
 * writes them. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, isfinite
#include <stdio.h> // fprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load
#include "dl/device.h" // dl_device_open_spec
#include "dl/progress.h" // dl_progress_line
#include "dl/summary.h" // dl_summary_prepare
#include "dl/timer.h" // dl_now
#include "logreg.h"
#include "outputs.h" // lab01_split_make, lab01_write_outputs

/* Trains on X (train, val, test rows of the chosen features) with cfg into
 * r, timed; r is freed by free_run, also after an error. */
static dl_status train_run(const dl_device *dev, const lab01_split *sd, const float *const *X, const logreg_config *cfg,
                           lab01_run *r)
{
    logreg_engine e;
    memset(r, 0, sizeof *r);
    DL_TRY(logreg_model_alloc(&r->m, sd->d));
    DL_TRY(logreg_curve_alloc(&r->c, cfg->epochs));
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
    st = logreg_train(&e, X[1], sd->y[1], sd->n[1], cfg, &r->m, &r->c);
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

/* Frees what train_run allocated. */
static void free_run(lab01_run *r)
{
    logreg_model_free(&r->m);
    logreg_curve_free(&r->c);
}

/* The model's accuracy and unpenalised loss on the n test rows Xt, scored once on the CPU. */
static dl_status test_scores(const float *Xt, const float *yt, size_t n, size_t d, const logreg_model *m, double *acc,
                             double *loss)
{
    DL_TRY(logreg_accuracy(Xt, yt, n, d, m, acc));
    logreg_engine e;
    float *g = malloc(d * sizeof *g), gb;
    dl_status st = logreg_engine_init(&e, dl_cpu(), Xt, yt, n, d);
    if (st == DL_OK) {
        st = logreg_engine_grad(&e, Xt, yt, n, m->w, m->b, 0.0f, g, &gb, loss);
        logreg_engine_free(&e);
    }
    free(g);
    return st;
}

/* The curve at epochs 0, 1, 2, 4, 8, ... and the last, the end of training, the other run's loss. */
static void report(dl_progress *pr, const lab01_options *o, const lab01_run *main_run, const lab01_run *other,
                   double test_acc)
{
    const logreg_curve *c = &main_run->c;
    int last = c->n - 1;
    for (int k = 0; k <= last; k++) {
        if (k == 0 || k == last || k == 1 || (k & (k - 1)) == 0)
            dl_progress_line(pr, 0, "epoch %5d  train_loss %.6f  val_loss %.6f  val_acc %.4f  |grad| %.3g", k,
                             c->train_loss[k], c->val_loss[k], c->val_acc[k], c->grad_norm[k]);
    }
    dl_progress_line(pr, 1, "lab01: %s after %d epochs (%.3f s): train loss %.6f, test accuracy %.4f",
                     c->grad_norm[last] < o->tol ? "converged" : "stopped", last, main_run->seconds,
                     c->train_loss[last], test_acc);
    if (other != NULL)
        dl_progress_line(pr, 0, "lab01: same lr on %s: train loss %.6g after %d epochs",
                         o->no_scale ? "standardised features" : "raw features", other->c.train_loss[other->c.n - 1],
                         other->c.n - 1);
    if (!isfinite(c->train_loss[last]))
        fprintf(stderr,
                "lab01: warning: the training loss is %g: lr %g is too large, or the loss is "
                "not numerically stable\n",
                c->train_loss[last], o->a.lr);
}

/* Says what failed on stderr; the exit code of st. */
static int fail(dl_status st)
{
    fprintf(stderr, "lab01: error: %s\n", dl_last_error()[0] ? dl_last_error() : dl_status_str(st));
    return dl_exit_code(st);
}

/* Parses the flags into o: DL_CLI_RUN, DL_CLI_HELP or DL_CLI_ERROR (dl/cli.h). */
static int parse(int argc, char **argv, lab01_options *o)
{
    dl_args_defaults(&o->a);
    o->a.lr = LOGREG_DEFAULT_LR;
    o->a.epochs = LOGREG_DEFAULT_EPOCHS;
    o->a.out = "build/run/01-logreg";
    o->lambda = LOGREG_DEFAULT_LAMBDA;
    o->tol = LOGREG_DEFAULT_TOL;
    o->no_scale = 0;
    o->no_compare = 0;
    o->val_frac = 0.2;
    o->test_frac = 0.2;
    const dl_opt extra[] = {
        {"lambda", DL_OPT_DOUBLE, &o->lambda, "X", "L2 strength (bias not penalised)", NULL, 0, 1e6},
        {"tol", DL_OPT_DOUBLE, &o->tol, "X", "stop once |grad J| < tol; 0 runs every epoch", NULL, 0, 1e6},
        {"no-scale", DL_OPT_FLAG, &o->no_scale, NULL, "train on the raw features (no scaler)", NULL, 1, 0},
        {"no-compare", DL_OPT_FLAG, &o->no_compare, NULL, "skip the second run (raw vs standardised)", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o->val_frac, "X", "validation share of the rows", NULL, 0.01, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o->test_frac, "X", "test share of the rows", NULL, 0.01, 0.5},
    };
    int rc = dl_cli_parse(argc, argv, "lab01",
                          "Lab 01: logistic regression with feature scaling. Trains on a seeded "
                          "stratified train/val/test split, writes metrics.csv, scaling.csv, "
                          "summary.json and plots into --out.",
                          &o->a, extra, sizeof extra / sizeof extra[0]);
    return rc == DL_CLI_RUN && dl_cli_single_process(argv[0]) == DL_CLI_ERROR ? DL_CLI_ERROR : rc;
}

/* Parse, load, split, scale on the training rows, train (and the same lr on
 * the other features), score test once, report and write the files. */
int main(int argc, char **argv)
{
    lab01_options o;
    int rc = parse(argc, argv, &o);
    if (rc != DL_CLI_RUN)
        return rc == DL_CLI_HELP ? 0 : 2;

    // ---- data ----
    dl_data data;
    dl_status st = dl_data_load(o.a.data, &data);
    if (st != DL_OK)
        return fail(st);
    dl_dataset *ds = &data.train;
    if (ds->n_classes != 2) {
        dl_error_set(DL_ERR_ARG,
                     "--data %s has %d classes; lab 01 is binary classification: use "
                     "breast_cancer, synthetic:classes=2,... or a CSV whose last column is 0/1",
                     o.a.data, ds->n_classes);
        dl_data_free(&data);
        return fail(DL_ERR_ARG);
    }
    lab01_split sd;
    st = lab01_split_make(ds, &o, &sd);
    if (st != DL_OK) {
        dl_data_free(&data);
        return fail(st);
    }
    dl_device dev;
    st = dl_device_open_spec(&o.a.dev, &dev);
    if (st != DL_OK) {
        lab01_split_free(&sd);
        dl_data_free(&data);
        return fail(st);
    }
    st = dl_summary_prepare(o.a.out); // a stale summary must not look like this run's
    dl_progress pr;
    dl_progress_begin(&pr, o.a.epochs, 1, o.a.quiet);
    dl_progress_line(&pr, 0, "lab01: %s, %zu train / %zu val / %zu test rows, %zu features, device %s", data.name,
                     sd.n[0], sd.n[1], sd.n[2], sd.d, dl_device_describe(&dev));

    // ---- scaler: fitted on the training rows only ----
    logreg_scaler s = {0, NULL, NULL};
    float *Xs[3] = {NULL, NULL, NULL};
    if (st == DL_OK)
        st = logreg_scaler_alloc(&s, sd.d);
    if (st == DL_OK)
        st = logreg_scaler_fit(sd.X[0], sd.n[0], sd.d, &s);
    for (int p = 0; p < 3 && st == DL_OK; p++) {
        Xs[p] = malloc(sd.n[p] * sd.d * sizeof(float));
        st = Xs[p] ? logreg_scaler_transform(&s, sd.X[p], sd.n[p], Xs[p]) : dl_error_set(DL_ERR_NOMEM, "out of memory");
    }

    // ---- training: the main run, and the same lr on the other features ----
    logreg_config cfg = {o.a.lr, o.lambda, o.a.epochs, (size_t)o.a.batch_size, o.tol, o.a.seed};
    const float *const scaled[3] = {Xs[0], Xs[1], Xs[2]};
    const float *const raw[3] = {sd.X[0], sd.X[1], sd.X[2]};
    lab01_run main_run, other;
    memset(&main_run, 0, sizeof main_run);
    memset(&other, 0, sizeof other);
    int have_other = !o.no_compare;
    if (st == DL_OK)
        st = train_run(&dev, &sd, o.no_scale ? raw : scaled, &cfg, &main_run);
    if (st == DL_OK && have_other)
        st = train_run(&dev, &sd, o.no_scale ? scaled : raw, &cfg, &other);
    double test_acc = NAN, test_loss = NAN;
    if (st == DL_OK)
        st = test_scores(o.no_scale ? sd.X[2] : Xs[2], sd.y[2], sd.n[2], sd.d, &main_run.m, &test_acc, &test_loss);

    // ---- report and files ----
    if (st == DL_OK)
        report(&pr, &o, &main_run, have_other ? &other : NULL, test_acc);
    lab01_results res = {&o, &data, &sd, &dev, &s, &main_run, have_other ? &other : NULL, test_acc, test_loss};
    char plots[256] = "";
    if (st == DL_OK)
        st = lab01_write_outputs(&res, plots, sizeof plots);
    if (st == DL_OK)
        dl_progress_line(&pr, 0, "lab01: wrote %s/{metrics.csv,%ssummary.json%s%s}", o.a.out,
                         have_other ? "scaling.csv," : "", plots[0] ? "," : "", plots);
    dl_progress_end(&pr);
    free_run(&main_run);
    free_run(&other);
    for (int p = 0; p < 3; p++)
        free(Xs[p]);
    logreg_scaler_free(&s);
    lab01_split_free(&sd);
    dl_device_close(&dev);
    dl_data_free(&data);
    return st == DL_OK ? 0 : fail(st);
}
