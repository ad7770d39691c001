/* outputs.h — lab 05's driver plumbing (outputs.c), so that main.c reads as
 * the lab's story: the flags, the set-up of a run, the grader's --dump, and
 * everything the end of a run reports (one step of each mode projected onto
 * the target, the bucket-cap sweep, the files, the closing lines). Not a
 * student file: lab.mk lists it with the kit's; the grader links it but
 * calls none of it.
 *
 * Contract
 * - lab05_parse fills o with the defaults, then the flags: DL_CLI_RUN,
 *   DL_CLI_HELP or DL_CLI_ERROR (dl/cli.h; an error was said on stderr).
 * - lab05_setup (every rank, R zeroed but for comm and o): the world, the
 *   flags that need each other (--amp with --mode, --hidden, --batch-size),
 *   --out made and an earlier run's summary.json removed (rank 0,
 *   dl_summary_prepare), the profile, this rank's device (dl_rank_device),
 *   the data and the model's sizes. Returns the first failure (DL_ERR_ARG
 *   naming the flag for bad input).
 * - lab05_dump (every rank, --dump DIR = R->o.dump): DIR/params.RANK.npy
 *   (the fp32 parameters), DIR/trace.RANK.csv (dl_trace_write_csv),
 *   DIR/comm.RANK.csv (the transport's first R->logged records, dl_comm_log:
 *   index, op, trace, offset, count, dtype, red; offset is where the buffer
 *   starts in the gradient buffer the reducer's buckets are views of, in
 *   elements, or -1 for a buffer outside it) and, under --amp,
 *   DIR/amp.RANK.csv (one row of --amp's 8 values per step this run took).
 *   DIR is made. Returns the first failure.
 * - lab05_write_outputs (every rank: trace.json is a collective) writes
 *   --out/trace.json; then rank 0 projects one step of each mode
 *   (dl_project_step, from the order the trace recorded for the second step
 *   this run took, else its first) and the bucket-cap sweep, and writes
 *   metrics.csv, buckets.csv, projection.csv, sweep.csv, timeline.csv,
 *   amp.csv (--amp), the plots, summary.json (and --json, dl_summary_write)
 *   and the closing lines; other ranks return after the trace. Stops at the
 *   first failure and returns it; summary.json comes after every CSV.
 *   summary.json: "lab", "mode", "ranks", "backend", "device", "dataset"
 *   (dl_summary_run), "amp", "config", "parameters", "buckets", "steps",
 *   "final_loss", "val_accuracy", "test_accuracy",
 *   "param_diff_across_ranks", "steady_epoch_s" and "steady_compute_s" (the
 *   mean over the epochs after the first, or the only one), "amp_stats"
 *   (--amp), "projection" ("profile", "gpus" and one object per mode; the
 *   bucketed one with "speedup_vs_one_fp32_gpu" under --amp), "device_io"
 *   (dl_summary_device_io: its per_step from the trace's step spans) and
 *   "plots".
 */
#ifndef LAB05_OUTPUTS_H
#define LAB05_OUTPUTS_H

#include <stddef.h> // size_t

#include "dl/cli.h" // dl_args
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_data, dl_dataset
#include "dl/device.h" // dl_device
#include "dl/mlp.h" // dl_mlp, DL_MLP_MAX_LAYERS
#include "dl/progress.h" // dl_progress
#include "dl/project.h" // dl_profile, dl_profile_cli
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_run_io
#include "dl/trainopt.h" // dl_train_opts
#include "kit.h" // kit_tally, amp_scaler, ddp_bucket

/* --mode's values (DL_OPT_ENUM: the index is the word's in lab05_mode_names) */
typedef enum lab05_mode { LAB05_BUCKETED, LAB05_DDP_FLAT, LAB05_PER_PARAM, LAB05_MODES } lab05_mode;
extern const char *const lab05_mode_names[LAB05_MODES];
/* --amp's values, in the order of its choices */
typedef enum lab05_amp { LAB05_AMP_OFF, LAB05_AMP_FP16, LAB05_AMP_FP16_NOSCALE, LAB05_AMP_BF16 } lab05_amp;

/* The driver's flags: those of every driver, then lab 05's own. */
typedef struct lab05_options {
    dl_args a;
    dl_train_opts t; /* the data-parallel drivers' shared flags lab 05 takes (dl/trainopt.h) */
    int mode, amp; /* lab05_mode, lab05_amp (DL_OPT_ENUM) */
    const char *dump, *ckpt_dir, *resume;
    /* the bucket caps in bytes (--bucket-cap, --first-bucket-cap: sizes; --bucket-mb and --first-bucket-mb,
     * PyTorch's bucket_cap_mb, in MiB rounded to the nearest byte: -1 when not given) */
    size_t bucket_cap, first_bucket_cap;
    double bucket_mb, first_bucket_mb, init_scale;
    long train_rows, growth_interval, probe_every, poison_step, poison_rank;
    long ckpt_every;
    int accum, allow_reshard;
} lab05_options;

/* One rank's run: its world, flags and data, the model and its buckets,
 * and what the end of the run reports. */
typedef struct lab05_run {
    dl_comm *comm;
    lab05_options o;
    int rank, P;
    lab05_mode mode;
    lab05_amp amp; /* off; fp16 with the loss scaler; fp16 at scale 1; bf16 (scale 1, as autocast does) */
    const char *amp_name; /* --amp as spelled */
    dl_dtype lowp; /* --amp's 16-bit type */
    dl_profile prof;
    dl_device dev;
    dl_data data;
    const dl_dataset *train; /* the training split (main.c holds its last rows out for validation) */
    size_t sizes[DL_MLP_MAX_LAYERS + 1]; /* the model's layer widths */
    int n_sizes;
    dl_mlp m;
    size_t esz; /* bytes per gradient element */
    size_t counts[DDP_MAX_PARAMS]; /* (n_tensors,) each parameter's elements, in registration order */
    int n_tensors;
    size_t first_cap; /* the first bucket's cap in bytes */
    ddp_bucket assigned[DDP_MAX_BUCKETS]; /* (na,) your buckets at --bucket-mb */
    int na;
    ddp_bucket buckets[DDP_MAX_BUCKETS]; /* (nb,) the mode's buckets: the reducer's, buckets.csv */
    int nb;
    amp_scaler scaler;
    kit_tally tally; /* the finished epochs' rows, the epoch under way's sums, --amp's sums */
    dl_progress pr;
    /* what the end reports */
    long resumed_at, step; /* the first step this run took; the step after its last */
    size_t logged; /* the transport's records (dl_comm_log) up to the end of the trace */
    const double *arow; /* --amp: 8 values per step, from step 0 */
    double test; /* test accuracy */
    double param_diff; /* the parameters' largest difference across ranks at the end */
    dl_run_io io; /* what the run asked of its device (main.c snapshots; the steps come from the trace) */
} lab05_run;

int lab05_parse(int argc, char **argv, lab05_options *o);
dl_status lab05_setup(lab05_run *R);
dl_status lab05_dump(const lab05_run *R);
dl_status lab05_write_outputs(lab05_run *R);

#endif /* LAB05_OUTPUTS_H */
