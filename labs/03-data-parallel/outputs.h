/* outputs.h — lab 03's driver plumbing (outputs.c), so that main.c reads as
 * the lab's story: the flags, the set-up and tear-down of a run, what each
 * epoch reports (its row, its line, the grader's warnings), and every file
 * rank 0 writes (metrics.csv, steps.csv, lr.csv, shards.csv,
 * projection.csv, epoch_time.csv, the plots and summary.json). Not a
 * student file; the grader does not use it. */
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

/* --mode's values, in the order of its choices; lab03_mode_names spells them */
typedef enum lab03_mode { LAB03_DDP, LAB03_NAIVE, LAB03_MODES } lab03_mode;
extern const char *const lab03_mode_names[LAB03_MODES];

typedef struct lab03_options {
    dl_args a; /* the flags of every driver (dl/cli.h) */
    dl_train_opts t; /* those of every data-parallel driver (dl/trainopt.h) */
    int mode; /* lab 03's own: lab03_mode (DL_OPT_ENUM) */
    int no_scaler, no_compare, compare_steps;
} lab03_options;

/* One rank's run: its world, its flags, its data and what it trains on. */
typedef struct lab03_run {
    dl_comm *comm;
    dl_device dev;
    lab03_options o;
    dl_profile prof;
    int rank, P, naive;
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    int n_sizes;
    dl_data data;
    const dl_dataset *train, *eval; /* the rows trained on; the rows scored after every epoch (val) */
    dl_dataset val, test; /* the two halves of the official test split */
    dl_batch batch; /* B rows: the training batches, gathered on the device */
    /* the rows where the model reads them, once standardised (main.c uploads them once) */
    dl_devset dtrain, dval, dtest;
    double *per_rank; /* (P,) every rank's compute time, for ddp_epoch_end */
    dl_workload one; /* the job on one GPU: the baseline of every projected speedup */
    dl_progress pr, *bar; /* rank 0's progress; bar: the step bar (NULL: none) */
    int warned_order, warned_loss; /* each warning is given once */
    dl_run_io io; /* what the run asked of its device: summary.json's device_io */
} lab03_run;

/* What one epoch gives. */
typedef struct lab03_epoch {
    double loss, acc, diff, lr;
    ddp_timing tm; /* epoch_s, compute_s, imbalance (task 6) */
    dl_epoch_sums sums; /* rows per rank, the workload */
    int complete; /* every step of the epoch ran (not cut by --max-steps) */
} lab03_epoch;

/* What the run reports. */
typedef struct lab03_results {
    dl_table metrics; /* one row per epoch */
    dl_train_report r; /* what summary.json says of the run */
    lab03_epoch last, full; /* the last epoch that ran steps, and the last that ran them all */
    double best; /* the lowest epoch loss so far (NAN before the first) */
    ddp_lr_config lr; /* the schedule trained with (lr.csv, peak_lr) */
    long K; /* steps of the equivalence curves */
    double *ddp_curve, *one_curve; /* DDP's step losses averaged over ranks; rank 0 alone at P·B (or NULL) */
    dl_projection naive; /* the naive attempt's projection */
    double naive_s; /* its steady epoch time (NAN: not compared) */
    int sweep; /* rows of projection.csv */
    char plots[600];
} lab03_results;

/* Parses the flags into o: DL_CLI_RUN, DL_CLI_HELP or DL_CLI_ERROR (dl/cli.h). */
int lab03_parse(int argc, char **argv, lab03_options *o);

/* With R->comm and R->o set: this rank and the world, the model's sizes,
 * the profile, the device (one GPU per rank), the data and its val/test
 * halves, the batch, --out (rank 0), and the first line. The first failure
 * is returned; lab03_teardown frees what was made. */
dl_status lab03_setup(lab03_run *R);

/* An empty report: no epoch yet, no comparison. Cannot fail. */
void lab03_results_init(lab03_results *S);

/* Rank 0, once: the rows of epochs epoch and epoch + 1 (idx, prev: per
 * each) came in the same order, so the sampler did not see the epoch. */
void lab03_warn_same_order(lab03_run *R, const size_t *idx, const size_t *prev, size_t per, int epoch);

/* Epoch e's row of metrics.csv, its line (and the exploding-loss warning),
 * and what S remembers of it. DL_ERR_NOMEM when the row cannot be added. */
dl_status lab03_record_epoch(lab03_run *R, lab03_results *S, int e, const lab03_epoch *eo);

/* What summary.json says of the run, from its last epochs, the model m and
 * its schedule lr. Cannot fail. */
void lab03_sum_up(const lab03_run *R, const dl_mlp *m, const ddp_lr_config *lr, lab03_results *S);

/* --dump-init, --dump-params: rank 0's parameters as .npy at path (NULL:
 * nothing), for the grader's comparisons. */
dl_status lab03_dump(const lab03_run *R, const dl_mlp *m, const char *path);

/* Every rank (a collective): gathers the rows each rank processed in the
 * last epoch into S->r.rows_per_rank. Then rank 0 writes the CSVs, the plots
 * and summary.json (and --json) in --out and the line naming them; other
 * ranks return DL_OK. Stops at the first failure and returns its status. */
dl_status lab03_write_outputs(lab03_run *R, lab03_results *S);

/* Frees what setup and the run allocated, ends the progress and the world. */
void lab03_teardown(lab03_run *R, lab03_results *S);

#endif /* LAB03_OUTPUTS_H */
