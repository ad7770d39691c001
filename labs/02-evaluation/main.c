/* main.c — lab 02's driver: split honestly, train softmax regression for a
 * grid of λ, choose λ on validation data, test once, and show what a single
 * accuracy number hides.
 *
 *   build/labs/lab02                       your code on Fashion-MNIST
 *   build/solutions/lab02                  the reference
 *   build/labs/lab02 --data synthetic:n=20000,classes=2,imbalance=0.02
 *                                          random vs stratified on a rare class
 *   build/labs/lab02 --help                every flag
 *
 * Writes into --out: metrics.csv (the validation curve), learning.csv,
 * confusion.csv (+ confusion_norm.csv), per_class.csv, shares.csv,
 * spread.csv, psi.csv, summary.json and the plots. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, sqrt
#include <stdio.h> // printf, fprintf
#include <stdlib.h> // malloc, free, strtod
#include <string.h> // memcpy, strchr

#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load
#include "dl/device.h" // dl_device_open
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // summary.json
#include "dl/metrics.h" // CSV writers
#include "dl/plot.h" // dl_plot
#include "dl/progress.h" // dl_progress_line
#include "dl/timer.h" // dl_now
#include "eval.h"

#define MAX_LAMBDAS 16

typedef struct options {
    dl_args a;
    const char *lambdas;
    double val_frac, test_frac;
    int spread_seeds, psi_bins;
} options;

/* Rows of one part, gathered. */
typedef struct part {
    size_t n;
    float *X;
    int32_t *y;
} part;

typedef struct lab {
    const options *o;
    const dl_device *dev;
    size_t d;
    int C;
    part p[3];
    softmax_engine engine;
    softmax_config cfg;
    double *curves; /* (n_lambdas, epochs) training loss per epoch */
    int trained;
    int64_t *test_cm; /* the confusion matrix of the one model scored on test */
    int test_scored;
    char err[512];
} lab;

static const char *const part_names[3] = {"train", "val", "test"};

static int fail(dl_status st)
{
    fprintf(stderr, "lab02: error: %s\n", dl_last_error()[0] ? dl_last_error() : dl_status_str(st));
    return dl_exit_code(st);
}

static int parse_lambdas(const char *s, double *out)
{
    int n = 0;
    while (*s && n < MAX_LAMBDAS) {
        char *end = NULL;
        double v = strtod(s, &end);
        if (end == s || !(v >= 0) || (*end != ',' && *end != '\0'))
            return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : n;
}

static dl_status gather(const dl_dataset *ds, const size_t *idx, size_t m, part *out)
{
    out->n = m;
    out->X = malloc((m ? m : 1) * ds->d * sizeof(float));
    out->y = malloc((m ? m : 1) * sizeof(int32_t));
    if (out->X == NULL || out->y == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory gathering %zu rows", m);
    for (size_t i = 0; i < m; i++) {
        size_t r = idx != NULL ? idx[i] : i;
        memcpy(out->X + i * ds->d, ds->X + r * ds->d, ds->d * sizeof(float));
        out->y[i] = ds->y[r];
    }
    return DL_OK;
}

// ---- the trainer the validation curve calls ----

static dl_status train_cb(void *ctx, double lambda, void **model)
{
    lab *L = ctx;
    softmax_model *m = malloc(sizeof *m);
    if (m == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    dl_status st = softmax_model_alloc(m, L->d, L->C);
    softmax_config cfg = L->cfg;
    cfg.lambda = lambda;
    if (st == DL_OK)
        st = softmax_train(&L->engine, &cfg, m, L->curves + (size_t)L->trained * (size_t)cfg.epochs);
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
    lab *L = ctx;
    const part *p = &L->p[split];
    int32_t *pred = malloc((p->n ? p->n : 1) * sizeof *pred);
    int64_t *cm = malloc((size_t)L->C * (size_t)L->C * sizeof *cm);
    dl_status st = pred && cm ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    if (st == DL_OK)
        st = softmax_predict(p->X, p->n, model, pred);
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

// ---- outputs ----

/* A CSV whose first column is text (class names), written by hand. */
static dl_status write_named(const char *out, const char *name, const char *header, const dl_dataset *ds, int C,
                             const double *vals, int ncols, int as_int)
{
    char path[1200], tmp[1210];
    snprintf(path, sizeof path, "%s/%s", out, name);
    FILE *f = dl_tmp_create(path, tmp, sizeof tmp, "w");
    if (f == NULL)
        return DL_ERR_IO;
    fprintf(f, "%s\n", header);
    for (int c = 0; c < C; c++) {
        char buf[32];
        fprintf(f, "\"%s\"", dl_dataset_class_name(ds, c, buf, sizeof buf));
        for (int k = 0; k < ncols; k++) {
            if (as_int)
                fprintf(f, ",%.0f", vals[(size_t)c * ncols + k]);
            else
                fprintf(f, ",%.6g", vals[(size_t)c * ncols + k]);
        }
        fputc('\n', f);
    }
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return dl_error_set(DL_ERR_IO, "%s: write failed", path);
    }
    return DL_OK;
}

/* Share of the rarest class in each part, over many seeds, for a random and
 * a stratified split: the spread the random split leaves. */
static dl_status spread(const dl_dataset *pool, const double frac[3], int seeds, int rare, double *rows /* seeds × 7 */)
{
    for (int s = 0; s < seeds; s++) {
        dl_split sp[2];
        DL_TRY(eval_split_random(pool->n, frac, 1000 + (uint64_t)s, &sp[0]));
        dl_status st = eval_split_stratified(pool->y, pool->n, pool->n_classes, frac, 1000 + (uint64_t)s, &sp[1]);
        if (st != DL_OK) {
            dl_split_free(&sp[0]);
            return st;
        }
        double *row = rows + (size_t)s * 7;
        row[0] = s;
        for (int k = 0; k < 2; k++) {
            for (int p = 0; p < 3; p++) {
                size_t m = dl_split_size(&sp[k], p), hits = 0;
                for (size_t i = 0; i < m; i++)
                    hits += pool->y[sp[k].idx[sp[k].offset[p] + i]] == rare;
                row[1 + 3 * k + p] = m ? (double)hits / (double)m : NAN;
            }
            dl_split_free(&sp[k]);
        }
    }
    return DL_OK;
}

int main(int argc, char **argv)
{
    options o;
    dl_args_defaults(&o.a);
    o.a.data = "fashion_mnist";
    o.a.epochs = 12;
    o.a.batch_size = 128;
    o.a.lr = 0.2;
    o.a.out = "build/run/02-evaluation";
    o.lambdas = "0,1e-4,1e-3,1e-2,1e-1";
    o.val_frac = 0.0;
    o.test_frac = 0.2;
    o.spread_seeds = 100;
    o.psi_bins = 10;
    const dl_opt extra[] = {
        {"lambdas", DL_OPT_STRING, &o.lambdas, "LIST", "L2 strengths to compare, comma-separated", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o.val_frac, "X",
         "validation share (0 = 1/6 with an official test split, else 0.2)", NULL, 0, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o.test_frac, "X", "test share when the set has no official test split", NULL,
         0.01, 0.5},
        {"spread-seeds", DL_OPT_INT, &o.spread_seeds, "N", "seeds for the random-vs-stratified spread", NULL, 2, 10000},
        {"psi-bins", DL_OPT_INT, &o.psi_bins, "N", "bins of the drift check", NULL, 2, 1000},
    };
    int rc = dl_cli_parse(argc, argv, "lab02",
                          "Lab 02: honest evaluation. Stratified splits, softmax regression for a grid of "
                          "lambda chosen on validation data, a confusion matrix and per-class metrics of "
                          "the chosen model on the test split, and a drift check.",
                          &o.a, extra, sizeof extra / sizeof extra[0]);
    if (rc == DL_CLI_HELP)
        return 0;
    if (rc == DL_CLI_ERROR || dl_cli_single_process(argv[0]) == DL_CLI_ERROR)
        return 2;
    double lambdas[MAX_LAMBDAS];
    int nl = parse_lambdas(o.lambdas, lambdas);
    if (nl < 1) {
        fprintf(stderr, "lab02: error: --lambdas '%s': expected up to %d non-negative numbers, comma-separated\n",
                o.lambdas, MAX_LAMBDAS);
        return 2;
    }

    // ---- data and the honest split ----
    dl_data data;
    dl_status st = dl_data_load(o.a.data, &data);
    if (st != DL_OK)
        return fail(st);
    dl_dataset *pool = &data.train;
    int C = pool->n_classes;
    if (C < 2) {
        dl_data_free(&data);
        dl_error_set(DL_ERR_ARG, "--data %s has %d class: nothing to classify", o.a.data, C);
        return fail(DL_ERR_ARG);
    }
    double frac[3];
    if (data.has_test) { // keep the official test split; carve validation out of train
        double vf = o.val_frac > 0 ? o.val_frac : 1.0 / 6.0;
        frac[0] = 1.0 - vf, frac[1] = vf, frac[2] = 0.0;
    } else {
        double vf = o.val_frac > 0 ? o.val_frac : 0.2;
        frac[0] = 1.0 - vf - o.test_frac, frac[1] = vf, frac[2] = o.test_frac;
    }
    dl_device dev;
    st = dl_device_open(o.a.device, &dev);
    if (st != DL_OK) {
        dl_data_free(&data);
        return fail(st);
    }
    lab L;
    memset(&L, 0, sizeof L);
    L.o = &o;
    L.dev = &dev;
    L.d = pool->d;
    L.C = C;
    L.cfg = (softmax_config){o.a.lr, 0.0, o.a.epochs, (size_t)o.a.batch_size, o.a.seed};
    dl_split strat, rnd;
    memset(&strat, 0, sizeof strat);
    memset(&rnd, 0, sizeof rnd);
    st = dl_mkdir_p(o.a.out);
    char summary[1200];
    snprintf(summary, sizeof summary, "%s/summary.json", o.a.out);
    remove(summary); // a stale summary must not look like this run's
    if (st == DL_OK)
        st = eval_split_stratified(pool->y, pool->n, C, frac, o.a.seed, &strat);
    if (st == DL_OK)
        st = eval_split_random(pool->n, frac, o.a.seed, &rnd);
    for (int p = 0; p < 2 && st == DL_OK; p++)
        st = gather(pool, strat.idx + strat.offset[p], dl_split_size(&strat, p), &L.p[p]);
    if (st == DL_OK && data.has_test)
        st = gather(&data.test, NULL, data.test.n, &L.p[2]);
    else if (st == DL_OK)
        st = gather(pool, strat.idx + strat.offset[2], dl_split_size(&strat, 2), &L.p[2]);
    dl_progress pr;
    dl_progress_begin(&pr, o.a.epochs, 1, o.a.quiet);
    if (st == DL_OK)
        dl_progress_line(
            &pr, 0, "lab02: %s, %d classes, %zu train / %zu val / %zu test rows%s, %zu features, device %s", data.name,
            C, L.p[0].n, L.p[1].n, L.p[2].n, data.has_test ? " (official test)" : "", L.d, dl_device_describe(&dev));

    // ---- class counts per part: stratified vs random ----
    size_t C_ = (size_t)C;
    double *shares = calloc(C_ * 6, sizeof *shares), *counts = calloc(C_ * 3, sizeof *counts);
    int rare = 0;
    if (st == DL_OK && (shares == NULL || counts == NULL))
        st = dl_error_set(DL_ERR_NOMEM, "out of memory");
    if (st == DL_OK) {
        size_t *cc = calloc(C_, sizeof *cc);
        dl_dataset_class_counts(pool, cc);
        for (int c = 1; c < C; c++)
            rare = cc[c] < cc[rare] ? c : rare;
        free(cc);
        const dl_split *sp[2] = {&rnd, &strat};
        for (int k = 0; k < 2; k++) {
            for (int p = 0; p < 3; p++) {
                size_t m = dl_split_size(sp[k], p);
                for (size_t i = 0; i < m; i++) {
                    int c = pool->y[sp[k]->idx[sp[k]->offset[p] + i]];
                    shares[(size_t)c * 6 + 3 * k + p] += 1.0 / (double)m;
                    if (k == 1)
                        counts[(size_t)c * 3 + p] += 1.0;
                }
            }
        }
        if (data.has_test) { // the official test split is the same for both
            for (size_t i = 0; i < data.test.n; i++)
                counts[(size_t)data.test.y[i] * 3 + 2] += 1.0;
            for (int c = 0; c < C; c++)
                shares[(size_t)c * 6 + 2] = shares[(size_t)c * 6 + 5] = counts[(size_t)c * 3 + 2] / (double)data.test.n;
        }
    }
    double *spread_rows = calloc((size_t)o.spread_seeds * 7, sizeof *spread_rows);
    if (st == DL_OK)
        st = spread_rows ? spread(pool, frac, o.spread_seeds, rare, spread_rows)
                         : dl_error_set(DL_ERR_NOMEM, "out of memory");
    double spread_sd[6] = {0};
    if (st == DL_OK) {
        for (int k = 0; k < 6; k++) { // two passes: the stratified shares are all equal
            double s = 0, s2 = 0;
            int m = 0;
            for (int r = 0; r < o.spread_seeds; r++) {
                double v = spread_rows[(size_t)r * 7 + 1 + k];
                if (v == v)
                    s += v, m++;
            }
            for (int r = 0; r < o.spread_seeds && m > 0; r++) {
                double v = spread_rows[(size_t)r * 7 + 1 + k];
                if (v == v)
                    s2 += (v - s / m) * (v - s / m);
            }
            spread_sd[k] = m > 1 ? sqrt(s2 / (m - 1)) : NAN;
        }
        char buf[32];
        dl_progress_line(&pr, 0,
                         "lab02: share of the rarest class (%s) over %d seeds, std dev train/val: random %.2e/%.2e, "
                         "stratified %.2e/%.2e",
                         dl_dataset_class_name(pool, rare, buf, sizeof buf), o.spread_seeds, spread_sd[0], spread_sd[1],
                         spread_sd[3], spread_sd[4]);
    }

    // ---- the validation curve ----
    double val_f1[MAX_LAMBDAS], val_acc[MAX_LAMBDAS];
    eval_curve curve = {nl, lambdas, val_f1, val_acc, -1, {0}};
    L.curves = calloc((size_t)nl * (size_t)(o.a.epochs > 0 ? o.a.epochs : 1), sizeof *L.curves);
    if (st == DL_OK)
        st = L.curves ? eval_report_alloc(&curve.test, C) : dl_error_set(DL_ERR_NOMEM, "out of memory");
    int64_t *cm = calloc(C_ * C_, sizeof *cm);
    L.test_cm = cm;
    if (st == DL_OK && cm == NULL)
        st = dl_error_set(DL_ERR_NOMEM, "out of memory");
    if (st == DL_OK)
        st = softmax_engine_init(&L.engine, &dev, L.p[0].X, L.p[0].y, L.p[0].n, L.d, C);
    double t0 = dl_now();
    if (st == DL_OK) {
        eval_trainer tr = {&L, train_cb, score_cb, release_cb};
        st = eval_validation_curve(&tr, &curve);
    }
    double train_s = dl_now() - t0;
    if (st == DL_OK && (curve.chosen < 0 || curve.chosen >= nl))
        st = dl_error_set(DL_ERR_RANGE, "eval_validation_curve chose index %d of %d", curve.chosen, nl);
    if (st == DL_OK && L.test_scored != 1)
        st = dl_error_set(DL_ERR_RANGE,
                          "eval_validation_curve scored %d model(s) on the test split; expected "
                          "exactly one, the chosen model",
                          L.test_scored);
    if (st == DL_OK) {
        for (int k = 0; k < nl; k++)
            dl_progress_line(&pr, 0, "lambda %-8g val macro-F1 %.4f  val accuracy %.4f%s", lambdas[k], val_f1[k],
                             val_acc[k], k == curve.chosen ? "  <- chosen" : "");
        dl_progress_line(&pr, 1,
                         "lab02: chose lambda %g on validation; test accuracy %.4f, macro-F1 %.4f (%d models, %.1f s)",
                         lambdas[curve.chosen], curve.test.accuracy, curve.test.macro_f1, nl, train_s);
        if (curve.test.zero_division > 0)
            dl_progress_line(&pr, 1,
                             "lab02: note: %d class(es) had an undefined precision or recall (0/0, reported as 0)",
                             curve.test.zero_division);
    }

    // ---- the chosen model on the test split: confusion and per-class metrics ----
    double *cmd = calloc(C_ * C_, sizeof *cmd), *cmn = calloc(C_ * C_, sizeof *cmn);
    if (st == DL_OK && (!cmd || !cmn))
        st = dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t t = 0; st == DL_OK && t < C_; t++) {
        double row = 0;
        for (size_t p = 0; p < C_; p++)
            row += (double)cm[t * C_ + p];
        for (size_t p = 0; p < C_; p++) {
            cmd[t * C_ + p] = (double)cm[t * C_ + p];
            cmn[t * C_ + p] = row > 0 ? (double)cm[t * C_ + p] / row : 0.0;
        }
    }

    // ---- drift: train vs val and train vs test ----
    double *psi[2] = {calloc(L.d ? L.d : 1, sizeof(double)), calloc(L.d ? L.d : 1, sizeof(double))};
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = psi[k] ? eval_psi(L.p[0].X, L.p[0].n, L.p[1 + k].X, L.p[1 + k].n, L.d, o.psi_bins, psi[k])
                    : dl_error_set(DL_ERR_NOMEM, "out of memory");
    size_t worst[5] = {0};
    int nworst = L.d < 5 ? (int)L.d : 5;
    if (st == DL_OK) {
        for (int w = 0; w < nworst; w++) {
            size_t best = 0;
            int taken = 1;
            for (size_t j = 0; j < L.d; j++) {
                int used = 0;
                for (int q = 0; q < w; q++)
                    used |= worst[q] == j;
                if (!used && (taken || psi[1][j] > psi[1][best])) {
                    best = j;
                    taken = 0;
                }
            }
            worst[w] = best;
        }
        dl_progress_line(
            &pr, 0, "lab02: drift train->test: largest PSI %.4f (feature %zu); PSI < 0.1 is usually read as stable",
            psi[1][worst[0]], worst[0]);
    }

    // ---- files ----
    char plots[512] = "";
    if (st == DL_OK) {
        const char *cols[] = {"lambda_index", "lambda", "val_macro_f1", "val_accuracy", "chosen"};
        double rows[MAX_LAMBDAS * 5];
        for (int k = 0; k < nl; k++) {
            double r[5] = {k, lambdas[k], val_f1[k], val_acc[k], k == curve.chosen};
            memcpy(rows + k * 5, r, sizeof r);
        }
        st = dl_csv_write(o.a.out, "metrics.csv", cols, 5, rows, nl);
    }
    if (st == DL_OK && o.a.epochs > 0) {
        char names[MAX_LAMBDAS + 1][40];
        const char *cols[MAX_LAMBDAS + 1];
        snprintf(names[0], sizeof names[0], "epoch");
        cols[0] = names[0];
        for (int k = 0; k < nl; k++) {
            snprintf(names[k + 1], sizeof names[k + 1], "lambda=%g", lambdas[k]);
            cols[k + 1] = names[k + 1];
        }
        double *rows = calloc((size_t)o.a.epochs * (size_t)(nl + 1), sizeof *rows);
        for (int e = 0; rows && e < o.a.epochs; e++) {
            rows[(size_t)e * (nl + 1)] = e + 1;
            for (int k = 0; k < nl; k++)
                rows[(size_t)e * (nl + 1) + 1 + k] = L.curves[(size_t)k * o.a.epochs + e];
        }
        st = rows ? dl_csv_write(o.a.out, "learning.csv", cols, nl + 1, rows, o.a.epochs)
                  : dl_error_set(DL_ERR_NOMEM, "out of memory");
        free(rows);
    }
    if (st == DL_OK) {
        char header[2048] = "true\\predicted";
        for (int c = 0; c < C; c++) {
            char buf[32];
            size_t k = strlen(header);
            snprintf(header + k, sizeof header - k, ",\"%s\"", dl_dataset_class_name(pool, c, buf, sizeof buf));
        }
        st = write_named(o.a.out, "confusion.csv", header, pool, C, cmd, C, 1);
        if (st == DL_OK)
            st = write_named(o.a.out, "confusion_norm.csv", header, pool, C, cmn, C, 0);
        double *cl = malloc(C_ * C_ * 4 * sizeof *cl); // long form: one row per cell, for the labels
        for (size_t t = 0; cl && t < C_; t++) {
            for (size_t p = 0; p < C_; p++) {
                double r[4] = {(double)t, (double)p, cmd[t * C_ + p], cmn[t * C_ + p]};
                memcpy(cl + (t * C_ + p) * 4, r, sizeof r);
            }
        }
        const char *lcols[] = {"true", "predicted", "count", "share"};
        if (st == DL_OK)
            st = cl ? dl_csv_write(o.a.out, "confusion_long.csv", lcols, 4, cl, C * C)
                    : dl_error_set(DL_ERR_NOMEM, "out of memory");
        free(cl);
    }
    if (st == DL_OK) {
        double *pc = calloc(C_ * 4, sizeof *pc);
        for (int c = 0; pc && c < C; c++) {
            pc[(size_t)c * 4 + 0] = curve.test.precision[c];
            pc[(size_t)c * 4 + 1] = curve.test.recall[c];
            pc[(size_t)c * 4 + 2] = curve.test.f1[c];
            pc[(size_t)c * 4 + 3] = (double)curve.test.support[c];
        }
        st = pc ? write_named(o.a.out, "per_class.csv", "class,precision,recall,f1,support", pool, C, pc, 4, 0)
                : dl_error_set(DL_ERR_NOMEM, "out of memory");
        free(pc);
    }
    if (st == DL_OK)
        st = write_named(o.a.out, "shares.csv",
                         "class,random_train,random_val,random_test,stratified_train,stratified_val,stratified_test",
                         pool, C, shares, 6, 0);
    if (st == DL_OK) {
        const char *cols[] = {"seed",           "random_train",   "random_val", "random_test", "stratified_train",
                              "stratified_val", "stratified_test"};
        st = dl_csv_write(o.a.out, "spread.csv", cols, 7, spread_rows, o.spread_seeds);
    }
    if (st == DL_OK) {
        const char *cols[] = {"feature", "psi_train_val", "psi_train_test"};
        double *rows = malloc(L.d * 3 * sizeof *rows);
        for (size_t j = 0; rows && j < L.d; j++) {
            rows[j * 3] = (double)j;
            rows[j * 3 + 1] = psi[0][j];
            rows[j * 3 + 2] = psi[1][j];
        }
        st = rows ? dl_csv_write(o.a.out, "psi.csv", cols, 3, rows, (int)L.d)
                  : dl_error_set(DL_ERR_NOMEM, "out of memory");
        free(rows);
    }
    if (st == DL_OK) {
        char vars[2600], buf[32];
        char name[128];
        dl_plot_escape(data.name, name, sizeof name);
        snprintf(vars, sizeof vars,
                 "data='%s/confusion_norm.csv'; cells='%s/confusion_long.csv'; C=%d; subtitle='%s, lambda %g, test "
                 "accuracy %.3f'",
                 o.a.out, o.a.out, C, name, lambdas[curve.chosen], curve.test.accuracy);
        dl_plot_listed("labs/02-evaluation/plots/confusion.gp", o.a.plot, o.a.out, "confusion", vars, "lab02", plots,
                       sizeof plots);
        snprintf(vars, sizeof vars, "data='%s/metrics.csv'", o.a.out);
        dl_plot_listed("labs/02-evaluation/plots/validation_curve.gp", o.a.plot, o.a.out, "validation_curve", vars,
                       "lab02", plots, sizeof plots);
        snprintf(vars, sizeof vars, "data='%s/shares.csv'", o.a.out);
        dl_plot_listed("labs/02-evaluation/plots/shares.gp", o.a.plot, o.a.out, "shares", vars, "lab02", plots,
                       sizeof plots);
        dl_plot_escape(dl_dataset_class_name(pool, rare, buf, sizeof buf), name, sizeof name);
        snprintf(vars, sizeof vars, "data='%s/spread.csv'; rare='%s'", o.a.out, name);
        dl_plot_listed("labs/02-evaluation/plots/spread.gp", o.a.plot, o.a.out, "spread", vars, "lab02", plots,
                       sizeof plots);
        if (o.a.epochs > 0) {
            snprintf(vars, sizeof vars, "data='%s/learning.csv'; n=%d", o.a.out, nl);
            dl_plot_listed("labs/02-evaluation/plots/learning_curve.gp", o.a.plot, o.a.out, "learning_curve", vars,
                           "lab02", plots, sizeof plots);
        }
    }
    for (int k = 0; k < 2 && st == DL_OK; k++) {
        const char *path = k == 0 ? summary : o.a.json;
        if (path == NULL)
            continue;
        dl_json j;
        st = dl_json_open(&j, path);
        if (st != DL_OK)
            break;
        char buf[32];
        dl_json_object(&j, NULL);
        dl_json_str(&j, "lab", "02-evaluation");
        dl_json_str(&j, "dataset", data.name);
        dl_json_str(&j, "device", dl_device_describe(&dev));
        dl_json_bool(&j, "official_test_split", data.has_test);
        dl_json_object(&j, "rows");
        for (int p = 0; p < 3; p++)
            dl_json_int(&j, part_names[p], (long long)L.p[p].n);
        dl_json_end_object(&j);
        dl_json_object(&j, "config");
        dl_json_num(&j, "lr", o.a.lr);
        dl_json_int(&j, "epochs", o.a.epochs);
        dl_json_int(&j, "batch_size", o.a.batch_size);
        dl_json_int(&j, "seed", (long long)o.a.seed);
        dl_json_f64s(&j, "lambdas", lambdas, (size_t)nl);
        dl_json_end_object(&j);
        dl_json_f64s(&j, "val_macro_f1", val_f1, (size_t)nl);
        dl_json_f64s(&j, "val_accuracy", val_acc, (size_t)nl);
        dl_json_num(&j, "chosen_lambda", lambdas[curve.chosen]);
        dl_json_num(&j, "test_accuracy", curve.test.accuracy);
        dl_json_num(&j, "test_macro_f1", curve.test.macro_f1);
        dl_json_num(&j, "test_micro_f1", curve.test.micro_f1);
        dl_json_num(&j, "test_weighted_f1", curve.test.weighted_f1);
        dl_json_int(&j, "zero_division_classes", curve.test.zero_division);
        dl_json_array(&j, "per_class");
        for (int c = 0; c < C; c++) {
            dl_json_object(&j, NULL);
            dl_json_str(&j, "class", dl_dataset_class_name(pool, c, buf, sizeof buf));
            dl_json_num(&j, "precision", curve.test.precision[c]);
            dl_json_num(&j, "recall", curve.test.recall[c]);
            dl_json_num(&j, "f1", curve.test.f1[c]);
            dl_json_int(&j, "support", curve.test.support[c]);
            dl_json_end_object(&j);
        }
        dl_json_end_array(&j);
        dl_json_object(&j, "class_counts");
        for (int p = 0; p < 3; p++) {
            double v[1000];
            int m = C < 1000 ? C : 1000;
            for (int c = 0; c < m; c++)
                v[c] = counts[(size_t)c * 3 + p];
            dl_json_f64s(&j, part_names[p], v, (size_t)m);
        }
        dl_json_end_object(&j);
        dl_json_object(&j, "rare_class_share_spread");
        dl_json_str(&j, "class", dl_dataset_class_name(pool, rare, buf, sizeof buf));
        dl_json_int(&j, "seeds", o.spread_seeds);
        dl_json_num(&j, "random_train_std", spread_sd[0]);
        dl_json_num(&j, "random_val_std", spread_sd[1]);
        dl_json_num(&j, "stratified_train_std", spread_sd[3]);
        dl_json_num(&j, "stratified_val_std", spread_sd[4]);
        dl_json_end_object(&j);
        dl_json_object(&j, "psi");
        dl_json_int(&j, "bins", o.psi_bins);
        double mx[2] = {0, 0}, mean[2] = {0, 0};
        for (int q = 0; q < 2; q++) {
            for (size_t f = 0; f < L.d; f++) {
                mx[q] = psi[q][f] > mx[q] ? psi[q][f] : mx[q];
                mean[q] += psi[q][f] / (double)L.d;
            }
        }
        dl_json_num(&j, "train_val_max", mx[0]);
        dl_json_num(&j, "train_val_mean", mean[0]);
        dl_json_num(&j, "train_test_max", mx[1]);
        dl_json_num(&j, "train_test_mean", mean[1]);
        dl_json_array(&j, "train_test_worst_features");
        for (int w = 0; w < nworst; w++) {
            dl_json_object(&j, NULL);
            dl_json_int(&j, "feature", (long long)worst[w]);
            dl_json_num(&j, "psi", psi[1][worst[w]]);
            dl_json_end_object(&j);
        }
        dl_json_end_array(&j);
        dl_json_end_object(&j);
        dl_json_num(&j, "train_seconds", train_s);
        dl_json_str(&j, "plots", plots);
        dl_json_end_object(&j);
        st = dl_json_close(&j);
    }
    if (st == DL_OK)
        dl_progress_line(
            &pr, 0, "lab02: wrote %s/{metrics,learning,confusion*,per_class,shares,spread,psi}.csv, summary.json%s%s",
            o.a.out, plots[0] ? ", " : "", plots);
    dl_progress_end(&pr);
    softmax_engine_free(&L.engine);
    for (int p = 0; p < 3; p++)
        free(L.p[p].X), free(L.p[p].y);
    free(L.curves), free(shares), free(counts), free(spread_rows), free(cm), free(cmd), free(cmn);
    free(psi[0]), free(psi[1]);
    eval_report_free(&curve.test);
    dl_split_free(&strat);
    dl_split_free(&rnd);
    dl_device_close(&dev);
    dl_data_free(&data);
    return st == DL_OK ? 0 : fail(st);
}
