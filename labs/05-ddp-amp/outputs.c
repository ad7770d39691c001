/* outputs.c — lab 05's hooks of the engine (dl/engine.h): the flags, the
 * set-up, the grader's dump and the files rank 0 writes (see outputs.h).
 * Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h> // uintptr_t
#include <stdio.h> // snprintf, fprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_mkdir_p, dl_tmp_create
#include "dl/json.h" // dl_json
#include "dl/metrics.h" // dl_csv_write
#include "dl/plot.h" // dl_plots_draw
#include "dl/summary.h" // dl_summary_run, dl_run_io_spans
#include "dl/trace.h" // dl_trace_events
#include "dl/trace_chrome.h" // dl_trace_write_chrome
#include "outputs.h"

const char *const lab05_mode_names[LAB05_MODES] = {"bucketed", "ddp-flat", "per-param"};
static const char *const lab05_amp_names[] = {"off", "fp16", "fp16-noscale", "bf16"};

// ---- the CSVs' columns (metrics.csv, amp.csv and the dump's: kit.h) ----

// clang-format off
#define BUCKETS(X)             \
    X(BK_BUCKET, "bucket")     \
    X(BK_FIRST, "first_param") \
    X(BK_LAST, "last_param")   \
    X(BK_OFFSET, "offset")     \
    X(BK_COUNT, "count")       \
    X(BK_BYTES, "bytes")
// clang-format on
DL_CSV_SCHEMA(buckets, BUCKETS);
// clang-format off
#define TIMELINE(X)          \
    X(TL_KIND, "rank0_kind") \
    X(TL_ID, "id")           \
    X(TL_T0_MS, "t0_ms")     \
    X(TL_T1_MS, "t1_ms")     \
    X(TL_LANE, "lane")       \
    X(TL_ASYNC, "async")     \
    X(TL_BYTES, "bytes")
// clang-format on
DL_CSV_SCHEMA(timeline, TIMELINE);

// ---- the flags ----

void lab05_defaults(dl_engine *E)
{
    lab05_run *R = E->ctx;
    lab05_options *o = &R->o;
    R->E = E;
    E->a.data = "fashion_mnist";
    E->a.epochs = 30;
    E->a.batch_size = 4096;
    E->a.lr = 0.02;
    E->t.hidden = "512,512,512,512"; // the shared defaults: momentum 0.9, weight decay 5e-4, base batch 4096, ...
    o->mode = LAB05_BUCKETED;
    o->bucket_cap = (size_t)25 << 20; // PyTorch's defaults: 25 MiB, the first bucket 1 MiB
    o->first_bucket_cap = (size_t)1 << 20;
    o->accum = 1;
    o->amp = LAB05_AMP_OFF;
    o->init_scale = 65536;
    o->growth_interval = 2000;
    o->probe_every = -1; // lab05_setup: every step on the CPU, never on a GPU
    o->poison_step = -1;
}

int lab05_opts(dl_engine *E, dl_opt *out)
{
    lab05_options *o = &((lab05_run *)E->ctx)->o;
    const dl_opt extra[] = {
        {"mode", DL_OPT_ENUM, &o->mode, "MODE",
         "bucketed (yours), ddp-flat (one allreduce after backward), per-param (one per parameter)",
         "bucketed|ddp-flat|per-param", 1, 0, 'm'},
        // each cap has two spellings (bytes, MiB) of one value: one group each, so that giving both is refused
        {"bucket-cap", DL_OPT_SIZE, &o->bucket_cap, "SIZE", "bucket cap in bytes: 1000, 64K, 25M (PyTorch: 25M)", NULL,
         1, 1e12, 0, 1},
        {"first-bucket-cap", DL_OPT_SIZE, &o->first_bucket_cap, "SIZE", "the first bucket's cap (PyTorch: 1M)", NULL, 1,
         1e12, 0, 2},
        {"bucket-mb", DL_OPT_MIB, &o->bucket_cap, "X",
         "the bucket cap in MiB instead (PyTorch's bucket_cap_mb), rounded to the nearest byte", NULL, 0, 1e6, 0, 1},
        {"first-bucket-mb", DL_OPT_MIB, &o->first_bucket_cap, "X",
         "the first bucket's cap in MiB instead, the same way", NULL, 0, 1e6, 0, 2},
        {"accum", DL_OPT_INT, &o->accum, "K", "micro-batches per optimizer step (gradient accumulation)", NULL, 1, 1024,
         0},
        {"checkpoint-dir", DL_OPT_STRING, &o->ckpt_dir, "DIR",
         "rank 0 saves DIR/latest (your ckpt_save) every --checkpoint-every steps and at the end", NULL, 1, 0, 0},
        {"checkpoint-every", DL_OPT_LONG, &o->ckpt_every, "N", "steps between checkpoints (0 = only at the end)", NULL,
         0, 1e12, 0},
        {"resume", DL_OPT_STRING, &o->resume, "FILE", "every rank loads FILE (your ckpt_load) and goes on from there",
         NULL, 1, 0, 0},
        {"allow-reshard", DL_OPT_FLAG, &o->allow_reshard, NULL,
         "--resume a checkpoint written by another number of ranks (with a warning)", NULL, 0, 0, 0},
        {"train-rows", DL_OPT_LONG, &o->train_rows, "N", "train on the first N rows only (0 = all)", NULL, 0, 1e9, 0},
        {"dump", DL_OPT_STRING, &o->dump, "DIR", "write each rank's parameters and trace (for the grader)", NULL, 1, 0,
         0},
        {"amp", DL_OPT_ENUM, &o->amp, "MODE",
         "off (fp32), fp16 (fp16 compute, fp32 master weights, your loss scaler), fp16-noscale (the same, scale 1), "
         "bf16 (bfloat16 compute, fp32 master weights, scale 1)",
         "off|fp16|fp16-noscale|bf16", 1, 0, 0},
        {"init-scale", DL_OPT_DOUBLE, &o->init_scale, "X", "the loss scaler's first scale (GradScaler: 65536)", NULL, 1,
         1e30, 0},
        {"growth-interval", DL_OPT_LONG, &o->growth_interval, "N",
         "steps without inf/NaN before the scale doubles (GradScaler: 2000)", NULL, 1, 1e12, 0},
        {"probe-every", DL_OPT_LONG, &o->probe_every, "N",
         "--amp: measure the gradients' 16-bit underflow every N steps (0 = never; it costs two passes and reads "
         "the gradients back; default every step on the CPU, never on a GPU)",
         NULL, 0, 1e12, 0},
        {"poison-step", DL_OPT_LONG, &o->poison_step, "S",
         "put an inf into one input of --poison-rank's batch at step S (an overflow on one rank; -1 = never)", NULL, -1,
         1e12, 0},
        {"poison-rank", DL_OPT_LONG, &o->poison_rank, "R", "the rank --poison-step poisons", NULL, 0, 1e6, 0},
    };
    memcpy(out, extra, sizeof extra);
    return (int)(sizeof extra / sizeof extra[0]);
}

dl_status lab05_check(dl_engine *E)
{
    lab05_run *R = E->ctx;
    R->mode = (lab05_mode)R->o.mode;
    R->amp = (lab05_amp)R->o.amp;
    R->amp_name = lab05_amp_names[R->amp];
    R->lowp = R->amp == LAB05_AMP_BF16 ? DL_BF16 : DL_F16;
    if (R->amp != LAB05_AMP_OFF && R->mode != LAB05_BUCKETED)
        return dl_error_set(DL_ERR_ARG, "--amp %s runs with --mode bucketed (your reducer), not --mode %s", R->amp_name,
                            lab05_mode_names[R->mode]);
    if (E->a.batch_size < 1)
        return dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 05 needs a per-rank batch of at least 1 row",
                            E->a.batch_size);
    return DL_OK;
}

dl_status lab05_setup(dl_engine *E)
{
    lab05_run *R = E->ctx;
    if (R->o.probe_every < 0) // the probe reads gradients back: on a GPU that stalls every step it measures
        R->o.probe_every = E->dev.kind == DL_DEVICE_CUDA ? 0 : 1;
    R->train = &E->data.train;
    // the rows each rank trains on per epoch and the steps they make
    const dl_dataset *tr = R->train;
    if (!E->data.has_test || tr->n <= VAL_ROWS + 1)
        return dl_error_set(DL_ERR_ARG, "--data %s: lab 05 needs a test split and more than %d training rows",
                            E->a.data, VAL_ROWS + 1);
    size_t n_train = tr->n - VAL_ROWS;
    if (R->o.train_rows > 0 && (size_t)R->o.train_rows < n_train)
        n_train = (size_t)R->o.train_rows;
    R->B = (size_t)E->a.batch_size, R->K = (size_t)R->o.accum;
    R->smp = (dl_sampler){.n = n_train, .rank = E->rank, .world = E->P, .seed = E->a.seed, .shuffle = 1};
    R->per = dl_sampler_num_samples(&R->smp);
    R->steps_per_epoch = R->per / (R->K * R->B);
    if (R->steps_per_epoch == 0)
        return dl_error_set(DL_ERR_ARG, "%zu rows per rank cannot fill one step of --accum %zu x --batch-size %zu",
                            R->per, R->K, R->B);
    // the schedule spans every epoch; --max-steps only stops early (an interruption)
    R->total_steps = (long)(R->steps_per_epoch * (size_t)E->a.epochs);
    R->last_step = E->t.max_steps > 0 && E->t.max_steps < R->total_steps ? E->t.max_steps : R->total_steps;
    return DL_OK;
}

// ---- the grader's dump ----

/* DIR/comm.RANK.csv: the transport's records of the traced run, each
 * buffer placed in the gradient buffer (elements of esz bytes from grads). */
static dl_status dump_log(const char *path, const lab05_run *R)
{
    static const char *const red_names[] = {"sum", "avg", "max", "min"};
    const char *g = R->amp ? (const char *)R->m.grads16 : (const char *)R->m.grads;
    size_t n = 0, esz = R->esz, end = R->m.n_params * esz;
    const dl_comm_rec *rec = dl_comm_log(R->E->comm, &n, NULL);
    n = n < R->logged ? n : R->logged;
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_comm));
    dl_status st = DL_OK;
    for (size_t k = 0; k < n && st == DL_OK; k++) {
        const dl_comm_rec *e = &rec[k];
        const char *b = e->buf;
        // pointers into one buffer compare as addresses: the same on the host and on a device
        uintptr_t at = (uintptr_t)b, lo = (uintptr_t)g;
        long offset = b != NULL && at >= lo && at < lo + end && (at - lo) % esz == 0 ? (long)((at - lo) / esz) : -1;
        dl_csv_cell(&f, KIT_C_INDEX, "%zu", k);
        dl_csv_cell(&f, KIT_C_OP, "%s", dl_comm_op_name(e->op));
        dl_csv_cell(&f, KIT_C_TRACE, "%ld", e->trace);
        dl_csv_cell(&f, KIT_C_OFFSET, "%ld", offset);
        dl_csv_cell(&f, KIT_C_COUNT, "%zu", e->count);
        dl_csv_cell(&f, KIT_C_DTYPE, "%s", dl_dtype_name(e->t));
        dl_csv_cell(&f, KIT_C_RED, "%s", (unsigned)e->red < 4 ? red_names[e->red] : "?");
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

dl_status lab05_dump(const lab05_run *R)
{
    char path[1100];
    const char *dir = R->o.dump;
    const dl_mlp *m = &R->m;
    int rank = R->E->rank;
    float *p = malloc(m->n_params * sizeof *p);
    dl_status st = p ? dl_mkdir_p(dir) : dl_error_set(DL_ERR_NOMEM, "out of memory");
    if (st == DL_OK)
        st = dl_mlp_get_params(m, p);
    snprintf(path, sizeof path, "%s/params.%d.npy", dir, rank);
    if (st == DL_OK)
        st = dl_npy_write_f32(path, p, m->n_params, 0);
    snprintf(path, sizeof path, "%s/trace.%d.csv", dir, rank);
    if (st == DL_OK)
        st = dl_trace_write_csv(path);
    snprintf(path, sizeof path, "%s/comm.%d.csv", dir, rank);
    if (st == DL_OK)
        st = dump_log(path, R);
    snprintf(path, sizeof path, "amp.%d.csv", rank);
    if (st == DL_OK && R->amp)
        st = dl_csv_write(dir, path, kit_amp, R->arow + KIT_AMP_NCOLS * R->resumed_at,
                          (size_t)(R->step - R->resumed_at));
    free(p);
    return st;
}

// ---- the files (rank 0) ----

/* metrics.csv, buckets.csv, projection.csv, sweep.csv, timeline.csv (step
 * `probe` on rank 0, from the step's start; *nt gets its rows) and amp.csv. */
static dl_status write_tables(const lab05_run *R, const lab05_projected *p, const dl_span *ev, size_t nev, long probe,
                              int *nt)
{
    const char *out = R->E->a.out;
    double brow[DDP_MAX_BUCKETS][BUCKETS_NCOLS];
    for (int k = 0; k < R->nb; k++) {
        const ddp_bucket *b = &R->buckets[k];
        double *r = brow[k];
        r[BK_BUCKET] = k, r[BK_FIRST] = b->first, r[BK_LAST] = b->last, r[BK_OFFSET] = (double)b->offset;
        r[BK_COUNT] = (double)b->count, r[BK_BYTES] = (double)(R->esz * b->count);
    }
    double trow[512][TIMELINE_NCOLS];
    double origin = -1;
    *nt = 0;
    for (size_t i = 0; i < nev && *nt < 512; i++) {
        if (ev[i].step != probe)
            continue;
        origin = origin < 0 ? ev[i].t0 : origin;
        double *r = trow[(*nt)++];
        r[TL_KIND] = ev[i].kind, r[TL_ID] = ev[i].id;
        r[TL_T0_MS] = (ev[i].t0 - origin) * 1e3, r[TL_T1_MS] = (ev[i].t1 - origin) * 1e3;
        r[TL_LANE] = ev[i].kind == DL_EV_ALLREDUCE ? 1 : ev[i].kind == DL_EV_STEP ? 2 : 0;
        r[TL_ASYNC] = ev[i].async; // 1: a bucket's allreduce, overlapped; 0: a blocking one (ddp-flat's, AMP's flag)
        r[TL_BYTES] = ev[i].bytes;
    }
    DL_TRY(dl_csv_write(out, "metrics.csv", kit_metrics, R->tally.rows, R->tally.done));
    DL_TRY(dl_csv_write(out, "buckets.csv", buckets, brow[0], R->nb));
    DL_TRY(dl_csv_write(out, "projection.csv", projection, p->rows[0], 3));
    DL_TRY(dl_csv_write(out, "sweep.csv", sweep_cols, p->sweep[0], p->ns));
    DL_TRY(dl_csv_write(out, "timeline.csv", timeline, trow[0], *nt));
    if (p->ntl > 0)
        DL_TRY(dl_csv_write(out, "timeline_projected.csv", projected_cols, p->tl[0], p->ntl));
    if (R->amp)
        DL_TRY(dl_csv_write(out, "amp.csv", kit_amp, R->arow + KIT_AMP_NCOLS * R->resumed_at,
                            (size_t)(R->step - R->resumed_at)));
    else
        dl_csv_drop(out, "amp.csv"); // an fp32 run writes none
    return DL_OK;
}

/* The plots of what write_tables wrote (timeline.csv's and sweep.csv's
 * rows: R->nt, R->pj.ns) into p; a plot this run does not draw is removed (an
 * earlier run's). Cannot fail. */
void lab05_plots(dl_engine *E, dl_plots *p)
{
    const lab05_run *R = E->ctx;
    const lab05_projected *pj = &R->pj;
    int nt = R->nt, ns = R->pj.ns;
    const char *out = R->E->a.out, *mode = lab05_mode_names[R->mode];
    if (R->tally.done > 1)
        dl_plots_draw(p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", out, mode, R->E->P);
    else
        dl_plots_skip(p, "training");
    if (nt > 0 && pj->ntl > 0)
        dl_plots_draw(p, "timeline",
                      "data='%s/timeline.csv'; projected='%s/timeline_projected.csv'; mode='%s'; P=%d; "
                      "profile='%s'; gpus=%d; bwd_end=%.9g; exposed=%.9g; device='%s'; backend='%s'",
                      out, out, mode, R->E->P, R->E->prof.name, R->E->prof.gpus, pj->backward_end_ms, pj->exposed_ms,
                      R->E->dev.kind == DL_DEVICE_CUDA ? "GPU" : "CPU", dl_comm_backend(R->E->comm));
    else
        dl_plots_skip(p, "timeline");
    if (ns > 1)
        dl_plots_draw(p, "sweep", "data='%s/sweep.csv'; profile='%s'; cap_kib=%g; first_kib=%g", out, R->E->prof.name,
                      R->o.bucket_cap / 1024.0, R->o.first_bucket_cap / 1024.0);
    else
        dl_plots_skip(p, "sweep");
    if (R->amp && R->step > 1)
        dl_plots_draw(p, "amp", "data='%s/amp.csv'; amp='%s'; P=%d; after=%.17g", out, R->amp_name, R->E->P,
                      (double)R->scaler.scale); // the scale after the last step's update: summary.json's final_scale
    else
        dl_plots_skip(p, "amp");
    dl_plots_draw(p, "speedup", "data='%s/projection.csv'; profile='%s'; gpus=%d", out, R->E->prof.name,
                  R->E->prof.gpus);
}

/* summary.json's amp_stats: rank 0's sums over every step of the run (a
 * resumed run's too, from the bookkeeping beside its checkpoint). */
static void amp_stats(dl_json *j, const kit_tally *ty, float scale)
{
    long n = ty->probed;
    dl_json_object(j, "amp_stats");
    dl_json_num(j, "final_scale", scale);
    dl_json_int(j, "skipped_steps", ty->n_skipped);
    dl_json_int(j, "probed_steps", n);
    dl_json_num(j, "mean_underflow_share", n ? ty->underflow / (double)n : 0);
    dl_json_num(j, "mean_unchanged_share", n ? ty->unchanged / (double)n : 0);
    dl_json_num(j, "mean_subnormal_share", n ? ty->subnormal / (double)n : 0);
    dl_json_end_object(j);
}

/* The body of summary.json (dl_summary_fn). */
void lab05_summary(dl_json *j, const void *engine)
{
    const dl_engine *E = engine;
    const lab05_run *R = E->ctx;
    const lab05_options *o = &R->o;
    const lab05_projected *p = &R->pj;
    const double *last = R->tally.done ? R->tally.rows + KIT_METRIC_COLS * (R->tally.done - 1) : NULL;
    size_t B = (size_t)R->E->a.batch_size;
    dl_summary_run(j, "05-ddp-amp", lab05_mode_names[R->mode], R->E->comm, &R->E->dev, R->E->data.name);
    dl_json_str(j, "amp", R->amp_name);
    dl_json_object(j, "config");
    dl_json_str(j, "hidden", R->E->t.hidden);
    dl_json_int(j, "batch_per_rank", (long long)B);
    dl_json_int(j, "accum", o->accum);
    dl_json_int(j, "global_batch", (long long)(B * (size_t)o->accum * (size_t)R->E->P));
    dl_json_num(j, "bucket_mb", (double)o->bucket_cap / 1048576.0);
    dl_json_num(j, "first_bucket_mb", (double)o->first_bucket_cap / 1048576.0);
    dl_json_int(j, "epochs", R->E->a.epochs);
    dl_json_int(j, "seed", (long long)R->E->a.seed);
    dl_json_end_object(j);
    dl_json_int(j, "parameters", (long long)R->m.n_params);
    dl_json_int(j, "buckets", R->nb);
    dl_json_int(j, "steps", R->step);
    dl_json_num(j, "final_loss", last ? last[KIT_M_LOSS] : 0);
    dl_json_num(j, "val_accuracy", last ? last[KIT_M_VAL_ACC] : 0);
    dl_json_num(j, "test_accuracy", R->test_acc);
    dl_json_num(j, "param_diff_across_ranks", R->param_diff);
    dl_json_num(j, "steady_epoch_s", R->steady);
    dl_json_num(j, "steady_compute_s", R->steady_compute);
    if (R->amp)
        amp_stats(j, &R->tally, R->scaler.scale);
    dl_json_num(j, "measured_step_ms", p->measured_s * 1e3);
    dl_json_object(j, "projection");
    dl_json_str(j, "profile", R->E->prof.name);
    dl_json_int(j, "gpus", R->E->prof.gpus);
    dl_json_str(j, "step_cost", p->recorded ? "recorded" : "modelled");
    dl_json_num(j, "one_gpu_step_ms", p->one_s * 1e3);
    for (int k = 0; k < LAB05_MODES; k++) {
        dl_json_object(j, lab05_mode_names[k]);
        dl_json_num(j, "step_ms", p->step_s[k] * 1e3);
        dl_json_num(j, "speedup", p->speedup[k]);
        dl_json_num(j, "exposed_share", p->exposed[k]);
        if (k == 0 && R->amp) // the story's comparison: 4 GPUs in AMP against one GPU in fp32
            dl_json_num(j, "speedup_vs_one_fp32_gpu", p->vs32);
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
    dl_summary_device_io(j, &R->E->io);
}

/* The closing lines: test accuracy, --amp's skipped steps, each mode's projection. */
void lab05_closing(dl_engine *E)
{
    const lab05_run *R = E->ctx;
    const lab05_projected *p = &R->pj;
    double steady = R->steady;
    dl_progress *pr = &E->pr;
    const dl_profile *prof = &E->prof;
    dl_progress_line(pr, 1, "test accuracy %.4f; steady epoch %.2f s here", R->test_acc, steady);
    if (p->measured_s > 0)
        dl_progress_line(pr, 1,
                         "a step took %.3f ms here (median, %s); one GPU of %s: %.3f ms projected (%s step cost)",
                         p->measured_s * 1e3, dl_device_describe(&R->E->dev), prof->name, p->one_s * 1e3,
                         p->recorded ? "the recorded" : "a modelled");
    if (R->amp)
        dl_progress_line(pr, 1, "--amp %s: %ld of %ld steps skipped (inf/NaN), final loss scale %g", R->amp_name,
                         R->tally.n_skipped, R->step, (double)R->scaler.scale);
    for (int k = 0; k < LAB05_MODES; k++)
        if (p->step_s[k] > 0)
            dl_progress_line(pr, 1,
                             "projected on %d GPUs of %s, %-9s: step %.3f ms, speedup %.2fx, communication "
                             "exposed %.1f%% of the step",
                             prof->gpus, prof->name, lab05_mode_names[k], p->step_s[k] * 1e3, p->speedup[k],
                             dl_pct(p->exposed[k], 1));
    if (R->amp && p->step_s[0] > 0)
        dl_progress_line(pr, 1,
                         "--amp %s: speedups are against one GPU in %s; against one GPU in fp32 the bucketed "
                         "step runs %.2fx as fast",
                         R->amp_name, R->amp == LAB05_AMP_BF16 ? "bf16" : "fp16", p->vs32);
}

dl_status lab05_files(dl_engine *E)
{
    lab05_run *R = E->ctx;
    const char *out = E->a.out;
    char trace_path[1100];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", out);
    DL_TRY(dl_trace_write_chrome(E->comm, trace_path)); // every rank takes part
    if (E->rank != 0)
        return DL_OK;
    size_t nev;
    const dl_span *ev = dl_trace_events(&nev);
    // the second step this run took (a steady one), else its first
    long probe = R->step > R->resumed_at + 1 ? R->resumed_at + 1 : R->resumed_at;
    dl_run_io_spans(&E->io, ev, nev); // what each step asked of the device
    lab05_project(R, ev, nev, probe, &R->pj);
    R->pj.measured_s = lab05_measured_step(ev, nev, R->resumed_at);
    const int done = R->tally.done;
    for (int k = done > 1 ? 1 : 0; k < done; k++) {
        R->steady += R->tally.rows[KIT_METRIC_COLS * k + KIT_M_EPOCH_S] / (done > 1 ? done - 1 : 1);
        R->steady_compute += R->tally.rows[KIT_METRIC_COLS * k + KIT_M_COMPUTE_S] / (done > 1 ? done - 1 : 1);
    }
    return write_tables(R, &R->pj, ev, nev, probe, &R->nt);
}

void lab05_teardown(dl_engine *E)
{
    lab05_run *R = E->ctx;
    lab05_work *w = &R->w;
    for (size_t k = 0; w->bt != NULL && k < w->K; k++)
        dl_batch_free(&w->bt[k]);
    free(w->idx), free(w->bt), free(w->mb);
    free(w->arow), free(w->before), free(w->after), free(w->sums);
    memset(w, 0, sizeof *w);
    dl_devset_free(&R->tr);
    dl_devset_free(&R->val);
    dl_devset_free(&R->test);
    kit_ckpt_end(&R->ck);
    dl_mlp_free(&R->m);
}
