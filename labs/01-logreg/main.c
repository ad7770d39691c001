/* main.c — lab 01's driver: load, split, scale, train, evaluate, plot.
 *
 *   build/labs/lab01                 your code on breast_cancer
 *   build/solutions/lab01            the reference
 *   build/labs/lab01 --no-scale      train on the raw features (the lesson)
 *   build/labs/lab01 --help          every flag
 *
 * Writes into --out: metrics.csv (the learning curve), scaling.csv (scaled vs
 * raw training loss at the same lr), summary.json, and the plots. The
 * plumbing is the engine's (dl/engine.h), the runs train.c's and the flags
 * and files outputs.c's; here is the story around the student's functions
 * (logreg.h). Not a student file. */
#include "logreg.h"
#include "outputs.h" // lab01_state and its pieces

/* The data (two classes), its seeded stratified split, the device, the first line. */
static dl_status setup(dl_engine *E)
{
    lab01_state *S = E->ctx;
    DL_TRY(dl_data_load(E->a.data, &E->data));
    if (E->data.train.n_classes != 2)
        return dl_error_set(DL_ERR_ARG,
                            "--data %s has %d classes; lab 01 is binary classification: use "
                            "breast_cancer, synthetic:classes=2,... or a CSV whose last column is 0/1",
                            E->a.data, E->data.train.n_classes);
    DL_TRY(lab01_split_make(&E->data.train, S, E->a.seed));
    DL_TRY(dl_device_open_spec(&E->a.dev, &E->dev));
    dl_progress_line(&E->pr, 0, "lab01: %s, %zu train / %zu val / %zu test rows, %zu features, device %s", E->data.name,
                     S->sd.n[0], S->sd.n[1], S->sd.n[2], S->sd.d, dl_device_describe(&E->dev));
    return DL_OK;
}

/* Lab 01's epochs are logreg_train's own, so this hook runs once: the
 * scaler fitted on the training rows only (task 1), the main run, and the
 * same lr on the other features. */
static dl_status train(dl_engine *E, int e)
{
    lab01_state *S = E->ctx;
    (void)e;
    E->stop = 1;
    DL_TRY(lab01_scale(S));
    const float *const scaled[3] = {S->Xs[0], S->Xs[1], S->Xs[2]};
    const float *const raw[3] = {S->sd.X[0], S->sd.X[1], S->sd.X[2]};
    S->have_other = !S->no_compare;
    DL_TRY(lab01_train_run(&E->dev, S, S->no_scale ? raw : scaled, &E->a, &S->main_run));
    if (S->have_other)
        DL_TRY(lab01_train_run(&E->dev, S, S->no_scale ? scaled : raw, &E->a, &S->other));
    return DL_OK;
}

/* The test rows scored once, on the CPU, then the report. */
static dl_status finish(dl_engine *E)
{
    DL_TRY(lab01_test_scores(E->ctx));
    return lab01_report(E);
}

static const dl_lab lab01 = {
    .prog = "lab01",
    .dir = "01-logreg",
    .about = "Lab 01: logistic regression with feature scaling. Trains on a seeded stratified train/val/test split, "
             "writes metrics.csv, scaling.csv, summary.json and plots into --out.",
    .metrics = lab01_metrics,
    .defaults = lab01_defaults,
    .options = lab01_options,
    .setup = setup,
    .epoch = train,
    .finish = finish,
    .files = lab01_files,
    .plots = lab01_plots,
    .summary = lab01_summary,
    .closing = lab01_closing,
    .teardown = lab01_teardown,
    .flags = DL_LAB_HOST | DL_LAB_NO_TRACE | DL_LAB_ONE_PROCESS,
};

static lab01_state S;
DL_LAB_MAIN(lab01, &S)
