/* outputs.c — lab 01's driver plumbing: the split gathered into rows, and
 * the files (see outputs.h). Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, isfinite
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/json.h" // summary.json
#include "dl/metrics.h" // DL_CSV_SCHEMA, dl_csv_write
#include "dl/plot.h" // dl_plots_draw
#include "dl/split.h" // dl_split_stratified
#include "dl/progress.h" // dl_progress_line
#include "outputs.h"

static const char *const part_names[3] = {"train", "val", "test"};

// ---- the flags, the split, the teardown ----

void lab01_defaults(dl_engine *E)
{
    lab01_state *o = E->ctx;
    E->a.lr = LOGREG_DEFAULT_LR;
    E->a.epochs = LOGREG_DEFAULT_EPOCHS;
    o->lambda = LOGREG_DEFAULT_LAMBDA;
    o->tol = LOGREG_DEFAULT_TOL;
    o->val_frac = 0.2;
    o->test_frac = 0.2;
}

int lab01_options(dl_engine *E, dl_opt *out)
{
    lab01_state *o = E->ctx;
    const dl_opt opts[] = {
        {"lambda", DL_OPT_DOUBLE, &o->lambda, "X", "L2 strength (bias not penalised)", NULL, 0, 1e6},
        {"tol", DL_OPT_DOUBLE, &o->tol, "X", "stop once |grad J| < tol; 0 runs every epoch", NULL, 0, 1e6},
        {"no-scale", DL_OPT_FLAG, &o->no_scale, NULL, "train on the raw features (no scaler)", NULL, 1, 0},
        {"no-compare", DL_OPT_FLAG, &o->no_compare, NULL, "skip the second run (raw vs standardised)", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o->val_frac, "X", "validation share of the rows", NULL, 0.01, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o->test_frac, "X", "test share of the rows", NULL, 0.01, 0.5},
    };
    memcpy(out, opts, sizeof opts);
    return (int)(sizeof opts / sizeof opts[0]);
}

dl_status lab01_split_make(const dl_dataset *ds, lab01_state *S, uint64_t seed)
{
    double fr[3] = {1.0 - S->val_frac - S->test_frac, S->val_frac, S->test_frac};
    lab01_split *sd = &S->sd;
    dl_split sp;
    DL_TRY(dl_split_stratified(ds->y, ds->n, ds->n_classes, fr, 3, seed, &sp));
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

void lab01_teardown(dl_engine *E)
{
    lab01_state *S = E->ctx;
    lab01_run *runs[2] = {&S->main_run, &S->other};
    for (int k = 0; k < 2; k++) {
        logreg_model_free(&runs[k]->m);
        logreg_curve_free(&runs[k]->c);
    }
    for (int p = 0; p < 3; p++) {
        free(S->sd.X[p]);
        free(S->sd.y[p]);
        free(S->Xs[p]);
    }
    logreg_scaler_free(&S->s);
}

// ---- the CSVs ----

#define SCALING(X) X(S_EPOCH, "epoch") X(S_STANDARDISED, "standardised") X(S_RAW, "raw_features")
DL_CSV_SCHEMA(scaling, SCALING);

/* scaling.csv: the training loss per epoch on standardised and on raw
 * features (NAN after a run stopped). DL_ERR_NOMEM or dl_csv_write's failure. */
static dl_status write_scaling(const char *out, const lab01_run *scaled, const lab01_run *raw)
{
    int n = scaled->c.n > raw->c.n ? scaled->c.n : raw->c.n;
    double(*rows)[SCALING_NCOLS] = malloc((size_t)n * sizeof *rows);
    if (rows == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        double row[SCALING_NCOLS] = {[S_EPOCH] = k,
                                     [S_STANDARDISED] = k < scaled->c.n ? scaled->c.train_loss[k] : NAN,
                                     [S_RAW] = k < raw->c.n ? raw->c.train_loss[k] : NAN};
        memcpy(rows[k], row, sizeof row);
    }
    dl_status st = dl_csv_write(out, "scaling.csv", scaling, rows[0], n);
    free(rows);
    return st;
}

// ---- the report ----

dl_status lab01_report(dl_engine *E)
{
    const lab01_state *S = E->ctx;
    const logreg_curve *c = &S->main_run.c;
    int last = c->n - 1;
    for (int k = 0; k <= last; k++) {
        if (k == 0 || k == last || k == 1 || (k & (k - 1)) == 0)
            dl_progress_line(&E->pr, 0, "epoch %5d  train_loss %.6f  val_loss %.6f  val_acc %.4f  |grad| %.3g", k,
                             c->train_loss[k], c->val_loss[k], c->val_acc[k], c->grad_norm[k]);
    }
    dl_progress_line(&E->pr, 1, "lab01: %s after %d epochs (%.3f s): train loss %.6f, test accuracy %.4f",
                     c->grad_norm[last] < S->tol ? "converged" : "stopped", last, S->main_run.seconds,
                     c->train_loss[last], S->test_acc);
    if (S->have_other)
        dl_progress_line(&E->pr, 0, "lab01: same lr on %s: train loss %.6g after %d epochs",
                         S->no_scale ? "standardised features" : "raw features",
                         S->other.c.train_loss[S->other.c.n - 1], S->other.c.n - 1);
    if (!isfinite(c->train_loss[last]))
        fprintf(stderr,
                "lab01: warning: the training loss is %g: lr %g is too large, or the loss is "
                "not numerically stable\n",
                c->train_loss[last], E->a.lr);
    for (int k = 0; k < c->n; k++) {
        double row[LAB01_METRICS_NCOLS] = {[LAB01_EPOCH] = k,
                                           [LAB01_TRAIN_LOSS] = c->train_loss[k],
                                           [LAB01_VAL_LOSS] = c->val_loss[k],
                                           [LAB01_VAL_ACC] = c->val_acc[k],
                                           [LAB01_GRAD_NORM] = c->grad_norm[k]};
        DL_TRY(dl_table_add(&E->metrics, row));
    }
    return DL_OK;
}

// ---- the plots ----

/* v as a gnuplot number: "NaN" for a value that is not finite (gnuplot has
 * no inf, and reads "nan" as an undefined variable). */
static const char *gp_num(double v, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, "%.17g", v);
    else
        snprintf(buf, len, "NaN");
    return buf;
}

/* The first epoch whose value in t (n of them) is not finite; -1 when every one is. */
static int first_nonfinite(const double *t, int n)
{
    for (int k = 0; k < n; k++) {
        if (!isfinite(t[k]))
            return k;
    }
    return -1;
}

/* 1 when the curve t (n epochs) goes up and down at most epochs of its second
 * half: drawn as a line, it would be a solid band; drawn as dots, its two
 * levels show. */
static int zigzags(const double *t, int n)
{
    int turns = 0, steps = 0;
    for (int k = n / 2 + 2; k < n; k++, steps++)
        turns += (t[k] - t[k - 1]) * (t[k - 1] - t[k - 2]) < 0;
    return steps >= 20 && turns * 2 > steps;
}

/* "full batch" or "batch 32 (11 steps per epoch)": a run's batch, for its titles. */
static void batch_words(const dl_args *a, size_t rows, char *buf, size_t len)
{
    size_t b = (size_t)a->batch_size;
    if (b == 0 || b >= rows)
        snprintf(buf, len, "full batch");
    else
        snprintf(buf, len, "batch %zu (%zu steps per epoch)", b, (rows + b - 1) / b);
}

/* learning_curve and, with the comparison, scaling (its key gives each
 * run's last epoch and training loss, the numbers of summary.json). Without
 * the comparison an earlier run's scaling plot goes. A loss that is NaN or
 * inf is passed as NaN, and the plots say from which epoch. Cannot fail. */
void lab01_plots(dl_engine *E, dl_plots *p)
{
    const lab01_state *o = E->ctx, *r = o;
    const char *out = E->a.out;
    const logreg_curve *c = &r->main_run.c;
    char batch[80], vmin[40], a[40], b[40], hs[40];
    batch_words(&E->a, r->sd.n[0], batch, sizeof batch);
    // the validation loss's minimum, where the model fits the unseen rows best
    int lo = -1;
    double acc_min = 1;
    for (int k = 0; k < c->n; k++) {
        if (isfinite(c->val_loss[k]) && (lo < 0 || c->val_loss[k] < c->val_loss[lo]))
            lo = k;
        acc_min = c->val_acc[k] < acc_min ? c->val_acc[k] : acc_min;
    }
    dl_plots_draw(p, "learning_curve",
                  "data='%s/metrics.csv'; features='%s'; lr=%g; lambda=%g; batch='%s'; last=%d; vmin=%s; "
                  "vmin_epoch=%d; nan_from=%d; zigzag=%d; acc_min=%s",
                  out, o->no_scale ? "raw features" : "standardised features", E->a.lr, o->lambda, batch, c->n - 1,
                  gp_num(lo >= 0 ? c->val_loss[lo] : NAN, vmin, sizeof vmin), lo, first_nonfinite(c->train_loss, c->n),
                  zigzags(c->train_loss, c->n), gp_num(acc_min, a, sizeof a));
    if (r->have_other) {
        const lab01_run *sc = o->no_scale ? &r->other : &r->main_run, *raw = o->no_scale ? &r->main_run : &r->other;
        int sn = sc->c.n - 1, rn = raw->c.n - 1;
        double lo_std = INFINITY, hi_std = 0; // the features' spread: why one step cannot suit them all
        for (size_t f = 0; f < r->sd.d; f++) {
            lo_std = r->s.scale[f] < lo_std ? r->s.scale[f] : lo_std;
            hi_std = r->s.scale[f] > hi_std ? r->s.scale[f] : hi_std;
        }
        dl_plots_draw(p, "scaling",
                      "data='%s/scaling.csv'; lr=%g; batch='%s'; max_epochs=%d; s_n=%d; s_loss=%s; r_n=%d; "
                      "r_loss=%s; s_nan=%d; r_nan=%d; zigzag=%d; std_lo=%s; std_hi=%s",
                      out, E->a.lr, batch, E->a.epochs, sn, gp_num(sc->c.train_loss[sn], a, sizeof a), rn,
                      gp_num(raw->c.train_loss[rn], b, sizeof b), first_nonfinite(sc->c.train_loss, sc->c.n),
                      first_nonfinite(raw->c.train_loss, raw->c.n), zigzags(raw->c.train_loss, raw->c.n),
                      gp_num(r->sd.d > 0 ? lo_std : NAN, vmin, sizeof vmin), gp_num(hi_std, hs, sizeof hs));
    } else {
        dl_plots_skip(p, "scaling");
    }
}

// ---- summary.json ----

// the numbers slides/01-logreg.md quotes that summary.json held only in arrays (report --fill reads no arrays)

/* The main run's curve read out: the loss after one epoch, the validation
 * loss's minimum and where, the validation accuracy at w = 0 and at its
 * best, and what stopped the run. */
static void curve_points(dl_json *j, const lab01_run *r, double tol)
{
    const logreg_curve *c = &r->c;
    int last = c->n - 1, lo = 0, best = 0;
    for (int k = 1; k < c->n; k++) {
        lo = c->val_loss[k] < c->val_loss[lo] ? k : lo;
        best = c->val_acc[k] > c->val_acc[best] ? k : best;
    }
    dl_json_object(j, "curve");
    dl_json_num(j, "train_loss_epoch1", c->train_loss[c->n > 1 ? 1 : 0]);
    dl_json_num(j, "val_loss_min", c->val_loss[lo]);
    dl_json_int(j, "val_loss_min_epoch", lo);
    dl_json_num(j, "val_acc_start", c->val_acc[0]);
    dl_json_num(j, "val_acc_max", c->val_acc[best]);
    dl_json_str(j, "stopped_by", c->grad_norm[last] < tol ? "the tolerance" : "the epoch limit");
    dl_json_end_object(j);
}

/* The raw-feature run's curve read out: the loss after the first step, its
 * peak, the epoch from which every step reverses the one before (the
 * bounce), and the range it swings in from there. */
static void bounce(dl_json *j, const lab01_run *r)
{
    const double *t = r->c.train_loss;
    int n = r->c.n, peak = 0, from = n > 1 ? n - 1 : 0;
    for (int k = 1; k < n; k++)
        peak = t[k] > t[peak] ? k : peak;
    // from: the first epoch e such that every step from e on reverses the direction of the one before
    while (from >= 2 && (t[from] - t[from - 1]) * (t[from - 1] - t[from - 2]) < 0)
        from--;
    double lo = t[from], hi = t[from];
    for (int k = from; k < n; k++)
        lo = t[k] < lo ? t[k] : lo, hi = t[k] > hi ? t[k] : hi;
    dl_json_num(j, "first_step_loss", t[n > 1 ? 1 : 0]);
    dl_json_num(j, "peak_loss", t[peak]);
    dl_json_int(j, "peak_epoch", peak);
    dl_json_int(j, "bounce_from_epoch", from);
    dl_json_num(j, "bounce_min_loss", lo);
    dl_json_num(j, "bounce_max_loss", hi);
}

/* The training split's widest and narrowest feature (scaler.std), by name. */
static void spread_ends(dl_json *j, const dl_dataset *ds, const lab01_state *r)
{
    size_t d = r->sd.d, wide = 0, narrow = 0;
    for (size_t f = 1; f < d; f++) {
        wide = r->s.scale[f] > r->s.scale[wide] ? f : wide;
        narrow = r->s.scale[f] < r->s.scale[narrow] ? f : narrow;
    }
    const size_t ends[2] = {wide, narrow};
    const char *const keys[2] = {"widest", "narrowest"};
    for (int k = 0; k < 2 && d > 0; k++) {
        char name[32];
        snprintf(name, sizeof name, "feature %zu", ends[k]);
        dl_json_object(j, keys[k]);
        dl_json_str(j, "feature", ds->feature_names != NULL ? ds->feature_names[ends[k]] : name);
        dl_json_num(j, "std", r->s.scale[ends[k]]);
        dl_json_end_object(j);
    }
}

/* The other run's end of training, as an object under key. */
static void curve_summary(dl_json *j, const char *key, const lab01_run *r)
{
    int last = r->c.n - 1;
    dl_json_object(j, key);
    dl_json_int(j, "epochs_run", last);
    dl_json_num(j, "final_train_loss", r->c.train_loss[last]);
    dl_json_num(j, "final_val_loss", r->c.val_loss[last]);
    dl_json_num(j, "final_val_acc", r->c.val_acc[last]);
    dl_json_num(j, "final_grad_norm", r->c.grad_norm[last]);
    dl_json_num(j, "seconds", r->seconds);
    bounce(j, r);
    dl_json_end_object(j);
}

/* The body of summary.json (dl_summary_fn; the engine ends it with "plots"). */
void lab01_summary(dl_json *j, const void *ctx)
{
    const dl_engine *E = ctx;
    const lab01_state *r = E->ctx, *o = r;
    const lab01_run *mr = &r->main_run;
    size_t d = r->sd.d;
    dl_json_str(j, "lab", "01-logreg");
    dl_json_str(j, "dataset", E->data.name);
    dl_json_str(j, "source", E->data.source);
    dl_json_str(j, "device", dl_device_describe(&E->dev));
    dl_json_object(j, "rows");
    for (int p = 0; p < 3; p++)
        dl_json_int(j, part_names[p], (long long)r->sd.n[p]);
    dl_json_end_object(j);
    dl_json_int(j, "features", (long long)d);
    dl_json_object(j, "config");
    dl_json_num(j, "lr", E->a.lr);
    dl_json_num(j, "lambda", o->lambda);
    dl_json_int(j, "epochs", E->a.epochs);
    dl_json_int(j, "batch_size", E->a.batch_size);
    dl_json_num(j, "tol", o->tol);
    dl_json_int(j, "seed", (long long)E->a.seed);
    dl_json_bool(j, "scaled", !o->no_scale);
    dl_json_end_object(j);
    int last = mr->c.n - 1;
    dl_json_int(j, "epochs_run", last);
    dl_json_num(j, "train_loss", mr->c.train_loss[last]);
    dl_json_num(j, "val_loss", mr->c.val_loss[last]);
    dl_json_num(j, "val_acc", mr->c.val_acc[last]);
    dl_json_num(j, "test_loss", r->test_loss);
    dl_json_num(j, "test_accuracy", r->test_acc);
    dl_json_num(j, "train_seconds", mr->seconds);
    if (r->test_acc >= 0 && r->test_acc <= 1) // (NaN when the test part was not scored)
        dl_json_int(j, "test_correct", (long long)(r->test_acc * (double)r->sd.n[2] + 0.5));
    curve_points(j, mr, o->tol);
    dl_json_f32s(j, "weights", mr->m.w, d);
    dl_json_num(j, "bias", mr->m.b);
    dl_json_object(j, "scaler");
    dl_json_bool(j, "used", !o->no_scale);
    dl_json_f32s(j, "mean", r->s.mean, d);
    dl_json_f32s(j, "std", r->s.scale, d);
    spread_ends(j, &E->data.train, r);
    dl_json_end_object(j);
    dl_summary_device_io(j, &mr->io);
    if (r->have_other)
        curve_summary(j, o->no_scale ? "standardised_run" : "raw_features_run", &r->other);
}

dl_status lab01_files(dl_engine *E)
{
    const lab01_state *S = E->ctx;
    if (S->have_other)
        return write_scaling(E->a.out, S->no_scale ? &S->other : &S->main_run, S->no_scale ? &S->main_run : &S->other);
    dl_csv_drop(E->a.out, "scaling.csv"); // --no-compare: no comparison this time
    return DL_OK;
}

void lab01_closing(dl_engine *E)
{
    const lab01_state *S = E->ctx;
    dl_progress_line(&E->pr, 0, "lab01: wrote %s/{metrics.csv,%ssummary.json%s%s}", E->a.out,
                     S->have_other ? "scaling.csv," : "", E->plots[0] ? "," : "", E->plots);
}
