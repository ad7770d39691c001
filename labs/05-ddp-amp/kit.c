/* kit.c — lab 05's provided helpers; see kit.h. Not a student file. */
#define _POSIX_C_SOURCE 200809L // fsync, fileno
#include "kit.h"

#include <string.h> // memset, memcmp

#include <math.h> // INFINITY
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free, strtod
#include <unistd.h> // fsync

#include "dl/bf16.h" // DL_BF16_MIN_NORMAL
#include "dl/fs.h" // dl_mkdir_p, dl_tmp_create, dl_read_file
#include "dl/half.h" // DL_HALF_MIN_NORMAL
#include "dl/lowp.h" // dl_lowp_get
#include "dl/ops.h" // dl_scale, dl_cast
#include "dl/rng.h" // dl_rng_seed

int kit_param_counts(const dl_mlp *m, size_t *counts)
{
    for (int l = 0; l < m->n_layers; l++) {
        counts[2 * l] = m->layer[l].out * m->layer[l].in;
        counts[2 * l + 1] = m->layer[l].out;
    }
    return 2 * m->n_layers;
}

int kit_per_param_buckets(const dl_mlp *m, ddp_bucket *out)
{
    size_t counts[DDP_MAX_PARAMS], off[DDP_MAX_PARAMS], at = 0;
    int n = kit_param_counts(m, counts);
    for (int p = 0; p < n; p++) {
        off[p] = at;
        at += counts[p];
    }
    for (int k = 0; k < n; k++) {
        int p = n - 1 - k;
        out[k] = (ddp_bucket){.first = p, .last = p, .offset = off[p], .count = counts[p]};
    }
    return n;
}

dl_status kit_flat_step(dl_comm *c, dl_mlp *m, int accum, const ddp_micro *mb, const ddp_sgd *opt, double *loss)
{
    double sum = 0;
    for (int k = 0; k < accum; k++) {
        double l = 0;
        DL_TRY(dl_mlp_forward(m, mb[k].X, mb[k].n));
        DL_TRY(dl_mlp_loss(m, mb[k].y, mb[k].n, loss != NULL ? &l : NULL));
        DL_TRY(dl_mlp_backward(m, mb[k].X, mb[k].n, k > 0, NULL, NULL));
        sum += l;
    }
    if (accum > 1)
        DL_TRY(dl_scale(m->dev, m->grads, m->n_params, DL_F32, 1.0f / (float)accum));
    DL_TRY(dl_comm_allreduce(c, m->grads, m->n_params, DL_F32, DL_RED_AVG));
    if (loss != NULL)
        *loss = sum / accum;
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}

void kit_sim_layers(const dl_mlp *m, size_t n, int fp16, dl_sim_layer *layers)
{
    double B = (double)n, e = fp16 ? 2 : 4; // bytes per activation
    for (int l = 0; l < m->n_layers; l++) {
        double in = (double)m->layer[l].in, out = (double)m->layer[l].out;
        int last = l + 1 == m->n_layers;
        dl_sim_layer *s = &layers[l];
        memset(s, 0, sizeof *s);
        // forward: the GEMM, then bias and ReLU read and write the activations
        s->fwd_flops = 2 * B * in * out;
        s->fwd_bytes = 2 * e * B * out + (last ? 2 * e * B * out : 0); // + the loss rows on the last layer
        s->fwd_launches = 2 + last;
        // backward: the weight GEMM, the bias GEMV, and but for layer 0 the
        // input's gradient GEMM and the ReLU mask (delta, activation, delta)
        s->bwd_flops = 2 * B * in * out + 2 * B * out + (l > 0 ? 2 * B * in * out : 0);
        s->bwd_bytes = l > 0 ? 3 * e * B * in : 0;
        s->bwd_launches = 2 + (l > 0 ? 2 : 0);
        s->fp16 = fp16; // its GEMMs on the tensor cores' fp16 peak
    }
}

void kit_sim_optim(const dl_mlp *m, int fp16, double *bytes, double *launches)
{
    *bytes = 5.0 * 4 * (double)m->n_params; // parameter, gradient, velocity read; two written
    *launches = 2.0 * m->n_layers;
    if (fp16) { // + unscale (fp16 in, fp32 out) and the fp16 copy of the weights
        *bytes += (2.0 + 4 + 4 + 2) * (double)m->n_params;
        *launches += 2;
    }
}

int kit_sim_recorded(const dl_span *ev, size_t n, long step, int n_layers, int fp16, dl_sim_layer *layers,
                     double *bytes, double *launches)
{
    const dl_span *st = NULL, *fwd = NULL, *opt = NULL, *bwd[DL_MLP_MAX_LAYERS] = {NULL};
    double inner_bytes = 0, inner_launches = 0; // the forward, backward and optimizer spans, all micro-batches
    for (size_t i = 0; i < n; i++) {
        const dl_span *e = &ev[i];
        if (e->step != step || e->host_t1 < 0)
            continue;
        if (e->kind == DL_EV_STEP)
            st = e;
        else if (e->kind == DL_EV_FORWARD)
            fwd = e; // the last micro-batch's: the one that communicates
        else if (e->kind == DL_EV_BACKWARD && e->id >= 0 && e->id < n_layers)
            bwd[e->id] = e;
        else if (e->kind == DL_EV_OPTIM)
            opt = e;
        if (e->kind == DL_EV_FORWARD || e->kind == DL_EV_BACKWARD || e->kind == DL_EV_OPTIM)
            inner_bytes += e->kernel_bytes, inner_launches += e->launches;
    }
    if (st == NULL || fwd == NULL || opt == NULL || n_layers < 1 || n_layers > DL_MLP_MAX_LAYERS)
        return 0;
    for (int l = 0; l < n_layers; l++)
        if (bwd[l] == NULL)
            return 0;
    for (int l = 0; l < n_layers; l++) {
        layers[l] = (dl_sim_layer){.bwd_flops = bwd[l]->flops,
                                   .bwd_bytes = bwd[l]->kernel_bytes,
                                   .bwd_launches = bwd[l]->launches,
                                   .fp16 = fp16};
    }
    layers[0].fwd_flops = fwd->flops, layers[0].fwd_bytes = fwd->kernel_bytes, layers[0].fwd_launches = fwd->launches;
    *bytes = opt->kernel_bytes + (st->kernel_bytes - inner_bytes);
    *launches = opt->launches + (st->launches - inner_launches);
    return 1;
}

int kit_recorded_buckets(const dl_span *ev, size_t n, long step, dl_sim_bucket *out, int max)
{
    int nb = 0, last_layer = -1, in_backward = 0;
    for (size_t i = 0; i < n && nb < max; i++) {
        if (ev[i].step != step)
            continue;
        if (ev[i].kind == DL_EV_FORWARD) {
            last_layer = -1;
            in_backward = 0;
        } else if (ev[i].kind == DL_EV_BACKWARD) {
            last_layer = ev[i].id;
            in_backward = 1;
        } else if (ev[i].kind == DL_EV_ALLREDUCE && ev[i].async && in_backward) {
            // (a blocking allreduce — AMP's overflow flag — is not a bucket)
            // a bucket started after layer 0's backward went at its end
            out[nb++] = (dl_sim_bucket){.bytes = ev[i].bytes, .after_layer = last_layer == 0 ? -1 : last_layer};
        }
    }
    return nb;
}

int kit_structural_buckets(const ddp_bucket *b, int nb, size_t elem_size, dl_sim_bucket *out)
{
    for (int k = 0; k < nb; k++) {
        int layer = b[k].first / 2;
        out[k] = (dl_sim_bucket){.bytes = (double)(b[k].count * elem_size), .after_layer = layer == 0 ? -1 : layer};
    }
    return nb;
}

/* One forward, loss and backward of mb in precision t (16-bit: from the
 * master weights, the loss scaled by scale as the step will scale it); the
 * gradient, n_params elements of t, copied to out. */
static dl_status gradient_in(dl_mlp *m, const ddp_micro *mb, dl_dtype t, float scale, void *out)
{
    double loss = 0;
    DL_TRY(dl_mlp_set_precision(m, t));
    if (t != DL_F32) {
        DL_TRY(dl_cast(m->dev, m->params16, t, m->params, DL_F32, m->n_params));
        DL_TRY(dl_mlp_set_loss_scale(m, scale));
    }
    DL_TRY(dl_mlp_forward(m, mb->X, mb->n));
    DL_TRY(dl_mlp_loss(m, mb->y, mb->n, &loss));
    DL_TRY(dl_mlp_backward(m, mb->X, mb->n, 0, NULL, NULL));
    const void *grads = t != DL_F32 ? (const void *)m->grads16 : (const void *)m->grads;
    return dl_memcpy_d2h(m->dev, out, grads, m->n_params * dl_dtype_size(t));
}

dl_status kit_underflow(dl_mlp *m, const ddp_micro *mb, float scale, double *share, double *subnormal)
{
    size_t n = m->n_params;
    const dl_dtype lo = m->compute; // the run's 16-bit type: fp16 or bf16
    float *g32 = malloc(n * sizeof *g32);
    uint16_t *g16 = malloc(n * sizeof *g16);
    float was = m->loss_scale;
    dl_status st = g32 && g16 ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory for the underflow probe");
    // the fp32 gradient of this micro-batch (the reference), then the same in 16 bits
    const dl_dtype prec[2] = {DL_F32, lo};
    void *const out[2] = {g32, g16};
    for (int p = 0; st == DL_OK && p < 2; p++)
        st = gradient_in(m, mb, prec[p], scale, out[p]);
    // nothing of the probe may stand in for the step: the 16-bit weights and the
    // fp32 gradients zeroed, the loss scale back to what it was
    if (st == DL_OK)
        st = dl_scale(m->dev, m->params16, n, lo, 0.0f);
    if (st == DL_OK)
        st = dl_scale(m->dev, m->grads, n, DL_F32, 0.0f);
    if (st == DL_OK)
        st = dl_mlp_set_loss_scale(m, was);
    if (st == DL_OK) {
        size_t nonzero = 0, lost = 0, coarse = 0;
        // below the smallest normal (fp16 2^-14, bf16 2^-126) a value keeps fewer significant bits
        const float normal = lo == DL_BF16 ? DL_BF16_MIN_NORMAL : DL_HALF_MIN_NORMAL;
        for (size_t i = 0; i < n; i++) {
            if (g32[i] == 0.0f)
                continue;
            nonzero++;
            float h = fabsf(dl_lowp_get(g16, i, lo));
            lost += h == 0.0f;
            coarse += h > 0.0f && h < normal;
        }
        *share = nonzero ? (double)lost / (double)nonzero : 0;
        *subnormal = nonzero ? (double)coarse / (double)nonzero : 0;
    }
    free(g32);
    free(g16);
    return st;
}

double kit_unchanged(const float *before, const float *after, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += memcmp(before + i, after + i, sizeof *before) == 0;
    return n ? (double)same / (double)n : 0;
}

dl_status kit_poison(const dl_device *dev, ddp_micro *mb)
{
    float inf = INFINITY;
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_memcpy_h2d(dev, (float *)mb->X, &inf, sizeof inf);
    ((float *)mb->X)[0] = inf;
    return DL_OK;
}

dl_status kit_ckpt_begin(kit_ckpt *c, const dl_mlp *m, int P, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    ckpt_state *s = &c->s;
    s->n_sizes = m->n_layers + 1;
    s->sizes[0] = m->layer[0].in;
    for (int l = 0; l < m->n_layers; l++)
        s->sizes[l + 1] = m->layer[l].out;
    s->world_size = P;
    s->seed = seed;
    s->n_params = m->n_params;
    s->params = malloc(m->n_params * sizeof *s->params);
    s->velocity = malloc(m->n_params * sizeof *s->velocity);
    // this driver draws no random numbers while it trains (the sampler is a
    // function of seed and epoch); the generator is saved all the same
    dl_rng_seed(&s->rng, seed, 5);
    if (s->params == NULL || s->velocity == NULL) {
        kit_ckpt_end(c);
        return dl_error_set(DL_ERR_NOMEM, "out of memory for the checkpoint's buffers");
    }
    return DL_OK;
}

dl_status kit_ckpt_save(kit_ckpt *c, const char *dir, const dl_mlp *m, const amp_scaler *sc, long step, int epoch,
                        long batch)
{
    char path[1100];
    int n = snprintf(path, sizeof path, "%s/latest", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return dl_error_set(DL_ERR_ARG, "--checkpoint-dir '%s': the path is too long", dir);
    DL_TRY(dl_mkdir_p(dir));
    DL_TRY(dl_mlp_get_params(m, c->s.params));
    DL_TRY(dl_mlp_get_velocity(m, c->s.velocity));
    c->s.opt_steps = dl_mlp_steps(m);
    c->s.scale = sc->scale;
    c->s.growth_tracker = sc->growth_tracker;
    c->s.step = step;
    c->s.epoch = epoch;
    c->s.batch_in_epoch = batch;
    return ckpt_save(path, &c->s);
}

dl_status kit_ckpt_resume(kit_ckpt *c, const char *path, int allow_reshard, dl_mlp *m, amp_scaler *sc, long *step,
                          int *epoch, long *batch)
{
    // what the run holds now goes in first: a field the load leaves alone keeps the run's value
    c->s.scale = sc->scale;
    c->s.growth_tracker = sc->growth_tracker;
    DL_TRY(ckpt_load(path, &c->s, allow_reshard));
    DL_TRY(dl_mlp_set_params(m, c->s.params));
    DL_TRY(dl_mlp_set_velocity(m, c->s.velocity));
    DL_TRY(dl_mlp_set_steps(m, c->s.opt_steps));
    sc->scale = c->s.scale;
    sc->growth_tracker = c->s.growth_tracker;
    *step = c->s.step;
    *epoch = c->s.epoch;
    *batch = c->s.batch_in_epoch;
    return DL_OK;
}

void kit_ckpt_end(kit_ckpt *c)
{
    free(c->s.params);
    free(c->s.velocity);
    c->s.params = c->s.velocity = NULL;
}

// ---- the driver's bookkeeping beside a checkpoint (kit_tally) ----

#define TALLY_MAGIC "lab05-metrics 1"

static void put_tally(FILE *f, const kit_tally *t, long step, int epoch, long batch, int world, const double *sums,
                      double elapsed_s, double compute_s)
{
    fprintf(f, "%s\ncheckpoint %ld %d %ld %d\nepochs %d\n", TALLY_MAGIC, step, epoch, batch, world, t->done);
    for (int e = 0; e < t->done; e++) {
        fputs("row", f);
        for (int k = 0; k < KIT_METRIC_COLS; k++)
            fprintf(f, " %.17g", t->rows[KIT_METRIC_COLS * e + k]);
        fputc('\n', f);
    }
    fprintf(f, "current %ld %.17g %.17g\nsums", t->counted, elapsed_s, compute_s);
    for (int r = 0; r < world; r++)
        fprintf(f, " %.17g", sums[r]);
    fprintf(f, "\namp %ld %ld %.17g %.17g %.17g\n", t->n_skipped, t->probed, t->underflow, t->unchanged, t->subnormal);
}

dl_status kit_tally_save(const kit_tally *t, const char *dir, long step, int epoch, long batch, int world,
                         const double *sums, double elapsed_s, double compute_s)
{
    char path[1100], tmp[1200];
    int n = snprintf(path, sizeof path, "%s/latest.metrics", dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return dl_error_set(DL_ERR_ARG, "--checkpoint-dir '%s': the path is too long", dir);
    FILE *f = dl_tmp_create(path, tmp, sizeof tmp, "w");
    if (f == NULL)
        return DL_ERR_IO;
    put_tally(f, t, step, epoch, batch, world, sums, elapsed_s, compute_s);
    // on the disk before the rename: a crash leaves the old file or the new one, whole
    int bad = fflush(f) != 0 || ferror(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return dl_error_set(DL_ERR_IO, "%s: cannot write it (disk full?)", path);
    }
    return DL_OK;
}

/* The parser's cursor: each reader skips blanks, reads one item and
 * returns 0, or -1 (and then every later one fails too). */
typedef struct cursor {
    const char *p;
    int bad;
} cursor;

static int expect_word(cursor *c, const char *w)
{
    c->p += strspn(c->p, " \t\n");
    size_t n = strlen(w);
    if (c->bad || strncmp(c->p, w, n) != 0)
        return c->bad = -1;
    c->p += n;
    return 0;
}

static double read_num(cursor *c)
{
    char *end;
    double v = c->bad ? 0 : strtod(c->p, &end);
    if (c->bad || end == c->p)
        return c->bad = -1, 0;
    c->p = end;
    return v;
}

static long read_long(cursor *c)
{
    char *end;
    long v = c->bad ? 0 : strtol(c->p, &end, 10);
    if (c->bad || end == c->p)
        return c->bad = -1, 0;
    c->p = end;
    return v;
}

/* Parses text into t (rank's loss sum); "" or what is wrong into why. */
static void parse_tally(const char *text, kit_tally *t, long step, int epoch, long batch, int world, int rank,
                        char *why, size_t len)
{
    cursor c = {text, 0};
    why[0] = '\0';
    expect_word(&c, TALLY_MAGIC);
    expect_word(&c, "checkpoint");
    long s = read_long(&c), e = read_long(&c), b = read_long(&c), w = read_long(&c);
    expect_word(&c, "epochs");
    long done = read_long(&c);
    if (!c.bad && (s != step || e != epoch || b != batch || w != world)) {
        snprintf(why, len,
                 "it was written at step %ld (epoch %ld, batch %ld) by %ld rank(s); this run resumes at step %ld "
                 "(epoch %d, batch %ld) on %d",
                 s, e + 1, b, w, step, epoch + 1, batch, world);
        return;
    }
    if (!c.bad && (done < 0 || done > KIT_MAX_EPOCHS || done != epoch))
        c.bad = -1;
    t->done = (int)done;
    for (long k = 0; !c.bad && k < done; k++) {
        expect_word(&c, "row");
        for (int j = 0; j < KIT_METRIC_COLS; j++)
            t->rows[KIT_METRIC_COLS * k + j] = read_num(&c);
    }
    expect_word(&c, "current");
    t->counted = read_long(&c);
    t->elapsed_s = read_num(&c), t->compute_s = read_num(&c);
    expect_word(&c, "sums");
    for (int r = 0; r < world; r++) {
        double v = read_num(&c);
        t->sum = r == rank ? v : t->sum;
    }
    expect_word(&c, "amp");
    t->n_skipped = read_long(&c), t->probed = read_long(&c);
    t->underflow = read_num(&c), t->unchanged = read_num(&c), t->subnormal = read_num(&c);
    if (c.bad)
        snprintf(why, len, "it is not what kit_tally_save writes (cut or edited?)");
}

dl_status kit_tally_load(kit_tally *t, const char *ckpt, long step, int epoch, long batch, int world, int rank)
{
    char path[1100], why[300];
    int n = snprintf(path, sizeof path, "%s.metrics", ckpt);
    if (n < 0 || (size_t)n >= sizeof path)
        return dl_error_set(DL_ERR_ARG, "%s.metrics: the path is too long", ckpt);
    char *text = NULL;
    if (!dl_file_exists(path))
        return dl_error_set(DL_ERR_IO, "%s is missing", path);
    DL_TRY(dl_read_file(path, &text, NULL));
    kit_tally *got = calloc(1, sizeof *got);
    if (got == NULL) {
        free(text);
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %s", path);
    }
    parse_tally(text, got, step, epoch, batch, world, rank, why, sizeof why);
    free(text);
    if (why[0] == '\0')
        *t = *got;
    free(got);
    return why[0] ? dl_error_set(DL_ERR_ARG, "%s: %s", path, why) : DL_OK;
}
