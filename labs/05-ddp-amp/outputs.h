/* outputs.h — lab 05's driver state and its pieces, so that main.c reads
 * as the lab's story on the engine (dl/engine.h). Not a student file:
 * lab.mk lists outputs.c, train.c and project.c with the kit's; the grader
 * links them but calls none of it.
 *
 * Contract
 * - The hooks (outputs.c): lab05_defaults and lab05_options (the flags: the
 *   two spellings of each bucket cap share one value and one group, so that
 *   both given are refused), lab05_check (--amp with --mode, --batch-size),
 *   lab05_setup (the probe's default by device, the epochs' shape),
 *   lab05_files, lab05_plots, lab05_summary, lab05_closing, lab05_teardown.
 * - lab05_dump (every rank, --dump DIR = R->o.dump): DIR/params.RANK.npy
 *   (the fp32 parameters), DIR/trace.RANK.csv (dl_trace_write_csv),
 *   DIR/comm.RANK.csv (the transport's first R->logged records, dl_comm_log:
 *   index, op, trace, offset, count, dtype, red; offset is where the buffer
 *   starts in the gradient buffer the reducer's buckets are views of, in
 *   elements, or -1 for a buffer outside it) and, under --amp,
 *   DIR/amp.RANK.csv (one row of --amp's 8 values per step this run took).
 *   DIR is made. Returns the first failure.
 * - lab05_files (every rank: trace.json is a collective) writes
 *   --out/trace.json; then rank 0 projects one step of each mode
 *   (dl_project_step, from the order the trace recorded for the second step
 *   this run took, else its first) and the bucket-cap sweep, and writes
 *   metrics.csv, buckets.csv, projection.csv, sweep.csv, timeline.csv and
 *   amp.csv (--amp); the engine then draws the plots (lab05_plots), writes
 *   summary.json (lab05_summary) and the closing lines (lab05_closing).
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
#include "dl/batch.h" // dl_batch, dl_devset
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/json.h" // dl_json
#include "dl/lr.h" // dl_lr_config
#include "dl/plot.h" // dl_plots
#include "dl/sampler.h" // dl_sampler
#include "kit.h" // kit_tally, amp_scaler, ddp_bucket

/* --mode's values (DL_OPT_ENUM: the index is the word's in lab05_mode_names) */
typedef enum lab05_mode { LAB05_BUCKETED, LAB05_DDP_FLAT, LAB05_PER_PARAM, LAB05_MODES } lab05_mode;
extern const char *const lab05_mode_names[LAB05_MODES];
/* --amp's values, in the order of its choices */
typedef enum lab05_amp { LAB05_AMP_OFF, LAB05_AMP_FP16, LAB05_AMP_FP16_NOSCALE, LAB05_AMP_BF16 } lab05_amp;

#define VAL_ROWS 6000 /* the last rows of the training set: validation, never trained on */

/* Lab 05's own flags (the common and shared ones are the engine's: dl/engine.h). */
typedef struct lab05_options {
    int mode, amp; /* lab05_mode, lab05_amp (DL_OPT_ENUM) */
    const char *dump, *ckpt_dir, *resume;
    /* the bucket caps in bytes: --bucket-cap and --first-bucket-cap (sizes), or their MiB spellings
     * --bucket-mb and --first-bucket-mb (PyTorch's bucket_cap_mb; DL_OPT_MIB, the same value) */
    size_t bucket_cap, first_bucket_cap;
    double init_scale;
    long train_rows, growth_interval, probe_every, poison_step, poison_rank;
    long ckpt_every;
    int accum, allow_reshard;
} lab05_options;

/* The epoch's rows, the micro-batches staged (dl_batch; the first also
 * stages the evaluation's chunks) and what the step reads of them, and
 * --amp's buffers (a row of 8 values per step, the weights around a probed
 * step). */
typedef struct lab05_work {
    size_t *idx; /* (per,) this rank's rows of the epoch */
    size_t K; /* micro-batches per step */
    dl_batch *bt; /* (K,) room for B rows each */
    ddp_micro *mb; /* (K,) bt[k]'s X, y and n */
    double *arow;
    float *before, *after;
    double *sums; /* (P,) every rank's loss sum, gathered for the bookkeeping beside a checkpoint */
} lab05_work;

// ---- the projection's CSVs (project.c fills their rows, outputs.c writes them) ----

// clang-format off
#define PROJECTION(X)                            \
    X(PR_RANKS, "ranks")                         \
    X(PR_BUCKETED, "bucketed")                   \
    X(PR_FLAT, "ddp_flat")                       \
    X(PR_PER_PARAM, "per_param")                 \
    X(PR_BUCKETED_EXPOSED, "bucketed_exposed")   \
    X(PR_FLAT_EXPOSED, "flat_exposed")           \
    X(PR_PER_PARAM_EXPOSED, "per_param_exposed") \
    X(PR_BUCKETED_MS, "bucketed_step_ms")        \
    X(PR_FLAT_MS, "flat_step_ms")                \
    X(PR_PER_PARAM_MS, "per_param_step_ms")
// clang-format on
DL_CSV_SCHEMA(projection, PROJECTION);
#define SWEEP(X) X(SW_CAP_KIB, "cap_kib") X(SW_STEP_MS, "step_ms") X(SW_BUCKETS, "buckets")
DL_CSV_SCHEMA(sweep_cols, SWEEP);
/* timeline_projected.csv: one step of this run's mode as the projection
 * times it on the profile's GPUs (dl_project_step): kinds as timeline.csv's
 * (1 forward, id its micro-batch, -1 for the micro-batches before the last
 * together; 2 backward, id its layer on the last micro-batch, -1 for the
 * earlier micro-batches' whole backward; 3 optimizer; 4 a bucket's
 * allreduce from when the communication stream starts it to when it is
 * done), bytes for an allreduce. */
// clang-format off
#define PROJECTED(X)         \
    X(TP_KIND, "kind")       \
    X(TP_ID, "id")           \
    X(TP_T0_MS, "t0_ms")     \
    X(TP_T1_MS, "t1_ms")     \
    X(TP_BYTES, "bytes")
// clang-format on
DL_CSV_SCHEMA(projected_cols, PROJECTED);

/* What the projection gives (project.c): projection.csv's rows (1, 2 and 4
 * ranks), each mode on the profile's GPUs, sweep.csv's rows and one step of
 * the run's mode as the projection times it (timeline_projected.csv). */
#define TP_MAX_ROWS (2 * 8 + DL_MLP_MAX_LAYERS + DDP_MAX_BUCKETS + 4)
typedef struct lab05_projected {
    double measured_s; /* this run's median step */
    double rows[3][PROJECTION_NCOLS];
    double step_s[LAB05_MODES], exposed[LAB05_MODES], speedup[LAB05_MODES], vs32;
    double one_s; /* one GPU of the profile, this run's step */
    int recorded; /* the step's cost came from the trace */
    double sweep[32][SWEEP_NCOLS];
    int ns;
    double tl[TP_MAX_ROWS][PROJECTED_NCOLS]; /* timeline_projected.csv's rows */
    int ntl;
    double backward_end_ms, exposed_ms; /* of that step */
} lab05_projected;

/* One rank's run: the engine's (world, flags, device, data, progress), lab
 * 05's flags, the model and its buckets, the steps' buffers, and what the
 * end of the run reports. */
typedef struct lab05_run {
    dl_engine *E;
    lab05_options o;
    lab05_mode mode;
    lab05_amp amp; /* off; fp16 with the loss scaler; fp16 at scale 1; bf16 (scale 1, as autocast does) */
    const char *amp_name; /* --amp as spelled */
    dl_dtype lowp; /* --amp's 16-bit type */
    const dl_dataset *train; /* the training split (its last rows are held out for validation) */
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
    /* the steps */
    ddp_reducer red;
    dl_sampler smp;
    size_t B, K, per, steps_per_epoch;
    long total_steps, last_step; /* the schedule's steps; the step this run stops before */
    lab05_work w;
    dl_devset tr, val, test; /* the rows where the model reads them: training, validation, test */
    dl_lr_config lrc;
    kit_ckpt ck;
    long first_batch; /* where a resumed run goes on in its first epoch */
    /* what the end reports */
    long resumed_at, step; /* the first step this run took; the step after its last */
    size_t logged; /* the transport's records (dl_comm_log) up to the end of the trace */
    const double *arow; /* --amp: 8 values per step, from step 0 */
    double test_acc; /* test accuracy */
    double param_diff; /* the parameters' largest difference across ranks at the end */
    lab05_projected pj; /* rank 0: the projection */
    int nt; /* timeline.csv's rows */
    double steady, steady_compute; /* the epochs after the first: their mean (or the only one) */
} lab05_run;

// ---- the hooks of the engine (outputs.c) ----
void lab05_defaults(dl_engine *E);
int lab05_opts(dl_engine *E, dl_opt *out);
dl_status lab05_check(dl_engine *E);
dl_status lab05_setup(dl_engine *E);
dl_status lab05_files(dl_engine *E);
void lab05_plots(dl_engine *E, dl_plots *p);
void lab05_summary(dl_json *j, const void *engine);
void lab05_closing(dl_engine *E);
void lab05_teardown(dl_engine *E);
dl_status lab05_dump(const lab05_run *R);

// ---- the run's pieces (train.c) ----

/* The model (the same seed on every rank), its buckets (task 1; per-param:
 * one per parameter), the reducer and the loss scaler; the rows made
 * resident, the batches, the schedule and the checkpoints' identity. */
dl_status lab05_build(lab05_run *R);
/* --resume FILE: every rank loads it (your ckpt_load); where the run goes on. */
dl_status lab05_resume(lab05_run *R, long *step, int *epoch, long *batch);
/* Epoch e from batch s to its end or the run's last step; *step advances. */
dl_status lab05_run_epoch(lab05_run *R, int e, size_t s, long *step);
/* m's accuracy on set, collective, in chunks of one micro-batch. */
dl_status lab05_accuracy(lab05_run *R, const dl_devset *set, double *acc);

// ---- the projection (project.c) ----

/* The three modes, from the order recorded for step `probe` (a steady one), into p. */
void lab05_project(const lab05_run *R, const dl_span *ev, size_t nev, long probe, lab05_projected *p);
/* The median time of this run's steps after `first`, in seconds; 0 without two steps. */
double lab05_measured_step(const dl_span *ev, size_t nev, long first);

#endif /* LAB05_OUTPUTS_H */
