/* main.c — lab 05's driver: data-parallel training of the kit's MLP on
 * Fashion-MNIST with gradient buckets overlapped with backward, beside the
 * two classic alternatives.
 *
 *   common/bin/dlrun -n 4 build/labs/lab05                    your buckets
 *   common/bin/dlrun -n 4 build/labs/lab05 --mode ddp-flat    one allreduce after backward
 *   common/bin/dlrun -n 4 build/labs/lab05 --mode per-param   one allreduce per parameter
 *   build/labs/lab05 --help                                    every flag
 *
 * Every rank holds the data and a copy of the model (same seed, so the same
 * start); the kit's sampler (dl/sampler.h) deals each epoch's rows to the
 * ranks; each optimizer step takes --accum micro-batches of --batch-size rows
 * per rank, staged by dl/batch.h; dl/eval.h scores the validation and test
 * sets, each rank predicting its share of the chunks. The kit's trace
 * (dl/trace.h) records every forward, each layer's backward, each allreduce
 * and the optimizer, in order (evaluation outside any step): from it the
 * driver draws the per-rank timeline, writes trace.json (ui.perfetto.dev) and
 * projects one step onto the target profile (dl_project_step) for the three
 * modes. Outputs (rank 0) in --out: metrics.csv (per epoch), buckets.csv,
 * timeline.csv, sweep.csv (projected step time per bucket cap),
 * projection.csv (projected speedup per rank count and mode), trace.json,
 * summary.json and the plots. --dump DIR writes each rank's final parameters
 * and trace for the grader. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // isfinite
#include <stdio.h> // printf, snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp

#include "amp.h"
#include "ckpt.h"
#include "dl/batch.h" // dl_batch_gather
#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load, dl_npy_write_f32
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // summary.json
#include "dl/lr.h" // dl_lr_at
#include "dl/metrics.h" // dl_csv_write
#include "dl/ops.h" // dl_cast
#include "dl/plot.h" // dl_plots_draw
#include "dl/progress.h" // dl_progress
#include "dl/project.h" // dl_project_step
#include "dl/rank.h" // dl_rank_device
#include "dl/sampler.h" // dl_sampler
#include "dl/summary.h" // dl_summary_prepare
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_start
#include "kit.h"

#define MAX_SIZES (DL_MLP_MAX_LAYERS + 1)
#define VAL_ROWS 6000 /* the last rows of the training set: validation, never trained on */
#define N_MODES 3

static const char *const mode_names[N_MODES] = {"bucketed", "ddp-flat", "per-param"};

typedef struct options {
    dl_args a;
    const char *mode, *hidden, *profile, *dump, *amp, *ckpt_dir, *resume;
    double bucket_mb, first_bucket_mb, momentum, weight_decay, init_scale;
    long base_batch, warmup, max_steps, train_rows, growth_interval, probe_every, poison_step, poison_rank;
    long ckpt_every;
    int accum, allow_reshard;
} options;

static int fail(dl_comm *c, dl_status st)
{
    const char *msg = dl_last_error()[0] ? dl_last_error() : dl_status_str(st);
    if (c != NULL && dl_comm_size(c) > 1)
        dl_comm_abort(c, dl_exit_code(st), "lab05: %s", msg);
    fprintf(stderr, "lab05: %s\n", msg);
    dl_comm_finalize(c);
    return dl_exit_code(st);
}

/* The epoch's rows, the micro-batches staged (dl_batch; the first also
 * stages the evaluation's chunks) and what the step reads of them, and
 * --amp's buffers (a row of 8 values per step, the weights around a probed
 * step). */
typedef struct work {
    size_t *idx; /* (per,) this rank's rows of the epoch */
    size_t K; /* micro-batches per step */
    dl_batch *bt; /* (K,) room for B rows each */
    ddp_micro *mb; /* (K,) bt[k]'s X, y and n */
    double *arow;
    float *before, *after;
    double *sums; /* (P,) every rank's loss sum, gathered for the bookkeeping beside a checkpoint */
} work;

static void work_free(work *w)
{
    for (size_t k = 0; w->bt != NULL && k < w->K; k++)
        dl_batch_free(&w->bt[k]);
    free(w->idx), free(w->bt), free(w->mb);
    free(w->arow), free(w->before), free(w->after), free(w->sums);
    memset(w, 0, sizeof *w);
}

/* per rows per rank, K micro-batches of B rows of d features, P ranks'
 * loss sums; with amp, steps rows of --amp's measurements over n_params
 * weights. */
static dl_status work_alloc(work *w, const dl_device *dev, size_t per, size_t K, size_t B, size_t d, int P, int amp,
                            long steps, size_t n_params)
{
    w->idx = malloc(per * sizeof *w->idx);
    w->sums = malloc((size_t)P * sizeof *w->sums);
    w->K = K;
    w->bt = calloc(K, sizeof *w->bt); // zeroed: each may be freed before it was made
    w->mb = malloc(K * sizeof *w->mb);
    if (amp) {
        w->arow = malloc((size_t)(steps + 1) * 8 * sizeof *w->arow);
        w->before = malloc(n_params * sizeof *w->before);
        w->after = malloc(n_params * sizeof *w->after);
    }
    if (w->idx == NULL || w->bt == NULL || w->mb == NULL || w->sums == NULL ||
        (amp && (w->arow == NULL || w->before == NULL || w->after == NULL)))
        return dl_error_set(DL_ERR_NOMEM, "out of memory for the batches");
    for (size_t k = 0; k < K; k++)
        DL_TRY(dl_batch_create(&w->bt[k], dev, B, d));
    return DL_OK;
}

static int die(dl_comm *c, work *w, dl_status st)
{
    work_free(w);
    return fail(c, st);
}

static int parse_hidden(const char *s, size_t *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536 || n == max || (*end != ',' && *end != '\0'))
            return -1;
        out[n++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* m's accuracy on set, collective (dl_eval_accuracy), through b. In 16 bits
 * predict reads the 16-bit weights: cast from the current masters first, not
 * the copy the last step started from. */
static dl_status accuracy(dl_comm *c, dl_mlp *m, dl_batch *b, const dl_dataset *set, double *acc)
{
    if (m->compute != DL_F32)
        DL_TRY(dl_cast(m->dev, m->params16, m->compute, m->params, DL_F32, m->n_params));
    return dl_eval_accuracy(c, m, b, set, acc);
}

/* One step of each mode projected on P ranks; speedup against one GPU that
 * trains the same rows (P·accum micro-batches per global step) in the same
 * precision, and (vs32) the bucketed mode's against one fp32 GPU. */
static void project_modes(const dl_profile *prof, const dl_mlp *m, size_t B, int accum, int P,
                          const dl_sim_bucket *const *bk, const int *nb, double *step_s, double *exposed,
                          double *speedup, double *vs32)
{
    dl_sim_layer layers[DL_MLP_MAX_LAYERS], layers32[DL_MLP_MAX_LAYERS];
    int fp16 = m->compute != DL_F32; // fp16 or bf16: the same tensor-core peak and 2 bytes
    double ob, ol, ob32, ol32;
    kit_sim_layers(m, B, fp16, layers);
    kit_sim_optim(m, fp16, &ob, &ol);
    kit_sim_layers(m, B, 0, layers32);
    kit_sim_optim(m, 0, &ob32, &ol32);
    dl_sim_step one, one32, s;
    dl_project_step(prof, 1, accum, layers, m->n_layers, NULL, 0, ob, ol, &one);
    dl_project_step(prof, 1, accum, layers32, m->n_layers, NULL, 0, ob32, ol32, &one32);
    *vs32 = 0;
    for (int k = 0; k < N_MODES; k++) {
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

/* What one optimizer step needs, beyond its position (epoch, batch, step). */
typedef struct trainer {
    const options *o;
    int rank, P, mode, amp;
    dl_comm *comm;
    const dl_device *dev;
    const dl_dataset *tr;
    dl_mlp *m;
    ddp_reducer *red;
    amp_scaler *scaler;
    kit_ckpt *ck;
    work *w;
    const dl_lr_config *lrc;
    size_t B, K, steps_per_epoch;
    long last_step;
    kit_tally *tally; /* the finished epochs' rows, the epoch under way's sums */
    double *arow; /* --amp: 8 values per step */
    float *before, *after; /* --amp: the weights around a probed step */
} trainer;

/* Batch s of epoch e, the global step `step`: stages the micro-batches, runs
 * the mode's step (with --amp's probe before it), saves a checkpoint when
 * due and records --amp's row. */
static dl_status train_step(trainer *t, int e, size_t s, long step, double *loss, int *skipped)
{
    const options *o = t->o;
    size_t B = t->B, K = t->K;
    work *w = t->w;
    dl_status st = DL_OK;
    for (size_t k = 0; st == DL_OK && k < K; k++) {
        dl_batch *b = &w->bt[k];
        st = dl_batch_gather(b, t->tr, w->idx + (s * K + k) * B, B);
        w->mb[k] = (ddp_micro){b->X, b->y, b->n};
    }
    if (st == DL_OK && step == o->poison_step && t->rank == o->poison_rank)
        st = kit_poison(t->dev, &w->mb[0]);
    ddp_sgd opt = {(float)dl_lr_at(t->lrc, step), (float)o->momentum, (float)o->weight_decay};
    // --amp: what 16 bits lose of this step's gradient, measured before the step (outside its span)
    int probe = t->amp && o->probe_every > 0 && step % o->probe_every == 0;
    double underflow = -1, subnormal = -1, unchanged = -1, scale = t->scaler->scale;
    if (st == DL_OK && probe)
        st = kit_underflow(t->m, &w->mb[0], t->scaler->scale, &underflow, &subnormal);
    if (st == DL_OK && probe)
        st = dl_mlp_get_params(t->m, t->before);
    dl_trace_set_step(step);
    size_t span = dl_trace_begin(DL_EV_STEP, 0, 0, 0);
    *skipped = 0;
    if (st == DL_OK)
        st = t->amp         ? amp_step(t->red, t->scaler, w->mb, &opt, loss, skipped)
             : t->mode == 1 ? kit_flat_step(t->comm, t->m, o->accum, w->mb, &opt, loss)
                            : ddp_step(t->red, w->mb, &opt, loss);
    dl_trace_end(span);
    dl_trace_set_step(-1);
    if (st == DL_OK && probe)
        st = dl_mlp_get_params(t->m, t->after);
    if (st == DL_OK && probe)
        unchanged = kit_unchanged(t->before, t->after, t->m->n_params);
    // rank 0 saves where the run stands after this step: the next step's epoch and batch
    int last = step + 1 == t->last_step, end_of_epoch = s + 1 == t->steps_per_epoch;
    if (st == DL_OK && o->ckpt_dir != NULL && t->rank == 0 &&
        (last || (o->ckpt_every > 0 && (step + 1) % o->ckpt_every == 0)))
        st = kit_ckpt_save(t->ck, o->ckpt_dir, t->m, t->scaler, step + 1, end_of_epoch ? e + 1 : e,
                           end_of_epoch ? 0 : (long)s + 1);
    if (t->amp && step < t->last_step) {
        double *a = t->arow + 8 * step;
        a[0] = (double)step + 1, a[1] = *loss, a[2] = scale, a[3] = *skipped, a[4] = underflow, a[5] = unchanged;
        a[6] = t->m->loss_scale; // what the kit's backward was told, as the kit saw it
        a[7] = subnormal;
        kit_tally *ty = t->tally;
        ty->n_skipped += *skipped;
        if (underflow >= 0)
            ty->underflow += underflow, ty->unchanged += unchanged, ty->subnormal += subnormal, ty->probed++;
    }
    return st;
}

/* This rank's compute in steps first .. last − 1: its forward, backward and
 * optimizer spans in the trace. */
static double compute_between(long first, long last)
{
    size_t ne;
    const dl_span *sp = dl_trace_events(&ne);
    double compute = 0;
    for (size_t i = 0; i < ne; i++)
        if (sp[i].step >= first && sp[i].step < last && sp[i].t1 >= sp[i].t0 &&
            (sp[i].kind == DL_EV_FORWARD || sp[i].kind == DL_EV_BACKWARD || sp[i].kind == DL_EV_OPTIM))
            compute += sp[i].t1 - sp[i].t0;
    return compute;
}

/* The end of epoch e (steps first_step .. step − 1, begun at t0): the ranks'
 * mean loss (mean_here is this rank's), the validation accuracy, and this
 * rank's compute time from the trace, into the metrics row r (7 values).
 * DL_ERR_NUMERIC when the loss is not finite (unless --dump: the grader
 * judges what the ranks hold). */
static dl_status end_epoch(const trainer *t, int e, long first_step, long step, double t0, double mean_here, double *r)
{
    const dl_dataset *tr = t->tr;
    // the last VAL_ROWS rows of the training set, viewed in place
    dl_dataset vs = *tr;
    vs.n = VAL_ROWS;
    vs.X = tr->X + (tr->n - VAL_ROWS) * tr->d;
    vs.y = tr->y + (tr->n - VAL_ROWS);
    double mean = mean_here, val = 0;
    DL_TRY(dl_comm_barrier(t->comm));
    double dt = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(t->comm, &mean, 1, DL_F64, DL_RED_AVG));
    DL_TRY(accuracy(t->comm, t->m, &t->w->bt[0], &vs, &val));
    if (!isfinite(mean) && t->o->dump == NULL)
        return dl_error_set(DL_ERR_NUMERIC,
                            "the loss is %g after epoch %d: the step diverged (gradients summed, not averaged? a "
                            "learning rate too high for the global batch?)",
                            mean, e + 1);
    r[0] = e + 1, r[1] = (double)step, r[2] = mean, r[3] = val, r[4] = dt, r[5] = dl_lr_at(t->lrc, step - 1);
    r[6] = compute_between(first_step, step);
    return DL_OK;
}

/* Whether a checkpoint follows step `step` (every rank decides alike). */
static int ckpt_due(const trainer *t, long step)
{
    const options *o = t->o;
    return o->ckpt_dir != NULL && (step + 1 == t->last_step || (o->ckpt_every > 0 && (step + 1) % o->ckpt_every == 0));
}

/* The bookkeeping beside the checkpoint of step `step` (epoch, batch: the
 * next step's), the epoch under way having run elapsed_s and compute_s:
 * every rank's loss sum gathered, rank 0 writes. Collective. */
static dl_status save_tally(const trainer *t, long step, int epoch, long batch, double elapsed_s, double compute_s)
{
    double *sums = t->w->sums;
    DL_TRY(dl_comm_allgather(t->comm, &t->tally->sum, sums, 1, DL_F64));
    if (t->rank != 0)
        return DL_OK;
    return kit_tally_save(t->tally, t->o->ckpt_dir, step, epoch, batch, t->P, sums, elapsed_s, compute_s);
}

/* Epoch e from batch s to its end or the run's last step: the steps, the
 * epoch's metrics row (appended to the tally, with the part of the epoch
 * before a resume) and after each checkpoint the bookkeeping beside it
 * (after the epoch's last step, once its row is in). *step advances. */
static dl_status run_epoch(trainer *t, dl_sampler *smp, dl_progress *pr, int e, size_t s, long *step)
{
    kit_tally *ty = t->tally;
    dl_sampler_set_epoch(smp, e);
    dl_status st = dl_sampler_indices(smp, t->w->idx);
    if (st == DL_OK)
        st = dl_comm_barrier(t->comm);
    double t0 = dl_now(), loss = 0;
    long first_step = *step;
    int due = 0;
    for (; st == DL_OK && s < t->steps_per_epoch && *step < t->last_step; s++, (*step)++) {
        int skipped = 0;
        st = train_step(t, e, s, *step, &loss, &skipped);
        if (!skipped) // a skipped step's loss (inf/NaN) is not averaged in
            ty->sum += loss, ty->counted++;
        dl_progress_step(pr, e, s + 1, t->B * t->K * (size_t)t->P, loss);
        due = ckpt_due(t, *step);
        if (st == DL_OK && due && s + 1 < t->steps_per_epoch)
            st = save_tally(t, *step + 1, e, (long)s + 1, ty->elapsed_s + dl_now() - t0,
                            ty->compute_s + compute_between(first_step, *step + 1));
    }
    double *r = ty->rows + KIT_METRIC_COLS * ty->done;
    if (st == DL_OK)
        st = end_epoch(t, e, first_step, *step, t0, ty->counted ? ty->sum / (double)ty->counted : 0, r);
    if (st != DL_OK)
        return st;
    r[4] += ty->elapsed_s, r[6] += ty->compute_s;
    ty->done++;
    ty->sum = 0, ty->counted = 0, ty->elapsed_s = ty->compute_s = 0;
    dl_progress_line(pr, 0, "epoch %d: loss %.4f, validation accuracy %.4f, %.2f s", e + 1, r[2], r[3], r[4]);
    return due && s == t->steps_per_epoch ? save_tally(t, *step, e + 1, 0, 0, 0) : DL_OK;
}

/* What rank 0 writes at the end: the CSVs, the plots, summary.json and the
 * closing lines (the trace was written collectively before). */
typedef struct outputs {
    const options *o;
    int mode, amp, P, nb, done, ns;
    dl_comm *comm;
    const dl_device *dev;
    size_t n_params, esz, B, K, nev;
    const ddp_bucket *buckets;
    const dl_span *ev;
    long probe, resumed_at, step;
    const kit_tally *tally; /* --amp's sums */
    const double *rows, *proj, *sweep, *arow, *step_s, *exposed, *speedup;
    double vs32, test, steady, steady_compute;
    const dl_profile *prof;
    const amp_scaler *scaler;
    dl_progress *pr;
} outputs;

static const char *const acols[] = {"step",      "loss",      "scale",       "skipped",
                                    "underflow", "unchanged", "model_scale", "subnormal"};

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

static dl_status write_outputs(const outputs *x)
{
    const options o = *x->o;
    const int mode = x->mode, amp = x->amp, P = x->P, nb = x->nb, done = x->done, ns = x->ns;
    dl_comm *comm = x->comm;
    const dl_device dev = *x->dev;
    const size_t n_params = x->n_params, esz = x->esz, B = x->B, K = x->K, nev = x->nev;
    const ddp_bucket *buckets = x->buckets;
    const dl_span *ev = x->ev;
    const long probe = x->probe, resumed_at = x->resumed_at, step = x->step;
    const double *rows = x->rows, *proj = x->proj, *sweep = x->sweep, *arow = x->arow;
    const double *step_s = x->step_s, *exposed = x->exposed, *speedup = x->speedup;
    const double vs32 = x->vs32, test = x->test, steady = x->steady, steady_compute = x->steady_compute;
    const dl_profile prof = *x->prof;
    const amp_scaler scaler = *x->scaler;
    dl_progress *pr = x->pr;
    dl_status st;
    static const char *const mcols[] = {"epoch", "step", "loss", "val_accuracy", "epoch_s", "lr", "compute_s"};
    static const char *const bcols[] = {"bucket", "first_param", "last_param", "offset", "count", "bytes"};
    static const char *const pcols[] = {"ranks",        "bucketed",         "ddp_flat", "per_param", "bucketed_exposed",
                                        "flat_exposed", "per_param_exposed"};
    static const char *const scols[] = {"cap_kib", "step_ms", "buckets"};
    static const char *const tcols[] = {"rank0_kind", "id", "t0_ms", "t1_ms", "lane"};
    double brow[DDP_MAX_BUCKETS * 6];
    for (int k = 0; k < nb; k++) {
        double *r = brow + 6 * k;
        r[0] = k, r[1] = buckets[k].first, r[2] = buckets[k].last, r[3] = (double)buckets[k].offset;
        r[4] = (double)buckets[k].count, r[5] = (double)(esz * buckets[k].count);
    }
    // the timeline of one steady step on rank 0, from the step's start
    double trow[512 * 5];
    int nt = 0;
    double origin = -1;
    for (size_t i = 0; i < nev && nt < 512; i++) {
        if (ev[i].step != probe)
            continue;
        origin = origin < 0 ? ev[i].t0 : origin;
        double *r = trow + 5 * nt++;
        r[0] = ev[i].kind, r[1] = ev[i].id, r[2] = (ev[i].t0 - origin) * 1e3, r[3] = (ev[i].t1 - origin) * 1e3;
        r[4] = ev[i].kind == DL_EV_ALLREDUCE ? 1 : ev[i].kind == DL_EV_STEP ? 2 : 0;
    }
    st = dl_csv_write(o.a.out, "metrics.csv", mcols, 7, rows, done);
    if (st == DL_OK)
        st = dl_csv_write(o.a.out, "buckets.csv", bcols, 6, brow, nb);
    if (st == DL_OK)
        st = dl_csv_write(o.a.out, "projection.csv", pcols, 7, proj, 3);
    if (st == DL_OK)
        st = dl_csv_write(o.a.out, "sweep.csv", scols, 3, sweep, ns);
    if (st == DL_OK)
        st = dl_csv_write(o.a.out, "timeline.csv", tcols, 5, trow, nt);
    if (st == DL_OK && amp)
        st = dl_csv_write(o.a.out, "amp.csv", acols, 8, arow + 8 * resumed_at, (size_t)(step - resumed_at));
    dl_plots p = {"labs/05-ddp-amp/plots", o.a.plot, o.a.out, "lab05", ""};
    if (st == DL_OK && done > 1)
        dl_plots_draw(&p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", o.a.out, mode_names[mode], P);
    if (st == DL_OK && nt > 0)
        dl_plots_draw(&p, "timeline", "data='%s/timeline.csv'; mode='%s'; P=%d", o.a.out, mode_names[mode], P);
    if (st == DL_OK && ns > 1)
        dl_plots_draw(&p, "sweep", "data='%s/sweep.csv'; profile='%s'", o.a.out, prof.name);
    if (st == DL_OK && amp && step > 1)
        dl_plots_draw(&p, "amp", "data='%s/amp.csv'; amp='%s'; P=%d", o.a.out, o.amp, P);
    if (st == DL_OK)
        dl_plots_draw(&p, "speedup", "data='%s/projection.csv'; profile='%s'", o.a.out, prof.name);
    dl_json j;
    char summary[1100];
    snprintf(summary, sizeof summary, "%s/summary.json", o.a.out);
    if (st == DL_OK)
        st = dl_json_open(&j, summary);
    if (st == DL_OK) {
        dl_json_object(&j, NULL);
        dl_json_str(&j, "lab", "05-ddp-amp");
        dl_json_str(&j, "mode", mode_names[mode]);
        dl_json_str(&j, "amp", o.amp);
        dl_json_int(&j, "ranks", P);
        dl_json_str(&j, "backend", dl_comm_backend(comm));
        dl_json_str(&j, "device", dl_device_describe(&dev));
        dl_json_object(&j, "config");
        dl_json_str(&j, "hidden", o.hidden);
        dl_json_int(&j, "batch_per_rank", (long long)B);
        dl_json_int(&j, "accum", o.accum);
        dl_json_int(&j, "global_batch", (long long)(B * K * (size_t)P));
        dl_json_num(&j, "bucket_mb", o.bucket_mb);
        dl_json_num(&j, "first_bucket_mb", o.first_bucket_mb);
        dl_json_int(&j, "epochs", o.a.epochs);
        dl_json_int(&j, "seed", (long long)o.a.seed);
        dl_json_end_object(&j);
        dl_json_int(&j, "parameters", (long long)n_params);
        dl_json_int(&j, "buckets", nb);
        dl_json_int(&j, "steps", step);
        dl_json_num(&j, "final_loss", done ? rows[7 * (done - 1) + 2] : 0);
        dl_json_num(&j, "val_accuracy", done ? rows[7 * (done - 1) + 3] : 0);
        dl_json_num(&j, "test_accuracy", test);
        dl_json_num(&j, "steady_epoch_s", steady);
        dl_json_num(&j, "steady_compute_s", steady_compute);
        if (amp)
            amp_stats(&j, x->tally, scaler.scale);
        dl_json_object(&j, "projection");
        dl_json_str(&j, "profile", prof.name);
        dl_json_int(&j, "gpus", prof.gpus);
        for (int k = 0; k < N_MODES; k++) {
            dl_json_object(&j, mode_names[k]);
            dl_json_num(&j, "step_ms", step_s[k] * 1e3);
            dl_json_num(&j, "speedup", speedup[k]);
            dl_json_num(&j, "exposed_share", exposed[k]);
            if (k == 0 && amp) // the story's comparison: 4 GPUs in AMP against one GPU in fp32
                dl_json_num(&j, "speedup_vs_one_fp32_gpu", vs32);
            dl_json_end_object(&j);
        }
        dl_json_end_object(&j);
        dl_json_str(&j, "plots", p.list);
        dl_json_end_object(&j);
        st = dl_json_close(&j);
    }
    if (st != DL_OK)
        return st;
    dl_progress_line(pr, 1, "test accuracy %.4f; steady epoch %.2f s here", test, steady);
    if (amp)
        dl_progress_line(pr, 1, "--amp %s: %ld of %ld steps skipped (inf/NaN), final loss scale %g", o.amp,
                         x->tally->n_skipped, step, (double)scaler.scale);
    for (int k = 0; k < N_MODES; k++)
        if (step_s[k] > 0)
            dl_progress_line(pr, 1,
                             "projected on %d GPUs of %s, %-9s: step %.3f ms, speedup %.2fx, communication "
                             "exposed %.1f%% of the step",
                             prof.gpus, prof.name, mode_names[k], step_s[k] * 1e3, speedup[k], 100 * exposed[k]);
    if (amp && step_s[0] > 0)
        dl_progress_line(pr, 1,
                         "--amp %s: speedups are against one GPU in %s; against one GPU in fp32 the bucketed "
                         "step runs %.2fx as fast",
                         o.amp, amp == 3 ? "bf16" : "fp16", vs32);
    return DL_OK;
}

/* --dump DIR: this rank's parameters, its trace and (with --amp) its rows. */
static dl_status write_dump(const char *dir, int rank, const dl_mlp *m, const double *arow, long rows)
{
    char path[1100];
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
    snprintf(path, sizeof path, "amp.%d.csv", rank);
    if (st == DL_OK && arow != NULL)
        st = dl_csv_write(dir, path, acols, 8, arow, (size_t)rows);
    free(p);
    return st;
}

/* The projected step time of the bucketed mode for caps of 1 KiB to 64 MiB
 * (your assignment, each bucket launched as early as it can go): rows of
 * cap_kib, step_ms, buckets into sweep (32 × 3); returns how many. */
static int sweep_caps(const dl_profile *prof, const dl_mlp *m, const size_t *counts, int n_params, size_t esz,
                      size_t first_cap, size_t B, int accum, const dl_sim_bucket *flat, const dl_sim_bucket *pp,
                      double *sweep)
{
    int ns = 0;
    for (double kib = 1; kib <= 65536 && ns < 32; kib *= 2) {
        ddp_bucket sb[DDP_MAX_BUCKETS];
        dl_sim_bucket sim[DDP_MAX_BUCKETS];
        int n = 0;
        size_t c = (size_t)(kib * 1024);
        if (ddp_assign_buckets(counts, n_params, esz, c < first_cap ? c : first_cap, c, sb, &n) != DL_OK)
            break;
        double st3[N_MODES], ex3[N_MODES], sp3[N_MODES], v3 = 0;
        const dl_sim_bucket *one[N_MODES] = {sim, flat, pp};
        int n3[N_MODES] = {kit_structural_buckets(sb, n, esz, sim), -1, -1};
        project_modes(prof, m, B, accum, prof->gpus, one, n3, st3, ex3, sp3, &v3);
        sweep[3 * ns] = kib, sweep[3 * ns + 1] = st3[0] * 1e3, sweep[3 * ns + 2] = n;
        ns++;
    }
    return ns;
}

/* --resume FILE: the bookkeeping beside it (FILE.metrics), so that this
 * run's metrics.csv and summary.json go on from the uninterrupted run's;
 * without it (or another checkpoint's) they cover only this run's steps. */
static void resume_tally(kit_tally *ty, const char *path, long step, int epoch, long batch, int P, int rank)
{
    if (kit_tally_load(ty, path, step, epoch, batch, P, rank) == DL_OK || rank != 0)
        return;
    fprintf(stderr,
            "lab05: warning: %s; metrics.csv starts at epoch %d, whose row averages only the steps this run takes, "
            "and summary.json's amp_stats cover only those steps\n",
            dl_last_error(), epoch + 1);
}

int main(int argc, char **argv)
{
    options o;
    dl_args_defaults(&o.a);
    o.a.data = "fashion_mnist";
    o.a.epochs = 30;
    o.a.batch_size = 4096;
    o.a.lr = 0.02;
    o.a.out = "build/run/05-ddp-amp";
    o.mode = "bucketed";
    o.hidden = "512,512,512,512";
    o.profile = NULL;
    o.dump = NULL;
    o.bucket_mb = 25;
    o.first_bucket_mb = 1;
    o.momentum = 0.9;
    o.weight_decay = 5e-4;
    o.base_batch = 4096;
    o.warmup = 10;
    o.max_steps = 0;
    o.train_rows = 0;
    o.accum = 1;
    o.amp = "off";
    o.init_scale = 65536;
    o.growth_interval = 2000;
    o.probe_every = 1;
    o.poison_step = -1;
    o.poison_rank = 0;
    o.ckpt_dir = NULL;
    o.resume = NULL;
    o.ckpt_every = 0;
    o.allow_reshard = 0;
    const dl_opt extra[] = {
        {"mode", DL_OPT_CHOICE, &o.mode, "MODE",
         "bucketed (yours), ddp-flat (one allreduce after backward), per-param (one per parameter)",
         "bucketed|ddp-flat|per-param", 1, 0, 'm'},
        {"bucket-mb", DL_OPT_DOUBLE, &o.bucket_mb, "X", "bucket cap in MiB (PyTorch: 25)", NULL, 1e-6, 1e6, 0},
        {"first-bucket-mb", DL_OPT_DOUBLE, &o.first_bucket_mb, "X", "the first bucket's cap in MiB (PyTorch: 1)", NULL,
         1e-6, 1e6, 0},
        {"accum", DL_OPT_INT, &o.accum, "K", "micro-batches per optimizer step (gradient accumulation)", NULL, 1, 1024,
         0},
        {"hidden", DL_OPT_STRING, &o.hidden, "LIST", "hidden layer widths, comma-separated", NULL, 1, 0, 0},
        {"base-batch", DL_OPT_LONG, &o.base_batch, "N", "the batch --lr was tuned for (LR scales by global/base)", NULL,
         1, 1e9, 0},
        {"warmup", DL_OPT_LONG, &o.warmup, "N", "linear warmup steps", NULL, 0, 1e9, 0},
        {"momentum", DL_OPT_DOUBLE, &o.momentum, "X", "SGD momentum", NULL, 0, 0.9999, 0},
        {"weight-decay", DL_OPT_DOUBLE, &o.weight_decay, "X", "L2 weight decay (weights only)", NULL, 0, 1, 0},
        {"max-steps", DL_OPT_LONG, &o.max_steps, "N",
         "stop after N optimizer steps in all, as an interruption would (the schedule still spans every epoch; 0 = "
         "all epochs)",
         NULL, 0, 1e12, 0},
        {"checkpoint-dir", DL_OPT_STRING, &o.ckpt_dir, "DIR",
         "rank 0 saves DIR/latest (your ckpt_save) every --checkpoint-every steps and at the end", NULL, 1, 0, 0},
        {"checkpoint-every", DL_OPT_LONG, &o.ckpt_every, "N", "steps between checkpoints (0 = only at the end)", NULL,
         0, 1e12, 0},
        {"resume", DL_OPT_STRING, &o.resume, "FILE", "every rank loads FILE (your ckpt_load) and goes on from there",
         NULL, 1, 0, 0},
        {"allow-reshard", DL_OPT_FLAG, &o.allow_reshard, NULL,
         "--resume a checkpoint written by another number of ranks (with a warning)", NULL, 0, 0, 0},
        {"train-rows", DL_OPT_LONG, &o.train_rows, "N", "train on the first N rows only (0 = all)", NULL, 0, 1e9, 0},
        {"profile", DL_OPT_STRING, &o.profile, "FILE", "target machine of the projection", NULL, 1, 0, 0},
        {"dump", DL_OPT_STRING, &o.dump, "DIR", "write each rank's parameters and trace (for the grader)", NULL, 1, 0,
         0},
        {"amp", DL_OPT_CHOICE, &o.amp, "MODE",
         "off (fp32), fp16 (fp16 compute, fp32 master weights, your loss scaler), fp16-noscale (the same, scale 1), "
         "bf16 (bfloat16 compute, fp32 master weights, scale 1)",
         "off|fp16|fp16-noscale|bf16", 1, 0, 0},
        {"init-scale", DL_OPT_DOUBLE, &o.init_scale, "X", "the loss scaler's first scale (GradScaler: 65536)", NULL, 1,
         1e30, 0},
        {"growth-interval", DL_OPT_LONG, &o.growth_interval, "N",
         "steps without inf/NaN before the scale doubles (GradScaler: 2000)", NULL, 1, 1e12, 0},
        {"probe-every", DL_OPT_LONG, &o.probe_every, "N",
         "--amp: measure the gradients' 16-bit underflow every N steps (0 = never; it costs two passes)", NULL, 0, 1e12,
         0},
        {"poison-step", DL_OPT_LONG, &o.poison_step, "S",
         "put an inf into one input of --poison-rank's batch at step S (an overflow on one rank; -1 = never)", NULL, -1,
         1e12, 0},
        {"poison-rank", DL_OPT_LONG, &o.poison_rank, "R", "the rank --poison-step poisons", NULL, 0, 1e6, 0},
    };
    dl_comm *comm = NULL;
    dl_status st = dl_comm_init(&argc, &argv, &comm);
    if (st != DL_OK)
        return fail(NULL, st);
    int rank = dl_comm_rank(comm), P = dl_comm_size(comm);
    int rc = dl_cli_parse(argc, argv, "lab05",
                          "Lab 05: DistributedDataParallel as PyTorch builds it: gradient buckets allreduced while "
                          "backward runs. Start it with common/bin/dlrun -n P.",
                          &o.a, extra, sizeof extra / sizeof extra[0]);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    o.a.quiet |= rank != 0;
    // rank 0 writes the outputs; from here on, a run that fails leaves no summary.json that looks like its own
    if (rank == 0 && (st = dl_summary_prepare(o.a.out)) != DL_OK)
        return fail(comm, st);
    int mode = strcmp(o.mode, "ddp-flat") == 0 ? 1 : strcmp(o.mode, "per-param") == 0 ? 2 : 0;
    // amp: 0 off, 1 fp16 with the scaler, 2 fp16 at scale 1, 3 bf16 (fp32's range: scale 1, as autocast does)
    int amp = strcmp(o.amp, "fp16") == 0           ? 1
              : strcmp(o.amp, "fp16-noscale") == 0 ? 2
              : strcmp(o.amp, "bf16") == 0         ? 3
                                                   : 0;
    const dl_dtype lowp = amp == 3 ? DL_BF16 : DL_F16;
    if (amp && mode != 0) {
        dl_error_set(DL_ERR_ARG, "--amp %s runs with --mode bucketed (your reducer), not --mode %s", o.amp, o.mode);
        return fail(comm, DL_ERR_ARG);
    }
    size_t sizes[MAX_SIZES];
    int nh = parse_hidden(o.hidden, sizes + 1, MAX_SIZES - 2);
    if (nh < 1) {
        dl_error_set(DL_ERR_ARG, "--hidden '%s': expected 1 to %d widths from 1 to 65536, comma-separated", o.hidden,
                     MAX_SIZES - 2);
        return fail(comm, DL_ERR_ARG);
    }
    if (o.a.batch_size < 1) {
        dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 05 needs a per-rank batch of at least 1 row", o.a.batch_size);
        return fail(comm, DL_ERR_ARG);
    }
    dl_profile prof;
    st = dl_profile_load(o.profile != NULL ? o.profile : dl_profile_default(), &prof);
    dl_device dev;
    if (st == DL_OK)
        st = dl_rank_device(comm, o.a.device, &dev);
    dl_data data;
    if (st == DL_OK)
        st = dl_data_load(o.a.data, &data);
    if (st != DL_OK)
        return fail(comm, st);
    dl_dataset *tr = &data.train;
    if (!data.has_test || tr->n <= VAL_ROWS + 1) {
        dl_error_set(DL_ERR_ARG, "--data %s: lab 05 needs a test split and more than %d training rows", o.a.data,
                     VAL_ROWS + 1);
        return fail(comm, DL_ERR_ARG);
    }
    size_t n_train = tr->n - VAL_ROWS;
    if (o.train_rows > 0 && (size_t)o.train_rows < n_train)
        n_train = (size_t)o.train_rows;
    size_t B = (size_t)o.a.batch_size, K = (size_t)o.accum;
    sizes[0] = tr->d;
    sizes[nh + 1] = (size_t)tr->n_classes;
    int n_sizes = nh + 2;

    // ---- the model: the same seed on every rank, so the same start ----
    dl_mlp m;
    st = dl_mlp_create(&m, &dev, sizes, n_sizes, B, o.a.seed);
    if (st == DL_OK && amp)
        st = dl_mlp_set_precision(&m, lowp); // 16-bit forward and backward; the masters stay fp32
    if (st != DL_OK)
        return fail(comm, st);
    size_t esz = amp ? dl_dtype_size(lowp) : sizeof(float); // bytes per gradient element
    size_t counts[DDP_MAX_PARAMS];
    int n_params = kit_param_counts(&m, counts);
    ddp_bucket assigned[DDP_MAX_BUCKETS], buckets[DDP_MAX_BUCKETS];
    int na = 0, nb = 0;
    size_t cap = (size_t)(o.bucket_mb * 1048576.0), first_cap = (size_t)(o.first_bucket_mb * 1048576.0);
    cap = cap ? cap : 1;
    first_cap = first_cap ? first_cap : 1;
    st = ddp_assign_buckets(counts, n_params, esz, first_cap, cap, assigned, &na);
    if (st != DL_OK)
        return fail(comm, st);
    nb = mode == 2 ? kit_per_param_buckets(&m, buckets) : na;
    memcpy(buckets, mode == 2 ? buckets : assigned, (size_t)nb * sizeof *buckets);
    ddp_reducer red;
    memset(&red, 0, sizeof red);
    red.comm = comm;
    red.model = &m;
    red.grads = amp ? (void *)m.grads16 : (void *)m.grads;
    red.grad_type = amp ? lowp : DL_F32;
    red.bucket = buckets;
    // the loss scaler: GradScaler's defaults; fp16-noscale and bf16 keep the scale at 1
    const int fixed = amp == 2 || amp == 3;
    amp_scaler scaler = {.scale = fixed ? 1.0f : (float)o.init_scale,
                         .growth_tracker = 0,
                         .growth_factor = fixed ? 1.0f : 2.0f,
                         .backoff_factor = fixed ? 1.0f : 0.5f,
                         .growth_interval = o.growth_interval};
    red.n_buckets = nb;
    red.accum = o.accum;

    // ---- buffers ----
    dl_sampler smp = {.n = n_train, .rank = rank, .world = P, .seed = o.a.seed, .shuffle = 1};
    size_t per = dl_sampler_num_samples(&smp), steps_per_epoch = per / (K * B);
    if (steps_per_epoch == 0) {
        dl_error_set(DL_ERR_ARG, "%zu rows per rank cannot fill one step of --accum %zu x --batch-size %zu", per, K, B);
        return fail(comm, DL_ERR_ARG);
    }
    // the schedule spans every epoch; --max-steps only stops early (an interruption)
    long total_steps = (long)(steps_per_epoch * (size_t)o.a.epochs), last_step = total_steps;
    if (o.max_steps > 0 && o.max_steps < last_step)
        last_step = o.max_steps;
    work w = {0};
    st = work_alloc(&w, &dev, per, K, B, tr->d, P, amp, last_step, m.n_params);
    if (st != DL_OK)
        return die(comm, &w, st);
    dl_lr_config lrc = {.base_lr = o.a.lr,
                        .base_batch = (size_t)o.base_batch,
                        .global_batch = B * K * (size_t)P,
                        .warmup_steps = o.warmup,
                        .total_steps = total_steps,
                        .cosine = 1};
    // ---- checkpoints: what this run is (its identity) and where it stands ----
    kit_ckpt ck;
    st = kit_ckpt_begin(&ck, &m, P, o.a.seed);
    long step = 0, first_batch = 0;
    int first_epoch = 0;
    kit_tally tally;
    memset(&tally, 0, sizeof tally);
    if (st == DL_OK && o.resume != NULL)
        st = kit_ckpt_resume(&ck, o.resume, o.allow_reshard, &m, &scaler, &step, &first_epoch, &first_batch);
    if (st == DL_OK && o.resume != NULL)
        resume_tally(&tally, o.resume, step, first_epoch, first_batch, P, rank);
    // after a reshard the saved batch counts another world's batches: this run
    // goes on from the same batch number in its own (the rows are not those the
    // old world would have taken next: only a resume on as many ranks is exact)
    if (st == DL_OK && (size_t)first_batch >= steps_per_epoch)
        first_epoch++, first_batch = 0;
    if (st != DL_OK) {
        kit_ckpt_end(&ck);
        return die(comm, &w, st);
    }
    const long resumed_at = step; // --amp's rows cover the steps this run took
    // --amp: one row per step (rank 0's view), in w
    const double *arow = w.arow;
    dl_progress pr;
    dl_progress_begin(&pr, o.a.epochs, steps_per_epoch, o.a.quiet);
    dl_progress_line(
        &pr, 0, "lab05: %s on %d rank(s) (%s, %s), model %s, %d buckets, batch %zu x %zu micro x %d ranks = %zu",
        mode_names[mode], P, dl_comm_backend(comm), dl_device_describe(&dev), o.hidden, nb, B, K, P, B * K * (size_t)P);

    // ---- training ----
    trainer ts = {.o = &o,
                  .rank = rank,
                  .P = P,
                  .mode = mode,
                  .amp = amp,
                  .comm = comm,
                  .dev = &dev,
                  .tr = tr,
                  .m = &m,
                  .red = &red,
                  .scaler = &scaler,
                  .ck = &ck,
                  .w = &w,
                  .lrc = &lrc,
                  .B = B,
                  .K = K,
                  .steps_per_epoch = steps_per_epoch,
                  .last_step = last_step,
                  .tally = &tally,
                  .arow = w.arow,
                  .before = w.before,
                  .after = w.after};
    dl_trace_start(0);
    if (o.resume != NULL)
        dl_progress_line(&pr, 0, "resumed from %s: step %ld, epoch %d, batch %ld", o.resume, step, first_epoch + 1,
                         first_batch);
    for (int e = first_epoch; e < o.a.epochs && e < KIT_MAX_EPOCHS && step < last_step; e++) {
        st = run_epoch(&ts, &smp, &pr, e, e == first_epoch ? (size_t)first_batch : 0, &step);
        if (st != DL_OK)
            return die(comm, &w, st);
    }
    dl_trace_stop();
    dl_progress_end(&pr);
    double test = 0;
    st = accuracy(comm, &m, &w.bt[0], &data.test, &test);
    if (st != DL_OK)
        return die(comm, &w, st);

    // ---- the grader's dump: every rank's parameters and trace ----
    st = o.dump != NULL ? write_dump(o.dump, rank, &m, amp ? arow + 8 * resumed_at : NULL, step - resumed_at) : DL_OK;
    if (st != DL_OK)
        return die(comm, &w, st);

    // ---- projection: the three modes, from the recorded order of a steady step ----
    size_t nev;
    const dl_span *ev = dl_trace_events(&nev);
    // the second step this run took (a steady one), else its first
    long probe = step > resumed_at + 1 ? resumed_at + 1 : resumed_at;
    dl_sim_bucket rec[DDP_MAX_BUCKETS], flat = {(double)(esz * m.n_params), -1}, pp[DDP_MAX_BUCKETS];
    ddp_bucket ppb[DDP_MAX_BUCKETS];
    // bucketed: the order this run recorded (or, in another mode, the earliest
    // each of your buckets could go); per-param: one bucket per parameter
    int nrec = mode == 0 ? kit_recorded_buckets(ev, nev, probe, rec, DDP_MAX_BUCKETS)
                         : kit_structural_buckets(assigned, na, esz, rec);
    int npp = kit_structural_buckets(ppb, kit_per_param_buckets(&m, ppb), esz, pp);
    const dl_sim_bucket *bk[N_MODES] = {rec, &flat, pp};
    int nbk[N_MODES] = {nrec, 1, npp};
    double step_s[N_MODES], exposed[N_MODES], speedup[N_MODES], proj[3 * 7], vs32 = 0;
    const int ranks[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        project_modes(&prof, &m, B, o.accum, ranks[k], bk, nbk, step_s, exposed, speedup, &vs32);
        double *r = proj + 7 * k;
        r[0] = ranks[k], r[1] = speedup[0], r[2] = speedup[1], r[3] = speedup[2], r[4] = exposed[0], r[5] = exposed[1],
        r[6] = exposed[2];
    }
    project_modes(&prof, &m, B, o.accum, prof.gpus, bk, nbk, step_s, exposed, speedup, &vs32);

    // ---- the bucket-cap sweep (projected; the caps of your assignment) ----
    double sweep[32 * 3];
    int ns = sweep_caps(&prof, &m, counts, n_params, esz, first_cap, B, o.accum, &flat, pp, sweep);

    // ---- outputs (rank 0 writes; every rank takes part in the trace) ----
    char trace_path[1100];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", o.a.out);
    st = dl_trace_write_chrome(comm, trace_path);
    if (st != DL_OK)
        return die(comm, &w, st);
    double steady = 0, steady_compute = 0;
    const int done = tally.done;
    const double *rows = tally.rows;
    for (int k = done > 1 ? 1 : 0; k < done; k++) {
        steady += rows[7 * k + 4] / (done > 1 ? done - 1 : 1);
        steady_compute += rows[7 * k + 6] / (done > 1 ? done - 1 : 1);
    }
    if (rank == 0) {
        outputs x = {.o = &o,
                     .mode = mode,
                     .amp = amp,
                     .P = P,
                     .nb = nb,
                     .done = done,
                     .ns = ns,
                     .comm = comm,
                     .dev = &dev,
                     .n_params = m.n_params,
                     .esz = esz,
                     .B = B,
                     .K = K,
                     .nev = nev,
                     .buckets = buckets,
                     .ev = ev,
                     .probe = probe,
                     .resumed_at = resumed_at,
                     .step = step,
                     .tally = &tally,
                     .rows = rows,
                     .proj = proj,
                     .sweep = sweep,
                     .arow = arow,
                     .step_s = step_s,
                     .exposed = exposed,
                     .speedup = speedup,
                     .vs32 = vs32,
                     .test = test,
                     .steady = steady,
                     .steady_compute = steady_compute,
                     .prof = &prof,
                     .scaler = &scaler,
                     .pr = &pr};
        st = write_outputs(&x);
        if (st != DL_OK)
            return die(comm, &w, st);
    }
    kit_ckpt_end(&ck);
    dl_mlp_free(&m);
    work_free(&w);
    dl_comm_finalize(comm);
    return 0;
}
