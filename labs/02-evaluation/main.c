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
 * spread.csv, psi.csv, summary.json and the plots. The plumbing is the
 * engine's (dl/engine.h), the steps around the student's functions train.c's
 * and the flags and files outputs.c's; here is the story. Not a student
 * file. */
#include "eval.h"
#include "outputs.h" // lab02_state and its pieces

/* The data (two classes or more), each part's share, the device. */
static dl_status setup(dl_engine *E)
{
    DL_TRY(dl_data_load(E->a.data, &E->data));
    DL_TRY(lab02_plan(E));
    return dl_device_open_spec(&E->a.dev, &E->dev);
}

/* The honest split (task 1), and what a random split would have done. */
static dl_status start(dl_engine *E)
{
    DL_TRY(lab02_split(E));
    return lab02_balance_line(E);
}

/* Lab 02's epochs are softmax_train's own, so this hook runs once: one model
 * per λ on the training part, each scored on validation, the chosen one
 * (only it) on test. */
static dl_status choose(dl_engine *E, int e)
{
    (void)e;
    E->stop = 1;
    return lab02_choose(E);
}

/* The drift, train against val and against test; then what the files hold. */
static dl_status finish(dl_engine *E)
{
    DL_TRY(lab02_drift(E));
    lab02_results_fill(E);
    return DL_OK;
}

static const dl_lab lab02 = {
    .prog = "lab02",
    .dir = "02-evaluation",
    .about = "Lab 02: honest evaluation. Stratified splits, softmax regression for a grid of lambda chosen on "
             "validation data, a confusion matrix and per-class metrics of the chosen model on the test split, and "
             "a drift check. --epochs and --train-rows 0 (their defaults) mean: on a set with an official test "
             "split (Fashion-MNIST) 300 epochs on 1000 training rows, where the model overfits and lambda matters; "
             "on the others 12 epochs on every row val and test leave.",
    .defaults = lab02_defaults,
    .options = lab02_options,
    .check = lab02_check,
    .setup = setup,
    .start = start,
    .epoch = choose,
    .finish = finish,
    .files = lab02_files,
    .plots = lab02_plots,
    .summary = lab02_summary,
    .closing = lab02_closing,
    .teardown = lab02_teardown,
    .flags = DL_LAB_HOST | DL_LAB_NO_TRACE | DL_LAB_ONE_PROCESS,
};

static lab02_state S;
DL_LAB_MAIN(lab02, &S)
