/* outputs.h — lab 01's driver plumbing (outputs.c), so that main.c reads as
 * the lab's story: the seeded stratified train/val/test split gathered into
 * rows, and every file the driver writes (metrics.csv, scaling.csv, the
 * plots and summary.json). Not a student file; the grader does not use it. */
#ifndef LAB01_OUTPUTS_H
#define LAB01_OUTPUTS_H

#include <stddef.h> // size_t

#include "dl/cli.h" // dl_args
#include "dl/data.h" // dl_data, dl_dataset
#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_run_io
#include "logreg.h" // logreg_model, logreg_curve, logreg_scaler

/* The driver's flags: those of every driver, then lab 01's own. */
typedef struct lab01_options {
    dl_args a;
    double lambda, tol;
    int no_scale, no_compare;
    double val_frac, test_frac;
} lab01_options;

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

/* Splits ds stratified with fractions 1 − val − test, val, test (seed
 * o->a.seed) and copies each part's rows into sd, which it allocates. An
 * empty part is DL_ERR_ARG, no memory DL_ERR_NOMEM; after either,
 * lab01_split_free frees what was allocated. */
dl_status lab01_split_make(const dl_dataset *ds, const lab01_options *o, lab01_split *sd);
void lab01_split_free(lab01_split *sd);

/* What the files are written from. */
typedef struct lab01_results {
    const lab01_options *o;
    const dl_data *data;
    const lab01_split *sd;
    const dl_device *dev;
    const logreg_scaler *s; /* fitted on the training rows (reported even with --no-scale) */
    const lab01_run *main_run; /* on the features o->no_scale chooses */
    const lab01_run *other; /* the same lr on the other features, or NULL (--no-compare) */
    double test_acc, test_loss; /* main_run's model on the test part */
} lab01_results;

/* Writes into r->o->a.out metrics.csv (main_run's curve), scaling.csv (when
 * other is not NULL: the standardised and raw training losses; else an
 * earlier run's scaling.csv and plot are removed), draws the plots (--plot)
 * and writes summary.json (and --json). plots gets the list
 * of plot files drawn (len bytes). Stops at the first file that cannot be
 * written and returns its status. */
dl_status lab01_write_outputs(const lab01_results *r, char *plots, size_t len);

#endif /* LAB01_OUTPUTS_H */
