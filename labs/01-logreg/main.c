/* main.c — lab 01's driver: load, split, scale, train, evaluate, plot.
 *
 *   build/labs/lab01                 your code on breast_cancer
 *   build/solutions/lab01            the reference
 *   build/labs/lab01 --no-scale      train on the raw features (the lesson)
 *   build/labs/lab01 --help          every flag
 *
 * Writes into --out: metrics.csv (the learning curve), scaling.csv (scaled vs
 * raw training loss at the same lr), summary.json, and the plots. Not a
 * student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, isfinite
#include <stdio.h> // printf, fprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy

#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load
#include "dl/device.h" // dl_device_open
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // summary.json
#include "dl/metrics.h" // metrics.csv
#include "dl/plot.h" // dl_plot
#include "dl/progress.h" // dl_progress_line
#include "dl/split.h" // dl_split_stratified
#include "dl/timer.h" // dl_now
#include "logreg.h"

typedef struct options {
    dl_args a;
    double lambda, tol;
    int no_scale, no_compare;
    double val_frac, test_frac;
} options;

typedef struct split_data {
    size_t n[3], d;
    float *X[3], *y[3];
} split_data;

typedef struct run {
    logreg_model m;
    logreg_curve c;
    double seconds;
} run;

static const char *const part_names[3] = {"train", "val", "test"};

static dl_status make_splits(const dl_dataset *ds, const options *o, split_data *sd)
{
    double fr[3] = {1.0 - o->val_frac - o->test_frac, o->val_frac, o->test_frac};
    dl_split sp;
    DL_TRY(dl_split_stratified(ds->y, ds->n, ds->n_classes, fr, 3, o->a.seed, &sp));
    memset(sd, 0, sizeof *sd);
    sd->d = ds->d;
    for (int p = 0; p < 3; p++) {
        size_t m = dl_split_size(&sp, p);
        if (m == 0) {
            dl_split_free(&sp);
            return dl_error_set(DL_ERR_ARG,
                                "the %s split is empty: %zu rows are too few for fractions "
                                "%.2f/%.2f/%.2f",
                                part_names[p], ds->n, fr[0], fr[1], fr[2]);
        }
        sd->n[p] = m;
        sd->X[p] = malloc(m * ds->d * sizeof(float));
        sd->y[p] = malloc(m * sizeof(float));
        if (sd->X[p] == NULL || sd->y[p] == NULL) {
            dl_split_free(&sp);
            return dl_error_set(DL_ERR_NOMEM, "out of memory for the %s split", part_names[p]);
        }
        for (size_t i = 0; i < m; i++) {
            size_t r = sp.idx[sp.offset[p] + i];
            memcpy(sd->X[p] + i * ds->d, ds->X + r * ds->d, ds->d * sizeof(float));
            sd->y[p][i] = (float)ds->y[r];
        }
    }
    dl_split_free(&sp);
    return DL_OK;
}

static void free_splits(split_data *sd)
{
    for (int p = 0; p < 3; p++) {
        free(sd->X[p]);
        free(sd->y[p]);
    }
}

static dl_status train_run(const dl_device *dev, const split_data *sd, const float *const *X, const logreg_config *cfg,
                           run *r)
{
    logreg_engine e;
    memset(r, 0, sizeof *r);
    DL_TRY(logreg_model_alloc(&r->m, sd->d));
    DL_TRY(logreg_curve_alloc(&r->c, cfg->epochs));
    DL_TRY(logreg_engine_init(&e, dev, X[0], sd->y[0], sd->n[0], sd->d));
    double t0 = dl_now();
    dl_status st = logreg_train(&e, X[1], sd->y[1], sd->n[1], cfg, &r->m, &r->c);
    dl_device_sync(dev);
    r->seconds = dl_now() - t0;
    logreg_engine_free(&e);
    if (st == DL_OK && (r->c.n < 1 || r->c.n > r->c.capacity))
        st = dl_error_set(DL_ERR_RANGE, "logreg_train recorded %d curve entries, expected 1 to %d", r->c.n,
                          r->c.capacity);
    return st;
}

static void free_run(run *r)
{
    logreg_model_free(&r->m);
    logreg_curve_free(&r->c);
}

static dl_status write_metrics(const char *out, const run *r)
{
    const char *cols[] = {"epoch", "train_loss", "val_loss", "val_acc", "grad_norm"};
    double *rows = malloc((size_t)r->c.n * 5 * sizeof *rows);
    if (rows == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->c.n; k++) {
        double row[5] = {k, r->c.train_loss[k], r->c.val_loss[k], r->c.val_acc[k], r->c.grad_norm[k]};
        memcpy(rows + (size_t)k * 5, row, sizeof row);
    }
    dl_status st = dl_csv_write(out, "metrics.csv", cols, 5, rows, r->c.n);
    free(rows);
    return st;
}

static dl_status write_scaling(const char *out, const run *scaled, const run *raw)
{
    const char *cols[] = {"epoch", "standardised", "raw_features"};
    int n = scaled->c.n > raw->c.n ? scaled->c.n : raw->c.n;
    double *rows = malloc((size_t)n * 3 * sizeof *rows);
    if (rows == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        double row[3] = {k, k < scaled->c.n ? scaled->c.train_loss[k] : NAN, k < raw->c.n ? raw->c.train_loss[k] : NAN};
        memcpy(rows + (size_t)k * 3, row, sizeof row);
    }
    dl_status st = dl_csv_write(out, "scaling.csv", cols, 3, rows, n);
    free(rows);
    return st;
}

static void write_curve_summary(dl_json *j, const char *key, const run *r)
{
    int last = r->c.n - 1;
    dl_json_object(j, key);
    dl_json_int(j, "epochs_run", last);
    dl_json_num(j, "final_train_loss", r->c.train_loss[last]);
    dl_json_num(j, "final_val_loss", r->c.val_loss[last]);
    dl_json_num(j, "final_val_acc", r->c.val_acc[last]);
    dl_json_num(j, "final_grad_norm", r->c.grad_norm[last]);
    dl_json_num(j, "seconds", r->seconds);
    dl_json_end_object(j);
}

static dl_status write_summary(const char *path, const options *o, const dl_data *data, const split_data *sd,
                               const dl_device *dev, const logreg_scaler *s, const run *main_run, const run *other,
                               double test_acc, double test_loss, const char *plots)
{
    dl_json j;
    DL_TRY(dl_json_open(&j, path));
    dl_json_object(&j, NULL);
    dl_json_str(&j, "lab", "01-logreg");
    dl_json_str(&j, "dataset", data->name);
    dl_json_str(&j, "source", data->source);
    dl_json_str(&j, "device", dl_device_describe(dev));
    dl_json_object(&j, "rows");
    for (int p = 0; p < 3; p++)
        dl_json_int(&j, part_names[p], (long long)sd->n[p]);
    dl_json_end_object(&j);
    dl_json_int(&j, "features", (long long)sd->d);
    dl_json_object(&j, "config");
    dl_json_num(&j, "lr", o->a.lr);
    dl_json_num(&j, "lambda", o->lambda);
    dl_json_int(&j, "epochs", o->a.epochs);
    dl_json_int(&j, "batch_size", o->a.batch_size);
    dl_json_num(&j, "tol", o->tol);
    dl_json_int(&j, "seed", (long long)o->a.seed);
    dl_json_bool(&j, "scaled", !o->no_scale);
    dl_json_end_object(&j);
    int last = main_run->c.n - 1;
    dl_json_int(&j, "epochs_run", last);
    dl_json_num(&j, "train_loss", main_run->c.train_loss[last]);
    dl_json_num(&j, "val_loss", main_run->c.val_loss[last]);
    dl_json_num(&j, "val_acc", main_run->c.val_acc[last]);
    dl_json_num(&j, "test_loss", test_loss);
    dl_json_num(&j, "test_accuracy", test_acc);
    dl_json_num(&j, "train_seconds", main_run->seconds);
    dl_json_f32s(&j, "weights", main_run->m.w, sd->d);
    dl_json_num(&j, "bias", main_run->m.b);
    dl_json_object(&j, "scaler");
    dl_json_bool(&j, "used", !o->no_scale);
    dl_json_f32s(&j, "mean", s->mean, sd->d);
    dl_json_f32s(&j, "std", s->scale, sd->d);
    dl_json_end_object(&j);
    if (other != NULL)
        write_curve_summary(&j, o->no_scale ? "standardised_run" : "raw_features_run", other);
    dl_json_str(&j, "plots", plots);
    dl_json_end_object(&j);
    return dl_json_close(&j);
}

static void draw(const options *o, const char *out, int have_scaling, char *plots, size_t len)
{
    char vars[2400];
    plots[0] = '\0';
    snprintf(vars, sizeof vars, "data='%s/metrics.csv'; subtitle='%s, lr %g, lambda %g'", out,
             o->no_scale ? "raw features" : "standardised", o->a.lr, o->lambda);
    dl_plot_listed("labs/01-logreg/plots/learning_curve.gp", o->a.plot, out, "learning_curve", vars, "lab01", plots,
                   len);
    if (!have_scaling)
        return;
    snprintf(vars, sizeof vars, "data='%s/scaling.csv'; lr=%g", out, o->a.lr);
    dl_plot_listed("labs/01-logreg/plots/scaling.gp", o->a.plot, out, "scaling", vars, "lab01", plots, len);
}

static int fail(dl_status st)
{
    fprintf(stderr, "lab01: error: %s\n", dl_last_error()[0] ? dl_last_error() : dl_status_str(st));
    return dl_exit_code(st);
}

int main(int argc, char **argv)
{
    options o;
    dl_args_defaults(&o.a);
    o.a.lr = LOGREG_DEFAULT_LR;
    o.a.epochs = LOGREG_DEFAULT_EPOCHS;
    o.a.out = "build/run/01-logreg";
    o.lambda = LOGREG_DEFAULT_LAMBDA;
    o.tol = LOGREG_DEFAULT_TOL;
    o.no_scale = 0;
    o.no_compare = 0;
    o.val_frac = 0.2;
    o.test_frac = 0.2;
    const dl_opt extra[] = {
        {"lambda", DL_OPT_DOUBLE, &o.lambda, "X", "L2 strength (bias not penalised)", NULL, 0, 1e6},
        {"tol", DL_OPT_DOUBLE, &o.tol, "X", "stop once |grad J| < tol; 0 runs every epoch", NULL, 0, 1e6},
        {"no-scale", DL_OPT_FLAG, &o.no_scale, NULL, "train on the raw features (no scaler)", NULL, 1, 0},
        {"no-compare", DL_OPT_FLAG, &o.no_compare, NULL, "skip the second run (raw vs standardised)", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o.val_frac, "X", "validation share of the rows", NULL, 0.01, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o.test_frac, "X", "test share of the rows", NULL, 0.01, 0.5},
    };
    int rc = dl_cli_parse(argc, argv, "lab01",
                          "Lab 01: logistic regression with feature scaling. Trains on a seeded "
                          "stratified train/val/test split, writes metrics.csv, scaling.csv, "
                          "summary.json and plots into --out.",
                          &o.a, extra, sizeof extra / sizeof extra[0]);
    if (rc == DL_CLI_HELP)
        return 0;
    if (rc == DL_CLI_ERROR || dl_cli_single_process(argv[0]) == DL_CLI_ERROR)
        return 2;

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
    split_data sd;
    st = make_splits(ds, &o, &sd);
    if (st != DL_OK) {
        dl_data_free(&data);
        return fail(st);
    }
    dl_device dev;
    st = dl_device_open(o.a.device, &dev);
    if (st != DL_OK) {
        free_splits(&sd);
        dl_data_free(&data);
        return fail(st);
    }
    st = dl_mkdir_p(o.a.out);
    char summary[1100];
    snprintf(summary, sizeof summary, "%s/summary.json", o.a.out);
    remove(summary); // a stale summary must not look like this run's
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
    run main_run, other;
    memset(&main_run, 0, sizeof main_run);
    memset(&other, 0, sizeof other);
    int have_other = !o.no_compare;
    if (st == DL_OK)
        st = train_run(&dev, &sd, o.no_scale ? raw : scaled, &cfg, &main_run);
    if (st == DL_OK && have_other)
        st = train_run(&dev, &sd, o.no_scale ? scaled : raw, &cfg, &other);
    double test_acc = NAN, test_loss = NAN;
    if (st == DL_OK) {
        const float *Xt = o.no_scale ? sd.X[2] : Xs[2];
        st = logreg_accuracy(Xt, sd.y[2], sd.n[2], sd.d, &main_run.m, &test_acc);
        logreg_engine e;
        float *g = malloc(sd.d * sizeof *g), gb;
        if (st == DL_OK)
            st = logreg_engine_init(&e, dl_cpu(), Xt, sd.y[2], sd.n[2], sd.d);
        if (st == DL_OK) {
            st = logreg_engine_grad(&e, Xt, sd.y[2], sd.n[2], main_run.m.w, main_run.m.b, 0.0f, g, &gb, &test_loss);
            logreg_engine_free(&e);
        }
        free(g);
    }

    // ---- report ----
    if (st == DL_OK) {
        const logreg_curve *c = &main_run.c;
        int last = c->n - 1;
        for (int k = 0; k <= last; k++) {
            if (k == 0 || k == last || k == 1 || (k & (k - 1)) == 0)
                dl_progress_line(&pr, 0, "epoch %5d  train_loss %.6f  val_loss %.6f  val_acc %.4f  |grad| %.3g", k,
                                 c->train_loss[k], c->val_loss[k], c->val_acc[k], c->grad_norm[k]);
        }
        dl_progress_line(&pr, 1, "lab01: %s after %d epochs (%.3f s): train loss %.6f, test accuracy %.4f",
                         c->grad_norm[last] < o.tol ? "converged" : "stopped", last, main_run.seconds,
                         c->train_loss[last], test_acc);
        if (have_other)
            dl_progress_line(&pr, 0, "lab01: same lr on %s: train loss %.6g after %d epochs",
                             o.no_scale ? "standardised features" : "raw features", other.c.train_loss[other.c.n - 1],
                             other.c.n - 1);
        if (!isfinite(c->train_loss[last]))
            fprintf(stderr,
                    "lab01: warning: the training loss is %g: lr %g is too large, or the loss is "
                    "not numerically stable\n",
                    c->train_loss[last], o.a.lr);
    }
    if (st == DL_OK)
        st = write_metrics(o.a.out, &main_run);
    if (st == DL_OK && have_other)
        st = write_scaling(o.a.out, o.no_scale ? &other : &main_run, o.no_scale ? &main_run : &other);
    char plots[256] = "";
    if (st == DL_OK)
        draw(&o, o.a.out, have_other, plots, sizeof plots);
    if (st == DL_OK)
        st = write_summary(summary, &o, &data, &sd, &dev, &s, &main_run, have_other ? &other : NULL, test_acc,
                           test_loss, plots);
    if (st == DL_OK && o.a.json != NULL)
        st = write_summary(o.a.json, &o, &data, &sd, &dev, &s, &main_run, have_other ? &other : NULL, test_acc,
                           test_loss, plots);
    if (st == DL_OK)
        dl_progress_line(&pr, 0, "lab01: wrote %s/{metrics.csv,%ssummary.json%s%s}", o.a.out,
                         have_other ? "scaling.csv," : "", plots[0] ? "," : "", plots);
    dl_progress_end(&pr);
    free_run(&main_run);
    free_run(&other);
    for (int p = 0; p < 3; p++)
        free(Xs[p]);
    logreg_scaler_free(&s);
    free_splits(&sd);
    dl_device_close(&dev);
    dl_data_free(&data);
    return st == DL_OK ? 0 : fail(st);
}
