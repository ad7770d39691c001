/* lab05_ref.c — lab 05's references and the readers of its driver runs (see lab05_ref.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf, sscanf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, memcmp
#include <unistd.h> // access

#include "dl/bf16.h" // dl_f2bf
#include "dl/half.h" // dl_f2h
#include "dl/lr.h" // dl_lr_at
#include "dl/ops.h" // dl_cast, dl_unscale
#include "dl/sampler.h" // dl_sampler
#include "kit.h" // kit_sim_layers
#include "lab05_ref.h"

typedef struct model_spec {
    size_t sizes[8];
    int n_sizes;
} model_spec;

/* The judge's one-rank run of the whole batch: the data, the model at the
 * global batch, the kit's sampler as each of P ranks draws from it, and the
 * driver's learning-rate schedule. Shared by the fp32 and the fp16 references. */
typedef struct ref_run {
    dl_data data;
    dl_mlp m; /* created for G rows, fp32 */
    int P, epoch; /* epoch: the one idx[] holds, -1 before the first */
    size_t rows, G, spe; /* rows per rank per step (B·accum), G = P·rows, steps per epoch */
    dl_sampler smp[4];
    size_t *idx[4]; /* each rank's order of the current epoch */
    float *X; /* (G, d) the global batch: rank 0's rows, then rank 1's, ... */
    int32_t *y; /* (G,) */
    dl_lr_config lrc;
} ref_run;

// ---- the grader's own bucket assignment ----

int gr_ref_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out)
{
    size_t off[DDP_MAX_PARAMS + 1];
    off[0] = 0;
    for (int p = 0; p < n; p++)
        off[p + 1] = off[p] + counts[p];
    int nb = 0, lo = n; // the open bucket holds parameters lo .. hi
    int hi = n - 1;
    size_t limit = first_cap;
    for (int p = n - 1; p >= 0; p--) {
        lo = p;
        size_t bytes = (off[hi + 1] - off[lo]) * esz;
        if (bytes >= limit || p == 0) {
            out[nb++] = (ddp_bucket){lo, hi, off[lo], off[hi + 1] - off[lo]};
            hi = p - 1;
            limit = cap;
        }
    }
    return nb;
}

/* The same rule walking the parameters from the first: the classic mistake. */
int gr_forward_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out)
{
    int nb = 0, lo = 0;
    size_t limit = first_cap, off = 0, bytes = 0;
    for (int p = 0; p < n; p++) {
        bytes += counts[p] * esz;
        if (bytes >= limit || p == n - 1) {
            size_t cnt = bytes / esz;
            out[nb++] = (ddp_bucket){lo, p, off, cnt};
            off += cnt;
            lo = p + 1;
            bytes = 0;
            limit = cap;
        }
    }
    return nb;
}

int gr_same_buckets(const ddp_bucket *a, int na, const ddp_bucket *b, int nb)
{
    if (na != nb)
        return 0;
    for (int k = 0; k < na; k++)
        if (a[k].first != b[k].first || a[k].last != b[k].last || a[k].offset != b[k].offset ||
            a[k].count != b[k].count)
            return 0;
    return 1;
}

void gr_describe(const ddp_bucket *b, int nb, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < nb && at + 40 < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s{%d..%d}", k ? " " : "", b[k].first, b[k].last);
}

// ---- the reference training: one rank on the union of the ranks' micro-batches ----

static void spec_of(const dl_dataset *tr, model_spec *s)
{
    const size_t h[3] = {48, 40, 32};
    s->sizes[0] = tr->d;
    for (int k = 0; k < 3; k++)
        s->sizes[1 + k] = h[k];
    s->sizes[4] = (size_t)tr->n_classes;
    s->n_sizes = 5;
}

/* The first rows of DATA's training split, as the driver reads them: the
 * references read only the rows it trains on (the first DATA_ROWS -
 * VAL_ROWS; its validation rows come after them), each row the same
 * whatever the count read, and one row of the test split, never used. */
static void load_rows(dl_data *d, long rows)
{
    char spec[64];
    snprintf(spec, sizeof spec, "fashion_mnist:train=%ld,test=1", rows);
    GR_OK(dl_data_load(spec, d));
}

static void ref_open(ref_run *r, int P, size_t rows)
{
    load_rows(&r->data, DATA_ROWS - VAL_ROWS);
    const dl_dataset *tr = &r->data.train;
    size_t n_train = tr->n;
    r->P = P, r->rows = rows, r->G = rows * (size_t)P, r->epoch = -1;
    model_spec ms;
    spec_of(tr, &ms);
    GR_OK(dl_mlp_create(&r->m, dl_cpu(), ms.sizes, ms.n_sizes, r->G, SEED));
    for (int k = 0; k < P; k++) {
        r->smp[k] = (dl_sampler){.n = n_train, .rank = k, .world = P, .seed = SEED, .shuffle = 1};
        r->idx[k] = malloc(dl_sampler_num_samples(&r->smp[k]) * sizeof *r->idx[k]);
    }
    r->spe = dl_sampler_num_samples(&r->smp[0]) / rows;
    r->lrc = (dl_lr_config){.base_lr = LR,
                            .base_batch = BASE,
                            .global_batch = r->G,
                            .warmup_steps = WARMUP,
                            .total_steps = (long)r->spe * EPOCHS, // --max-steps stops; the schedule spans the epochs
                            .cosine = 1};
    r->X = malloc(r->G * tr->d * sizeof *r->X);
    r->y = malloc(r->G * sizeof *r->y);
}

/* The global batch of step s into r->X, r->y: each rank's next rows of its
 * epoch's order, as the driver's sampler deals them. */
static void ref_batch(ref_run *r, long s)
{
    const dl_dataset *tr = &r->data.train;
    int e = (int)(s / (long)r->spe);
    size_t at = (size_t)(s % (long)r->spe) * r->rows, row = 0;
    if (e != r->epoch) {
        for (int k = 0; k < r->P; k++) {
            dl_sampler_set_epoch(&r->smp[k], e);
            GR_OK(dl_sampler_indices(&r->smp[k], r->idx[k]));
        }
        r->epoch = e;
    }
    for (int k = 0; k < r->P; k++)
        for (size_t i = 0; i < r->rows; i++, row++) {
            memcpy(r->X + row * tr->d, tr->X + r->idx[k][at + i] * tr->d, tr->d * sizeof *r->X);
            r->y[row] = tr->y[r->idx[k][at + i]];
        }
}

/* Frees the run; returns its parameters (malloc'ed, m.n_params floats). */
static float *ref_close(ref_run *r)
{
    float *out = malloc(r->m.n_params * sizeof *out);
    GR_OK(dl_mlp_get_params(&r->m, out));
    for (int k = 0; k < r->P; k++)
        free(r->idx[k]);
    free(r->X), free(r->y);
    dl_mlp_free(&r->m);
    dl_data_free(&r->data);
    return out;
}

/* The parameters after `steps` steps of P ranks x accum micro-batches of B
 * rows, computed as one rank at accum·P·B; init gets the starting point. */
float *gr_reference(int P, size_t B, int accum, long steps, float **init, size_t *n_params)
{
    ref_run r;
    ref_open(&r, P, B * (size_t)accum);
    *n_params = r.m.n_params;
    *init = malloc(r.m.n_params * sizeof **init);
    GR_OK(dl_mlp_get_params(&r.m, *init));
    for (long s = 0; s < steps; s++) {
        double loss;
        ref_batch(&r, s);
        GR_OK(dl_mlp_forward(&r.m, r.X, r.G));
        GR_OK(dl_mlp_loss(&r.m, r.y, r.G, &loss));
        GR_OK(dl_mlp_backward(&r.m, r.X, r.G, 0, NULL, NULL));
        GR_OK(dl_mlp_sgd(&r.m, (float)dl_lr_at(&r.lrc, s), (float)MOMENTUM, (float)WD));
    }
    return ref_close(&r);
}

const char *gr_workload_flags(void)
{
    static char flags[512];
    snprintf(flags, sizeof flags,
             "--data %s --hidden %s --epochs %d --lr %g --base-batch %d --warmup %d --momentum %g --weight-decay %g "
             "--seed %d --first-bucket-cap %zu --bucket-cap %zu",
             DATA, HIDDEN, EPOCHS, LR, BASE, WARMUP, MOMENTUM, WD, SEED, (size_t)FIRST_CAP, (size_t)CAP);
    return flags;
}

/* Runs the driver on P ranks (once per grading run) with --dump; device is
 * "" (the driver's default) or "--device cuda ". */
void gr_run_dumped_on(const char *device, const char *name, int P, size_t B, int accum, long steps)
{
    char args[1024], summary[1300];
    snprintf(summary, sizeof summary, "%s/summary.json", gr_path(name));
    if (access(summary, R_OK) == 0)
        return;
    snprintf(args, sizeof args, "%s%s --batch-size %zu --accum %d --max-steps %ld --dump '%s/dump'", device,
             gr_workload_flags(), B, accum, steps, gr_path(name));
    int rc = gr_run_driver(P, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
}

void gr_run_dumped(const char *name, int P, size_t B, int accum, long steps)
{
    gr_run_dumped_on("", name, P, B, accum, steps);
}

float *gr_dumped_params(const char *name, int r, size_t *n)
{
    char f[128];
    snprintf(f, sizeof f, "%s/dump/params.%d.npy", name, r);
    return gr_load_npy(f, n);
}

// ---- the recorded order, held against the transport's own record ----

/* The rows of SCRATCH/name/dump/file.r.csv (*n of them, malloc'ed, sz
 * bytes each), each filled by fill from the table's cells, read by column
 * name (gr_csv); fails the test on a missing file, column or number. */
static void *read_dump(const char *name, const char *file, int r, size_t sz,
                       void (*fill)(const gr_csv *, size_t, void *), size_t *n)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/dump/%s.%d.csv", gr_path(name), file, r);
    if (access(path, R_OK) != 0)
        GR_FAIL("the driver run '%s' left no %s for rank %d (%s)", name, file, r, path);
    gr_csv t;
    gr_csv_load(&t, path);
    char *v = malloc((t.nrows > 0 ? t.nrows : 1) * sz);
    if (v == NULL)
        GR_FAIL("out of memory reading %s", path);
    for (size_t k = 0; k < t.nrows; k++)
        fill(&t, k, v + k * sz);
    *n = t.nrows;
    gr_csv_free(&t);
    return v;
}

/* A trace span from its row: kind, id, step, bytes, async, syncs. */
static void fill_span(const gr_csv *t, size_t row, void *out)
{
    rec *e = out;
    const char *kind = gr_csv_str(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_KIND]));
    e->id = (int)gr_csv_num(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_ID]));
    e->step = (long)gr_csv_num(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_STEP]));
    e->bytes = gr_csv_num(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_BYTES]));
    e->async = (int)gr_csv_num(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_ASYNC]));
    e->syncs = gr_csv_num(t, row, gr_csv_col(t, dl_trace_csv_names[DL_TRACE_COL_SYNCS]));
    e->kind = -1;
    e->xport = -1;
    for (int q = 0; q < DL_EV_KINDS; q++)
        if (strcmp(kind, dl_trace_kind_name(q)) == 0)
            e->kind = q;
}

/* A transport record from its row: op, trace, offset, count, dtype, red. */
static void fill_op(const gr_csv *t, size_t row, void *out)
{
    xrec *x = out;
    snprintf(x->op, sizeof x->op, "%s", gr_csv_str(t, row, gr_csv_col(t, kit_comm_names[KIT_C_OP])));
    snprintf(x->dtype, sizeof x->dtype, "%s", gr_csv_str(t, row, gr_csv_col(t, kit_comm_names[KIT_C_DTYPE])));
    snprintf(x->red, sizeof x->red, "%s", gr_csv_str(t, row, gr_csv_col(t, kit_comm_names[KIT_C_RED])));
    x->trace = (long)gr_csv_num(t, row, gr_csv_col(t, kit_comm_names[KIT_C_TRACE]));
    x->offset = (long)gr_csv_num(t, row, gr_csv_col(t, kit_comm_names[KIT_C_OFFSET]));
    x->count = (size_t)gr_csv_num(t, row, gr_csv_col(t, kit_comm_names[KIT_C_COUNT]));
}

/* Bytes per element of the dtype named t ("f32"), 0 if unknown. */
static size_t dtype_bytes(const char *t)
{
    for (int k = 0; k < DL_DTYPE_COUNT; k++)
        if (strcmp(t, dl_dtype_name((dl_dtype)k)) == 0)
            return dl_dtype_size((dl_dtype)k);
    return 0;
}

/* Reads run `name`'s trace and transport log of rank r and holds them
 * against each other: every allreduce the transport ran is a span of the
 * trace with its bytes and kind, every allreduce span is one the transport
 * ran, and each step holds the driver's step span and `accum` forwards,
 * each followed by the backward of every one of n_layers layers, last
 * layer first (what dl_mlp records). Fails, naming the first mismatch. */
void gr_read_recorded(const char *name, int r, int n_layers, int accum, recorded *w)
{
    w->ev = read_dump(name, "trace", r, sizeof(rec), fill_span, &w->n);
    w->x = read_dump(name, "comm", r, sizeof(xrec), fill_op, &w->nx);
    for (size_t k = 0; k < w->nx; k++) {
        const xrec *x = &w->x[k];
        int async = strcmp(x->op, "allreduce_async") == 0;
        if (!async && strcmp(x->op, "allreduce") != 0)
            continue;
        double bytes = (double)(x->count * dtype_bytes(x->dtype));
        if (x->trace < 0 || (size_t)x->trace >= w->n)
            GR_FAIL(GR_DIAG("trace-tampered") "run '%s', rank %d: the transport ran an %s of %.0f bytes that the "
                                              "trace does not hold (it was stopped or cleared while the run "
                                              "trained)" TAMPERED_WHY,
                    name, r, x->op, bytes);
        rec *e = &w->ev[x->trace];
        if (e->kind != DL_EV_ALLREDUCE || e->async != async || e->bytes != bytes || e->xport >= 0)
            GR_FAIL(GR_DIAG("trace-tampered") "run '%s', rank %d: span %ld of the trace is not the %s of %.0f "
                                              "bytes the transport ran there" TAMPERED_WHY,
                    name, r, x->trace, x->op, bytes);
        e->xport = (long)k;
    }
    w->steps = 0;
    for (size_t i = 0; i < w->n; i++) {
        const rec *e = &w->ev[i];
        if (e->kind == DL_EV_ALLREDUCE && e->xport < 0)
            GR_FAIL(GR_DIAG("trace-tampered") "run '%s', rank %d: span %zu of the trace (step %ld) is an allreduce "
                                              "of %.0f bytes that no operation of the transport made" TAMPERED_WHY,
                    name, r, i, e->step, e->bytes);
        w->steps = e->step + 1 > w->steps ? e->step + 1 : w->steps;
    }
    if (w->steps == 0)
        GR_FAIL("the trace of run '%s' holds no step", name);
    for (long s = 0; s < w->steps; s++) {
        int spans = 0, micro = 0, next = -1, order = 1; // next: the layer whose backward comes next, -1: none
        for (size_t i = 0; i < w->n; i++) {
            const rec *e = &w->ev[i];
            if (e->step != s)
                continue;
            if (e->kind == DL_EV_STEP)
                spans++;
            if (e->kind == DL_EV_FORWARD) {
                order &= next == -1;
                micro++;
                next = n_layers - 1;
            } else if (e->kind == DL_EV_BACKWARD) {
                order &= e->id == next;
                next--;
            }
        }
        if (spans != 1 || micro != accum || next != -1 || !order)
            GR_FAIL(GR_DIAG("trace-tampered") "run '%s', rank %d, step %ld: %d step span(s) and %d forward(s), "
                                              "expected 1 and %d, each followed by the backward of every layer, "
                                              "last first%s" TAMPERED_WHY,
                    name, r, s, spans, micro, accum, order && next == -1 ? "" : " (they are not)");
    }
}

void gr_recorded_free(recorded *w)
{
    free(w->ev);
    free(w->x);
}

/* The layers of the model the driver runs are graded on: HIDDEN's, then the output. */
int gr_graded_layers(void)
{
    int n = 2;
    for (const char *c = HIDDEN; *c; c++)
        n += *c == ',';
    return n;
}

void gr_model_buckets(ddp_bucket *want, int *nw, size_t *n_params)
{
    dl_data data;
    load_rows(&data, 1); // the model's shape: the rows' width and the classes
    model_spec ms;
    spec_of(&data.train, &ms);
    size_t counts[DDP_MAX_PARAMS];
    int n = 0;
    for (int l = 0; l + 1 < ms.n_sizes; l++) {
        counts[n++] = ms.sizes[l] * ms.sizes[l + 1];
        counts[n++] = ms.sizes[l + 1];
    }
    *nw = gr_ref_buckets(counts, n, 4, FIRST_CAP, CAP, want);
    *n_params = (size_t)n;
    dl_data_free(&data);
}

/* "[a, b)" of a view of count elements at offset, or "a buffer outside the gradients". */
const char *gr_range(long offset, size_t count, char *buf, size_t len)
{
    if (offset < 0)
        snprintf(buf, len, "%zu elements of a buffer outside the gradient buffer (a copy?)", count);
    else
        snprintf(buf, len, "elements [%ld, %zu)", offset, (size_t)offset + count);
    return buf;
}

/* GradScaler.update(), written here from its definition. */
int gr_ref_scaler(amp_scaler *s, int found_inf)
{
    if (found_inf) {
        s->scale *= s->backoff_factor;
        s->growth_tracker = 0;
        return 1;
    }
    if (++s->growth_tracker >= s->growth_interval) {
        float grown = s->scale * s->growth_factor;
        if (isfinite(grown))
            s->scale = grown;
        s->growth_tracker = 0;
    }
    return 0;
}

/* The scaler of a graded run in type t: fp16 GradScaler's (scale AMP_INIT,
 * doubled every AMP_GROWTH good steps), bf16 the scale fixed at 1. */
amp_scaler gr_amp_scaler_for(dl_dtype t)
{
    amp_scaler fp16 = {(float)AMP_INIT, 0, 2.0f, 0.5f, AMP_GROWTH}, bf16 = {1.0f, 0, 1.0f, 1.0f, AMP_GROWTH};
    return t == DL_BF16 ? bf16 : fp16;
}

/* One rank at P·B in 16-bit type t (fp16 or bf16) with fp32 master weights,
 * scaled as the run's scaler would (the judge's own step; the kit's 16-bit
 * MLP). At step poison (from 0; -1 for none) an inf goes where the driver's
 * --poison-step puts it: the first input of the last rank's rows. */
float *gr_reference_amp(int P, size_t B, long steps, long poison, dl_dtype t, size_t *n_params)
{
    ref_run r;
    ref_open(&r, P, B);
    GR_OK(dl_mlp_set_precision(&r.m, t));
    *n_params = r.m.n_params;
    amp_scaler sc = gr_amp_scaler_for(t);
    for (long s = 0; s < steps; s++) {
        double loss;
        int found = 0;
        ref_batch(&r, s);
        if (s == poison)
            r.X[(size_t)(P - 1) * B * r.data.train.d] = INFINITY;
        GR_OK(dl_cast(r.m.dev, r.m.params16, t, r.m.params, DL_F32, r.m.n_params));
        GR_OK(dl_mlp_set_loss_scale(&r.m, sc.scale));
        GR_OK(dl_mlp_forward(&r.m, r.X, r.G));
        GR_OK(dl_mlp_loss(&r.m, r.y, r.G, &loss));
        GR_OK(dl_mlp_backward(&r.m, r.X, r.G, 0, NULL, NULL));
        GR_OK(dl_unscale(r.m.dev, r.m.grads16, t, r.m.grads, r.m.n_params, 1.0f / sc.scale, &found));
        if (!gr_ref_scaler(&sc, found))
            GR_OK(dl_mlp_sgd(&r.m, (float)dl_lr_at(&r.lrc, s), (float)MOMENTUM, (float)WD));
    }
    return ref_close(&r);
}

/* The driver with --amp fp16 (t = DL_F16) or --amp bf16 on P ranks, once
 * per grading run; gpu: one process (P = 1) on the CUDA device instead. The
 * inf of poison_step goes into the last rank's input. */
void gr_run_amp(const char *name, int P, size_t B, long steps, long poison_step, int gpu, dl_dtype t)
{
    char args[1200], summary[1300];
    snprintf(summary, sizeof summary, "%s/summary.json", gr_path(name));
    if (access(summary, R_OK) == 0)
        return;
    snprintf(args, sizeof args,
             "%s%s --batch-size %zu --max-steps %ld --amp %s --init-scale %g --growth-interval %d --probe-every 0 "
             "--poison-step %ld --poison-rank %d --dump '%s/dump'",
             gpu ? "--device cuda " : "", gr_workload_flags(), B, steps, t == DL_BF16 ? "bf16" : "fp16", AMP_INIT,
             AMP_GROWTH, poison_step, P - 1, gr_path(name));
    int rc = gr_run_driver(gpu ? 0 : P, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
}

/* An --amp run's per-step row, by column name. */
static void fill_amp(const gr_csv *t, size_t row, void *out)
{
    amp_row *a = out;
    a->step = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_STEP]));
    a->loss = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_LOSS]));
    a->scale = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_SCALE]));
    a->skipped = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_SKIPPED]));
    a->underflow = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_UNDERFLOW]));
    a->unchanged = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_UNCHANGED]));
    a->model_scale = gr_csv_num(t, row, gr_csv_col(t, kit_amp_names[KIT_A_MODEL_SCALE]));
}

/* Rank r's per-step rows of an --amp run (step, loss, scale, skipped, ...). */
amp_row *gr_read_amp(const char *name, int r, long *n)
{
    size_t k = 0;
    amp_row *v = read_dump(name, "amp", r, sizeof *v, fill_amp, &k);
    *n = (long)k;
    return v;
}

/* Every rank's parameters bitwise equal and finite. */
float *gr_amp_same_params(const char *name, int P, size_t *n0)
{
    size_t nr = 0;
    float *p0 = gr_dumped_params(name, 0, n0);
    for (size_t k = 0; k < *n0; k++)
        if (!isfinite(p0[k]))
            GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "run '%s': rank 0's parameter %zu is %g: a step with inf/NaN "
                                                       "gradients was applied",
                    name, k, (double)p0[k]);
    for (int r = 1; r < P; r++) {
        float *pr = gr_dumped_params(name, r, &nr);
        if (nr != *n0 || memcmp(pr, p0, *n0 * sizeof *p0) != 0)
            GR_FAIL(GR_DIAG("ranks-diverge") "run '%s': rank %d's parameters differ from rank 0's: the ranks did "
                                             "not take the same decision (skip or step) with the same gradient",
                    name, r);
        free(pr);
    }
    return p0;
}

/* v is exactly a value of the 16-bit type t (what a 16-bit master would hold). */
int gr_representable(float v, dl_dtype t)
{
    return t == DL_BF16 ? dl_bf2f(dl_f2bf(v)) == v : dl_h2f(dl_f2h(v)) == v;
}
