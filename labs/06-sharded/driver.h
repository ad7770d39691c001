/* driver.h — lab 06's driver state and its pieces, so that main.c reads as
 * the lab's story on the engine (dl/engine.h). Not a student file: lab.mk
 * lists train.c and outputs.c as the driver's (they call your functions:
 * the grader does not link them).
 *
 * Contract
 * - The hooks (train.c): lab06_defaults and lab06_options (the flags),
 *   lab06_check (--selftest: task 2 or 4 alone on the kit's cases, then
 *   the process ends; --no-prefetch with --mode, --batch-size), lab06_setup
 *   (the validation split, the sampler, the model in the ledger, your
 *   state), lab06_epoch (a step per batch of this rank's rows, the row of
 *   metrics.csv and its line), lab06_finish (the test accuracy; your state
 *   given back on every rank, the ranks compared, --dump), lab06_teardown.
 * - The end (outputs.c): lab06_files (every rank: the closed form's total
 *   for the run's mode; rank 0: memory.csv, largest.csv, memory_step.csv,
 *   projection.csv), lab06_plots, lab06_summary (summary.json's body).
 * - lab06_end: the process ends without atexit handlers or destructors,
 *   nothing runs after the kit's last word.
 */
#ifndef LAB06_DRIVER_H
#define LAB06_DRIVER_H

#include <stddef.h> // size_t

#include "dl/batch.h" // dl_batch, dl_devset
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/json.h" // dl_json
#include "dl/lr.h" // dl_lr_config
#include "dl/mlp.h" // dl_mlp
#include "dl/plot.h" // dl_plots
#include "dl/sampler.h" // dl_sampler
#include "kit.h" // kit_mode, kit_record, shard_mem, zero_state, fsdp_state

/* the most epochs a run trains */
#define LAB06_MAX_EPOCHS 64

// clang-format off
#define LAB06_METRICS(X)                  \
    X(M_EPOCH, "epoch")                   \
    X(M_LOSS, "loss")                     \
    X(M_VAL_ACC, "val_accuracy")          \
    X(M_EPOCH_S, "epoch_s")               \
    X(M_SENT, "sent_bytes_per_step")
// clang-format on
DL_CSV_SCHEMA(lab06_metrics, LAB06_METRICS);

typedef struct lab06_run {
    const char *dump, *selftest;
    int mode_arg; /* --mode (DL_OPT_ENUM: its choices in kit_mode's order) */
    int no_prefetch;
    long val_rows; /* the last rows of the training set: validation, never trained on */
    int yours; /* your state (zero_init's, fsdp_init's) is live: zero_free or fsdp_free to call */
    kit_mode mode;
    dl_mlp m;
    shard_mem mem;
    kit_record rec; /* what the kit records of the run for the grader (kit.h) */
    zero_state z;
    fsdp_state f;
    float *params; /* (n_params,) host: the final parameters, put together */
    dl_sampler smp;
    dl_devset tr, val, test;
    dl_batch bt;
    size_t *idx, per, B, steps_per_epoch;
    dl_lr_config lrc;
    long steps;
    double test_acc, param_diff, model_total;
} lab06_run;

void lab06_defaults(dl_engine *E);
int lab06_options(dl_engine *E, dl_opt *out);
dl_status lab06_check(dl_engine *E);
dl_status lab06_setup(dl_engine *E);
dl_status lab06_epoch(dl_engine *E, int e);
dl_status lab06_finish(dl_engine *E);
void lab06_teardown(dl_engine *E);
dl_status lab06_files(dl_engine *E);
void lab06_plots(dl_engine *E, dl_plots *p);
void lab06_summary(dl_json *j, const void *ctx);
_Noreturn void lab06_end(int rc);

#endif /* LAB06_DRIVER_H */
