/* lab05.c — grader for lab 05: DDP as PyTorch builds it.
 *
 * The bucket assignment is called in-process (recorded in the worker,
 * replayed here) on crafted parameter lists and compared with the grader's
 * own assignment. Everything else runs the lab's driver, built from the code
 * under test, under common/bin/dlrun with real MPI processes and its --dump
 * mode: each rank writes its final parameters and the kit's trace (dl/trace.h:
 * every forward, each layer's backward, each allreduce with its bytes, in
 * the order they began — recorded by the kit, not by the student's code).
 * The judge computes the expected parameters itself, without any student
 * code: one rank trains the same model on the union of every rank's
 * micro-batches (the kit's sampler, the same seed, learning rate and steps),
 * and it judges the overlap from the recorded order against its own buckets.
 * Tolerances: parameters after 20 steps within 1e-6 + 1e-5·|ref| (the sums
 * run in another order: P partial means of B rows vs one mean of P·B rows);
 * across ranks exactly equal (every rank applies the same allreduced
 * gradient). The projection is recomputed here from the recorded order. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf, sscanf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, memcmp
#include <unistd.h> // access

#include "amp.h"
#include "dl/bf16.h" // dl_f2bf
#include "dl/half.h" // dl_f2h
#include "dl/ops.h" // dl_cast, dl_unscale
#include "dl/data.h" // dl_data_load
#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_read_file, dl_home
#include "dl/json.h" // dl_jv
#include "dl/lr.h" // dl_lr_at
#include "dl/project.h" // dl_project_step
#include "dl/sampler.h" // dl_sampler
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "items.h" // gr_code_dir
#include "kit.h" // kit_sim_layers

#define VAL_ROWS 6000 /* the driver's validation rows (labs/05-ddp-amp/main.c) */
#define DATA "fashion_mnist:train=10000,test=500"
#define HIDDEN "48,40,32"
#define SEED 1
#define EPOCHS 50 /* the driver's --epochs in every run: --max-steps stops it first */
#define LR 0.05
#define MOMENTUM 0.9
#define WD 5e-4
#define WARMUP 3
#define BASE 64
/* caps that give this model three buckets: 2 KiB first, 4 KiB after */
#define FIRST_CAP 2048
#define CAP 4096

// ---- the grader's own bucket assignment ----

static int ref_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out)
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
static int forward_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out)
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

static int same_buckets(const ddp_bucket *a, int na, const ddp_bucket *b, int nb)
{
    if (na != nb)
        return 0;
    for (int k = 0; k < na; k++)
        if (a[k].first != b[k].first || a[k].last != b[k].last || a[k].offset != b[k].offset ||
            a[k].count != b[k].count)
            return 0;
    return 1;
}

static void describe(const ddp_bucket *b, int nb, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < nb && at + 40 < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s{%d..%d}", k ? " " : "", b[k].first, b[k].last);
}

START_TEST(test_buckets)
{
    static const struct {
        int n;
        size_t counts[8], first, cap;
        const char *what;
    } cases[] = {
        {4, {100, 10, 50, 5}, 100, 200, "small caps"},
        {6, {1000, 10, 1000, 10, 1000, 10}, 4000, 4000, "one parameter per cap"},
        {6, {1000, 10, 1000, 10, 1000, 10}, 100, 100000, "a small first bucket, then one big one"},
        {5, {10, 10, 100000, 10, 10}, 50, 50, "an oversized parameter alone"},
        {3, {7, 7, 7}, 1, 1, "a cap of one byte: one bucket per parameter"},
        {4, {25, 25, 25, 25}, 100, 100, "a bucket closes when it reaches the cap exactly"},
        {8, {784 * 48, 48, 48 * 40, 40, 40 * 32, 32, 32 * 10, 10}, FIRST_CAP, CAP, "the model the driver is graded on"},
        {1, {3}, 1 << 20, 25 << 20, "one parameter"},
    };
    ddp_bucket got[DDP_MAX_BUCKETS], want[DDP_MAX_BUCKETS];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = cases[c].n, nb = -1;
        memset(got, 0, sizeof got);
        GR_OK(ddp_assign_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, got, &nb));
        int nw = ref_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, want);
        char g[512], w[512];
        describe(got, nb > 0 && nb <= DDP_MAX_BUCKETS ? nb : 0, g, sizeof g);
        describe(want, nw, w, sizeof w);
        if (same_buckets(got, nb, want, nw))
            continue;
        ddp_bucket fwd[DDP_MAX_BUCKETS];
        int nf = forward_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, fwd);
        if (same_buckets(got, nb, fwd, nf) || (nb > 1 && got[0].first == 0))
            GR_FAIL(GR_DIAG("forward-order") "%s (counts of %d parameters, caps %zu/%zu bytes): buckets %s, expected "
                                             "%s. Your first bucket starts with parameter 0, which backward produces "
                                             "last: walk the parameters from the last one",
                    cases[c].what, n, cases[c].first, cases[c].cap, g, w);
        GR_FAIL("%s (counts of %d parameters, caps %zu/%zu bytes of 4-byte elements): buckets %s, expected %s "
                "(first..last parameter in launch order; a bucket closes once it holds at least its cap; check "
                "offset and count too: got offset %zu count %zu for the first, expected %zu and %zu)",
                cases[c].what, n, cases[c].first, cases[c].cap, g, w, nb > 0 ? got[0].offset : 0,
                nb > 0 ? got[0].count : 0, want[0].offset, want[0].count);
    }
    int nb = 0;
    if (ddp_assign_buckets((const size_t[]){4, 0}, 2, 4, 8, 8, got, &nb) != DL_ERR_ARG)
        GR_FAIL("ddp_assign_buckets accepted a parameter of 0 elements; expected DL_ERR_ARG");
    if (ddp_assign_buckets((const size_t[]){4}, 1, 4, 0, 8, got, &nb) != DL_ERR_ARG)
        GR_FAIL("ddp_assign_buckets accepted a first cap of 0 bytes; expected DL_ERR_ARG");
}
END_TEST

// ---- the reference training: one rank on the union of the ranks' micro-batches ----

typedef struct model_spec {
    size_t sizes[8];
    int n_sizes;
} model_spec;

static void spec_of(const dl_dataset *tr, model_spec *s)
{
    const size_t h[3] = {48, 40, 32};
    s->sizes[0] = tr->d;
    for (int k = 0; k < 3; k++)
        s->sizes[1 + k] = h[k];
    s->sizes[4] = (size_t)tr->n_classes;
    s->n_sizes = 5;
}

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

static void ref_open(ref_run *r, int P, size_t rows)
{
    GR_OK(dl_data_load(DATA, &r->data));
    const dl_dataset *tr = &r->data.train;
    size_t n_train = tr->n - VAL_ROWS;
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
static float *reference(int P, size_t B, int accum, long steps, float **init, size_t *n_params)
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

/* Runs the driver on P ranks (once per grading run) with --dump; device is
 * "" (the driver's default) or "--device cuda ". */
static void run_dumped_on(const char *device, const char *name, int P, size_t B, int accum, long steps)
{
    char args[1024], summary[1300];
    snprintf(summary, sizeof summary, "%s/summary.json", gr_path(name));
    if (access(summary, R_OK) == 0)
        return;
    snprintf(args, sizeof args,
             "%s--data %s --hidden %s --batch-size %zu --accum %d --max-steps %ld --epochs 50 --lr %g "
             "--base-batch %d --warmup %d --momentum %g --weight-decay %g --seed %d --first-bucket-cap %zu "
             "--bucket-cap %zu --dump '%s/dump'",
             device, DATA, HIDDEN, B, accum, steps, LR, BASE, WARMUP, MOMENTUM, WD, SEED, (size_t)FIRST_CAP,
             (size_t)CAP, gr_path(name));
    int rc = gr_run_driver(P, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
}

static void run_dumped(const char *name, int P, size_t B, int accum, long steps)
{
    run_dumped_on("", name, P, B, accum, steps);
}

static float *dumped_params(const char *name, int r, size_t *n)
{
    char f[128];
    snprintf(f, sizeof f, "%s/dump/params.%d.npy", name, r);
    return gr_load_npy(f, n);
}

/* Every rank's parameters are bitwise equal; rank 0's match the reference. */
static void check_params(const char *name, int P, size_t B, int accum, long steps, const char *what)
{
    size_t n0 = 0, nr = 0, np = 0;
    float *p0 = dumped_params(name, 0, &n0);
    for (int r = 1; r < P; r++) {
        float *pr = dumped_params(name, r, &nr);
        if (nr != n0 || memcmp(pr, p0, n0 * sizeof *p0) != 0) {
            double worst = 0;
            for (size_t k = 0; k < n0 && k < nr; k++)
                worst = fabs((double)pr[k] - p0[k]) > worst ? fabs((double)pr[k] - p0[k]) : worst;
            GR_FAIL(GR_DIAG("ranks-diverge") "%s: after %ld steps rank %d's parameters differ from rank 0's by up to "
                                             "%g: the ranks did not apply the same gradient. A bucket allreduced "
                                             "before all its gradients were final, or a bucket never started or "
                                             "never waited for, gives each rank its own update",
                    what, steps, r, worst);
        }
        free(pr);
    }
    float *init = NULL;
    float *ref = reference(P, B, accum, steps, &init, &np);
    if (np != n0)
        GR_FAIL("%s: the driver's model has %zu parameters, expected %zu", what, n0, np);
    double *rd = malloc(np * sizeof *rd), up_p = 0, up_1 = 0;
    for (size_t k = 0; k < np; k++) {
        rd[k] = ref[k];
        up_p += fabs((double)p0[k] - init[k]);
        up_1 += fabs((double)ref[k] - init[k]);
    }
    dl_cmp c;
    if (!dl_allclose_f32(p0, rd, np, 1e-6, 1e-5, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "parameters", buf, sizeof buf);
        double ratio = up_p / up_1;
        gr_note("%s: the parameters moved %.3f times as far as the reference's\n", what, ratio);
        if (accum > 1 && ratio > 0.6 * accum)
            GR_FAIL(GR_DIAG("loss-not-divided-by-k") "%s: the parameters moved %.2f times as far as one rank at "
                                                     "batch %zu: the %d micro-batches' gradients were added up, not "
                                                     "averaged; divide by the number of micro-batches too (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, accum, buf);
        if (ratio > 1.5)
            GR_FAIL(GR_DIAG("grad-sum-not-average") "%s: the parameters moved %.2f times as far as one rank at batch "
                                                    "%zu: the ranks' gradients were summed, not averaged; divide "
                                                    "each bucket by the world size before the sum (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, buf);
        if (ratio < 0.75)
            GR_FAIL(GR_DIAG("average-applied-twice") "%s: the parameters moved only %.2f times as far as one rank at "
                                                     "batch %zu: the gradients were divided by the world size more "
                                                     "than once (a pre-divide and an average?) (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, buf);
        GR_FAIL("%s vs one rank at batch %zu after %ld steps: %s", what, B * (size_t)accum * (size_t)P, steps, buf);
    }
    free(p0), free(ref), free(init), free(rd);
}

START_TEST(test_equivalence)
{
    run_dumped("eq2", 2, 32, 1, 20);
    check_params("eq2", 2, 32, 1, 20, "2 ranks x batch 32");
    run_dumped("eq4", 4, 16, 1, 20);
    check_params("eq4", 4, 16, 1, 20, "4 ranks x batch 16");
}
END_TEST

// ---- the recorded order, held against the transport's own record ----

/* One span of the kit's trace (dl/trace.h) as --dump wrote it. */
typedef struct rec {
    int kind, id;
    long step;
    double bytes;
    int async;
    double syncs; /* host waits for the device while the span was open (-1: never ended) */
    long xport; /* the transport's record of the allreduce that opened it; -1 until matched */
} rec;

/* One operation as the transport logged it (dl_comm_log) and --dump wrote it. */
typedef struct xrec {
    char op[24], dtype[8], red[8];
    long trace; /* the span it opened, -1: none */
    long offset; /* where its buffer starts in the gradient buffer (elements); -1: outside it */
    size_t count;
} xrec;

/* One rank's run as the kit recorded it: the trace and the transport's log,
 * each allreduce span matched to the record of the transport that made it. */
typedef struct recorded {
    rec *ev;
    size_t n;
    xrec *x;
    size_t nx;
    long steps; /* steps 0 .. steps - 1 are in the trace */
} recorded;

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
    const char *kind = gr_csv_str(t, row, gr_csv_col(t, "kind"));
    e->id = (int)gr_csv_num(t, row, gr_csv_col(t, "id"));
    e->step = (long)gr_csv_num(t, row, gr_csv_col(t, "step"));
    e->bytes = gr_csv_num(t, row, gr_csv_col(t, "bytes"));
    e->async = (int)gr_csv_num(t, row, gr_csv_col(t, "async"));
    e->syncs = gr_csv_num(t, row, gr_csv_col(t, "syncs"));
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
    snprintf(x->op, sizeof x->op, "%s", gr_csv_str(t, row, gr_csv_col(t, "op")));
    snprintf(x->dtype, sizeof x->dtype, "%s", gr_csv_str(t, row, gr_csv_col(t, "dtype")));
    snprintf(x->red, sizeof x->red, "%s", gr_csv_str(t, row, gr_csv_col(t, "red")));
    x->trace = (long)gr_csv_num(t, row, gr_csv_col(t, "trace"));
    x->offset = (long)gr_csv_num(t, row, gr_csv_col(t, "offset"));
    x->count = (size_t)gr_csv_num(t, row, gr_csv_col(t, "count"));
}

/* Bytes per element of the dtype named t ("f32"), 0 if unknown. */
static size_t dtype_bytes(const char *t)
{
    for (int k = 0; k < DL_DTYPE_COUNT; k++)
        if (strcmp(t, dl_dtype_name((dl_dtype)k)) == 0)
            return dl_dtype_size((dl_dtype)k);
    return 0;
}

/* The end of every trace-tampered message. */
#define TAMPERED_WHY                                                                                             \
    ". The trace and the transport's log are the kit's own records (dl/trace.h, dl/comm.h): your code must not " \
    "start, stop or write the trace"

/* Reads run `name`'s trace and transport log of rank r and holds them
 * against each other: every allreduce the transport ran is a span of the
 * trace with its bytes and kind, every allreduce span is one the transport
 * ran, and each step holds the driver's step span and `accum` forwards,
 * each followed by the backward of every one of n_layers layers, last
 * layer first (what dl_mlp records). Fails, naming the first mismatch. */
static void read_recorded(const char *name, int r, int n_layers, int accum, recorded *w)
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

static void recorded_free(recorded *w)
{
    free(w->ev);
    free(w->x);
}

/* The layers of the model the driver runs are graded on: HIDDEN's, then the output. */
static int graded_layers(void)
{
    int n = 2;
    for (const char *c = HIDDEN; *c; c++)
        n += *c == ',';
    return n;
}

static void model_buckets(ddp_bucket *want, int *nw, size_t *n_params)
{
    dl_data data;
    GR_OK(dl_data_load(DATA, &data));
    model_spec ms;
    spec_of(&data.train, &ms);
    size_t counts[DDP_MAX_PARAMS];
    int n = 0;
    for (int l = 0; l + 1 < ms.n_sizes; l++) {
        counts[n++] = ms.sizes[l] * ms.sizes[l + 1];
        counts[n++] = ms.sizes[l + 1];
    }
    *nw = ref_buckets(counts, n, 4, FIRST_CAP, CAP, want);
    *n_params = (size_t)n;
    dl_data_free(&data);
}

/* "[a, b)" of a view of count elements at offset, or "a buffer outside the gradients". */
static const char *range(long offset, size_t count, char *buf, size_t len)
{
    if (offset < 0)
        snprintf(buf, len, "%zu elements of a buffer outside the gradient buffer (a copy?)", count);
    else
        snprintf(buf, len, "elements [%ld, %zu)", offset, (size_t)offset + count);
    return buf;
}

/* Judges each step's recorded order on rank r of an fp32 run without
 * accumulation, from the trace held against the transport's log: one
 * asynchronous allreduce per bucket, in bucket order, each on the bucket's
 * view of the gradient buffer and after its lowest parameter's layer, and
 * every bucket that can start before layer 0's backward did. */
static void check_order(const char *name, int r)
{
    ddp_bucket want[DDP_MAX_BUCKETS];
    int nw = 0;
    size_t n_params = 0;
    model_buckets(want, &nw, &n_params);
    recorded w;
    read_recorded(name, r, (int)n_params / 2, 1, &w);
    for (long s = 0; s < w.steps; s++) {
        int calls = 0;
        for (size_t i = 0; i < w.n; i++)
            calls += w.ev[i].step == s && w.ev[i].kind == DL_EV_ALLREDUCE && w.ev[i].async;
        if (calls == (int)n_params && nw != (int)n_params)
            GR_FAIL(GR_DIAG("per-parameter-allreduce") "step %ld on rank %d: %d allreduces, one per parameter, "
                                                       "instead of %d buckets: each call pays the latency of the "
                                                       "whole ring",
                    s, r, calls, nw);
        int got = 0, blocking = 0, blocking_during = 0, seen_layer[DL_MLP_MAX_LAYERS] = {0};
        int before_end = 0; // launched before layer 0's backward began
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s)
                continue;
            if (e->kind == DL_EV_FORWARD) {
                memset(seen_layer, 0, sizeof seen_layer);
            } else if (e->kind == DL_EV_BACKWARD && e->id >= 0 && e->id < DL_MLP_MAX_LAYERS) {
                seen_layer[e->id] = 1;
            } else if (e->kind == DL_EV_ALLREDUCE) {
                const xrec *x = &w.x[e->xport];
                if (!e->async) {
                    blocking++;
                    blocking_during += !seen_layer[0];
                    continue;
                }
                if (got < nw) {
                    const ddp_bucket *b = &want[got];
                    int layer = b->first / 2, view = x->offset == (long)b->offset && x->count == b->count;
                    if (!seen_layer[layer] && view)
                        GR_FAIL(GR_DIAG("bucket-before-ready") "step %ld on rank %d: bucket %d (parameters %d..%d) "
                                                               "started before layer %d's backward: part of it was "
                                                               "not computed yet. Start a bucket only once its "
                                                               "lowest parameter's gradient is final",
                                s, r, got, b->first, b->last, layer);
                    if (!view) {
                        const ddp_bucket *o = &want[nw - 1 - got];
                        char a[160];
                        if (nw > 1 && o != b && x->offset == (long)o->offset && x->count == o->count)
                            GR_FAIL(GR_DIAG("forward-order") "step %ld on rank %d: allreduce %d ran on bucket %d's "
                                                             "view, the bucket from the wrong end: the buckets went "
                                                             "in forward order",
                                    s, r, got, nw - 1 - got);
                        GR_FAIL("step %ld on rank %d: allreduce %d ran on %s, expected bucket %d's view of the "
                                "gradient buffer, elements [%zu, %zu) (parameters %d..%d): one allreduce per "
                                "bucket, in bucket order, on the bucket's whole view (no copy)",
                                s, r, got, range(x->offset, x->count, a, sizeof a), got, b->offset,
                                b->offset + b->count, b->first, b->last);
                    }
                    if (!seen_layer[0])
                        before_end++;
                }
                got++;
            }
        }
        if (got == 0 && blocking_during > 0)
            GR_FAIL(GR_DIAG("blocking-allreduce") "step %ld on rank %d: %d blocking allreduce(s) started during "
                                                  "backward and no asynchronous one: backward waits for each, so "
                                                  "nothing overlaps it",
                    s, r, blocking_during);
        if (got == 0 && blocking > 0)
            GR_FAIL(GR_DIAG("allreduce-after-backward") "step %ld on rank %d: %d blocking allreduce(s) after "
                                                        "backward and no asynchronous one: nothing overlaps "
                                                        "backward",
                    s, r, blocking);
        if (got != nw || blocking > 0)
            GR_FAIL("step %ld on rank %d: %d asynchronous and %d blocking allreduces, expected one asynchronous "
                    "allreduce per bucket (%d)",
                    s, r, got, blocking, nw);
        int could = 0; // buckets whose gradients were all final before layer 0
        for (int k = 0; k < nw; k++)
            could += want[k].first / 2 > 0;
        if (before_end < could)
            GR_FAIL(GR_DIAG("allreduce-after-backward") "step %ld on rank %d: %d of the %d buckets that could start "
                                                        "during backward started after it: start each bucket from "
                                                        "ddp_grad_ready as soon as its gradients are final",
                    s, r, could - before_end, could);
    }
    recorded_free(&w);
}

START_TEST(test_overlap)
{
    run_dumped("eq2", 2, 32, 1, 20);
    check_order("eq2", 0);
    check_order("eq2", 1);
    run_dumped("eq4", 4, 16, 1, 20);
    check_order("eq4", 3);
}
END_TEST

/* Judges task 3 on rank r of run `name` (accum micro-batches per step):
 * nothing allreduced before the step's last micro-batch (PyTorch's
 * no_sync), and no step that made the host wait for the device (the driver
 * passes ddp_step loss NULL; the step's span counts the kit's host waits,
 * the same on the CPU as on a GPU). How the buckets overlap backward is the
 * overlap item's. */
static void check_accumulation(const char *name, int r, int accum)
{
    recorded w;
    read_recorded(name, r, graded_layers(), accum, &w);
    for (long s = 0; s < w.steps; s++) {
        int micro = 0;
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s)
                continue;
            micro += e->kind == DL_EV_FORWARD;
            if (e->kind == DL_EV_ALLREDUCE && micro < accum)
                GR_FAIL(GR_DIAG("sync-every-micro-step") "step %ld on rank %d: an allreduce during micro-batch %d of "
                                                         "%d: with gradient accumulation only the last micro-batch "
                                                         "communicates (the others only add up their gradients, as "
                                                         "PyTorch's no_sync does)",
                        s, r, micro, accum);
        }
    }
    for (size_t i = 0; i < w.n; i++)
        if (w.ev[i].kind == DL_EV_STEP && w.ev[i].syncs != 0)
            GR_FAIL(GR_DIAG("loss-read-every-step") "step %ld on rank %d waited for the device %.0f time(s): given "
                                                    "loss NULL, ddp_step must not read anything back (pass NULL to "
                                                    "dl_mlp_loss: on a GPU each read stalls the step; the kit sums "
                                                    "the losses on the device)",
                    w.ev[i].step, r, w.ev[i].syncs);
    recorded_free(&w);
}

START_TEST(test_accumulation)
{
    run_dumped("acc", 2, 16, 3, 10);
    check_accumulation("acc", 0, 3);
    check_params("acc", 2, 16, 3, 10, "2 ranks x 3 micro-batches of 16");
}
END_TEST

// ---- the projection, recomputed from the recorded order ----

START_TEST(test_projection)
{
    const char *name = "proj";
    char args[1024];
    // 2 ranks of 4096 rows: projecting onto the target's GPUs needs only the recorded order
    snprintf(args, sizeof args,
             "--data fashion_mnist:train=14200,test=500 --max-steps 2 --bucket-mb 1 --dump '%s/dump'", gr_path(name));
    int rc = gr_run_driver(2, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
    // the default model at the default batch, on the default profile
    dl_profile prof;
    GR_OK(dl_profile_load(dl_profile_default(), &prof));
    const size_t sizes[] = {784, 512, 512, 512, 512, 10};
    dl_mlp m;
    GR_OK(dl_mlp_create(&m, dl_cpu(), sizes, 6, 1, SEED));
    size_t counts[DDP_MAX_PARAMS];
    int n = kit_param_counts(&m, counts);
    ddp_bucket want[DDP_MAX_BUCKETS];
    int nw = ref_buckets(counts, n, 4, 1 << 20, 1 << 20, want);
    dl_sim_layer layers[DL_MLP_MAX_LAYERS];
    dl_sim_bucket ref[DDP_MAX_BUCKETS], got[DDP_MAX_BUCKETS];
    double ob, ol;
    kit_sim_layers(&m, 4096, 0, layers);
    kit_sim_optim(&m, 0, &ob, &ol);
    kit_structural_buckets(want, nw, 4, ref);
    recorded w;
    read_recorded(name, 0, m.n_layers, 1, &w);
    // the student's recorded order of step 1, as kit_recorded_buckets reads it: each allreduce of the
    // gradient buffer started during backward, after the layer whose backward ended last before it
    int ng = 0, last = -1, in_bwd = 0;
    for (size_t i = 0; i < w.n && ng < DDP_MAX_BUCKETS; i++) {
        const rec *e = &w.ev[i];
        if (e->step != 1)
            continue;
        if (e->kind == DL_EV_FORWARD)
            last = -1, in_bwd = 0;
        else if (e->kind == DL_EV_BACKWARD)
            last = e->id, in_bwd = 1;
        else if (e->kind == DL_EV_ALLREDUCE && in_bwd && w.x[e->xport].offset >= 0)
            got[ng++] = (dl_sim_bucket){e->bytes, last == 0 ? -1 : last};
    }
    recorded_free(&w);
    dl_sim_step one, sr, sg;
    GR_OK(dl_project_step(&prof, 1, 1, layers, m.n_layers, NULL, 0, ob, ol, &one));
    GR_OK(dl_project_step(&prof, prof.gpus, 1, layers, m.n_layers, ref, nw, ob, ol, &sr));
    GR_OK(dl_project_step(&prof, prof.gpus, 1, layers, m.n_layers, got, ng, ob, ol, &sg));
    double s_ref = prof.gpus * one.step_s / sr.step_s, s_got = prof.gpus * one.step_s / sg.step_s;
    gr_note("projected on %d GPUs of %s: your order %.2fx, the reference's %.2fx (communication exposed %.1f%% vs "
            "%.1f%% of the step)\n",
            prof.gpus, prof.name, s_got, s_ref, dl_pct(sg.exposed_s / sg.step_s, 1),
            dl_pct(sr.exposed_s / sr.step_s, 1));
    dl_mlp_free(&m);
    if (!(s_got >= 0.9 * s_ref))
        GR_FAIL("your recorded order projects %.2fx on %d GPUs of %s, below 0.9 x the reference's %.2fx (%d "
                "allreduces recorded in step 1, %d buckets expected)",
                s_got, prof.gpus, prof.name, s_ref, ng, nw);
}
END_TEST

// ---- one GPU ----

START_TEST(test_gpu_one_rank)
{
    char args[1024];
    snprintf(args, sizeof args,
             "--device cuda --data %s --hidden %s --batch-size 64 --max-steps 20 --epochs 50 --lr %g --base-batch %d "
             "--warmup %d --seed %d --first-bucket-cap %zu --bucket-cap %zu --dump '%s/dump'",
             DATA, HIDDEN, LR, BASE, WARMUP, SEED, (size_t)FIRST_CAP, (size_t)CAP, gr_path("gpu1"));
    int rc = gr_run_driver(0, "gpu1", args);
    if (rc != 0)
        gr_fail_run("gpu1", rc);
    size_t n = 0, np = 0;
    float *p = dumped_params("gpu1", 0, &n), *init = NULL;
    float *ref = reference(1, 64, 1, 20, &init, &np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    GR_ALLCLOSE_F32("parameters after 20 steps on one GPU vs the CPU", p, rd, n < np ? n : np, 1e-5, 1e-4, "");
    free(p), free(ref), free(init), free(rd);
}
END_TEST

// ---- four GPUs ----

/* On four GPUs: the recorded order of a bucketed run is judged as the overlap
 * item judges it on the CPU (NCCL's asynchronous allreduces, started from the
 * ready callbacks), then the measured speedup, 1 GPU vs 4, of your driver and
 * the reference's, side by side in this run. */
START_TEST(test_gpu4_measured)
{
    run_dumped_on("--device cuda ", "gpu4order", 4, 16, 1, 20);
    for (int r = 0; r < 4; r++)
        check_order("gpu4order", r);
    // 512 rows per rank: 105 steps per epoch on one GPU, 26 on four
    double want, yours = gr_gpu4_speedup("--device cuda --batch-size 512 --epochs 6 --plot none --quiet",
                                         "projection.bucketed.speedup", &want);
    if (!(yours >= want))
        GR_FAIL("measured 4-GPU speedup %.2fx (steady epoch time on 1 GPU / on 4), below %.2fx: look at what the "
                "timeline (trace.json of run m4) shows between backward and the step",
                yours, want);
}
END_TEST

// ---- part 2: the loss scaler (in-process) and the AMP step (the driver) ----

/* GradScaler.update(), written here from its definition. */
static int ref_scaler(amp_scaler *s, int found_inf)
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

START_TEST(test_scaler)
{
    /* sequences of found_inf (1 = overflow) with the growth interval's edges:
     * the interval-th good step grows, an overflow resets the count, growth
     * that would reach inf does not happen, backoff below 1 is allowed */
    static const struct {
        float init;
        long interval;
        const char *seq;
    } cases[] = {{65536.0f, 3, "0001000110000"},
                 {1024.0f, 1, "0010011"},
                 {3.0e38f, 2, "00000"},
                 {1.0f, 2000, "1111"},
                 {8.0f, 4, "0001000000001"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        amp_scaler s = {cases[c].init, 0, 2.0f, 0.5f, cases[c].interval}, r = s;
        for (int k = 0; cases[c].seq[k]; k++) {
            int inf = cases[c].seq[k] == '1', skip = -1;
            float was = s.scale;
            dl_status st = amp_scaler_update(&s, inf, &skip);
            if (st == DL_ERR_TODO)
                GR_FAIL("%s", dl_last_error());
            GR_OK(st);
            int want_skip = ref_scaler(&r, inf);
            char at[160];
            snprintf(at, sizeof at, "init scale %g, growth_interval %ld, overflow sequence %s, call %d (found_inf %d)",
                     (double)cases[c].init, cases[c].interval, cases[c].seq, k + 1, inf);
            if (inf && skip != 1)
                GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "%s: skip = %d; a step whose gradients hold inf/NaN "
                                                           "must be skipped, or the weights become inf/NaN",
                        at, skip);
            if (inf && s.growth_tracker != 0)
                GR_FAIL(GR_DIAG("tracker-not-reset-on-overflow") "%s: growth_tracker = %ld after an overflow; it "
                                                                 "counts good steps in a row, so it restarts at 0",
                        at, s.growth_tracker);
            if (isinf(s.scale))
                GR_FAIL(GR_DIAG("scale-grows-to-inf") "%s: the scale became inf; growth that would overflow the "
                                                      "float is not taken (the scale stays %g)",
                        at, (double)was);
            if (!inf && r.scale > was && s.scale <= was)
                GR_FAIL(GR_DIAG("scale-never-grows") "%s: the scale stayed %g after %ld good steps in a row; it "
                                                     "doubles on the growth_interval-th one (and the count restarts)",
                        at, (double)s.scale, cases[c].interval);
            if (skip != want_skip || s.scale != r.scale || s.growth_tracker != r.growth_tracker)
                GR_FAIL("%s: scale %g, growth_tracker %ld, skip %d; expected scale %g, growth_tracker %ld, skip %d", at,
                        (double)s.scale, s.growth_tracker, skip, (double)r.scale, r.growth_tracker, want_skip);
        }
    }
    int skip = 0;
    if (amp_scaler_update(NULL, 0, &skip) != DL_ERR_ARG)
        GR_FAIL("amp_scaler_update(NULL, ...) should return DL_ERR_ARG");
}
END_TEST

#define AMP_INIT 1024.0 /* the grader's runs: no overflow at this scale... */
#define AMP_GROWTH 3 /* ...and two growths in 8 steps */
#define AMP_STEPS 8
/* fp16 rounds every activation and gradient (2^-11 relative), and sums over
 * other row groupings round differently: one step's fp16 gradient is within
 * about 1% of the fp32 one on this model, and P ranks at B rows differ from
 * one rank at P·B rows by up to about 7e-4 (P = 2) and 4.2e-3 (P = 4) in a
 * parameter after 8 steps (measured). Tolerance: 5e-3 + 5e-2·|ref| — a
 * gradient summed instead of averaged moves the parameters several times
 * further, and the master weights and the scale are checked on their own. */
#define AMP_ATOL 5e-3
#define AMP_RTOL 5e-2
/* bf16 keeps 8 significant bits: P ranks round each rank's partial sum, the
 * division by P and the sum over ranks to bf16, one rank its 64-row sum
 * once. Measured after 8 steps on 2 ranks: 446 of 41282 parameters differ
 * by more than 2e-3, 20 by more than 5e-3, the largest by 1.0e-2.
 * Tolerance 2.5e-2 + 1e-1·|ref|: the check is that the step runs in the
 * model's type at all (fp16 bits read as bf16 are off by orders of
 * magnitude); fp16's runs above hold the numerics tight. */
#define AMP_BF16_ATOL 2.5e-2
#define AMP_BF16_RTOL 1e-1

/* The scaler of a graded run in type t: fp16 GradScaler's (scale AMP_INIT,
 * doubled every AMP_GROWTH good steps), bf16 the scale fixed at 1. */
static amp_scaler amp_scaler_for(dl_dtype t)
{
    amp_scaler fp16 = {(float)AMP_INIT, 0, 2.0f, 0.5f, AMP_GROWTH}, bf16 = {1.0f, 0, 1.0f, 1.0f, AMP_GROWTH};
    return t == DL_BF16 ? bf16 : fp16;
}

/* One rank at P·B in 16-bit type t (fp16 or bf16) with fp32 master weights,
 * scaled as the run's scaler would (the judge's own step; the kit's 16-bit
 * MLP). At step poison (from 0; -1 for none) an inf goes where the driver's
 * --poison-step puts it: the first input of the last rank's rows. */
static float *reference_amp(int P, size_t B, long steps, long poison, dl_dtype t, size_t *n_params)
{
    ref_run r;
    ref_open(&r, P, B);
    GR_OK(dl_mlp_set_precision(&r.m, t));
    *n_params = r.m.n_params;
    amp_scaler sc = amp_scaler_for(t);
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
        if (!ref_scaler(&sc, found))
            GR_OK(dl_mlp_sgd(&r.m, (float)dl_lr_at(&r.lrc, s), (float)MOMENTUM, (float)WD));
    }
    return ref_close(&r);
}

/* The driver with --amp fp16 (t = DL_F16) or --amp bf16 on P ranks, once
 * per grading run; gpu: one process (P = 1) on the CUDA device instead. The
 * inf of poison_step goes into the last rank's input. */
static void run_amp(const char *name, int P, size_t B, long steps, long poison_step, int gpu, dl_dtype t)
{
    char args[1200], summary[1300];
    snprintf(summary, sizeof summary, "%s/summary.json", gr_path(name));
    if (access(summary, R_OK) == 0)
        return;
    snprintf(args, sizeof args,
             "%s--data %s --hidden %s --batch-size %zu --max-steps %ld --epochs 50 --lr %g --base-batch %d --warmup %d "
             "--momentum %g --weight-decay %g --seed %d --first-bucket-cap %zu --bucket-cap %zu --amp %s "
             "--init-scale %g --growth-interval %d --probe-every 0 --poison-step %ld --poison-rank %d --dump '%s/dump'",
             gpu ? "--device cuda " : "", DATA, HIDDEN, B, steps, LR, BASE, WARMUP, MOMENTUM, WD, SEED,
             (size_t)FIRST_CAP, (size_t)CAP, t == DL_BF16 ? "bf16" : "fp16", AMP_INIT, AMP_GROWTH, poison_step, P - 1,
             gr_path(name));
    int rc = gr_run_driver(gpu ? 0 : P, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
}

typedef struct amp_row {
    double step, loss, scale, skipped, underflow, unchanged, model_scale;
} amp_row;

/* An --amp run's per-step row, by column name. */
static void fill_amp(const gr_csv *t, size_t row, void *out)
{
    amp_row *a = out;
    a->step = gr_csv_num(t, row, gr_csv_col(t, "step"));
    a->loss = gr_csv_num(t, row, gr_csv_col(t, "loss"));
    a->scale = gr_csv_num(t, row, gr_csv_col(t, "scale"));
    a->skipped = gr_csv_num(t, row, gr_csv_col(t, "skipped"));
    a->underflow = gr_csv_num(t, row, gr_csv_col(t, "underflow"));
    a->unchanged = gr_csv_num(t, row, gr_csv_col(t, "unchanged"));
    a->model_scale = gr_csv_num(t, row, gr_csv_col(t, "model_scale"));
}

/* Rank r's per-step rows of an --amp run (step, loss, scale, skipped, ...). */
static amp_row *read_amp(const char *name, int r, long *n)
{
    size_t k = 0;
    amp_row *v = read_dump(name, "amp", r, sizeof *v, fill_amp, &k);
    *n = (long)k;
    return v;
}

/* Every rank's parameters bitwise equal and finite. */
static float *amp_same_params(const char *name, int P, size_t *n0)
{
    size_t nr = 0;
    float *p0 = dumped_params(name, 0, n0);
    for (size_t k = 0; k < *n0; k++)
        if (!isfinite(p0[k]))
            GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "run '%s': rank 0's parameter %zu is %g: a step with inf/NaN "
                                                       "gradients was applied",
                    name, k, (double)p0[k]);
    for (int r = 1; r < P; r++) {
        float *pr = dumped_params(name, r, &nr);
        if (nr != *n0 || memcmp(pr, p0, *n0 * sizeof *p0) != 0)
            GR_FAIL(GR_DIAG("ranks-diverge") "run '%s': rank %d's parameters differ from rank 0's: the ranks did "
                                             "not take the same decision (skip or step) with the same gradient",
                    name, r);
        free(pr);
    }
    return p0;
}

/* v is exactly a value of the 16-bit type t (what a 16-bit master would hold). */
static int representable(float v, dl_dtype t)
{
    return t == DL_BF16 ? dl_bf2f(dl_f2bf(v)) == v : dl_h2f(dl_f2h(v)) == v;
}

/* One --amp fp16 (t = DL_F16) or --amp bf16 run on P ranks of B rows,
 * judged against the grader's own 16-bit step at P·B rows; the master
 * weights' check; what backward was told. */
static void check_amp_run(const char *name, int P, size_t B, dl_dtype t)
{
    const long steps = AMP_STEPS;
    const char *tn = t == DL_BF16 ? "bf16" : "fp16";
    const double atol = t == DL_BF16 ? AMP_BF16_ATOL : AMP_ATOL, rtol = t == DL_BF16 ? AMP_BF16_RTOL : AMP_RTOL;
    run_amp(name, P, B, steps, -1, 0, t);
    size_t n = 0, np = 0;
    float *p = amp_same_params(name, P, &n);
    // the scale the student's scaler kept, and the one the kit's backward used
    amp_scaler sc = amp_scaler_for(t);
    long nr = 0;
    amp_row *a = read_amp(name, 0, &nr);
    if (nr != steps)
        GR_FAIL("run '%s' recorded %ld steps, expected %ld", name, nr, steps);
    for (long k = 0; k < nr; k++) {
        if (a[k].model_scale == 1.0 && a[k].scale != 1.0)
            GR_FAIL(GR_DIAG("no-loss-scaling") "step %ld: the scaler's scale is %g but the model's backward ran "
                                               "with loss scale 1: the loss was never scaled, so small gradients "
                                               "still flush to zero in fp16",
                    k + 1, a[k].scale);
        if (a[k].model_scale != a[k].scale)
            GR_FAIL("step %ld: backward ran with loss scale %g, the scaler held %g", k + 1, a[k].model_scale,
                    a[k].scale);
        if (a[k].scale != sc.scale)
            GR_FAIL(GR_DIAG("scale-never-grows") "--amp %s, step %ld: the loss scale was %g, expected %g (init %g, "
                                                 "multiplied by %g after every %ld steps without overflow)",
                    tn, k + 1, a[k].scale, (double)sc.scale, (double)amp_scaler_for(t).scale, (double)sc.growth_factor,
                    sc.growth_interval);
        ref_scaler(&sc, 0);
    }
    // master weights: fp32 keeps what 16-bit weights would round away
    size_t exact16 = 0;
    for (size_t k = 0; k < n; k++)
        exact16 += (size_t)representable(p[k], t);
    float *ref = reference_amp(P, B, steps, -1, t, &np);
    if (np != n)
        GR_FAIL("the driver's model has %zu parameters, expected %zu", n, np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    dl_cmp c;
    if (!dl_allclose_f32(p, rd, np, atol, rtol, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "parameters", buf, sizeof buf);
        if (exact16 == n)
            GR_FAIL(GR_DIAG("master-weights-fp16") "every one of the %zu parameters is exactly a %s value: the "
                                                   "master weights were kept (or rounded) in %s, so updates "
                                                   "smaller than half a %s ulp are lost (%s)",
                    n, tn, tn, tn, buf);
        if (t == DL_BF16)
            GR_FAIL(GR_DIAG("amp-not-bf16") "--amp bf16 on %d ranks x batch %zu vs one rank at batch %zu in bf16 "
                                            "after %ld steps: %s. --amp fp16 passed: does your step cast the "
                                            "master weights to fp16 whatever the model's type (m->compute)?",
                    P, B, B * (size_t)P, steps, buf);
        GR_FAIL("--amp %s on %d ranks x batch %zu vs one rank at batch %zu in %s after %ld steps: %s", tn, P, B,
                B * (size_t)P, tn, steps, buf);
    }
    if (exact16 == n)
        GR_FAIL(GR_DIAG("master-weights-fp16") "every one of the %zu parameters is exactly a %s value: the "
                                               "master weights must stay fp32",
                n, tn);
    gr_note("--amp %s, %d ranks: %zu of %zu parameters happen to be %s values (fp32 masters)\n", tn, P, exact16, n, tn);
    free(p), free(ref), free(rd), free(a);
}

START_TEST(test_amp_training)
{
    check_amp_run("amp2", 2, 32, DL_F16);
    check_amp_run("amp4", 4, 16, DL_F16);
    check_amp_run("ampbf16", 2, 32, DL_BF16); // the same step in bf16: written for m->compute, not for fp16
}
END_TEST

/* The first step where rank r decided otherwise than the poisoned rank
 * (the last), naming which way they parted; the rows are every rank's. */
static void check_same_decisions(amp_row *const *a, int P, long steps, long poisoned)
{
    const amp_row *hit = a[P - 1]; // the rank whose input held the inf
    for (long k = 0; k < steps; k++)
        for (int r = 0; r + 1 < P; r++) {
            double mine = a[r][k].skipped, theirs = hit[k].skipped;
            if ((mine != 0) == (theirs != 0))
                continue;
            if (k == poisoned && theirs != 0)
                GR_FAIL(GR_DIAG("inf-check-before-allreduce") "step %ld: rank %d, whose gradients held the inf, "
                                                              "skipped; rank %d did not: the ranks took different "
                                                              "skip decisions. Is the inf check or the unscale done "
                                                              "before the allreduce, on each rank's own gradient? "
                                                              "Unscale and check the summed buckets, where an inf "
                                                              "on any rank is an inf on every rank",
                        k + 1, P - 1, r);
            GR_FAIL(GR_DIAG("ranks-diverge") "step %ld: rank %d skipped = %g, rank %d skipped = %g: the ranks took "
                                             "different skip decisions; decide on a flag reduced over the ranks "
                                             "(an inf anywhere skips the step everywhere)",
                    k + 1, r, mine, P - 1, theirs);
        }
}

/* Judges, from the transport's log of run `name` on rank r, that every
 * step's skip decision came after a reduction of the flag over the ranks:
 * an allreduce of one element outside the gradient buffer (max, sum or
 * avg) after the step's buckets started. */
static void check_flag_reduced(const char *name, int r)
{
    recorded w;
    read_recorded(name, r, graded_layers(), 1, &w);
    for (long s = 0; s < w.steps; s++) {
        int flag = 0;
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s || e->kind != DL_EV_ALLREDUCE)
                continue;
            const xrec *x = &w.x[e->xport];
            if (x->offset >= 0)
                flag = 0; // a bucket: the flag comes after the last one
            else if (x->count == 1 && strcmp(x->red, "min") != 0)
                flag = 1;
        }
        if (!flag)
            GR_FAIL(GR_DIAG("flag-not-reduced") "--amp fp16, step %ld on rank %d: no allreduce of the inf/NaN flag "
                                                "(one element, max or sum over the ranks) after the buckets' "
                                                "allreduces: each rank decided alone on its own check. The summed "
                                                "buckets agree here, so the decisions matched, but the rule is a "
                                                "decision that rests on the flag reduced over the ranks",
                    s + 1, r);
    }
    recorded_free(&w);
}

START_TEST(test_amp_skip)
{
    enum { P = 2 };
    const long steps = AMP_STEPS, poisoned = 3;
    run_amp("ampskip", P, 32, steps, poisoned, 0, DL_F16);
    amp_row *a[P];
    for (int r = 0; r < P; r++) {
        long nr = 0;
        a[r] = read_amp("ampskip", r, &nr);
        if (nr != steps)
            GR_FAIL("run 'ampskip' rank %d recorded %ld steps, expected %ld", r, nr, steps);
    }
    // the decisions first: where the ranks part, the parameters say only that they did
    check_same_decisions(a, P, steps, poisoned);
    // then the weights: a step taken on inf leaves NaN, and every later step skips
    size_t n = 0;
    float *p = amp_same_params("ampskip", P, &n);
    for (int r = 0; r < P; r++) {
        for (long k = 0; k < steps; k++) {
            int want = k == poisoned;
            double got = a[r][k].skipped;
            if ((got != 0) != want)
                GR_FAIL(GR_DIAG("skip-not-together") "rank %d, step %ld: skipped = %g, expected %d: an inf reached "
                                                     "rank %d's gradients at step %ld; every rank must skip that "
                                                     "step, and only that one",
                        r, k + 1, got, want, P - 1, poisoned + 1);
        }
        double before = a[r][poisoned].scale, after = a[r][poisoned + 1].scale;
        if (after != before * 0.5)
            GR_FAIL("rank %d: the scale went from %g to %g after the overflow, expected it halved", r, before, after);
    }
    for (int r = 0; r < P; r++)
        check_flag_reduced("ampskip", r);
    for (int r = 0; r < P; r++)
        free(a[r]);
    free(p);
}
END_TEST

// ---- part 2 on one GPU ----

/* The AMP step on one GPU for 8 steps of 64 rows, an inf in the input of
 * step 3, against the judge's fp16 step on the CPU. Both sides multiply
 * fp16 values and sum the products in fp32, but cuBLAS sums in its own
 * order, so an activation may round to the neighbouring fp16 value: the
 * parameters get amp_training's tolerance, 5e-3 + 5e-2·|ref| (the same
 * rounding argument; a wrong unscale or a step taken on inf is far
 * outside it). The skip decisions and the scale are exact on any device. */
START_TEST(test_amp_gpu)
{
    const long steps = AMP_STEPS, poisoned = 3;
    const size_t B = 64;
    run_amp("ampgpu", 1, B, steps, poisoned, 1, DL_F16);
    long nr = 0;
    amp_row *a = read_amp("ampgpu", 0, &nr);
    if (nr != steps)
        GR_FAIL("run 'ampgpu' recorded %ld steps, expected %ld", nr, steps);
    amp_scaler sc = {(float)AMP_INIT, 0, 2.0f, 0.5f, AMP_GROWTH};
    for (long k = 0; k < steps; k++) {
        double want_scale = sc.scale, got_scale = a[k].scale, got_skip = a[k].skipped;
        int want_skip = ref_scaler(&sc, k == poisoned);
        if (k == poisoned && got_skip == 0)
            GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "on the GPU, step %ld: skipped = 0, but an inf was in its "
                                                       "input: the check must see the gradients the device summed, "
                                                       "as it does on the CPU",
                    k + 1);
        if ((got_skip != 0) != want_skip || got_scale != want_scale)
            GR_FAIL("on the GPU, step %ld: scale %g, skipped = %g; on the CPU the same steps give scale %g, skipped = "
                    "%d (init %g, doubled after every %d good steps, an inf at step %ld)",
                    k + 1, got_scale, got_skip, want_scale, want_skip, AMP_INIT, AMP_GROWTH, poisoned + 1);
    }
    size_t n = 0, np = 0;
    float *p = amp_same_params("ampgpu", 1, &n);
    float *ref = reference_amp(1, B, steps, poisoned, DL_F16, &np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    GR_ALLCLOSE_F32("parameters after 8 fp16 steps (one skipped) on one GPU vs the CPU", p, rd, n < np ? n : np,
                    AMP_ATOL, AMP_RTOL, "");
    free(p), free(ref), free(rd), free(a);
}
END_TEST

// ---- task 6: checkpoints ----

#include "lab05_ckpt.c"

// ---- task 6 end to end: the driver stops, saves, and resumes exactly ----

/* The driver on 2 ranks with the equivalence runs' workload in --amp fp16,
 * the loss scale at 1024 and doubled after every 3 good steps (amp_training's
 * scaler: it changes before the checkpoint, and the good steps counted at
 * the checkpoint decide when it changes next), plus extra. */
static int run_resume(const char *name, const char *extra)
{
    char args[1600];
    snprintf(args, sizeof args,
             "--data %s --hidden %s --batch-size 32 --epochs 50 --lr %g --base-batch %d --warmup %d --momentum %g "
             "--weight-decay %g --seed %d --first-bucket-cap %zu --bucket-cap %zu --amp fp16 --init-scale %g "
             "--growth-interval %d --probe-every 0 %s",
             DATA, HIDDEN, LR, BASE, WARMUP, MOMENTUM, WD, SEED, (size_t)FIRST_CAP, (size_t)CAP, AMP_INIT, AMP_GROWTH,
             extra);
    return gr_run_driver(2, name, args);
}

START_TEST(test_ckpt_resume)
{
    const int P = 2;
    const long stop = 5, steps = 12; // stopped mid-epoch (62 steps per epoch here), between two growths of the scale
    char extra[1400];
    snprintf(extra, sizeof extra, "--max-steps %ld --dump '%s/dump'", steps, gr_path("resfull"));
    int rc = run_resume("resfull", extra);
    if (rc != 0)
        gr_fail_run("resfull", rc);
    snprintf(extra, sizeof extra, "--max-steps %ld --checkpoint-dir '%s/ck'", stop, gr_path("resa"));
    rc = run_resume("resa", extra);
    if (rc != 0)
        gr_fail_run("resa", rc);
    snprintf(extra, sizeof extra, "--max-steps %ld --resume '%s/ck/latest' --dump '%s/dump'", steps, gr_path("resa"),
             gr_path("resb"));
    rc = run_resume("resb", extra);
    if (rc != 0)
        gr_fail_run("resb", rc);
    for (int r = 0; r < P; r++) {
        // the loss scale of every step after the resume: the scaler's state came back
        long nf = 0, nb = 0;
        amp_row *full = read_amp("resfull", r, &nf), *res = read_amp("resb", r, &nb);
        if (nf != steps || nb != steps - stop)
            GR_FAIL("rank %d: the run that never stopped recorded %ld steps (expected %ld), the resumed one %ld "
                    "(expected %ld)",
                    r, nf, steps, nb, steps - stop);
        for (long k = 0; k < nb; k++) {
            const amp_row *f = &full[stop + k], *b = &res[k];
            if (b->scale != f->scale)
                GR_FAIL(GR_DIAG("checkpoint-without-scaler") "rank %d, step %ld of the resumed run: loss scale %g, "
                                                             "the run that never stopped had %g: the loss scaler "
                                                             "(its scale and its count of good steps) did not come "
                                                             "back from the checkpoint",
                        r, stop + k + 1, b->scale, f->scale);
        }
        free(full), free(res);
        char a[64], b[64];
        size_t na = 0, nbp = 0;
        snprintf(a, sizeof a, "resfull/dump/params.%d.npy", r);
        snprintf(b, sizeof b, "resb/dump/params.%d.npy", r);
        float *pa = gr_load_npy(a, &na), *pb = gr_load_npy(b, &nbp);
        if (na != nbp || memcmp(pa, pb, na * sizeof *pa) != 0) {
            size_t k = 0;
            while (k < na && k < nbp && memcmp(pa + k, pb + k, sizeof *pa) == 0)
                k++;
            GR_FAIL("rank %d: stopped after %ld steps, saved, resumed and run to %ld, the parameters differ from the "
                    "run that never stopped (first at [%zu]: %.9g vs %.9g): something the next step depends on was "
                    "not saved or not restored",
                    r, stop, steps, k, k < na ? (double)pa[k] : 0.0, k < nbp ? (double)pb[k] : 0.0);
        }
        free(pa), free(pb);
    }
}
END_TEST

// ---- the table ----

#define H "README.md#"
#define ITEM(test, name, title, pts, tier, parent, hint, section, timeout, where) \
    {                                                                             \
        name, title, pts, tier, parent, hint, H section, timeout, where, &test    \
    }
static const gr_item items[] = {
    ITEM(test_buckets, "buckets", "buckets: reverse order, first cap, whole parameters, exact views", 20, GR_CPU, NULL,
         "the first bucket holds what backward produces first; no bucket closes below its cap, none splits a parameter",
         "task-1-buckets-20-points", 30, GR_WORKER),
    ITEM(test_equivalence, "equivalence",
         "bucketed P ranks equal one rank at P x batch after 20 steps (P = 2, 4); ranks bitwise equal", 25, GR_CPU,
         "buckets",
         "after the step every rank holds the mean gradient of the global batch, the same bits on every rank",
         "task-2-overlap-60-points", 300, GR_JUDGE),
    ITEM(test_overlap, "overlap",
         "recorded order, held against the transport's log: one allreduce per bucket view, in order, during backward",
         20, GR_CPU, "buckets",
         "a bucket can go once every gradient in it is final, not before; once per step, in order, on its view",
         "task-2-overlap-60-points", 300, GR_JUDGE),
    ITEM(test_accumulation, "accumulation",
         "accumulation: no communication before the last micro-batch; K x B equals K P B; no wait for the device", 15,
         GR_CPU, "equivalence",
         "the micro-batches before the last only add up; the step equals one rank's on all K x P x B rows",
         "task-3-gradient-accumulation-15-points", 300, GR_JUDGE),
    ITEM(test_projection, "projection",
         "your recorded order projects >= 0.9 x the reference's speedup on the default profile", 15, GR_CPU, "overlap",
         "the earlier a bucket starts, the more of its allreduce hides under backward", "reading-the-timeline", 600,
         GR_JUDGE),
    ITEM(test_gpu_one_rank, "gpu_one_rank", "one GPU: 20 bucketed steps equal the CPU reference", 5, GR_GPU1,
         "equivalence", "the same code on device pointers", "running-on-gpus", 300, GR_JUDGE),
    ITEM(test_gpu4_measured, "gpu4_measured",
         "4 GPUs: buckets overlap backward on the device; measured speedup >= 0.8 x the reference's, same run", 10,
         GR_GPU4, "overlap", "one GPU per rank (dlrun -n 4 --device cuda); every bucket started from ddp_grad_ready",
         "running-on-gpus", 600, GR_JUDGE),
    ITEM(test_scaler, "scaler", "loss scaler: GradScaler's state machine on crafted overflow sequences", 10, GR_CPU,
         NULL, "back off and skip on inf; grow on the growth_interval-th good step in a row, to a finite value",
         "task-4-the-loss-scaler-10-points", 30, GR_WORKER),
    ITEM(test_amp_training, "amp_training",
         "--amp fp16 on 2 and 4 ranks, bf16 on 2: 8 steps equal one rank in the same type; fp32 masters; ranks equal",
         15, GR_CPU, "equivalence",
         "backward sees the current masters in the model's type and the scaled loss; the optimizer, fp32 unscaled "
         "gradients",
         "task-5-the-amp-step-25-points", 300, GR_JUDGE),
    ITEM(test_amp_skip, "amp_skip", "an inf on one rank before the sync: every rank skips that step together", 10,
         GR_CPU, "amp_training",
         "every rank takes one decision from what every rank saw: it rests on a flag reduced over the ranks",
         "task-5-the-amp-step-25-points", 300, GR_JUDGE),
    ITEM(test_amp_gpu, "amp_gpu", "one GPU: 8 fp16 steps equal the CPU's; the poisoned one skipped on the device", 5,
         GR_GPU1, "amp_training", "the same step on device pointers: every pass runs where its data lives",
         "running-on-gpus", 300, GR_JUDGE),
    ITEM(test_ckpt_roundtrip, "ckpt_roundtrip",
         "checkpoint: saved and loaded back bitwise (weights, momentum, scaler, sampler, step, rng)", 10, GR_CPU, NULL,
         "every field of ckpt_state goes into the payload, and comes back bitwise", "task-6-checkpoints-35-points", 30,
         GR_WORKER),
    ITEM(test_ckpt_rejects, "ckpt_rejects",
         "checkpoint: truncated, corrupt and foreign files refused, naming the file, s untouched", 8, GR_CPU,
         "ckpt_roundtrip",
         "believe nothing of a file until all of it checks out; refuse it naming the file, s untouched",
         "task-6-checkpoints-35-points", 30, GR_WORKER),
    ITEM(test_ckpt_atomic, "ckpt_atomic",
         "checkpoint: a save that fails half-way leaves the old one loadable and no temporary file", 7, GR_CPU,
         "ckpt_roundtrip",
         "path changes only once a complete file exists; a failed save leaves the old one whole, no stray file",
         "task-6-checkpoints-35-points", 30, GR_WORKER),
    ITEM(test_ckpt_resume, "ckpt_resume",
         "--amp fp16 stopped after 5 steps, saved and resumed: bitwise the run that never stopped, loss scale too", 10,
         GR_CPU, "ckpt_roundtrip",
         "what the next step reads must come back: weights, momentum, step, scaler, "
         "position",
         "task-6-checkpoints-35-points", 300, GR_JUDGE),
};

static const gr_lab lab = {"05", "DDP as PyTorch builds it: buckets overlapped with backward", "05-ddp-amp", items,
                           (int)(sizeof items / sizeof items[0])};

const gr_lab *gr_lab_get(void)
{
    return &lab;
}
