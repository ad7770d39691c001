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
 * spread.csv, psi.csv, summary.json and the plots (outputs.c writes them).
 * Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // fprintf, snprintf, remove
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load
#include "dl/device.h" // dl_device_open_spec
#include "dl/fs.h" // dl_mkdir_p
#include "dl/progress.h" // dl_progress_line
#include "dl/timer.h" // dl_now
#include "eval.h"
#include "outputs.h" // lab02_gather, lab02_balance, lab02_write_outputs

typedef struct options {
    dl_args a;
    const char *lambdas;
    double val_frac, test_frac;
    long train_rows;
    int spread_seeds, psi_bins;
} options;

typedef struct lab {
    const options *o;
    const dl_device *dev;
    size_t d;
    int C;
    lab02_part p[3]; /* train, val, test */
    softmax_engine engine;
    softmax_config cfg;
    double *curves; /* (n_lambdas, epochs) training loss per epoch */
    int trained;
    int64_t *test_cm; /* the confusion matrix of the one model scored on test */
    int test_scored;
} lab;

static int fail(dl_status st)
{
    fprintf(stderr, "lab02: error: %s\n", dl_last_error()[0] ? dl_last_error() : dl_status_str(st));
    return dl_exit_code(st);
}

// ---- the run each data set gets by default ----

/* --epochs and --train-rows left at 0. On Fashion-MNIST's 50000 training
 * rows a linear model of 7850 weights has no room to overfit: every lambda
 * only costs, lambda = 0 wins, and the validation curve would teach nothing.
 * On 1000 rows trained to convergence (300 epochs, 2400 steps) it overfits:
 * a little L2 helps, too much hurts, and the choice is made on validation
 * data. Other sets (no official test split) keep every row and 12 epochs. */
static void preset(options *o, int official_test)
{
    if (o->a.epochs == 0)
        o->a.epochs = official_test ? 300 : 12;
    if (o->train_rows == 0)
        o->train_rows = official_test ? 1000 : 0;
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
    const lab02_part *p = &L->p[split];
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

int main(int argc, char **argv)
{
    options o;
    dl_args_defaults(&o.a);
    o.a.data = "fashion_mnist";
    o.a.epochs = 0; // by the data set: see preset()
    o.a.batch_size = 128;
    o.a.lr = 0.2;
    o.a.out = "build/run/02-evaluation";
    o.lambdas = "0,1e-4,3e-4,1e-3,3e-3,1e-2,3e-2,1e-1";
    o.val_frac = 0.0;
    o.test_frac = 0.2;
    o.train_rows = 0;
    o.spread_seeds = 100;
    o.psi_bins = 10;
    const dl_opt extra[] = {
        {"lambdas", DL_OPT_STRING, &o.lambdas, "LIST", "L2 strengths to compare, comma-separated", NULL, 1, 0},
        {"val-frac", DL_OPT_DOUBLE, &o.val_frac, "X",
         "validation share (0 = 1/6 with an official test split, else 0.2)", NULL, 0, 0.5},
        {"test-frac", DL_OPT_DOUBLE, &o.test_frac, "X", "test share when the set has no official test split", NULL,
         0.01, 0.5},
        {"train-rows", DL_OPT_LONG, &o.train_rows, "N",
         "training rows, a stratified part like the others (0: by the data set, see above; more than there are: every "
         "row val and test leave)",
         NULL, 0, 1e9},
        {"spread-seeds", DL_OPT_INT, &o.spread_seeds, "N", "seeds for the random-vs-stratified spread", NULL, 2, 10000},
        {"psi-bins", DL_OPT_INT, &o.psi_bins, "N", "bins of the drift check", NULL, 2, 1000},
    };
    int rc = dl_cli_parse(argc, argv, "lab02",
                          "Lab 02: honest evaluation. Stratified splits, softmax regression for a grid of "
                          "lambda chosen on validation data, a confusion matrix and per-class metrics of "
                          "the chosen model on the test split, and a drift check. --epochs and --train-rows 0 "
                          "(their defaults) mean: on a set with an official test split (Fashion-MNIST) 300 "
                          "epochs on 1000 training rows, where the model overfits and lambda matters; on "
                          "the others 12 epochs on every row val and test leave.",
                          &o.a, extra, sizeof extra / sizeof extra[0]);
    if (rc == DL_CLI_HELP)
        return 0;
    if (rc == DL_CLI_ERROR || dl_cli_single_process(argv[0]) == DL_CLI_ERROR)
        return 2;
    double lambdas[LAB02_MAX_LAMBDAS];
    int nl = lab02_parse_lambdas(o.lambdas, lambdas);
    if (nl < 1) {
        fprintf(stderr, "lab02: error: --lambdas '%s': expected up to %d non-negative numbers, comma-separated\n",
                o.lambdas, LAB02_MAX_LAMBDAS);
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
    preset(&o, data.has_test);
    if (o.train_rows > 0 && (double)o.train_rows < frac[0] * (double)pool->n) // fewer rows: the rest in no part
        frac[0] = (double)o.train_rows / (double)pool->n;
    dl_device dev;
    st = dl_device_open_spec(&o.a.dev, &dev);
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
        st = lab02_gather(pool, strat.idx + strat.offset[p], dl_split_size(&strat, p), &L.p[p]);
    if (st == DL_OK && data.has_test)
        st = lab02_gather(&data.test, NULL, data.test.n, &L.p[2]);
    else if (st == DL_OK)
        st = lab02_gather(pool, strat.idx + strat.offset[2], dl_split_size(&strat, 2), &L.p[2]);
    dl_progress pr;
    dl_progress_begin(&pr, o.a.epochs, 1, o.a.quiet);
    if (st == DL_OK)
        dl_progress_line(
            &pr, 0, "lab02: %s, %d classes, %zu train / %zu val / %zu test rows%s, %zu features, device %s", data.name,
            C, L.p[0].n, L.p[1].n, L.p[2].n, data.has_test ? " (official test)" : "", L.d, dl_device_describe(&dev));

    // ---- what a random split would have done: class shares, and the rarest class over many seeds ----
    lab02_balance bal;
    memset(&bal, 0, sizeof bal);
    if (st == DL_OK)
        st = lab02_balance_compute(&data, &rnd, &strat, frac, o.spread_seeds, &bal);
    if (st == DL_OK) {
        char buf[32];
        dl_progress_line(&pr, 0,
                         "lab02: share of the rarest class (%s) over %d seeds, std dev train/val: random %.2e/%.2e, "
                         "stratified %.2e/%.2e",
                         dl_dataset_class_name(pool, bal.rare, buf, sizeof buf), o.spread_seeds, bal.sd[0], bal.sd[1],
                         bal.sd[3], bal.sd[4]);
    }

    // ---- the validation curve: one model per lambda, chosen on validation, tested once ----
    double val_f1[LAB02_MAX_LAMBDAS], val_acc[LAB02_MAX_LAMBDAS];
    eval_curve curve = {nl, lambdas, val_f1, val_acc, -1, {0}};
    L.curves = calloc((size_t)nl * (size_t)(o.a.epochs > 0 ? o.a.epochs : 1), sizeof *L.curves);
    if (st == DL_OK)
        st = L.curves ? eval_report_alloc(&curve.test, C) : dl_error_set(DL_ERR_NOMEM, "out of memory");
    L.test_cm = calloc((size_t)C * (size_t)C, sizeof *L.test_cm);
    if (st == DL_OK && L.test_cm == NULL)
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

    // ---- drift: train vs val and train vs test ----
    double *psi[2] = {calloc(L.d ? L.d : 1, sizeof(double)), calloc(L.d ? L.d : 1, sizeof(double))};
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = psi[k] ? eval_psi(L.p[0].X, L.p[0].n, L.p[1 + k].X, L.p[1 + k].n, L.d, o.psi_bins, psi[k])
                    : dl_error_set(DL_ERR_NOMEM, "out of memory");
    size_t worst[5] = {0};
    int nworst = L.d < 5 ? (int)L.d : 5;
    if (st == DL_OK) {
        lab02_worst_features(psi[1], L.d, worst, nworst);
        dl_progress_line(
            &pr, 0, "lab02: drift train->test: largest PSI %.4f (feature %zu); PSI < 0.1 is usually read as stable",
            psi[1][worst[0]], worst[0]);
    }

    // ---- files and plots ----
    char plots[512] = "";
    if (st == DL_OK) {
        lab02_results res = {o.a.out,
                             o.a.json,
                             o.a.plot,
                             &data,
                             dl_device_describe(&dev),
                             {L.p[0].n, L.p[1].n, L.p[2].n},
                             o.a.lr,
                             o.a.epochs,
                             o.a.batch_size,
                             o.a.seed,
                             lambdas,
                             nl,
                             &curve,
                             L.curves,
                             L.test_cm,
                             &bal,
                             {psi[0], psi[1]},
                             L.d,
                             o.psi_bins,
                             worst,
                             nworst,
                             train_s};
        st = lab02_write_outputs(&res, plots, sizeof plots);
    }
    if (st == DL_OK)
        dl_progress_line(
            &pr, 0, "lab02: wrote %s/{metrics,learning,confusion*,per_class,shares,spread,psi}.csv, summary.json%s%s",
            o.a.out, plots[0] ? ", " : "", plots);
    dl_progress_end(&pr);
    softmax_engine_free(&L.engine);
    for (int p = 0; p < 3; p++)
        lab02_part_free(&L.p[p]);
    free(L.curves), free(L.test_cm), free(psi[0]), free(psi[1]);
    lab02_balance_free(&bal);
    eval_report_free(&curve.test);
    dl_split_free(&strat);
    dl_split_free(&rnd);
    dl_device_close(&dev);
    dl_data_free(&data);
    return st == DL_OK ? 0 : fail(st);
}
