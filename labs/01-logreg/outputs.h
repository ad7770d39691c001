/* outputs.h — lab 01's driver plumbing (outputs.c, train.c), so that main.c
 * reads as the lab's story: its flags, the seeded stratified train/val/test
 * split gathered into rows, the training runs, and every file the driver
 * writes (metrics.csv, scaling.csv, the plots and summary.json). Not a
 * student file; the grader does not use it. */
#ifndef LAB01_OUTPUTS_H
#define LAB01_OUTPUTS_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_run_io
#include "logreg.h" // logreg_model, logreg_curve, logreg_scaler

/* The rows of the three parts: train, val, test. */
typedef struct lab01_split {
    size_t n[3], d;
    float *X[3]; /* (n[p], d) raw features */
    float *y[3]; /* (n[p],) labels 0 or 1 */
} lab01_split;

/* One training run: the model it reached, its curve, its wall time, and
 * what it asked of the device (the counters when the engine was made, when
 * its rows were resident and after training; the mini-batch steps). */
typedef struct lab01_run {
    logreg_model m;
    logreg_curve c;
    double seconds;
    dl_run_io io;
} lab01_run;

/* The driver's state (the engine's ctx): lab 01's own flags (the common
 * ones are the engine's E->a), the split, the scaler and the runs. */
typedef struct lab01_state {
    double lambda, tol;
    int no_scale, no_compare;
    double val_frac, test_frac;
    lab01_split sd;
    logreg_scaler s; /* fitted on the training rows (reported even with --no-scale) */
    float *Xs[3]; /* each part's rows standardised */
    lab01_run main_run; /* on the features no_scale chooses */
    lab01_run other; /* the same lr on the other features (not with --no-compare) */
    int have_other;
    double test_acc, test_loss; /* main_run's model on the test part */
} lab01_state;

/* metrics.csv: the main run's curve, one row per epoch */
// clang-format off
#define LAB01_METRICS(X)                  \
    X(LAB01_EPOCH, "epoch")               \
    X(LAB01_TRAIN_LOSS, "train_loss")     \
    X(LAB01_VAL_LOSS, "val_loss")         \
    X(LAB01_VAL_ACC, "val_acc")           \
    X(LAB01_GRAD_NORM, "grad_norm")
// clang-format on
DL_CSV_SCHEMA(lab01_metrics, LAB01_METRICS);

/* The engine's hooks (dl/engine.h) that are plumbing: the defaults and
 * flags, metrics.csv's columns, the files beside it (scaling.csv when the
 * other run was made; else an earlier run's scaling.csv is removed), the
 * plots, summary.json's body, the closing line and the teardown. */
void lab01_defaults(dl_engine *E);
int lab01_options(dl_engine *E, dl_opt *out);
dl_status lab01_files(dl_engine *E);
void lab01_plots(dl_engine *E, dl_plots *p);
void lab01_summary(dl_json *j, const void *ctx);
void lab01_closing(dl_engine *E);
void lab01_teardown(dl_engine *E);

/* Splits ds stratified with fractions 1 − val − test, val, test (seed) and
 * copies each part's rows into S->sd, which it allocates. An empty part is
 * DL_ERR_ARG, no memory DL_ERR_NOMEM; after either, lab01_teardown frees
 * what was allocated. */
dl_status lab01_split_make(const dl_dataset *ds, lab01_state *S, uint64_t seed);

/* The curve at epochs 0, 1, 2, 4, 8, ... and the last, the end of
 * training, the other run's loss, a warning for a loss that is not finite;
 * then metrics.csv's rows (the main run's curve) into E->metrics. */
dl_status lab01_report(dl_engine *E);

/* train.c: the scaler fitted on the training rows and every part
 * standardised (task 1); a run trained on X (train, val, test rows) into r,
 * timed; the main run's model scored once on the test rows. */
dl_status lab01_scale(lab01_state *S);
dl_status lab01_train_run(const dl_device *dev, const lab01_state *S, const float *const *X, const dl_args *a,
                          lab01_run *r);
dl_status lab01_test_scores(lab01_state *S);

#endif /* LAB01_OUTPUTS_H */
