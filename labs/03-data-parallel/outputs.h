/* outputs.h — lab 03's driver state and its pieces, so that main.c reads
 * as the lab's story on the engine (dl/engine.h): outputs.c holds the
 * flags, the set-up and tear-down of a run, what each epoch reports (its
 * row, its line, the grader's warnings), and every file rank 0 writes
 * (metrics.csv, steps.csv, lr.csv, shards.csv, projection.csv,
 * epoch_time.csv, the plots and summary.json); train.c the training, the
 * scaler, the projection and the comparisons. Not a student file; the
 * grader does not use it. */
#ifndef LAB03_OUTPUTS_H
#define LAB03_OUTPUTS_H

#include <stddef.h> // size_t

#include "ddp.h" // ddp_lr_config, ddp_timing
#include "dl/batch.h" // dl_batch
#include "dl/cli.h" // dl_args
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_data, dl_dataset
#include "dl/device.h" // dl_device
#include "dl/epoch.h" // dl_epoch_sums
#include "dl/metrics.h" // dl_table
#include "dl/mlp.h" // dl_mlp, DL_MLP_MAX_LAYERS
#include "dl/progress.h" // dl_progress
#include "dl/project.h" // dl_profile, dl_profile_cli, dl_workload, dl_projection
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_train_report, dl_run_io
#include "dl/trainopt.h" // dl_train_opts
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/plot.h" // dl_plots
#include "dl/json.h" // dl_json

/* --mode's values, in the order of its choices; lab03_mode_names spells them */
typedef enum lab03_mode { LAB03_DDP, LAB03_NAIVE, LAB03_MODES } lab03_mode;
extern const char *const lab03_mode_names[LAB03_MODES];

/* What one epoch gives. */
typedef struct lab03_epoch {
    double loss, acc, diff, lr;
    ddp_timing tm; /* epoch_s, compute_s, imbalance (task 6) */
    dl_epoch_sums sums; /* rows per rank, the workload */
    int complete; /* every step of the epoch ran (not cut by --max-steps) */
} lab03_epoch;

/* One model's training: its sampler, its schedule, this epoch's rows. */
typedef struct lab03_trainer {
    dl_mlp m; /* m.steps counts the optimizer steps */
    ddp_sampler s;
    ddp_lr_config lr;
    size_t per, b, steps_per_epoch;
    size_t *idx, *prev; /* this epoch's rows, and the last epoch's (the order check) */
    double *step_loss; /* this rank's loss of the first steps (the equivalence curve) */
} lab03_trainer;

/* What the run reports. */
typedef struct lab03_results {
    dl_train_report r; /* what summary.json says of the run */
    lab03_epoch last, full; /* the last epoch that ran steps, and the last that ran them all */
    double best; /* the lowest epoch loss so far (NAN before the first) */
    ddp_lr_config lr; /* the schedule trained with (lr.csv, peak_lr) */
    long K; /* steps of the equivalence curves */
    double *ddp_curve, *one_curve; /* DDP's step losses averaged over ranks; rank 0 alone at P·B (or NULL) */
    dl_projection naive; /* the naive attempt's projection */
    double naive_s; /* its steady epoch time (NAN: not compared) */
    int sweep; /* rows of projection.csv */
} lab03_results;

/* One rank's run: the engine's (world, flags, device, data, progress), lab
 * 03's flags, the rows it trains on, the model and what it reports. */
typedef struct lab03_run {
    dl_engine *E;
    int mode; /* lab03_mode (DL_OPT_ENUM) */
    int no_scaler, no_compare, compare_steps;
    int naive;
    const dl_dataset *train, *eval; /* the rows trained on; the rows scored after every epoch (val) */
    dl_dataset val, test; /* the two halves of the official test split */
    dl_batch batch; /* B rows: the training batches, gathered on the device */
    /* the rows where the model reads them, once standardised (uploaded once) */
    dl_devset dtrain, dval, dtest;
    double *per_rank; /* (P,) every rank's compute time, for ddp_epoch_end */
    dl_workload one; /* the job on one GPU: the baseline of every projected speedup */
    dl_progress *bar; /* the step bar (NULL: none) */
    int warned_order, warned_loss; /* each warning is given once */
    lab03_trainer T; /* the model trained */
    lab03_epoch eo; /* the epoch just run */
    lab03_results S;
} lab03_run;

// ---- the hooks of the engine (outputs.c): flags, set-up, each epoch's row, the files ----

/* The defaults (fashion_mnist, 25 epochs, batch 4096 per rank, lr 0.024,
 * --out build/run/03-data-parallel, --mode ddp) and lab 03's flags. */
void lab03_defaults(dl_engine *E);
int lab03_options(dl_engine *E, dl_opt *out);

/* After the data loaded: the mode, the val/test halves, the batch, the
 * baseline of the projections. DL_ERR_ARG for data without a test split or
 * --batch-size 0. */
dl_status lab03_setup(dl_engine *E);

/* Epoch e's row of metrics.csv, its line (and the exploding-loss warning),
 * what S remembers of it, and E->stop at --max-steps. */
dl_status lab03_row(dl_engine *E, int e);

/* Every rank (a collective): the rows each rank processed in the last
 * epoch into S.r.rows_per_rank; rank 0 writes the CSVs. */
dl_status lab03_files(dl_engine *E);
void lab03_plots(dl_engine *E, dl_plots *p);
void lab03_summary(dl_json *j, const void *engine);
void lab03_closing(dl_engine *E);

/* Frees what set-up and the run allocated (a run set up in part too). */
void lab03_teardown(dl_engine *E);

// ---- the run's pieces (train.c) ----

/* Rank 0, once: the rows of epochs epoch and epoch + 1 (idx, prev: per
 * each) came in the same order, so the sampler did not see the epoch. */
void lab03_warn_same_order(lab03_run *R, const size_t *idx, const size_t *prev, size_t per, int epoch);

/* Standardises the rows with all ranks' statistics (task 2) into r's mean
 * and std, then makes the rows resident on the device. */
dl_status lab03_scale_and_upload(lab03_run *R);

/* T ready to train on R's rows: naive, every rank alone on all of them. */
dl_status lab03_trainer_init(lab03_run *R, lab03_trainer *T, int naive);
void lab03_trainer_free(lab03_trainer *T);

/* One epoch of training (tasks 1, 4, 5, 6), and what it gives in e. */
dl_status lab03_train_epoch(lab03_run *R, lab03_trainer *T, int epoch, lab03_epoch *e);

/* What summary.json says of the run, from its last epochs and the model. Cannot fail. */
void lab03_sum_up(lab03_run *R);

/* --dump-init, --dump-params: rank 0's parameters as .npy at path (NULL: nothing). */
dl_status lab03_dump(const lab03_run *R, const char *path);

/* The last whole epoch projected on the target, against one GPU; or why not. */
dl_status lab03_project(lab03_run *R);

/* With several DDP ranks and unless --no-compare: the naive attempt and
 * rank 0 alone at the global batch, into S. */
dl_status lab03_compare(lab03_run *R);

#endif /* LAB03_OUTPUTS_H */
