/* outputs.c — lab 02's driver plumbing: gathered parts and the files (see
 * outputs.h); random against stratified shares and the drift ranking are
 * outputs_balance.c's. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, sqrt
#include <stdio.h> // fprintf, snprintf
#include <stdlib.h> // malloc, calloc, free, strtod
#include <string.h> // memcpy, strlen

#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_tmp_create
#include "dl/json.h" // summary.json
#include "dl/metrics.h" // DL_CSV_SCHEMA, dl_csv_write, dl_csv_cell
#include "dl/plot.h" // dl_plot_listed, dl_plot_escape
#include "dl/progress.h" // dl_progress_line
#include "dl/summary.h" // dl_summary_device_io
#include "outputs.h"

static const char *const part_names[3] = {"train", "val", "test"};

// ---- the CSVs' columns ----

// clang-format off
#define METRICS(X)             \
    X(M_INDEX, "lambda_index") \
    X(M_LAMBDA, "lambda")      \
    X(M_F1, "val_macro_f1")    \
    X(M_ACC, "val_accuracy")   \
    X(M_CHOSEN, "chosen")
// clang-format on
DL_CSV_SCHEMA(metrics, METRICS);
#define CELLS(X) X(CL_TRUE, "true") X(CL_PREDICTED, "predicted") X(CL_COUNT, "count") X(CL_SHARE, "share")
DL_CSV_SCHEMA(cells, CELLS);
// clang-format off
#define PER_CLASS(X)             \
    X(PC_CLASS, "class")         \
    X(PC_PRECISION, "precision") \
    X(PC_RECALL, "recall")       \
    X(PC_F1, "f1")               \
    X(PC_SUPPORT, "support")
// clang-format on
DL_CSV_SCHEMA(per_class, PER_CLASS);
#define PSI(X) X(PSI_FEATURE, "feature") X(PSI_VAL, "psi_train_val") X(PSI_TEST, "psi_train_test")
DL_CSV_SCHEMA(psi_cols, PSI);

// ---- the flags ----

void lab02_defaults(dl_engine *E)
{
    lab02_state *o = E->ctx;
    E->a.data = "fashion_mnist";
    E->a.epochs = 0; // by the data set: see preset() in train.c
    E->a.batch_size = 128;
    E->a.lr = 0.2;
    o->lambdas_arg = "0,1e-4,3e-4,1e-3,3e-3,1e-2,3e-2,1e-1";
    o->test_frac = 0.2;
    o->spread_seeds = 100;
    o->psi_bins = 10;
}

int lab02_options(dl_engine *E, dl_opt *out)
{
    lab02_state *o = E->ctx;
    const dl_opt opts[] = {
        {"lambdas", DL_OPT_STRING, &o->lambdas_arg, "LIST", "L2 strengths to compare, comma-separated", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o->val_frac, "X",
         "validation share (0 = 1/6 with an official test split, else 0.2)", NULL, 0, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o->test_frac, "X", "test share when the set has no official test split", NULL,
         0.01, 0.5},
        {"train-rows", DL_OPT_LONG, &o->train_rows, "N",
         "training rows, a stratified part like the others (0: by the data set, see above; more than there are: every "
         "row val and test leave)",
         NULL, 0, 1e9},
        {"spread-seeds", DL_OPT_INT, &o->spread_seeds, "N", "seeds for the random-vs-stratified spread", NULL, 2,
         10000},
        {"psi-bins", DL_OPT_INT, &o->psi_bins, "N", "bins of the drift check", NULL, 2, 1000},
    };
    memcpy(out, opts, sizeof opts);
    return (int)(sizeof opts / sizeof opts[0]);
}

dl_status lab02_check(dl_engine *E)
{
    lab02_state *o = E->ctx;
    o->nl = lab02_parse_lambdas(o->lambdas_arg, o->lambdas);
    if (o->nl < 1)
        return dl_error_set(DL_ERR_ARG, "--lambdas '%s': expected up to %d non-negative numbers, comma-separated",
                            o->lambdas_arg, LAB02_MAX_LAMBDAS);
    return DL_OK;
}

// ---- parts ----

int lab02_parse_lambdas(const char *s, double *out)
{
    int n = 0;
    while (*s && n < LAB02_MAX_LAMBDAS) {
        char *end = NULL;
        double v = strtod(s, &end);
        if (end == s || !(v >= 0) || (*end != ',' && *end != '\0'))
            return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : n;
}

dl_status lab02_gather(const dl_dataset *ds, const size_t *idx, size_t m, lab02_part *out)
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

void lab02_part_free(lab02_part *p)
{
    free(p->X);
    free(p->y);
    p->X = NULL;
    p->y = NULL;
    p->n = 0;
}

// ---- files ----

/* A CSV whose first column is the class (its name in quotes), then
 * cols.n − 1 values a class of vals (C rows), each printed with fmt. */
static dl_status write_named(const char *out, const char *name, dl_cols cols, const dl_dataset *ds, int C,
                             const double *vals, const char *fmt)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", out, name);
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, cols));
    dl_status st = DL_OK;
    for (int c = 0; c < C && st == DL_OK; c++) {
        char buf[32];
        dl_csv_cell(&f, 0, "\"%s\"", dl_dataset_class_name(ds, c, buf, sizeof buf));
        for (int k = 1; k < cols.n; k++)
            dl_csv_cell(&f, k, fmt, vals[(size_t)c * (size_t)(cols.n - 1) + (size_t)(k - 1)]);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

static dl_status write_curves(const lab02_results *r)
{
    const double *lambdas = r->lambdas;
    const eval_curve *curve = r->curve;
    int nl = r->nl;
    double rows[LAB02_MAX_LAMBDAS][METRICS_NCOLS];
    for (int k = 0; k < nl; k++) {
        double v[METRICS_NCOLS] = {[M_INDEX] = k,
                                   [M_LAMBDA] = lambdas[k],
                                   [M_F1] = curve->val_macro_f1[k],
                                   [M_ACC] = curve->val_accuracy[k],
                                   [M_CHOSEN] = k == curve->chosen};
        memcpy(rows[k], v, sizeof v);
    }
    DL_TRY(dl_csv_write(r->out, "metrics.csv", metrics, rows[0], nl));
    if (r->epochs <= 0) { // no curve
        dl_csv_drop(r->out, "learning.csv");
        return DL_OK;
    }
    char names[LAB02_MAX_LAMBDAS + 1][40];
    const char *lcols[LAB02_MAX_LAMBDAS + 1];
    snprintf(names[0], sizeof names[0], "epoch");
    lcols[0] = names[0];
    for (int k = 0; k < nl; k++) {
        snprintf(names[k + 1], sizeof names[k + 1], "lambda=%g", lambdas[k]);
        lcols[k + 1] = names[k + 1];
    }
    double *lrows = calloc((size_t)r->epochs * (size_t)(nl + 1), sizeof *lrows);
    for (int e = 0; lrows && e < r->epochs; e++) {
        lrows[(size_t)e * (nl + 1)] = e + 1;
        for (int k = 0; k < nl; k++)
            lrows[(size_t)e * (nl + 1) + 1 + k] = r->learning[(size_t)k * r->epochs + e];
    }
    dl_status st = lrows ? dl_csv_write(r->out, "learning.csv", (dl_cols){lcols, nl + 1}, lrows, r->epochs)
                         : dl_error_set(DL_ERR_NOMEM, "out of memory");
    free(lrows);
    return st;
}

/* confusion.csv (counts), confusion_norm.csv (each row over its sum),
 * confusion_long.csv (one line per cell, for the plot's labels). */
static dl_status write_confusion(const lab02_results *r, const double *cmd, const double *cmn)
{
    const dl_dataset *pool = &r->data->train;
    int C = pool->n_classes;
    size_t C_ = (size_t)C;
    // the header: the corner, then each class's name in quotes
    char(*names)[40] = malloc((C_ + 1) * sizeof *names);
    const char **cols = malloc((C_ + 1) * sizeof *cols);
    double(*cl)[CELLS_NCOLS] = malloc(C_ * C_ * sizeof *cl);
    dl_status st = names && cols && cl ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int c = 0; st == DL_OK && c <= C; c++) {
        char buf[32];
        if (c == 0)
            snprintf(names[0], sizeof names[0], "true\\predicted");
        else
            snprintf(names[c], sizeof names[c], "\"%s\"", dl_dataset_class_name(pool, c - 1, buf, sizeof buf));
        cols[c] = names[c];
    }
    if (st == DL_OK)
        st = write_named(r->out, "confusion.csv", (dl_cols){cols, C + 1}, pool, C, cmd, "%.0f");
    if (st == DL_OK)
        st = write_named(r->out, "confusion_norm.csv", (dl_cols){cols, C + 1}, pool, C, cmn, "%.6g");
    for (size_t t = 0; st == DL_OK && t < C_; t++) {
        for (size_t p = 0; p < C_; p++) {
            double v[CELLS_NCOLS] = {[CL_TRUE] = (double)t,
                                     [CL_PREDICTED] = (double)p,
                                     [CL_COUNT] = cmd[t * C_ + p],
                                     [CL_SHARE] = cmn[t * C_ + p]};
            memcpy(cl[t * C_ + p], v, sizeof v);
        }
    }
    if (st == DL_OK)
        st = dl_csv_write(r->out, "confusion_long.csv", cells, cl[0], C * C);
    free(names), free(cols), free(cl);
    return st;
}

static dl_status write_tables(const lab02_results *r)
{
    const dl_dataset *pool = &r->data->train;
    const eval_report *test = &r->curve->test;
    int C = pool->n_classes;
    size_t C_ = (size_t)C;
    // a class's values, without the label column
    double(*pc)[PER_CLASS_NCOLS - 1] = calloc(C_, sizeof *pc);
    for (int c = 0; pc && c < C; c++) {
        pc[c][PC_PRECISION - 1] = test->precision[c];
        pc[c][PC_RECALL - 1] = test->recall[c];
        pc[c][PC_F1 - 1] = test->f1[c];
        pc[c][PC_SUPPORT - 1] = (double)test->support[c];
    }
    dl_status st = pc ? write_named(r->out, "per_class.csv", per_class, pool, C, pc[0], "%.6g")
                      : dl_error_set(DL_ERR_NOMEM, "out of memory");
    free(pc);
    DL_TRY(st);
    DL_TRY(write_named(r->out, "shares.csv", shares, pool, C, r->balance->shares, "%.6g"));
    DL_TRY(dl_csv_write(r->out, "spread.csv", spread_cols, r->balance->spread, r->balance->seeds));
    double(*rows)[PSI_NCOLS] = malloc(r->d * sizeof *rows);
    for (size_t j = 0; rows && j < r->d; j++) {
        rows[j][PSI_FEATURE] = (double)j;
        rows[j][PSI_VAL] = r->psi[0][j];
        rows[j][PSI_TEST] = r->psi[1][j];
    }
    st = rows ? dl_csv_write(r->out, "psi.csv", psi_cols, rows[0], (int)r->d)
              : dl_error_set(DL_ERR_NOMEM, "out of memory");
    free(rows);
    return st;
}

void lab02_plots(dl_engine *E, dl_plots *p)
{
    const lab02_results *r = &((const lab02_state *)E->ctx)->res;
    char *plots = p->list;
    size_t len = sizeof p->list;
    const dl_dataset *pool = &r->data->train;
    const char *out = r->out;
    char vars[2600], buf[32];
    char name[128];
    dl_plot_escape(r->data->name, name, sizeof name);
    // the subtitle's numbers as the report's headline writes them: accuracy in %, one decimal; macro-F1, 3
    snprintf(vars, sizeof vars,
             "data='%s/confusion_norm.csv'; cells='%s/confusion_long.csv'; C=%d; subtitle='%s, %zu test rows, "
             "λ = %g: accuracy %.1f%%, macro-F1 %.3f'",
             out, out, pool->n_classes, name, r->rows[2], r->lambdas[r->curve->chosen],
             dl_pct(r->curve->test.accuracy, 1), r->curve->test.macro_f1);
    dl_plot_listed("labs/02-evaluation/plots/confusion.gp", r->plot, out, "confusion", vars, "lab02", plots, len);
    snprintf(vars, sizeof vars, "data='%s/metrics.csv'; test_acc=%.17g; test_f1=%.17g; test_rows=%zu", out,
             dl_pct(r->curve->test.accuracy, 1), r->curve->test.macro_f1, r->rows[2]);
    dl_plot_listed("labs/02-evaluation/plots/validation_curve.gp", r->plot, out, "validation_curve", vars, "lab02",
                   plots, len);
    snprintf(vars, sizeof vars, "data='%s/shares.csv'", out);
    dl_plot_listed("labs/02-evaluation/plots/shares.gp", r->plot, out, "shares", vars, "lab02", plots, len);
    dl_plot_escape(dl_dataset_class_name(pool, r->balance->rare, buf, sizeof buf), name, sizeof name);
    // which class it is: the rarest, or on a data set whose classes are the same size, the first
    double lo = 1, hi = 0;
    for (int c = 0; c < pool->n_classes; c++) {
        lo = SHARE(r->balance, c, SH_POOL) < lo ? SHARE(r->balance, c, SH_POOL) : lo;
        hi = SHARE(r->balance, c, SH_POOL) > hi ? SHARE(r->balance, c, SH_POOL) : hi;
    }
    snprintf(vars, sizeof vars,
             "data='%s/spread.csv'; rare='%s'; balanced=%d; pool_share=%.17g; n_train=%zu; n_val=%zu", out, name,
             hi - lo < 0.5 / (double)(pool->n > 0 ? pool->n : 1), SHARE(r->balance, r->balance->rare, SH_POOL),
             r->rows[0], r->rows[1]);
    dl_plot_listed("labs/02-evaluation/plots/spread.gp", r->plot, out, "spread", vars, "lab02", plots, len);
    if (r->epochs > 0) {
        snprintf(vars, sizeof vars, "data='%s/learning.csv'; n=%d", out, r->nl);
        dl_plot_listed("labs/02-evaluation/plots/learning_curve.gp", r->plot, out, "learning_curve", vars, "lab02",
                       plots, len);
    } else {
        dl_plot_forget(out, "learning_curve");
    }
}

// ---- the numbers slides/02-evaluation.md quotes that summary.json holds only in arrays (report --fill reads none) ----

/* The lowest and highest share of the rare class in spread column col over the seeds (NaN-free). */
static void spread_range(dl_json *j, const lab02_balance *b, int col, const char *lo_key, const char *hi_key)
{
    double lo = NAN, hi = NAN;
    for (int s = 0; s < b->seeds; s++) {
        double v = b->spread[(size_t)s * SPREAD_NCOLS + col];
        lo = v == v && !(v >= lo) ? v : lo;
        hi = v == v && !(v <= hi) ? v : hi;
    }
    if (lo == lo) {
        dl_json_num(j, lo_key, lo);
        dl_json_num(j, hi_key, hi);
    }
}

/* by_lambda.K: the K-th λ of the grid, its validation scores, and a mark on the chosen one. */
static void by_lambda(dl_json *j, const lab02_results *r)
{
    dl_json_object(j, "by_lambda");
    for (int k = 0; k < r->nl; k++) {
        char key[16];
        snprintf(key, sizeof key, "%d", k);
        dl_json_object(j, key);
        dl_json_num(j, "lambda", r->lambdas[k]);
        dl_json_num(j, "val_macro_f1", r->curve->val_macro_f1[k]);
        dl_json_num(j, "val_accuracy", r->curve->val_accuracy[k]);
        dl_json_str(j, "mark", k == r->curve->chosen ? "← chosen" : ""); // the driver's line marks it so
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
}

/* confusion_read: the test confusion matrix read out as the slides read it:
 * the classes with the best and the worst F1 (with their right answers),
 * the class whose recall exceeds its precision most (and how many rows of
 * other classes it was given), the off-diagonal total, and the largest
 * off-diagonal cells, largest first (the lower truth, then prediction, on
 * ties), each with the cell across the diagonal. */
static void confusion_read(dl_json *j, const lab02_results *r)
{
    const dl_dataset *pool = &r->data->train;
    const eval_report *t = &r->curve->test;
    int C = pool->n_classes;
    const int64_t *cm = r->test_cm;
    char buf[32];
    int best = 0, worst = 0, gap = 0;
    long long errors = 0;
    for (int c = 1; c < C; c++) {
        best = t->f1[c] > t->f1[best] ? c : best;
        worst = t->f1[c] < t->f1[worst] ? c : worst;
        gap = t->recall[c] - t->precision[c] > t->recall[gap] - t->precision[gap] ? c : gap;
    }
    for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++)
            errors += a != b ? (long long)cm[a * C + b] : 0;
    dl_json_object(j, "confusion_read");
    const int ends[2] = {best, worst};
    const char *const end_keys[2] = {"best_f1", "worst_f1"};
    for (int k = 0; k < 2 && C > 0; k++) {
        dl_json_object(j, end_keys[k]);
        dl_json_str(j, "class", dl_dataset_class_name(pool, ends[k], buf, sizeof buf));
        dl_json_num(j, "f1", t->f1[ends[k]]);
        dl_json_int(j, "correct", (long long)cm[ends[k] * C + ends[k]]);
        dl_json_end_object(j);
    }
    if (C > 0) {
        long long called = 0;
        for (int a = 0; a < C; a++)
            called += a != gap ? (long long)cm[a * C + gap] : 0;
        dl_json_object(j, "recall_over_precision");
        dl_json_str(j, "class", dl_dataset_class_name(pool, gap, buf, sizeof buf));
        dl_json_num(j, "recall", t->recall[gap]);
        dl_json_num(j, "precision", t->precision[gap]);
        dl_json_int(j, "others_called_it", called);
        dl_json_end_object(j);
    }
    dl_json_int(j, "errors", errors);
    dl_json_object(j, "largest");
    int taken[8][2];
    for (int k = 0; k < 8 && k < C * (C - 1); k++) {
        int ta = -1, pb = -1;
        for (int a = 0; a < C; a++) {
            for (int b = 0; b < C; b++) {
                int used = a == b;
                for (int q = 0; q < k; q++)
                    used |= taken[q][0] == a && taken[q][1] == b;
                if (!used && (ta < 0 || cm[a * C + b] > cm[ta * C + pb]))
                    ta = a, pb = b;
            }
        }
        taken[k][0] = ta, taken[k][1] = pb;
        char key[8];
        snprintf(key, sizeof key, "%d", k + 1);
        dl_json_object(j, key);
        dl_json_str(j, "truth", dl_dataset_class_name(pool, ta, buf, sizeof buf));
        dl_json_str(j, "predicted", dl_dataset_class_name(pool, pb, buf, sizeof buf));
        dl_json_int(j, "count", (long long)cm[ta * C + pb]);
        dl_json_int(j, "reverse", (long long)cm[pb * C + ta]);
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
    dl_json_end_object(j);
}

/* The body of summary.json (dl_summary_fn; the engine ends it with "plots" and "blas"). */
void lab02_summary(dl_json *j, const void *ctx)
{
    const lab02_results *r = &((const lab02_state *)((const dl_engine *)ctx)->ctx)->res;
    const dl_dataset *pool = &r->data->train;
    const eval_curve *curve = r->curve;
    const lab02_balance *bal = r->balance;
    int C = pool->n_classes;
    char buf[32];
    dl_json_str(j, "lab", "02-evaluation");
    dl_json_str(j, "dataset", r->data->name);
    dl_json_str(j, "device", r->device);
    dl_json_bool(j, "official_test_split", r->data->has_test);
    dl_json_object(j, "rows");
    for (int p = 0; p < 3; p++)
        dl_json_int(j, part_names[p], (long long)r->rows[p]);
    dl_json_end_object(j);
    dl_json_object(j, "config");
    dl_json_num(j, "lr", r->lr);
    dl_json_int(j, "epochs", r->epochs);
    dl_json_int(j, "batch_size", r->batch_size);
    dl_json_int(j, "seed", (long long)r->seed);
    dl_json_f64s(j, "lambdas", r->lambdas, (size_t)r->nl);
    dl_json_end_object(j);
    dl_json_f64s(j, "val_macro_f1", curve->val_macro_f1, (size_t)r->nl);
    dl_json_f64s(j, "val_accuracy", curve->val_accuracy, (size_t)r->nl);
    dl_json_num(j, "chosen_lambda", r->lambdas[curve->chosen]);
    dl_json_num(j, "chosen_val_macro_f1", curve->val_macro_f1[curve->chosen]);
    dl_json_num(j, "first_lambda", r->lambdas[0]); // the grid's first (0 by default: no L2), to compare with
    dl_json_num(j, "first_val_macro_f1", curve->val_macro_f1[0]);
    dl_json_num(j, "test_accuracy", curve->test.accuracy);
    dl_json_num(j, "test_macro_f1", curve->test.macro_f1);
    dl_json_num(j, "test_micro_f1", curve->test.micro_f1);
    dl_json_num(j, "test_weighted_f1", curve->test.weighted_f1);
    dl_json_int(j, "zero_division_classes", curve->test.zero_division);
    dl_json_array(j, "per_class");
    for (int c = 0; c < C; c++) {
        dl_json_object(j, NULL);
        dl_json_str(j, "class", dl_dataset_class_name(pool, c, buf, sizeof buf));
        dl_json_num(j, "precision", curve->test.precision[c]);
        dl_json_num(j, "recall", curve->test.recall[c]);
        dl_json_num(j, "f1", curve->test.f1[c]);
        dl_json_int(j, "support", curve->test.support[c]);
        dl_json_end_object(j);
    }
    dl_json_end_array(j);
    dl_json_object(j, "class_counts");
    for (int p = 0; p < 3; p++) {
        double v[1000];
        int m = C < 1000 ? C : 1000;
        for (int c = 0; c < m; c++)
            v[c] = bal->counts[(size_t)c * 3 + p];
        dl_json_f64s(j, part_names[p], v, (size_t)m);
    }
    dl_json_end_object(j);
    dl_json_object(j, "rare_class_share_spread");
    dl_json_str(j, "class", dl_dataset_class_name(pool, bal->rare, buf, sizeof buf));
    dl_json_int(j, "seeds", bal->seeds);
    dl_json_num(j, "random_train_std", bal->sd[0]);
    dl_json_num(j, "random_val_std", bal->sd[1]);
    dl_json_num(j, "stratified_train_std", bal->sd[3]);
    dl_json_num(j, "stratified_val_std", bal->sd[4]);
    spread_range(j, bal, SP_RANDOM, "random_train_min", "random_train_max");
    spread_range(j, bal, SP_RANDOM_VAL, "random_val_min", "random_val_max");
    dl_json_end_object(j);
    dl_json_object(j, "psi");
    dl_json_int(j, "bins", r->psi_bins);
    double mx[2] = {0, 0}, mean[2] = {0, 0};
    for (int q = 0; q < 2; q++) {
        for (size_t f = 0; f < r->d; f++) {
            mx[q] = r->psi[q][f] > mx[q] ? r->psi[q][f] : mx[q];
            mean[q] += r->psi[q][f] / (double)r->d;
        }
    }
    dl_json_num(j, "train_val_max", mx[0]);
    dl_json_num(j, "train_val_mean", mean[0]);
    dl_json_num(j, "train_test_max", mx[1]);
    dl_json_num(j, "train_test_mean", mean[1]);
    dl_json_array(j, "train_test_worst_features");
    for (int w = 0; w < r->nworst; w++) {
        dl_json_object(j, NULL);
        dl_json_int(j, "feature", (long long)r->worst[w]);
        dl_json_num(j, "psi", r->psi[1][r->worst[w]]);
        dl_json_end_object(j);
    }
    dl_json_end_array(j);
    dl_json_end_object(j);
    dl_json_num(j, "train_seconds", r->train_seconds);
    by_lambda(j, r);
    confusion_read(j, r);
    dl_summary_device_io(j, r->io);
}

dl_status lab02_files(dl_engine *E)
{
    const lab02_results *r = &((const lab02_state *)E->ctx)->res;
    size_t C_ = (size_t)r->data->train.n_classes;
    // the matrix as counts and as shares of each true class
    double *cmd = calloc(C_ * C_, sizeof *cmd), *cmn = calloc(C_ * C_, sizeof *cmn);
    dl_status st = cmd && cmn ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t t = 0; st == DL_OK && t < C_; t++) {
        double row = 0;
        for (size_t p = 0; p < C_; p++)
            row += (double)r->test_cm[t * C_ + p];
        for (size_t p = 0; p < C_; p++) {
            cmd[t * C_ + p] = (double)r->test_cm[t * C_ + p];
            cmn[t * C_ + p] = row > 0 ? (double)r->test_cm[t * C_ + p] / row : 0.0;
        }
    }
    if (st == DL_OK)
        st = write_curves(r);
    if (st == DL_OK)
        st = write_confusion(r, cmd, cmn);
    if (st == DL_OK)
        st = write_tables(r);
    free(cmd), free(cmn);
    return st;
}

void lab02_closing(dl_engine *E)
{
    dl_progress_line(&E->pr, 0,
                     "lab02: wrote %s/{metrics,learning,confusion*,per_class,shares,spread,psi}.csv, summary.json%s%s",
                     E->a.out, E->plots[0] ? ", " : "", E->plots);
}

void lab02_teardown(dl_engine *E)
{
    lab02_state *L = E->ctx;
    softmax_engine_free(&L->engine);
    for (int p = 0; p < 3; p++)
        lab02_part_free(&L->p[p]);
    free(L->curves), free(L->test_cm), free(L->psi[0]), free(L->psi[1]);
    lab02_balance_free(&L->bal);
    eval_report_free(&L->curve.test);
    dl_split_free(&L->strat);
    dl_split_free(&L->rnd);
}
