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
#include "dl/summary.h" // dl_run_io
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

/* The run: the flags, the data and its parts, and what each step leaves for
 * the next (the callbacks of eval_validation_curve read it too). */
typedef struct lab {
    options o;
    double lambdas[LAB02_MAX_LAMBDAS]; /* (nl,) --lambdas, parsed */
    int nl;
    dl_data data;
    dl_device dev;
    size_t d; /* features */
    int C; /* classes */
    double frac[3]; /* train, val, test shares of the pool */
    dl_split strat, rnd;
    lab02_part p[3]; /* train, val, test */
    lab02_balance bal;
    softmax_engine engine;
    softmax_config cfg;
    double val_f1[LAB02_MAX_LAMBDAS], val_acc[LAB02_MAX_LAMBDAS]; /* (nl,) validation scores */
    eval_curve curve;
    double *curves; /* (n_lambdas, epochs) training loss per epoch */
    int trained;
    int64_t *test_cm; /* the confusion matrix of the one model scored on test */
    int test_scored;
    double train_s; /* seconds the validation curve took */
    dl_run_io io; /* what the validation curve asked of the device (summary.json's device_io) */
    double *psi[2]; /* (d,) train against val, train against test */
    size_t worst[5]; /* (nworst,) the features that drifted most, train against test */
    int nworst;
} lab;

static int fail(dl_status st)
{
    fprintf(stderr, "lab02: error: %s\n", dl_last_error()[0] ? dl_last_error() : dl_status_str(st));
    return dl_exit_code(st);
}

// ---- the flags ----

/* The flags into o and --lambdas into lambdas (*nl of them): DL_CLI_RUN,
 * DL_CLI_HELP or DL_CLI_ERROR (dl/cli.h), after saying why. */
static int parse(int argc, char **argv, options *o, double *lambdas, int *nl)
{
    dl_args_defaults(&o->a);
    o->a.data = "fashion_mnist";
    o->a.epochs = 0; // by the data set: see preset()
    o->a.batch_size = 128;
    o->a.lr = 0.2;
    o->a.out = "build/run/02-evaluation";
    o->lambdas = "0,1e-4,3e-4,1e-3,3e-3,1e-2,3e-2,1e-1";
    o->val_frac = 0.0;
    o->test_frac = 0.2;
    o->train_rows = 0;
    o->spread_seeds = 100;
    o->psi_bins = 10;
    const dl_opt extra[] = {
        {"lambdas", DL_OPT_STRING, &o->lambdas, "LIST", "L2 strengths to compare, comma-separated", NULL, 1, 0},
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
    int rc = dl_cli_parse(argc, argv, "lab02",
                          "Lab 02: honest evaluation. Stratified splits, softmax regression for a grid of "
                          "lambda chosen on validation data, a confusion matrix and per-class metrics of "
                          "the chosen model on the test split, and a drift check. --epochs and --train-rows 0 "
                          "(their defaults) mean: on a set with an official test split (Fashion-MNIST) 300 "
                          "epochs on 1000 training rows, where the model overfits and lambda matters; on "
                          "the others 12 epochs on every row val and test leave.",
                          &o->a, extra, sizeof extra / sizeof extra[0]);
    if (rc != DL_CLI_RUN)
        return rc;
    if (dl_cli_single_process(argv[0]) == DL_CLI_ERROR)
        return DL_CLI_ERROR;
    *nl = lab02_parse_lambdas(o->lambdas, lambdas);
    if (*nl < 1) {
        fprintf(stderr, "lab02: error: --lambdas '%s': expected up to %d non-negative numbers, comma-separated\n",
                o->lambdas, LAB02_MAX_LAMBDAS);
        return DL_CLI_ERROR;
    }
    return DL_CLI_RUN;
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

// ---- data and the honest split ----

/* --data into L->data; a set of fewer than two classes is refused (and freed). */
static dl_status load(lab *L)
{
    DL_TRY(dl_data_load(L->o.a.data, &L->data));
    L->d = L->data.train.d;
    L->C = L->data.train.n_classes;
    if (L->C < 2) {
        dl_data_free(&L->data);
        return dl_error_set(DL_ERR_ARG, "--data %s has %d class: nothing to classify", L->o.a.data, L->C);
    }
    return DL_OK;
}

/* Each part's share of the pool (the training rows): an official test split
 * is kept and validation carved out of train; else all three come from the
 * pool. The data set's defaults (preset) and --train-rows shrink train. */
static void plan(lab *L)
{
    options *o = &L->o;
    double *frac = L->frac;
    if (L->data.has_test) {
        double vf = o->val_frac > 0 ? o->val_frac : 1.0 / 6.0;
        frac[0] = 1.0 - vf, frac[1] = vf, frac[2] = 0.0;
    } else {
        double vf = o->val_frac > 0 ? o->val_frac : 0.2;
        frac[0] = 1.0 - vf - o->test_frac, frac[1] = vf, frac[2] = o->test_frac;
    }
    preset(o, L->data.has_test);
    size_t n = L->data.train.n;
    if (o->train_rows > 0 && (double)o->train_rows < frac[0] * (double)n) // fewer rows: the rest in no part
        frac[0] = (double)o->train_rows / (double)n;
}

/* --out made and cleared of a stale summary, then the stratified split (and a
 * random one to compare) and the three parts' rows gathered into L->p; says
 * what the parts hold. */
static dl_status split(lab *L, dl_progress *pr)
{
    const dl_dataset *pool = &L->data.train;
    char summary[1200];
    dl_status st = dl_mkdir_p(L->o.a.out);
    snprintf(summary, sizeof summary, "%s/summary.json", L->o.a.out);
    remove(summary); // a stale summary must not look like this run's
    DL_TRY(st);
    DL_TRY(eval_split_stratified(pool->y, pool->n, L->C, L->frac, L->o.a.seed, &L->strat));
    DL_TRY(eval_split_random(pool->n, L->frac, L->o.a.seed, &L->rnd));
    for (int p = 0; p < 2; p++)
        DL_TRY(lab02_gather(pool, L->strat.idx + L->strat.offset[p], dl_split_size(&L->strat, p), &L->p[p]));
    if (L->data.has_test)
        DL_TRY(lab02_gather(&L->data.test, NULL, L->data.test.n, &L->p[2]));
    else
        DL_TRY(lab02_gather(pool, L->strat.idx + L->strat.offset[2], dl_split_size(&L->strat, 2), &L->p[2]));
    dl_progress_line(pr, 0, "lab02: %s, %d classes, %zu train / %zu val / %zu test rows%s, %zu features, device %s",
                     L->data.name, L->C, L->p[0].n, L->p[1].n, L->p[2].n, L->data.has_test ? " (official test)" : "",
                     L->d, dl_device_describe(&L->dev));
    return DL_OK;
}

/* What a random split would have done: class shares, and the rarest class
 * over many seeds. */
static dl_status balance(lab *L, dl_progress *pr)
{
    DL_TRY(lab02_balance_compute(&L->data, &L->rnd, &L->strat, L->frac, L->o.spread_seeds, &L->bal));
    char buf[32];
    dl_progress_line(pr, 0,
                     "lab02: share of the rarest class (%s) over %d seeds, std dev train/val: random %.2e/%.2e, "
                     "stratified %.2e/%.2e",
                     dl_dataset_class_name(&L->data.train, L->bal.rare, buf, sizeof buf), L->o.spread_seeds,
                     L->bal.sd[0], L->bal.sd[1], L->bal.sd[3], L->bal.sd[4]);
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
    lab *L = ctx;
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
static dl_status choose(lab *L, dl_progress *pr)
{
    const options *o = &L->o;
    int nl = L->nl;
    L->cfg = (softmax_config){o->a.lr, 0.0, o->a.epochs, (size_t)o->a.batch_size, o->a.seed};
    L->curve = (eval_curve){nl, L->lambdas, L->val_f1, L->val_acc, -1, {0}};
    L->curves = calloc((size_t)nl * (size_t)(o->a.epochs > 0 ? o->a.epochs : 1), sizeof *L->curves);
    L->test_cm = calloc((size_t)L->C * (size_t)L->C, sizeof *L->test_cm);
    if (L->curves == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    DL_TRY(eval_report_alloc(&L->curve.test, L->C));
    if (L->test_cm == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    dl_dev_stats_get(&L->io.start);
    DL_TRY(softmax_engine_init(&L->engine, &L->dev, L->p[0].X, L->p[0].y, L->p[0].n, L->d, L->C));
    for (int p = EVAL_VAL; p <= EVAL_TEST; p++) // the parts the models are scored on: uploaded once, here
        DL_TRY(softmax_engine_hold(&L->engine, L->p[p].X, L->p[p].y, L->p[p].n));
    dl_dev_stats_get(&L->io.resident);
    double t0 = dl_now();
    eval_trainer tr = {L, train_cb, score_cb, release_cb};
    dl_status st = eval_validation_curve(&tr, &L->curve);
    L->train_s = dl_now() - t0;
    dl_dev_stats_get(&L->io.end);
    L->io.epochs = L->trained * o->a.epochs;
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

static dl_status drift(lab *L, dl_progress *pr)
{
    for (int k = 0; k < 2; k++) {
        L->psi[k] = calloc(L->d ? L->d : 1, sizeof(double));
        if (L->psi[k] == NULL)
            return dl_error_set(DL_ERR_NOMEM, "out of memory");
        DL_TRY(eval_psi(L->p[0].X, L->p[0].n, L->p[1 + k].X, L->p[1 + k].n, L->d, L->o.psi_bins, L->psi[k]));
    }
    L->nworst = L->d < 5 ? (int)L->d : 5;
    lab02_worst_features(L->psi[1], L->d, L->worst, L->nworst);
    dl_progress_line(pr, 0,
                     "lab02: drift train->test: largest PSI %.4f (feature %zu); PSI < 0.1 is usually read as stable",
                     L->psi[1][L->worst[0]], L->worst[0]);
    return DL_OK;
}

// ---- files and plots ----

/* Every file and plot into --out (outputs.c writes them), then says which. */
static dl_status write_files(const lab *L, dl_progress *pr)
{
    const options *o = &L->o;
    char plots[512] = "";
    lab02_results res = {o->a.out,
                         o->a.json,
                         o->a.plot,
                         &L->data,
                         dl_device_describe(&L->dev),
                         {L->p[0].n, L->p[1].n, L->p[2].n},
                         o->a.lr,
                         o->a.epochs,
                         o->a.batch_size,
                         o->a.seed,
                         L->lambdas,
                         L->nl,
                         &L->curve,
                         L->curves,
                         L->test_cm,
                         &L->bal,
                         {L->psi[0], L->psi[1]},
                         L->d,
                         o->psi_bins,
                         L->worst,
                         L->nworst,
                         L->train_s,
                         &L->io};
    DL_TRY(lab02_write_outputs(&res, plots, sizeof plots));
    dl_progress_line(pr, 0,
                     "lab02: wrote %s/{metrics,learning,confusion*,per_class,shares,spread,psi}.csv, summary.json%s%s",
                     o->a.out, plots[0] ? ", " : "", plots);
    return DL_OK;
}

/* Everything the run allocated after the device opened; safe after an error. */
static void release(lab *L)
{
    softmax_engine_free(&L->engine);
    for (int p = 0; p < 3; p++)
        lab02_part_free(&L->p[p]);
    free(L->curves), free(L->test_cm), free(L->psi[0]), free(L->psi[1]);
    lab02_balance_free(&L->bal);
    eval_report_free(&L->curve.test);
    dl_split_free(&L->strat);
    dl_split_free(&L->rnd);
    dl_device_close(&L->dev);
    dl_data_free(&L->data);
}

/* Parse; load the data and split it honestly; show what a random split would
 * have done; train one model per λ, choose on validation, test once; check
 * the drift; write the files and plots. */
int main(int argc, char **argv)
{
    lab L;
    memset(&L, 0, sizeof L); // release() frees only what was made
    int rc = parse(argc, argv, &L.o, L.lambdas, &L.nl);
    if (rc != DL_CLI_RUN)
        return rc == DL_CLI_HELP ? 0 : 2;
    dl_status st = load(&L);
    if (st != DL_OK)
        return fail(st);
    plan(&L);
    st = dl_device_open_spec(&L.o.a.dev, &L.dev);
    if (st != DL_OK) {
        dl_data_free(&L.data);
        return fail(st);
    }
    dl_progress pr;
    dl_progress_begin(&pr, L.o.a.epochs, 1, L.o.a.quiet);
    st = split(&L, &pr);
    if (st == DL_OK)
        st = balance(&L, &pr);
    if (st == DL_OK)
        st = choose(&L, &pr);
    if (st == DL_OK)
        st = drift(&L, &pr);
    if (st == DL_OK)
        st = write_files(&L, &pr);
    dl_progress_end(&pr);
    release(&L);
    return st == DL_OK ? 0 : fail(st);
}
