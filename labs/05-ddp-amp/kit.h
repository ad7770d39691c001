/* kit.h — lab 05's provided helpers: the two classic alternatives to buckets
 * (one flat allreduce after backward; one allreduce per parameter), the
 * model's parameter sizes, what the step projection needs, and --amp's
 * underflow measurements. Not a student
 * file: it calls none of your functions except through ddp_step. */
#ifndef LAB05_KIT_H
#define LAB05_KIT_H

#include "amp.h"
#include "ckpt.h"
#include "ddp.h"
#include "dl/metrics.h" // DL_CSV_SCHEMA
#include "dl/project.h" // dl_sim_layer, dl_sim_bucket
#include "dl/trace.h" // dl_span

/* counts[p] for the model's 2L parameters in registration order; returns 2L. */
int kit_param_counts(const dl_mlp *m, size_t *counts);
/* One bucket per parameter (--mode per-param), in the order backward makes them. */
int kit_per_param_buckets(const dl_mlp *m, ddp_bucket *out);
/* --mode ddp-flat: lab 03's step — accum micro-batches, then one allreduce of
 * every gradient after the last backward, then SGD. loss may be NULL (as
 * ddp_step's: nothing is read back). */
dl_status kit_flat_step(dl_comm *c, dl_mlp *m, int accum, const ddp_micro *mb, const ddp_sgd *opt, double *loss);
/* Each layer's forward and backward cost on n rows, as dl_mlp counts it; in
 * fp16 (fp16 = 1) the GEMMs run at the fp16 peak and activations are 2 bytes. */
void kit_sim_layers(const dl_mlp *m, size_t n, int fp16, dl_sim_layer *layers);
/* The optimizer's bytes and launches (one step; with fp16, the unscale and
 * the fp16 copy of the weights too). */
void kit_sim_optim(const dl_mlp *m, int fp16, double *bytes, double *launches);
/* The step `step` as the trace recorded it (ev[0..n)), for the simulation:
 * layers[0].fwd_* = its last micro-batch's forward (FLOPs, element-wise
 * bytes and launches, as dl_span counts them; the other layers' fwd_* 0),
 * layers[l].bwd_* = that micro-batch's backward of layer l, and *bytes /
 * *launches = the optimizer plus everything else the step did outside its
 * forward, backward and optimizer spans (AMP's casts and unscale, the
 * buckets' division). Returns 1, or 0 when the step lacks a forward, a
 * backward of some layer or an optimizer (then nothing is written). */
int kit_sim_recorded(const dl_span *ev, size_t n, long step, int n_layers, int fp16, dl_sim_layer *layers,
                     double *bytes, double *launches);
/* The buckets of step `step` as the trace recorded them: each allreduce's
 * bytes and the layer whose backward ended last before it started (−1 when
 * it started after the optimizer... never; after layer 0: 0). Returns how
 * many (at most max); 0 when the step has none. */
int kit_recorded_buckets(const dl_span *ev, size_t n, long step, dl_sim_bucket *out, int max);
/* The buckets a bucket list would give, each launched after the layer of
 * its lowest parameter (the earliest it can go). */
int kit_structural_buckets(const ddp_bucket *b, int nb, size_t elem_size, dl_sim_bucket *out);

/* --amp's measurements. kit_underflow: on micro-batch mb of this rank, the
 * share of the gradient's elements that are nonzero in fp32 but flush to
 * zero in the model's 16-bit type m->compute (fp16 or bf16) when the loss is
 * scaled by `scale` (the 16-bit gradient before any division by the ranks),
 * over the nonzero ones, and (subnormal) the share below that type's
 * smallest normal. It runs the micro-batch twice (fp32, then 16-bit from
 * the master weights) and leaves the model in its 16-bit type with its loss
 * scale as it was, the 16-bit weights and the fp32 gradients zeroed
 * (nothing of it can stand in for the step), the 16-bit gradients
 * overwritten. kit_unchanged: the share of n weights bitwise equal before and
 * after a step. */
dl_status kit_underflow(dl_mlp *m, const ddp_micro *mb, float scale, double *share, double *subnormal);
double kit_unchanged(const float *before, const float *after, size_t n);
/* --poison-step: the first input of micro-batch mb becomes +inf (an overflow
 * on this rank alone: its loss and gradients turn inf/NaN before the sync). */
dl_status kit_poison(const dl_device *dev, ddp_micro *mb);

/* Checkpoints in the driver, through your ckpt_save / ckpt_load. begin: the
 * run's identity (layer sizes, world size P, seed) and host buffers for the
 * weights and the momentum. save (rank 0): the model, the scaler and where
 * the run stands — the next step's number, epoch and batch within it — to
 * DIR/latest (DIR is made). resume (every rank): loads path (into a state
 * that holds the run's own scaler, so a load that leaves it alone leaves
 * the run's) and puts it back into the model, the scaler and the three
 * positions (after a reshard,
 * --allow-reshard, the batch number is the writer's: the driver goes on from
 * it in its own batches). end: frees. */
typedef struct kit_ckpt {
    ckpt_state s;
} kit_ckpt;
dl_status kit_ckpt_begin(kit_ckpt *c, const dl_mlp *m, int P, uint64_t seed);
dl_status kit_ckpt_save(kit_ckpt *c, const char *dir, const dl_mlp *m, const amp_scaler *sc, long step, int epoch,
                        long batch);
dl_status kit_ckpt_resume(kit_ckpt *c, const char *path, int allow_reshard, dl_mlp *m, amp_scaler *sc, long *step,
                          int *epoch, long *batch);
void kit_ckpt_end(kit_ckpt *c);

/* The driver's bookkeeping beside a checkpoint, so that a resumed run's
 * metrics.csv and summary.json are the uninterrupted run's: the finished
 * epochs' metrics rows and the running sums of the epoch under way. It is
 * not in the checkpoint (ckpt.h is your format): rank 0 writes it to
 * DIR/latest.metrics after each checkpoint (when the step ends an epoch,
 * after that epoch's row), atomically (a temporary file beside it, fsync,
 * rename). In memory each rank holds its own loss sum (the losses are each
 * rank's own); the file holds every rank's. */
#define KIT_MAX_EPOCHS 64
/* metrics.csv's columns: one row per epoch (kit_tally.rows). */
// clang-format off
#define KIT_METRICS(X)               \
    X(KIT_M_EPOCH, "epoch")          \
    X(KIT_M_STEP, "step")            \
    X(KIT_M_LOSS, "loss")            \
    X(KIT_M_VAL_ACC, "val_accuracy") \
    X(KIT_M_EPOCH_S, "epoch_s")      \
    X(KIT_M_LR, "lr")                \
    X(KIT_M_COMPUTE_S, "compute_s")
// clang-format on
DL_CSV_SCHEMA(kit_metrics, KIT_METRICS);
#define KIT_METRIC_COLS KIT_METRICS_NCOLS
/* amp.csv and the dump's amp.RANK.csv (--amp): one row per step; the driver
 * writes it, the grader reads it by these names. */
// clang-format off
#define KIT_AMP(X)                      \
    X(KIT_A_STEP, "step")               \
    X(KIT_A_LOSS, "loss")               \
    X(KIT_A_SCALE, "scale")             \
    X(KIT_A_SKIPPED, "skipped")         \
    X(KIT_A_UNDERFLOW, "underflow")     \
    X(KIT_A_UNCHANGED, "unchanged")     \
    X(KIT_A_MODEL_SCALE, "model_scale") \
    X(KIT_A_SUBNORMAL, "subnormal")
// clang-format on
DL_CSV_SCHEMA(kit_amp, KIT_AMP);
/* The dump's comm.RANK.csv: the transport's records; the grader reads it by these names. */
// clang-format off
#define KIT_COMM(X)           \
    X(KIT_C_INDEX, "index")   \
    X(KIT_C_OP, "op")         \
    X(KIT_C_TRACE, "trace")   \
    X(KIT_C_OFFSET, "offset") \
    X(KIT_C_COUNT, "count")   \
    X(KIT_C_DTYPE, "dtype")   \
    X(KIT_C_RED, "red")
// clang-format on
DL_CSV_SCHEMA(kit_comm, KIT_COMM);
typedef struct kit_tally {
    int done; /* finished epochs: rows in rows */
    double rows[KIT_MAX_EPOCHS * KIT_METRIC_COLS];
    /* the epoch under way */
    double sum; /* this rank's sum of the losses of its counted (not skipped) steps */
    long counted;
    double elapsed_s, compute_s; /* its wall and compute seconds before this run took it over */
    /* --amp, this rank's view: skipped steps, probed steps and the sums of their shares */
    long n_skipped, probed;
    double underflow, unchanged, subnormal;
} kit_tally;
/* Writes t to DIR/latest.metrics for the checkpoint of step `step`, epoch
 * and batch, taken by `world` ranks whose loss sums are sums (world,); the
 * epoch under way has run elapsed_s and compute_s (t's own are ignored).
 * On error returns DL_ERR_IO (or DL_ERR_ARG for a path too long) and leaves
 * no temporary file. */
dl_status kit_tally_save(const kit_tally *t, const char *dir, long step, int epoch, long batch, int world,
                         const double *sums, double elapsed_s, double compute_s);
/* Reads CKPT.metrics, the file kit_tally_save wrote beside the checkpoint
 * CKPT, into t with rank's own loss sum. It must belong to that checkpoint:
 * the same step, epoch, batch and world size. On any failure (missing,
 * unreadable, another checkpoint's) returns DL_ERR_IO or DL_ERR_ARG with
 * dl_last_error() saying why, and leaves t untouched. */
dl_status kit_tally_load(kit_tally *t, const char *ckpt, long step, int epoch, long batch, int world, int rank);

#endif /* LAB05_KIT_H */
