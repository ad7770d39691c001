/* outputs.h — lab 02's driver plumbing (outputs.c), so that main.c reads as
 * the lab's story: the rows of each part, the class shares of a random and a
 * stratified split and their spread over many seeds, the features that
 * drifted most, and every file the driver writes (the CSVs, the plots and
 * summary.json). Not a student file; the grader does not use it. */
#ifndef LAB02_OUTPUTS_H
#define LAB02_OUTPUTS_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, int64_t, uint64_t

#include "dl/data.h" // dl_data, dl_dataset
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/metrics.h" // DL_CSV_SCHEMA
#include "dl/split.h" // dl_split
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_run_io
#include "eval.h" // eval_curve

#define LAB02_MAX_LAMBDAS 16

/* Rows of one part, gathered on the host. */
typedef struct lab02_part {
    size_t n;
    float *X; /* (n, d) */
    int32_t *y; /* (n,) */
} lab02_part;

/* Parses a comma-separated list of up to LAB02_MAX_LAMBDAS non-negative
 * numbers into out. Returns how many, or -1 for anything else. */
int lab02_parse_lambdas(const char *s, double *out);

/* Copies the rows idx[0..m) of ds (the first m rows when idx is NULL) into
 * out, which it allocates; DL_ERR_NOMEM leaves what it allocated for
 * lab02_part_free. */
dl_status lab02_gather(const dl_dataset *ds, const size_t *idx, size_t m, lab02_part *out);
void lab02_part_free(lab02_part *p);

/* A random split against the stratified one: each class's share of each
 * part, and the spread of the rarest class's share over many seeds. */
typedef struct lab02_balance {
    int C;
    int rare; /* the class with the fewest rows in the pool (the first on ties) */
    double *shares; /* (C, 7): share in random train/val/test, then stratified train/val/test, then in the pool */
    double *counts; /* (C, 3): rows in the stratified train/val/test parts */
    int seeds;
    double *spread; /* (seeds, 7): the seed, then the rare class's share in the six parts */
    double sd[6]; /* sample std over the seeds of each of the six shares */
} lab02_balance;

/* The rare class's share of each part over the seeds: lab02_balance.spread's columns. */
// clang-format off
#define SPREAD(X)                            \
    X(SP_SEED, "seed")                       \
    X(SP_RANDOM, "random_train")             \
    X(SP_RANDOM_VAL, "random_val")           \
    X(SP_RANDOM_TEST, "random_test")         \
    X(SP_STRATIFIED, "stratified_train")     \
    X(SP_STRATIFIED_VAL, "stratified_val")   \
    X(SP_STRATIFIED_TEST, "stratified_test")
// clang-format on
DL_CSV_SCHEMA(spread_cols, SPREAD);
/* Each class's share of each part: the class, then lab02_balance.shares's columns. */
// clang-format off
#define SHARES(X)                            \
    X(SH_CLASS, "class")                     \
    X(SH_RANDOM, "random_train")             \
    X(SH_RANDOM_VAL, "random_val")           \
    X(SH_RANDOM_TEST, "random_test")         \
    X(SH_STRATIFIED, "stratified_train")     \
    X(SH_STRATIFIED_VAL, "stratified_val")   \
    X(SH_STRATIFIED_TEST, "stratified_test") \
    X(SH_POOL, "pool")
// clang-format on
DL_CSV_SCHEMA(shares, SHARES);

/* shares[c][col] of lab02_balance (no label column: col of SHARES less one) */
#define SHARE(b, c, col) ((b)->shares[(size_t)(c) * (SHARES_NCOLS - 1) + (col)-1])
_Static_assert(SHARES_NCOLS - 1 == 7 && SPREAD_NCOLS == 7, "lab02_balance's shares and spread are (, 7)");

/* Fills b for the pool data->train split into rnd and strat with frac; an
 * official test split (data->has_test) is the test part of both. The spread
 * uses `seeds` seeds (1000, 1001, ...) and calls the student's
 * eval_split_stratified, whose error it returns. lab02_balance_free frees b,
 * also after an error. */
dl_status lab02_balance_compute(const dl_data *data, const dl_split *rnd, const dl_split *strat, const double frac[3],
                                int seeds, lab02_balance *b);
void lab02_balance_free(lab02_balance *b);

/* The indices of the n features with the largest psi, largest first (the
 * lower index on ties); n <= d. Cannot fail. */
void lab02_worst_features(const double *psi, size_t d, size_t *worst, int n);

/* What the files are written from. */
typedef struct lab02_results {
    const char *out, *json, *plot; /* --out, --json (NULL: none), --plot */
    const dl_data *data;
    const char *device; /* dl_device_describe */
    size_t rows[3]; /* rows in train, val, test */
    double lr;
    int epochs, batch_size;
    uint64_t seed;
    const double *lambdas; /* (nl,) */
    int nl;
    const eval_curve *curve; /* validation scores, the chosen λ and its test report */
    const double *learning; /* (nl, epochs): training loss per epoch for each λ */
    const int64_t *test_cm; /* (C, C): the chosen model on the test part */
    const lab02_balance *balance;
    const double *psi[2]; /* (d,): train against val, train against test */
    size_t d;
    int psi_bins;
    const size_t *worst; /* (nworst,): lab02_worst_features of psi[1] */
    int nworst;
    double train_seconds;
    const dl_run_io *io; /* the validation curve's device counters (summary.json's device_io) */
} lab02_results;

/* The run (the engine's ctx): lab 02's own flags (the common ones are the
 * engine's E->a), the data's parts, and what each step leaves for the next
 * (the callbacks of eval_validation_curve read it too). */
typedef struct lab02_state {
    lab02_results res; /* what the files are written from (lab02_results_fill) */
    const char *lambdas_arg; /* --lambdas */
    double val_frac, test_frac;
    long train_rows;
    int spread_seeds, psi_bins;
    double lambdas[LAB02_MAX_LAMBDAS]; /* (nl,) --lambdas, parsed */
    int nl;
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
} lab02_state;

/* The engine's hooks (dl/engine.h) that are plumbing: the defaults, the
 * flags and --lambdas parsed (refused, exit 2, when it is not a list), the
 * files (metrics.csv, learning.csv when epochs > 0, confusion.csv,
 * confusion_norm.csv, confusion_long.csv, per_class.csv, shares.csv,
 * spread.csv and psi.csv), the plots, summary.json's body, the closing line
 * and the teardown (everything the run allocated; safe after an error). */
void lab02_defaults(dl_engine *E);
int lab02_options(dl_engine *E, dl_opt *out);
dl_status lab02_check(dl_engine *E);
dl_status lab02_files(dl_engine *E);
void lab02_plots(dl_engine *E, dl_plots *p);
void lab02_summary(dl_json *j, const void *ctx);
void lab02_closing(dl_engine *E);
void lab02_teardown(dl_engine *E);

/* train.c: --data refused with fewer than two classes, and each part's
 * share of the pool; the honest split and what a random one would have
 * done; one model per λ, chosen on validation, tested once; the drift; then
 * S->res filled for the files. */
dl_status lab02_plan(dl_engine *E);
dl_status lab02_split(dl_engine *E);
dl_status lab02_balance_line(dl_engine *E);
dl_status lab02_choose(dl_engine *E);
dl_status lab02_drift(dl_engine *E);
void lab02_results_fill(dl_engine *E);

#endif /* LAB02_OUTPUTS_H */
