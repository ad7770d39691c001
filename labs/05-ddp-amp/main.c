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
 * ranks; the training, validation and test rows are made resident on the
 * device once (dl_devset, dl/batch.h) and each epoch uploads only its order;
 * each optimizer step takes --accum micro-batches of --batch-size rows per
 * rank, gathered on the device; dl/eval.h scores the validation and test
 * sets there, each rank predicting its share of the chunks. A step reads
 * nothing back (the student's step gets loss NULL): the losses are summed
 * on the device and read once per epoch (dl_mlp_loss_total), so on a GPU
 * the host waits at most once a step — for AMP's overflow flag. At the end the ranks
 * compare their parameters (dl/replica.h: 0 when they hold one model). The
 * kit's trace (dl/trace.h) records every forward, each layer's backward,
 * each allreduce and the optimizer, in order (evaluation outside any step):
 * from it outputs.c draws the per-rank timeline, writes trace.json
 * (ui.perfetto.dev) and projects one step onto the target profile
 * (dl_project_step) for the three modes. Outputs (rank 0) in --out:
 * metrics.csv (per epoch), buckets.csv, timeline.csv, sweep.csv (projected
 * step time per bucket cap), projection.csv (projected speedup per rank
 * count and mode), amp.csv (--amp), trace.json, summary.json and the plots.
 * --dump DIR writes each rank's final parameters, trace and the
 * transport's log of the same run (dl_comm_log) for the grader.
 * The flags, the set-up and the files are outputs.c's; what is here is the
 * lab's story around the student's functions (ddp.h, amp.h, ckpt.h). Not a
 * student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // isfinite
#include <stdio.h> // fprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/batch.h" // dl_devset, dl_batch_take
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/lr.h" // dl_lr_at
#include "dl/ops.h" // dl_cast
#include "dl/rank.h" // dl_rank_exit
#include "dl/replica.h" // dl_replica_mlp_diff
#include "dl/sampler.h" // dl_sampler
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_start
#include "outputs.h" // lab05_run, lab05_parse, lab05_setup, lab05_dump, lab05_write_outputs

#define VAL_ROWS 6000 /* the last rows of the training set: validation, never trained on */

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
        w->arow = malloc((size_t)(steps + 1) * KIT_AMP_NCOLS * sizeof *w->arow);
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

/* The run (outputs.h: its world, data, model, buckets and what it reports)
 * and what its steps need beyond it. */
typedef struct trainer {
    lab05_run R;
    ddp_reducer red;
    dl_sampler smp;
    size_t B, K, per, steps_per_epoch;
    long total_steps, last_step; /* the schedule's steps; the step this run stops before */
    work w;
    dl_devset tr, val, test; /* the rows where the model reads them: training, validation, test */
    dl_lr_config lrc;
    kit_ckpt ck;
} trainer;

static void sets_free(trainer *t)
{
    dl_devset_free(&t->tr);
    dl_devset_free(&t->val);
    dl_devset_free(&t->test);
}

static int die(trainer *t, dl_status st)
{
    work_free(&t->w);
    sets_free(t);
    kit_ckpt_end(&t->ck);
    return dl_rank_exit(t->R.comm, st, "lab05");
}

// ---- set-up: the epochs' shape, the model and its buckets, the buffers, a resume ----

/* The rows each rank trains on per epoch and the steps they make. */
static dl_status shape(trainer *t)
{
    const lab05_run *R = &t->R;
    const lab05_options *o = &R->o;
    const dl_dataset *tr = R->train;
    if (!R->data.has_test || tr->n <= VAL_ROWS + 1)
        return dl_error_set(DL_ERR_ARG, "--data %s: lab 05 needs a test split and more than %d training rows",
                            o->a.data, VAL_ROWS + 1);
    size_t n_train = tr->n - VAL_ROWS;
    if (o->train_rows > 0 && (size_t)o->train_rows < n_train)
        n_train = (size_t)o->train_rows;
    t->B = (size_t)o->a.batch_size, t->K = (size_t)o->accum;
    t->smp = (dl_sampler){.n = n_train, .rank = R->rank, .world = R->P, .seed = o->a.seed, .shuffle = 1};
    t->per = dl_sampler_num_samples(&t->smp);
    t->steps_per_epoch = t->per / (t->K * t->B);
    if (t->steps_per_epoch == 0)
        return dl_error_set(DL_ERR_ARG, "%zu rows per rank cannot fill one step of --accum %zu x --batch-size %zu",
                            t->per, t->K, t->B);
    // the schedule spans every epoch; --max-steps only stops early (an interruption)
    t->total_steps = (long)(t->steps_per_epoch * (size_t)o->a.epochs);
    t->last_step = o->t.max_steps > 0 && o->t.max_steps < t->total_steps ? o->t.max_steps : t->total_steps;
    return DL_OK;
}

/* The model (the same seed on every rank, so the same start), its buckets
 * (task 1; --mode per-param: one per parameter), the reducer over them and
 * the loss scaler. */
static dl_status build(trainer *t)
{
    lab05_run *R = &t->R;
    const lab05_options *o = &R->o;
    DL_TRY(dl_mlp_create(&R->m, &R->dev, R->sizes, R->n_sizes, t->B, o->a.seed));
    if (R->amp)
        DL_TRY(dl_mlp_set_precision(&R->m, R->lowp)); // 16-bit forward and backward; the masters stay fp32
    R->esz = R->amp ? dl_dtype_size(R->lowp) : sizeof(float); // bytes per gradient element
    R->n_tensors = kit_param_counts(&R->m, R->counts);
    size_t cap = o->bucket_cap; // bytes, at least 1 (lab05_parse)
    R->first_cap = o->first_bucket_cap;
    DL_TRY(ddp_assign_buckets(R->counts, R->n_tensors, R->esz, R->first_cap, cap, R->assigned, &R->na));
    if (R->mode == LAB05_PER_PARAM) {
        R->nb = kit_per_param_buckets(&R->m, R->buckets);
    } else {
        R->nb = R->na;
        memcpy(R->buckets, R->assigned, (size_t)R->na * sizeof *R->buckets);
    }
    ddp_reducer *red = &t->red;
    memset(red, 0, sizeof *red);
    red->comm = R->comm;
    red->model = &R->m;
    red->grads = R->amp ? (void *)R->m.grads16 : (void *)R->m.grads;
    red->grad_type = R->amp ? R->lowp : DL_F32;
    red->bucket = R->buckets;
    red->n_buckets = R->nb;
    red->accum = o->accum;
    // the loss scaler: GradScaler's defaults; fp16-noscale and bf16 keep the scale at 1
    const int fixed = R->amp == LAB05_AMP_FP16_NOSCALE || R->amp == LAB05_AMP_BF16;
    R->scaler = (amp_scaler){.scale = fixed ? 1.0f : (float)o->init_scale,
                             .growth_tracker = 0,
                             .growth_factor = fixed ? 1.0f : 2.0f,
                             .backoff_factor = fixed ? 1.0f : 0.5f,
                             .growth_interval = o->growth_interval};
    return DL_OK;
}

/* The rows made resident (uploaded once), the batches and --amp's rows, the
 * learning-rate schedule, and what this run is to its checkpoints (its
 * identity). */
static dl_status buffers(trainer *t)
{
    lab05_run *R = &t->R;
    const lab05_options *o = &R->o;
    const dl_dataset *tr = R->train;
    DL_TRY(dl_devset_make(&t->tr, &R->dev, tr, 0, t->smp.n));
    DL_TRY(dl_devset_make(&t->val, &R->dev, tr, tr->n - VAL_ROWS, VAL_ROWS)); // the last rows, never trained on
    DL_TRY(dl_devset_make(&t->test, &R->dev, &R->data.test, 0, R->data.test.n));
    DL_TRY(work_alloc(&t->w, &R->dev, t->per, t->K, t->B, tr->d, R->P, R->amp, t->last_step, R->m.n_params));
    R->arow = t->w.arow; // --amp: one row per step (rank 0's view)
    t->lrc = (dl_lr_config){.base_lr = o->a.lr,
                            .base_batch = (size_t)o->t.base_batch,
                            .global_batch = t->B * t->K * (size_t)R->P,
                            .warmup_steps = o->t.warmup,
                            .total_steps = t->total_steps,
                            .cosine = 1};
    return kit_ckpt_begin(&t->ck, &R->m, R->P, o->a.seed);
}

/* --resume FILE: every rank loads it (your ckpt_load) into the model and
 * the scaler, and where the run goes on (*step, *epoch, *batch); the
 * bookkeeping beside it (FILE.metrics) lets this run's metrics.csv and
 * summary.json go on from the uninterrupted run's — without it (or with
 * another checkpoint's) they cover only this run's steps, with a warning. */
static dl_status resume(trainer *t, long *step, int *epoch, long *batch)
{
    lab05_run *R = &t->R;
    const char *path = R->o.resume;
    if (path == NULL)
        return DL_OK;
    DL_TRY(kit_ckpt_resume(&t->ck, path, R->o.allow_reshard, &R->m, &R->scaler, step, epoch, batch));
    if (kit_tally_load(&R->tally, path, *step, *epoch, *batch, R->P, R->rank) != DL_OK && R->rank == 0)
        fprintf(stderr,
                "lab05: warning: %s; metrics.csv starts at epoch %d, whose row averages only the steps this run "
                "takes, and summary.json's amp_stats cover only those steps\n",
                dl_last_error(), *epoch + 1);
    // after a reshard the saved batch counts another world's batches: this run
    // goes on from the same batch number in its own (the rows are not those the
    // old world would have taken next: only a resume on as many ranks is exact)
    if ((size_t)*batch >= t->steps_per_epoch)
        (*epoch)++, *batch = 0;
    return DL_OK;
}

// ---- training ----

/* m's accuracy on set, collective (dl_eval_accuracy), in chunks of one
 * micro-batch. In 16 bits predict reads the 16-bit weights: cast from the
 * current masters first, not the copy the last step started from. */
static dl_status accuracy(const trainer *t, dl_mlp *m, const dl_devset *set, double *acc)
{
    if (m->compute != DL_F32)
        DL_TRY(dl_cast(m->dev, m->params16, m->compute, m->params, DL_F32, m->n_params));
    return dl_eval_accuracy(t->R.comm, m, set, t->B, acc);
}

/* Whether a checkpoint follows step `step` (every rank decides alike). */
static int ckpt_due(const trainer *t, long step)
{
    const lab05_options *o = &t->R.o;
    return o->ckpt_dir != NULL && (step + 1 == t->last_step || (o->ckpt_every > 0 && (step + 1) % o->ckpt_every == 0));
}

/* Batch s of epoch e, the global step `step`: stages the micro-batches, runs
 * the mode's step (with --amp's probe before it; loss NULL: nothing is read
 * back), commits its loss on the device (dropped when skipped), saves a
 * checkpoint when due and records --amp's row. *loss is the step's loss when
 * it was read — on the CPU always (it costs nothing there) and on a probed
 * step — else NAN. */
static dl_status train_step(trainer *t, int e, size_t s, long step, double *loss, int *skipped)
{
    lab05_run *R = &t->R;
    const lab05_options *o = &R->o;
    size_t B = t->B, K = t->K;
    work *w = &t->w;
    dl_status st = DL_OK;
    for (size_t k = 0; st == DL_OK && k < K; k++) {
        dl_batch *b = &w->bt[k];
        st = dl_batch_take(b, &t->tr, (s * K + k) * B, B); // gathered on the device by the epoch's order
        w->mb[k] = (ddp_micro){b->X, b->y, b->n};
    }
    if (st == DL_OK && step == o->poison_step && R->rank == o->poison_rank)
        st = kit_poison(&R->dev, &w->mb[0]);
    ddp_sgd opt = {(float)dl_lr_at(&t->lrc, step), (float)o->t.momentum, (float)o->t.weight_decay};
    // --amp: what 16 bits lose of this step's gradient, measured before the step (outside its span)
    int probe = R->amp && o->probe_every > 0 && step % o->probe_every == 0;
    double underflow = -1, subnormal = -1, unchanged = -1, scale = R->scaler.scale;
    if (st == DL_OK && probe)
        st = kit_underflow(&R->m, &w->mb[0], R->scaler.scale, &underflow, &subnormal);
    if (st == DL_OK && probe) // the probe's own losses are not the step's
        st = dl_mlp_loss_commit(&R->m, 0, 1, NULL);
    if (st == DL_OK && probe)
        st = dl_mlp_get_params(&R->m, w->before);
    dl_trace_set_step(step);
    size_t span = dl_trace_begin(DL_EV_STEP, 0, 0, 0);
    *skipped = 0;
    *loss = NAN;
    if (st == DL_OK)
        st = R->amp                      ? amp_step(&t->red, &R->scaler, w->mb, &opt, NULL, skipped)
             : R->mode == LAB05_DDP_FLAT ? kit_flat_step(R->comm, &R->m, o->accum, w->mb, &opt, NULL)
                                         : ddp_step(&t->red, w->mb, &opt, NULL);
    dl_trace_end(span);
    dl_trace_set_step(-1);
    int read = R->dev.kind == DL_DEVICE_CPU || probe;
    if (st == DL_OK)
        st = dl_mlp_loss_commit(&R->m, !*skipped, o->accum, read ? loss : NULL);
    if (st == DL_OK && probe)
        st = dl_mlp_get_params(&R->m, w->after);
    if (st == DL_OK && probe)
        unchanged = kit_unchanged(w->before, w->after, R->m.n_params);
    // rank 0 saves where the run stands after this step: the next step's epoch and batch
    int end_of_epoch = s + 1 == t->steps_per_epoch;
    if (st == DL_OK && R->rank == 0 && ckpt_due(t, step))
        st = kit_ckpt_save(&t->ck, o->ckpt_dir, &R->m, &R->scaler, step + 1, end_of_epoch ? e + 1 : e,
                           end_of_epoch ? 0 : (long)s + 1);
    if (R->amp && step < t->last_step) {
        double *a = w->arow + KIT_AMP_NCOLS * step;
        a[KIT_A_STEP] = (double)step + 1, a[KIT_A_LOSS] = *loss, a[KIT_A_SCALE] = scale, a[KIT_A_SKIPPED] = *skipped;
        a[KIT_A_UNDERFLOW] = underflow, a[KIT_A_UNCHANGED] = unchanged;
        a[KIT_A_MODEL_SCALE] = R->m.loss_scale; // what the kit's backward was told, as the kit saw it
        a[KIT_A_SUBNORMAL] = subnormal;
        kit_tally *ty = &R->tally;
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
static dl_status end_epoch(trainer *t, int e, long first_step, long step, double t0, double mean_here, double *r)
{
    lab05_run *R = &t->R;
    double mean = mean_here, val = 0;
    DL_TRY(dl_comm_barrier(R->comm));
    double dt = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(R->comm, &mean, 1, DL_F64, DL_RED_AVG));
    DL_TRY(accuracy(t, &R->m, &t->val, &val));
    if (!isfinite(mean) && R->o.dump == NULL)
        return dl_error_set(DL_ERR_NUMERIC,
                            "the loss is %g after epoch %d: the step diverged (gradients summed, not averaged? a "
                            "learning rate too high for the global batch?)",
                            mean, e + 1);
    r[KIT_M_EPOCH] = e + 1, r[KIT_M_STEP] = (double)step, r[KIT_M_LOSS] = mean, r[KIT_M_VAL_ACC] = val;
    r[KIT_M_EPOCH_S] = dt, r[KIT_M_LR] = dl_lr_at(&t->lrc, step - 1);
    r[KIT_M_COMPUTE_S] = compute_between(first_step, step);
    return DL_OK;
}

/* The bookkeeping beside the checkpoint of step `step` (epoch, batch: the
 * next step's), the epoch under way having run elapsed_s and compute_s:
 * every rank's loss sum gathered, rank 0 writes. Collective. */
static dl_status save_tally(const trainer *t, long step, int epoch, long batch, double elapsed_s, double compute_s)
{
    const lab05_run *R = &t->R;
    double *sums = t->w.sums;
    DL_TRY(dl_comm_allgather(R->comm, &R->tally.sum, sums, 1, DL_F64));
    if (R->rank != 0)
        return DL_OK;
    return kit_tally_save(&R->tally, R->o.ckpt_dir, step, epoch, batch, R->P, sums, elapsed_s, compute_s);
}

/* Epoch e from batch s to its end or the run's last step: the steps, the
 * epoch's metrics row (appended to the tally, with the part of the epoch
 * before a resume) and after each checkpoint the bookkeeping beside it
 * (after the epoch's last step, once its row is in). *step advances. */
static dl_status run_epoch(trainer *t, int e, size_t s, long *step)
{
    lab05_run *R = &t->R;
    kit_tally *ty = &R->tally;
    dl_sampler_set_epoch(&t->smp, e);
    dl_status st = dl_sampler_indices(&t->smp, t->w.idx);
    if (st == DL_OK)
        st = dl_devset_order(&t->tr, t->w.idx, t->per); // the epoch's one upload
    if (st == DL_OK) // the epoch's losses add up on the device, from what a resumed epoch had
        st = dl_mlp_loss_reset(&R->m, ty->sum);
    if (st == DL_OK)
        st = dl_comm_barrier(R->comm);
    double t0 = dl_now(), loss = 0;
    long first_step = *step;
    int due = 0;
    for (; st == DL_OK && s < t->steps_per_epoch && *step < t->last_step; s++, (*step)++) {
        int skipped = 0;
        st = train_step(t, e, s, *step, &loss, &skipped);
        ty->counted += !skipped; // a skipped step's loss (inf/NaN) is not averaged in
        dl_progress_step(&R->pr, e, s + 1, t->B * t->K * (size_t)R->P, loss);
        due = ckpt_due(t, *step);
        if (st == DL_OK && due && s + 1 < t->steps_per_epoch)
            st = dl_mlp_loss_total(&R->m, &ty->sum);
        if (st == DL_OK && due && s + 1 < t->steps_per_epoch)
            st = save_tally(t, *step + 1, e, (long)s + 1, ty->elapsed_s + dl_now() - t0,
                            ty->compute_s + compute_between(first_step, *step + 1));
    }
    double *r = ty->rows + KIT_METRIC_COLS * ty->done;
    if (st == DL_OK)
        st = dl_mlp_loss_total(&R->m, &ty->sum); // the epoch's one read of its losses
    if (st == DL_OK)
        st = end_epoch(t, e, first_step, *step, t0, ty->counted ? ty->sum / (double)ty->counted : 0, r);
    if (st != DL_OK)
        return st;
    r[KIT_M_EPOCH_S] += ty->elapsed_s, r[KIT_M_COMPUTE_S] += ty->compute_s;
    ty->done++;
    ty->sum = 0, ty->counted = 0, ty->elapsed_s = ty->compute_s = 0;
    dl_progress_line(&R->pr, 0, "epoch %d: loss %.4f, validation accuracy %.4f, %.2f s", e + 1, r[KIT_M_LOSS],
                     r[KIT_M_VAL_ACC], r[KIT_M_EPOCH_S]);
    return due && s == t->steps_per_epoch ? save_tally(t, *step, e + 1, 0, 0, 0) : DL_OK;
}

/* Every rank: set up, build the model and its buckets, resume if asked,
 * train, score test once, check the ranks hold one model, and write. */
int main(int argc, char **argv)
{
    trainer T;
    memset(&T, 0, sizeof T);
    lab05_run *R = &T.R;
    dl_dev_stats_get(&R->io.start);
    dl_status st = dl_comm_init(&argc, &argv, &R->comm);
    if (st != DL_OK)
        return dl_rank_exit(NULL, st, "lab05");
    int rc = lab05_parse(argc, argv, &R->o);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(R->comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    const lab05_options *o = &R->o;
    st = lab05_setup(R);
    if (st == DL_OK)
        st = shape(&T);
    if (st == DL_OK)
        st = build(&T);
    if (st == DL_OK)
        st = buffers(&T);
    long step = 0, first_batch = 0;
    int first_epoch = 0;
    if (st == DL_OK)
        st = resume(&T, &step, &first_epoch, &first_batch);
    if (st != DL_OK)
        return die(&T, st);
    R->resumed_at = step; // --amp's rows cover the steps this run took
    dl_progress_begin(&R->pr, o->a.epochs, T.steps_per_epoch, o->a.quiet);
    dl_progress_line(&R->pr, 0,
                     "lab05: %s on %d rank(s) (%s, %s), model %s, %d buckets, batch %zu x %zu micro x %d ranks = %zu",
                     lab05_mode_names[R->mode], R->P, dl_comm_backend(R->comm), dl_device_describe(&R->dev),
                     o->t.hidden, R->nb, T.B, T.K, R->P, T.B * T.K * (size_t)R->P);

    // ---- training ----
    dl_dev_stats_get(&R->io.resident); // the data is where the model reads it
    dl_comm_log_start(R->comm, 0); // the transport's own record: what the grader holds the trace against
    dl_trace_start(0);
    if (o->resume != NULL)
        dl_progress_line(&R->pr, 0, "resumed from %s: step %ld, epoch %d, batch %ld", o->resume, step, first_epoch + 1,
                         first_batch);
    for (int e = first_epoch; e < o->a.epochs && e < KIT_MAX_EPOCHS && step < T.last_step; e++) {
        st = run_epoch(&T, e, e == first_epoch ? (size_t)first_batch : 0, &step);
        if (st != DL_OK)
            return die(&T, st);
    }
    dl_trace_stop();
    dl_comm_log(R->comm, &R->logged, NULL); // the records of the traced run
    dl_dev_stats_get(&R->io.end);
    R->io.epochs = R->tally.done - first_epoch;
    dl_progress_end(&R->pr);
    R->step = step;

    // ---- the end: test once, one model on every rank, the grader's dump, the files ----
    st = accuracy(&T, &R->m, &T.test, &R->test);
    if (st == DL_OK)
        st = dl_replica_mlp_diff(R->comm, &R->m, &R->param_diff);
    if (st == DL_OK && R->param_diff != 0 && R->rank == 0)
        fprintf(stderr,
                "lab05: warning: at the end the ranks' parameters differ by up to %g: they did not all apply the "
                "same update (a bucket allreduced before its gradients were final or never waited for, a step "
                "skipped on some ranks only?)\n",
                R->param_diff);
    if (st == DL_OK && o->dump != NULL)
        st = lab05_dump(R);
    if (st == DL_OK)
        st = lab05_write_outputs(R);
    if (st != DL_OK)
        return die(&T, st);
    kit_ckpt_end(&T.ck);
    dl_mlp_free(&R->m);
    work_free(&T.w);
    sets_free(&T);
    dl_comm_finalize(R->comm);
    return 0;
}
