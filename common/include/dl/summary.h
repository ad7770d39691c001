/* dl/summary.h — summary.json of a training driver, and the parts every
 * data-parallel driver writes the same way.
 *
 * Contract
 * - dl_summary_prepare(out_dir) creates out_dir (and its parents) and
 *   removes a summary.json left there by an earlier run, so that a run that
 *   fails leaves none that looks like its own. Call it on the rank that
 *   writes, before the run starts. DL_ERR_IO naming the path on failure.
 * - dl_summary_write(out_dir, json_path, body, ctx) writes the document
 *   { body(j, ctx) } to out_dir/summary.json and, when json_path is not
 *   NULL (the --json flag), the same document there too. Each file is
 *   written atomically (dl/json.h: a temporary renamed into place), and ends
 *   with dl_summary_blas after the body. Returns
 *   the first failure (DL_ERR_IO or DL_ERR_ARG naming the file), having
 *   written nothing after it.
 * - The parts, each written into the object being written:
 *   dl_summary_run: "lab", "mode", "ranks", "backend" (dl_comm_backend),
 *     "device" (dl_device_describe), "device_kind" (dl_device_kind_name:
 *     "cpu", "cuda" or "emu" — a run's times are a GPU's only for "cuda"),
 *     "dataset".
 *   dl_summary_workload(j, key, w): an object holding every field of the
 *     dl_workload (the counters the projection read).
 *   dl_summary_projection(j, key, prof, ranks, p, omitted): an object with
 *     "profile" and "gpus"; then, when omitted is NULL, the projection in
 *     milliseconds ("epoch_ms", "compute_ms", "comm_ms", "single_gpu_ms"),
 *     "speedup" and "projected": true; otherwise "projected": false and
 *     "omitted": the reason, and no numbers that could be read as a result.
 *   dl_summary_training(j, r): what a data-parallel training run reports,
 *     in this order: "epochs_run", "steps", "n_params", "final_loss",
 *     "test_accuracy", then when r->val_rows > 0 "val_accuracy", "val_rows"
 *     and "test_rows"; "param_diff_across_ranks" (at the end),
 *     "param_diff_after_broadcast", "rows_per_rank" (r->ranks values),
 *     "dataset_rows", "train_seconds", "epoch_seconds" (the last epoch),
 *     then "steady_epoch_seconds" when it is not NAN, "imbalance"; a
 *     "scaler" object (mean, std, max_diff_across_ranks) when r->mean is
 *     not NULL; "counters_last_epoch" (dl_summary_workload) and
 *     "projection" (dl_summary_projection with r->why_not).
 *   dl_summary_device_io(j, io): "device_io", where the data lived and how
 *     often the host waited (dl/device.h's counters, the same on the CPU as
 *     on a GPU): "setup" (the bytes uploaded before training: the data made
 *     resident), "per_epoch" (h2d_bytes, d2h_bytes, syncs: the training
 *     loop's, evaluation included, divided by its epochs) and "per_step"
 *     (syncs, launches, allocs, h2d_bytes, d2h_bytes: the mean over the
 *     optimizer steps io->steps counted, 0 of them: omitted).
 *   dl_summary_blas(j): "blas", the CPU BLAS this run computed with
 *     (dl_blas_describe): "library", "version", "core" (whose kernels),
 *     "chosen_by", "threads", and "flushes_subnormals" (dl/blas.h).
 *     dl_summary_write adds it at the end of every summary.
 * - Cannot fail but through dl_summary_prepare/dl_summary_write (dl_json
 *   records a failed write and close reports it).
 */
#ifndef DL_SUMMARY_H
#define DL_SUMMARY_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm
#include "dl/device.h" // dl_device
#include "dl/json.h" // dl_json
#include "dl/project.h" // dl_profile, dl_workload, dl_projection
#include "dl/status.h" // dl_status
#include "dl/trace.h" // dl_span

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*dl_summary_fn)(dl_json *j, const void *ctx);

/* What a run asked of its device, for dl_summary_device_io: the counters at
 * its start, when its data was resident (training begins) and at the end of
 * training, with its epochs; and the sums over the optimizer steps it
 * measured (steps of them: dl_run_io_steps adds the counters of `steps`
 * steps, taken before and after them; dl_run_io_spans adds the STEP spans of a trace). */
typedef struct dl_run_io {
    dl_dev_stats start, resident, end;
    int epochs;
    long steps;
    double syncs, launches, allocs, h2d_bytes, d2h_bytes; /* sums over the steps */
} dl_run_io;

typedef struct dl_train_report {
    int epochs_run;
    long steps; /* optimizer steps */
    size_t n_params;
    double final_loss, test_accuracy, val_accuracy;
    size_t val_rows, test_rows; /* val_rows = 0: no validation split to report */
    double param_diff, init_diff; /* across ranks: at the end, after the initial broadcast */
    const double *rows_per_rank; /* (ranks,) rows each rank processed in the last epoch */
    int ranks;
    size_t dataset_rows;
    double train_seconds, epoch_seconds, steady_epoch_seconds, imbalance;
    const float *mean, *std; /* (d,) the scaler's statistics, or NULL */
    size_t d;
    double scaler_diff; /* the statistics' largest difference across ranks */
    dl_workload counters; /* the last epoch's */
    const dl_profile *prof;
    dl_projection proj;
    const char *why_not; /* NULL: proj is the projection; else why there is none */
} dl_train_report;

dl_status dl_summary_prepare(const char *out_dir);
dl_status dl_summary_write(const char *out_dir, const char *json_path, dl_summary_fn body, const void *ctx);

void dl_summary_blas(dl_json *j);
void dl_summary_run(dl_json *j, const char *lab, const char *mode, dl_comm *c, const dl_device *dev,
                    const char *dataset);
void dl_summary_workload(dl_json *j, const char *key, const dl_workload *w);
void dl_summary_device_io(dl_json *j, const dl_run_io *io);
/* Adds `steps` optimizer steps to io: the counters after them less those before. */
void dl_run_io_steps(dl_run_io *io, const dl_dev_stats *before, const dl_dev_stats *after, long steps);
/* Adds every ended DL_EV_STEP span of ev[0..n) (dl/trace.h: each carries
 * its step's counters) to io. */
void dl_run_io_spans(dl_run_io *io, const dl_span *ev, size_t n);
void dl_summary_projection(dl_json *j, const char *key, const dl_profile *prof, int ranks, const dl_projection *p,
                           const char *omitted);
void dl_summary_training(dl_json *j, const dl_train_report *r);

#ifdef __cplusplus
}
#endif
#endif /* DL_SUMMARY_H */
