/* outputs.c — lab 05's driver plumbing: the flags, the grader's dump, the
 * projection of the three modes and the files rank 0 writes (see
 * outputs.h). Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // llround
#include <stdint.h> // uintptr_t
#include <stdio.h> // snprintf, fprintf, rename, remove
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, memcpy

#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_mkdir_p, dl_tmp_create
#include "dl/json.h" // dl_json
#include "dl/metrics.h" // dl_csv_write
#include "dl/plot.h" // dl_plots_draw
#include "dl/rank.h" // dl_rank_device
#include "dl/summary.h" // dl_summary_write, dl_summary_run
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
#define TP_MAX_ROWS (2 * 8 + DL_MLP_MAX_LAYERS + DDP_MAX_BUCKETS + 4)

// ---- the flags ----

/* A bucket cap in bytes into *cap: --NAME-cap as given (a size; its default
 * when not), or --NAME-mb when given (mb >= 0: MiB, PyTorch's unit, rounded
 * to the nearest byte). The two spell one value: dl_cli_parse refuses both
 * (their dl_opt.group). An MiB value under half a byte is DL_ERR_ARG. */
static dl_status resolve_cap(const char *name, size_t *cap, double mb)
{
    if (mb < 0)
        return DL_OK;
    double bytes = mb * 1048576.0;
    if (bytes < 0.5)
        return dl_error_set(DL_ERR_ARG, "--%s-mb %g is %.3g bytes: a cap is at least 1 byte", name, mb, bytes);
    *cap = (size_t)llround(bytes);
    return DL_OK;
}

int lab05_parse(int argc, char **argv, lab05_options *o)
{
    dl_args_defaults(&o->a);
    o->a.data = "fashion_mnist";
    o->a.epochs = 30;
    o->a.batch_size = 4096;
    o->a.lr = 0.02;
    o->a.out = "build/run/05-ddp-amp";
    o->mode = LAB05_BUCKETED;
    dl_train_opts_defaults(&o->t); // momentum 0.9, weight decay 5e-4, base batch 4096, 10 warmup steps, no limit
    o->t.hidden = "512,512,512,512";
    o->dump = NULL;
    o->bucket_cap = (size_t)25 << 20; // PyTorch's defaults: 25 MiB, the first bucket 1 MiB
    o->first_bucket_cap = (size_t)1 << 20;
    o->bucket_mb = -1;
    o->first_bucket_mb = -1;
    o->train_rows = 0;
    o->accum = 1;
    o->amp = LAB05_AMP_OFF;
    o->init_scale = 65536;
    o->growth_interval = 2000;
    o->probe_every = -1; // lab05_setup: every step on the CPU, never on a GPU
    o->poison_step = -1;
    o->poison_rank = 0;
    o->ckpt_dir = NULL;
    o->resume = NULL;
    o->ckpt_every = 0;
    o->allow_reshard = 0;
    const dl_opt extra[] = {
        {"mode", DL_OPT_ENUM, &o->mode, "MODE",
         "bucketed (yours), ddp-flat (one allreduce after backward), per-param (one per parameter)",
         "bucketed|ddp-flat|per-param", 1, 0, 'm'},
        // each cap has two spellings (bytes, MiB): one group each, so that giving both is refused
        {"bucket-cap", DL_OPT_SIZE, &o->bucket_cap, "SIZE", "bucket cap in bytes: 1000, 64K, 25M (PyTorch: 25M)", NULL,
         1, 1e12, 0, 1},
        {"first-bucket-cap", DL_OPT_SIZE, &o->first_bucket_cap, "SIZE", "the first bucket's cap (PyTorch: 1M)", NULL, 1,
         1e12, 0, 2},
        {"bucket-mb", DL_OPT_DOUBLE, &o->bucket_mb, "X",
         "the bucket cap in MiB instead (PyTorch's bucket_cap_mb), rounded to the nearest byte; -1: --bucket-cap", NULL,
         0, 1e6, 0, 1},
        {"first-bucket-mb", DL_OPT_DOUBLE, &o->first_bucket_mb, "X",
         "the first bucket's cap in MiB instead, the same way; -1: --first-bucket-cap", NULL, 0, 1e6, 0, 2},
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
    // lab 05's own flags, then the shared training flags it takes (dl/trainopt.h)
    dl_opt opts[sizeof extra / sizeof extra[0] + DL_TRAIN_OPTS];
    size_t n = sizeof extra / sizeof extra[0];
    memcpy(opts, extra, sizeof extra);
    int k = dl_train_opts_pick(&o->t, "hidden,base-batch,warmup,momentum,weight-decay,max-steps,profile", opts + n);
    if (k < 0) {
        fprintf(stderr, "lab05: error: a shared training flag it names is not in dl/trainopt.h (a kit bug)\n");
        return DL_CLI_ERROR;
    }
    n += (size_t)k;
    int rc = dl_cli_parse(argc, argv, "lab05",
                          "Lab 05: DistributedDataParallel as PyTorch builds it: gradient buckets allreduced while "
                          "backward runs. Start it with common/bin/dlrun -n P.",
                          &o->a, opts, n);
    if (rc == DL_CLI_RUN && (resolve_cap("bucket", &o->bucket_cap, o->bucket_mb) != DL_OK ||
                             resolve_cap("first-bucket", &o->first_bucket_cap, o->first_bucket_mb) != DL_OK)) {
        fprintf(stderr, "lab05: error: %s\n", dl_last_error());
        return DL_CLI_ERROR;
    }
    return rc == DL_CLI_RUN ? dl_profile_cli("lab05", o->t.profile) : rc; // --profile list
}

dl_status lab05_setup(lab05_run *R)
{
    const lab05_options *o = &R->o;
    R->rank = dl_comm_rank(R->comm);
    R->P = dl_comm_size(R->comm);
    R->o.a.quiet |= R->rank != 0; // one voice
    R->mode = (lab05_mode)o->mode;
    R->amp = (lab05_amp)o->amp;
    R->amp_name = lab05_amp_names[R->amp];
    R->lowp = R->amp == LAB05_AMP_BF16 ? DL_BF16 : DL_F16;
    if (R->amp != LAB05_AMP_OFF && R->mode != LAB05_BUCKETED)
        return dl_error_set(DL_ERR_ARG, "--amp %s runs with --mode bucketed (your reducer), not --mode %s", R->amp_name,
                            lab05_mode_names[R->mode]);
    DL_TRY(dl_mlp_parse_hidden("--hidden", o->t.hidden, R->sizes, &R->n_sizes));
    if (o->a.batch_size < 1)
        return dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 05 needs a per-rank batch of at least 1 row",
                            o->a.batch_size);
    if (R->rank == 0) // a run that fails leaves no summary.json that looks like its own
        DL_TRY(dl_summary_prepare(o->a.out));
    DL_TRY(dl_profile_load(o->t.profile != NULL ? o->t.profile : dl_profile_default(), &R->prof));
    DL_TRY(dl_rank_device(R->comm, &o->a.dev, &R->dev));
    if (o->probe_every < 0) // the probe reads gradients back: on a GPU that stalls every step it measures
        R->o.probe_every = R->dev.kind == DL_DEVICE_CUDA ? 0 : 1;
    DL_TRY(dl_data_load(o->a.data, &R->data));
    R->train = &R->data.train;
    R->sizes[0] = R->train->d;
    R->sizes[R->n_sizes - 1] = (size_t)R->train->n_classes;
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
    const dl_comm_rec *rec = dl_comm_log(R->comm, &n, NULL);
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
    int rank = R->rank;
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

// ---- the projection ----

/* What one step of this run costs, as the simulation takes it: from the
 * step the trace recorded (kit_sim_recorded: what it launched and moved,
 * AMP's casts and unscale included), else from the model of dl_mlp
 * (kit_sim_layers). */
typedef struct step_cost {
    dl_sim_layer layers[DL_MLP_MAX_LAYERS];
    double optim_bytes, optim_launches;
    int recorded; /* 1: from the trace */
} step_cost;

/* One step of each mode projected on P ranks; speedup against one GPU that
 * trains the same rows (P·accum micro-batches per global step) in the same
 * precision, and (vs32) the bucketed mode's against one fp32 GPU (modelled:
 * an AMP run recorded no fp32 step). *one_s: that one GPU's step. */
static void project_modes(const dl_profile *prof, const dl_mlp *m, const step_cost *c, size_t B, int accum, int P,
                          const dl_sim_bucket *const *bk, const int *nb, double *step_s, double *exposed,
                          double *speedup, double *vs32, double *one_s)
{
    dl_sim_layer layers32[DL_MLP_MAX_LAYERS];
    const dl_sim_layer *layers = c->layers;
    double ob = c->optim_bytes, ol = c->optim_launches, ob32, ol32;
    kit_sim_layers(m, B, 0, layers32);
    kit_sim_optim(m, 0, &ob32, &ol32);
    dl_sim_step one, one32, s;
    dl_project_step(prof, 1, accum, layers, m->n_layers, NULL, 0, ob, ol, &one);
    dl_project_step(prof, 1, accum, layers32, m->n_layers, NULL, 0, ob32, ol32, &one32);
    *vs32 = 0;
    *one_s = one.step_s;
    for (int k = 0; k < LAB05_MODES; k++) {
        step_s[k] = exposed[k] = speedup[k] = 0;
        if (nb[k] < 0 || dl_project_step(prof, P, accum, layers, m->n_layers, bk[k], nb[k], ob, ol, &s) != DL_OK)
            continue;
        step_s[k] = s.step_s;
        exposed[k] = s.step_s > 0 ? s.exposed_s / s.step_s : 0;
        speedup[k] = s.step_s > 0 ? P * one.step_s / s.step_s : 0;
        if (k == 0)
            *vs32 = s.step_s > 0 ? P * one32.step_s / s.step_s : 0;
    }
}

/* The projected step time of the bucketed mode for caps of 1 KiB to 64 MiB
 * (your assignment, each bucket launched as early as it can go): rows of
 * cap_kib, step_ms, buckets into sweep (32 × 3); returns how many. */
static int sweep_caps(const dl_profile *prof, const dl_mlp *m, const step_cost *cost, const size_t *counts,
                      int n_params, size_t esz, size_t first_cap, size_t B, int accum, const dl_sim_bucket *flat,
                      const dl_sim_bucket *pp, double (*sweep)[SWEEP_NCOLS])
{
    int ns = 0;
    for (double kib = 1; kib <= 65536 && ns < 32; kib *= 2) {
        ddp_bucket sb[DDP_MAX_BUCKETS];
        dl_sim_bucket sim[DDP_MAX_BUCKETS];
        int n = 0;
        size_t c = (size_t)(kib * 1024);
        if (ddp_assign_buckets(counts, n_params, esz, c < first_cap ? c : first_cap, c, sb, &n) != DL_OK)
            break;
        double st3[LAB05_MODES], ex3[LAB05_MODES], sp3[LAB05_MODES], v3 = 0, o3 = 0;
        const dl_sim_bucket *one[LAB05_MODES] = {sim, flat, pp};
        int n3[LAB05_MODES] = {kit_structural_buckets(sb, n, esz, sim), -1, -1};
        project_modes(prof, m, cost, B, accum, prof->gpus, one, n3, st3, ex3, sp3, &v3, &o3);
        sweep[ns][SW_CAP_KIB] = kib, sweep[ns][SW_STEP_MS] = st3[0] * 1e3, sweep[ns][SW_BUCKETS] = n;
        ns++;
    }
    return ns;
}

/* What the projection gives: projection.csv's rows (1, 2 and 4 ranks), each
 * mode on the profile's GPUs, and sweep.csv's rows. */
typedef struct projected {
    double measured_s; /* this run's median step (measured_step) */
    double rows[3][PROJECTION_NCOLS];
    double step_s[LAB05_MODES], exposed[LAB05_MODES], speedup[LAB05_MODES], vs32;
    double one_s; /* one GPU of the profile, this run's step */
    int recorded; /* the step's cost came from the trace */
    double sweep[32][SWEEP_NCOLS];
    int ns;
    double tl[TP_MAX_ROWS][PROJECTED_NCOLS]; /* timeline_projected.csv's rows */
    int ntl;
    double backward_end_ms, exposed_ms; /* of that step */
} projected;

/* The median time of this run's steps after its first (the device's times on a
 * GPU: the trace's step spans), in seconds; 0 without two steps. */
static double measured_step(const dl_span *ev, size_t nev, long first)
{
    double t[4096];
    size_t k = 0;
    for (size_t i = 0; i < nev && k < sizeof t / sizeof t[0]; i++)
        if (ev[i].kind == DL_EV_STEP && ev[i].step > first && ev[i].t1 >= ev[i].t0)
            t[k++] = ev[i].t1 - ev[i].t0;
    if (k == 0)
        return 0;
    for (size_t i = 1; i < k; i++) // insertion sort: at most a few thousand
        for (size_t j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1], t[j - 1] = x;
        }
    return k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
}

/* Appends a row of timeline_projected.csv to p (times in seconds). */
static void tl_row(projected *p, int kind, int id, double t0, double t1, double bytes)
{
    if (p->ntl >= TP_MAX_ROWS)
        return;
    double *r = p->tl[p->ntl++];
    r[TP_KIND] = kind, r[TP_ID] = id, r[TP_T0_MS] = t0 * 1e3, r[TP_T1_MS] = t1 * 1e3, r[TP_BYTES] = bytes;
}

/* One step of the run's mode (its nb buckets bk) on the profile's GPUs, as
 * dl_project_step times it, into p's timeline rows: each layer's forward
 * and backward timed alone by the same projection (one layer, one rank), so
 * that the compute drawn adds up to the step's and each bucket's start
 * follows its layer's end as the projection has it. */
static void project_timeline(const dl_profile *prof, const dl_mlp *m, const step_cost *c, int accum,
                             const dl_sim_bucket *bk, int nb, projected *p)
{
    dl_sim_step s, one;
    p->ntl = 0;
    p->backward_end_ms = p->exposed_ms = 0;
    if (nb < 0 || dl_project_step(prof, prof->gpus, accum, c->layers, m->n_layers, bk, nb, c->optim_bytes,
                                  c->optim_launches, &s) != DL_OK)
        return;
    double t = 0, micro = s.forward_s + s.backward_s;
    if (accum > 1 && accum <= 8) {
        for (int k = 0; k < accum - 1; k++, t += micro) {
            tl_row(p, DL_EV_FORWARD, k, t, t + s.forward_s, 0);
            tl_row(p, DL_EV_BACKWARD, -1, t + s.forward_s, t + micro, 0);
        }
    } else if (accum > 8) { // the micro-batches before the last, as one forward and one backward
        tl_row(p, DL_EV_FORWARD, -1, 0, (accum - 1) * s.forward_s, 0);
        tl_row(p, DL_EV_BACKWARD, -1, (accum - 1) * s.forward_s, (accum - 1) * micro, 0);
        t = (accum - 1) * micro;
    }
    tl_row(p, DL_EV_FORWARD, accum - 1, t, t + s.forward_s, 0);
    t += s.forward_s;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        double d = 0;
        if (dl_project_step(prof, 1, 1, &c->layers[l], 1, NULL, 0, 0, 0, &one) == DL_OK)
            d = one.backward_s;
        tl_row(p, DL_EV_BACKWARD, l, t, t + d, 0);
        t += d;
    }
    for (int k = 0; k < nb; k++)
        tl_row(p, DL_EV_ALLREDUCE, k, s.bucket_start_s[k], s.bucket_end_s[k], bk[k].bytes);
    tl_row(p, DL_EV_OPTIM, 0, s.step_s - s.optim_s, s.step_s, 0);
    p->backward_end_ms = s.backward_end_s * 1e3;
    p->exposed_ms = s.exposed_s * 1e3;
}

/* The three modes, from the order recorded for step `probe` (a steady one), into p. */
static void project(const lab05_run *R, const dl_span *ev, size_t nev, long probe, projected *p)
{
    const dl_mlp *m = &R->m;
    size_t B = (size_t)R->o.a.batch_size, esz = R->esz;
    int accum = R->o.accum;
    dl_sim_bucket rec[DDP_MAX_BUCKETS], flat = {(double)(esz * m->n_params), -1}, pp[DDP_MAX_BUCKETS];
    ddp_bucket ppb[DDP_MAX_BUCKETS];
    // bucketed: the order this run recorded (or, in another mode, the earliest
    // each of your buckets could go); per-param: one bucket per parameter
    int nrec = R->mode == LAB05_BUCKETED ? kit_recorded_buckets(ev, nev, probe, rec, DDP_MAX_BUCKETS)
                                         : kit_structural_buckets(R->assigned, R->na, esz, rec);
    int npp = kit_structural_buckets(ppb, kit_per_param_buckets(m, ppb), esz, pp);
    const dl_sim_bucket *bk[LAB05_MODES] = {rec, &flat, pp};
    int nbk[LAB05_MODES] = {nrec, 1, npp};
    const int ranks[3] = {1, 2, 4};
    step_cost c;
    int fp16 = m->compute != DL_F32; // fp16 or bf16: the same tensor-core peak and 2 bytes
    c.recorded = kit_sim_recorded(ev, nev, probe, m->n_layers, fp16, c.layers, &c.optim_bytes, &c.optim_launches);
    if (!c.recorded) {
        kit_sim_layers(m, B, fp16, c.layers);
        kit_sim_optim(m, fp16, &c.optim_bytes, &c.optim_launches);
    }
    p->recorded = c.recorded;
    for (int k = 0; k < 3; k++) {
        project_modes(&R->prof, m, &c, B, accum, ranks[k], bk, nbk, p->step_s, p->exposed, p->speedup, &p->vs32,
                      &p->one_s);
        double *r = p->rows[k];
        r[PR_RANKS] = ranks[k], r[PR_BUCKETED] = p->speedup[0], r[PR_FLAT] = p->speedup[1];
        r[PR_PER_PARAM] = p->speedup[2], r[PR_BUCKETED_EXPOSED] = p->exposed[0], r[PR_FLAT_EXPOSED] = p->exposed[1];
        r[PR_PER_PARAM_EXPOSED] = p->exposed[2];
        r[PR_BUCKETED_MS] = p->step_s[0] * 1e3, r[PR_FLAT_MS] = p->step_s[1] * 1e3;
        r[PR_PER_PARAM_MS] = p->step_s[2] * 1e3;
    }
    project_modes(&R->prof, m, &c, B, accum, R->prof.gpus, bk, nbk, p->step_s, p->exposed, p->speedup, &p->vs32,
                  &p->one_s);
    project_timeline(&R->prof, m, &c, accum, bk[R->mode], nbk[R->mode], p);
    // the bucket-cap sweep (projected; the caps of your assignment)
    p->ns = sweep_caps(&R->prof, m, &c, R->counts, R->n_tensors, esz, R->first_cap, B, accum, &flat, pp, p->sweep);
}

// ---- the files (rank 0) ----

/* metrics.csv, buckets.csv, projection.csv, sweep.csv, timeline.csv (step
 * `probe` on rank 0, from the step's start; *nt gets its rows) and amp.csv. */
static dl_status write_tables(const lab05_run *R, const projected *p, const dl_span *ev, size_t nev, long probe,
                              int *nt)
{
    const char *out = R->o.a.out;
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
    char stale[1100]; // an fp32 run writes no amp.csv: an earlier AMP run's must not stay beside this run's data
    snprintf(stale, sizeof stale, "%s/amp.csv", out);
    if (R->amp)
        DL_TRY(dl_csv_write(out, "amp.csv", kit_amp, R->arow + KIT_AMP_NCOLS * R->resumed_at,
                            (size_t)(R->step - R->resumed_at)));
    else
        remove(stale);
    return DL_OK;
}

/* The plots of what write_tables wrote (nt, ns: timeline.csv's and
 * sweep.csv's rows) into p; a plot this run does not draw is removed (an
 * earlier run's). Cannot fail. */
static void draw(const lab05_run *R, const projected *pj, int nt, int ns, dl_plots *p)
{
    const char *out = R->o.a.out, *mode = lab05_mode_names[R->mode];
    if (R->tally.done > 1)
        dl_plots_draw(p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", out, mode, R->P);
    else
        dl_plots_skip(p, "training");
    if (nt > 0 && pj->ntl > 0)
        dl_plots_draw(p, "timeline",
                      "data='%s/timeline.csv'; projected='%s/timeline_projected.csv'; mode='%s'; P=%d; "
                      "profile='%s'; gpus=%d; bwd_end=%.9g; exposed=%.9g; device='%s'; backend='%s'",
                      out, out, mode, R->P, R->prof.name, R->prof.gpus, pj->backward_end_ms, pj->exposed_ms,
                      R->dev.kind == DL_DEVICE_CUDA ? "GPU" : "CPU", dl_comm_backend(R->comm));
    else
        dl_plots_skip(p, "timeline");
    if (ns > 1)
        dl_plots_draw(p, "sweep", "data='%s/sweep.csv'; profile='%s'; cap_kib=%g; first_kib=%g", out, R->prof.name,
                      R->o.bucket_cap / 1024.0, R->o.first_bucket_cap / 1024.0);
    else
        dl_plots_skip(p, "sweep");
    if (R->amp && R->step > 1)
        dl_plots_draw(p, "amp", "data='%s/amp.csv'; amp='%s'; P=%d", out, R->amp_name, R->P);
    else
        dl_plots_skip(p, "amp");
    dl_plots_draw(p, "speedup", "data='%s/projection.csv'; profile='%s'; gpus=%d", out, R->prof.name, R->prof.gpus);
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

typedef struct report {
    const lab05_run *R;
    const projected *p;
    double steady, steady_compute; /* the epochs after the first: their mean (or the only one) */
    const char *plots;
} report;

/* The body of summary.json (dl_summary_fn). */
static void summary(dl_json *j, const void *ctx)
{
    const report *rp = ctx;
    const lab05_run *R = rp->R;
    const lab05_options *o = &R->o;
    const projected *p = rp->p;
    const double *last = R->tally.done ? R->tally.rows + KIT_METRIC_COLS * (R->tally.done - 1) : NULL;
    size_t B = (size_t)o->a.batch_size;
    dl_summary_run(j, "05-ddp-amp", lab05_mode_names[R->mode], R->comm, &R->dev, R->data.name);
    dl_json_str(j, "amp", R->amp_name);
    dl_json_object(j, "config");
    dl_json_str(j, "hidden", o->t.hidden);
    dl_json_int(j, "batch_per_rank", (long long)B);
    dl_json_int(j, "accum", o->accum);
    dl_json_int(j, "global_batch", (long long)(B * (size_t)o->accum * (size_t)R->P));
    dl_json_num(j, "bucket_mb", (double)o->bucket_cap / 1048576.0);
    dl_json_num(j, "first_bucket_mb", (double)o->first_bucket_cap / 1048576.0);
    dl_json_int(j, "epochs", o->a.epochs);
    dl_json_int(j, "seed", (long long)o->a.seed);
    dl_json_end_object(j);
    dl_json_int(j, "parameters", (long long)R->m.n_params);
    dl_json_int(j, "buckets", R->nb);
    dl_json_int(j, "steps", R->step);
    dl_json_num(j, "final_loss", last ? last[KIT_M_LOSS] : 0);
    dl_json_num(j, "val_accuracy", last ? last[KIT_M_VAL_ACC] : 0);
    dl_json_num(j, "test_accuracy", R->test);
    dl_json_num(j, "param_diff_across_ranks", R->param_diff);
    dl_json_num(j, "steady_epoch_s", rp->steady);
    dl_json_num(j, "steady_compute_s", rp->steady_compute);
    if (R->amp)
        amp_stats(j, &R->tally, R->scaler.scale);
    dl_json_num(j, "measured_step_ms", p->measured_s * 1e3);
    dl_json_object(j, "projection");
    dl_json_str(j, "profile", R->prof.name);
    dl_json_int(j, "gpus", R->prof.gpus);
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
    dl_summary_device_io(j, &R->io);
    dl_json_str(j, "plots", rp->plots);
}

/* The closing lines: test accuracy, --amp's skipped steps, each mode's projection. */
static void closing_lines(lab05_run *R, const projected *p, double steady)
{
    dl_progress *pr = &R->pr;
    const dl_profile *prof = &R->prof;
    dl_progress_line(pr, 1, "test accuracy %.4f; steady epoch %.2f s here", R->test, steady);
    if (p->measured_s > 0)
        dl_progress_line(pr, 1,
                         "a step took %.3f ms here (median, %s); one GPU of %s: %.3f ms projected (%s step cost)",
                         p->measured_s * 1e3, dl_device_describe(&R->dev), prof->name, p->one_s * 1e3,
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

dl_status lab05_write_outputs(lab05_run *R)
{
    const char *out = R->o.a.out;
    char trace_path[1100];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", out);
    DL_TRY(dl_trace_write_chrome(R->comm, trace_path)); // every rank takes part
    if (R->rank != 0)
        return DL_OK;
    size_t nev;
    const dl_span *ev = dl_trace_events(&nev);
    // the second step this run took (a steady one), else its first
    long probe = R->step > R->resumed_at + 1 ? R->resumed_at + 1 : R->resumed_at;
    dl_run_io_spans(&R->io, ev, nev); // what each step asked of the device
    projected p;
    project(R, ev, nev, probe, &p);
    p.measured_s = measured_step(ev, nev, R->resumed_at);
    report rp = {R, &p, 0, 0, NULL};
    const int done = R->tally.done;
    for (int k = done > 1 ? 1 : 0; k < done; k++) {
        rp.steady += R->tally.rows[KIT_METRIC_COLS * k + KIT_M_EPOCH_S] / (done > 1 ? done - 1 : 1);
        rp.steady_compute += R->tally.rows[KIT_METRIC_COLS * k + KIT_M_COMPUTE_S] / (done > 1 ? done - 1 : 1);
    }
    int nt = 0;
    DL_TRY(write_tables(R, &p, ev, nev, probe, &nt));
    dl_plots plots = {"labs/05-ddp-amp/plots", R->o.a.plot, out, "lab05", ""};
    draw(R, &p, nt, p.ns, &plots);
    rp.plots = plots.list;
    DL_TRY(dl_summary_write(out, R->o.a.json, summary, &rp));
    closing_lines(R, &p, rp.steady);
    return DL_OK;
}
