/* train.c — lab 05's training around the student's functions (ddp.h,
 * amp.h, ckpt.h): the model and its buckets, the steps' buffers, a resume,
 * each step (the mode's, with --amp's probe and the checkpoints) and each
 * epoch's row. See outputs.h. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // isfinite, NAN
#include <stdio.h> // fprintf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "dl/eval.h" // dl_eval_accuracy
#include "dl/ops.h" // dl_cast
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_begin, dl_trace_events
#include "outputs.h" // lab05_run

/* per rows per rank, K micro-batches of B rows of d features, P ranks'
 * loss sums; with amp, steps rows of --amp's measurements over n_params
 * weights. */
static dl_status work_alloc(lab05_work *w, const dl_device *dev, size_t per, size_t K, size_t B, size_t d, int P,
                            int amp, long steps, size_t n_params)
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

// ---- set-up: the epochs' shape, the model and its buckets, the buffers, a resume ----

/* The model (the same seed on every rank, so the same start), its buckets
 * (task 1; --mode per-param: one per parameter), the reducer over them and
 * the loss scaler. */
static dl_status model(lab05_run *R)
{
    const lab05_options *o = &R->o;
    DL_TRY(dl_mlp_create(&R->m, &R->E->dev, R->E->sizes, R->E->n_sizes, R->B, R->E->a.seed));
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
    ddp_reducer *red = &R->red;
    memset(red, 0, sizeof *red);
    red->comm = R->E->comm;
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
static dl_status buffers(lab05_run *R)
{
    const dl_dataset *tr = R->train;
    DL_TRY(dl_devset_make(&R->tr, &R->E->dev, tr, 0, R->smp.n));
    DL_TRY(dl_devset_make(&R->val, &R->E->dev, tr, tr->n - VAL_ROWS, VAL_ROWS)); // the last rows, never trained on
    DL_TRY(dl_devset_make(&R->test, &R->E->dev, &R->E->data.test, 0, R->E->data.test.n));
    DL_TRY(work_alloc(&R->w, &R->E->dev, R->per, R->K, R->B, tr->d, R->E->P, R->amp, R->last_step, R->m.n_params));
    R->arow = R->w.arow; // --amp: one row per step (rank 0's view)
    R->lrc = (dl_lr_config){.base_lr = R->E->a.lr,
                            .base_batch = (size_t)R->E->t.base_batch,
                            .global_batch = R->B * R->K * (size_t)R->E->P,
                            .warmup_steps = R->E->t.warmup,
                            .total_steps = R->total_steps,
                            .cosine = 1};
    return kit_ckpt_begin(&R->ck, &R->m, R->E->P, R->E->a.seed);
}

dl_status lab05_build(lab05_run *R)
{
    DL_TRY(model(R));
    return buffers(R);
}

/* --resume FILE: every rank loads it (your ckpt_load) into the model and
 * the scaler, and where the run goes on (*step, *epoch, *batch); the
 * bookkeeping beside it (FILE.metrics) lets this run's metrics.csv and
 * summary.json go on from the uninterrupted run's — without it (or with
 * another checkpoint's) they cover only this run's steps, with a warning. */
dl_status lab05_resume(lab05_run *R, long *step, int *epoch, long *batch)
{
    const char *path = R->o.resume;
    if (path == NULL)
        return DL_OK;
    DL_TRY(kit_ckpt_resume(&R->ck, path, R->o.allow_reshard, &R->m, &R->scaler, step, epoch, batch));
    if (kit_tally_load(&R->tally, path, *step, *epoch, *batch, R->E->P, R->E->rank) != DL_OK && R->E->rank == 0)
        fprintf(stderr,
                "lab05: warning: %s; metrics.csv starts at epoch %d, whose row averages only the steps this run "
                "takes, and summary.json's amp_stats cover only those steps\n",
                dl_last_error(), *epoch + 1);
    // after a reshard the saved batch counts another world's batches: this run
    // goes on from the same batch number in its own (the rows are not those the
    // old world would have taken next: only a resume on as many ranks is exact)
    if ((size_t)*batch >= R->steps_per_epoch)
        (*epoch)++, *batch = 0;
    return DL_OK;
}

// ---- training ----

/* m's accuracy on set, collective (dl_eval_accuracy), in chunks of one
 * micro-batch. In 16 bits predict reads the 16-bit weights: cast from the
 * current masters first, not the copy the last step started from. */
dl_status lab05_accuracy(lab05_run *R, const dl_devset *set, double *acc)
{
    dl_mlp *m = &R->m;
    if (m->compute != DL_F32)
        DL_TRY(dl_cast(m->dev, m->params16, m->compute, m->params, DL_F32, m->n_params));
    return dl_eval_accuracy(R->E->comm, m, set, R->B, acc);
}

/* Whether a checkpoint follows step `step` (every rank decides alike). */
static int ckpt_due(const lab05_run *R, long step)
{
    const lab05_options *o = &R->o;
    return o->ckpt_dir != NULL && (step + 1 == R->last_step || (o->ckpt_every > 0 && (step + 1) % o->ckpt_every == 0));
}

/* Batch s of epoch e, the global step `step`: stages the micro-batches, runs
 * the mode's step (with --amp's probe before it; loss NULL: nothing is read
 * back), commits its loss on the device (dropped when skipped), saves a
 * checkpoint when due and records --amp's row. *loss is the step's loss when
 * it was read — on the CPU always (it costs nothing there) and on a probed
 * step — else NAN. */
static dl_status train_step(lab05_run *R, int e, size_t s, long step, double *loss, int *skipped)
{
    const lab05_options *o = &R->o;
    size_t B = R->B, K = R->K;
    lab05_work *w = &R->w;
    dl_status st = DL_OK;
    for (size_t k = 0; st == DL_OK && k < K; k++) {
        dl_batch *b = &w->bt[k];
        st = dl_batch_take(b, &R->tr, (s * K + k) * B, B); // gathered on the device by the epoch's order
        w->mb[k] = (ddp_micro){b->X, b->y, b->n};
    }
    if (st == DL_OK && step == o->poison_step && R->E->rank == o->poison_rank)
        st = kit_poison(&R->E->dev, &w->mb[0]);
    ddp_sgd opt = {(float)dl_lr_at(&R->lrc, step), (float)R->E->t.momentum, (float)R->E->t.weight_decay};
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
        st = R->amp                      ? amp_step(&R->red, &R->scaler, w->mb, &opt, NULL, skipped)
             : R->mode == LAB05_DDP_FLAT ? kit_flat_step(R->E->comm, &R->m, o->accum, w->mb, &opt, NULL)
                                         : ddp_step(&R->red, w->mb, &opt, NULL);
    dl_trace_end(span);
    dl_trace_set_step(-1);
    int read = R->E->dev.kind == DL_DEVICE_CPU || probe;
    if (st == DL_OK)
        st = dl_mlp_loss_commit(&R->m, !*skipped, o->accum, read ? loss : NULL);
    if (st == DL_OK && probe)
        st = dl_mlp_get_params(&R->m, w->after);
    if (st == DL_OK && probe)
        unchanged = kit_unchanged(w->before, w->after, R->m.n_params);
    // rank 0 saves where the run stands after this step: the next step's epoch and batch
    int end_of_epoch = s + 1 == R->steps_per_epoch;
    if (st == DL_OK && R->E->rank == 0 && ckpt_due(R, step))
        st = kit_ckpt_save(&R->ck, o->ckpt_dir, &R->m, &R->scaler, step + 1, end_of_epoch ? e + 1 : e,
                           end_of_epoch ? 0 : (long)s + 1);
    if (R->amp && step < R->last_step) {
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
static dl_status end_epoch(lab05_run *R, int e, long first_step, long step, double t0, double mean_here, double *r)
{
    double mean = mean_here, val = 0;
    DL_TRY(dl_comm_barrier(R->E->comm));
    double dt = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(R->E->comm, &mean, 1, DL_F64, DL_RED_AVG));
    DL_TRY(lab05_accuracy(R, &R->val, &val));
    if (!isfinite(mean) && R->o.dump == NULL)
        return dl_error_set(DL_ERR_NUMERIC,
                            "the loss is %g after epoch %d: the step diverged (gradients summed, not averaged? a "
                            "learning rate too high for the global batch?)",
                            mean, e + 1);
    r[KIT_M_EPOCH] = e + 1, r[KIT_M_STEP] = (double)step, r[KIT_M_LOSS] = mean, r[KIT_M_VAL_ACC] = val;
    r[KIT_M_EPOCH_S] = dt, r[KIT_M_LR] = dl_lr_at(&R->lrc, step - 1);
    r[KIT_M_COMPUTE_S] = compute_between(first_step, step);
    return DL_OK;
}

/* The bookkeeping beside the checkpoint of step `step` (epoch, batch: the
 * next step's), the epoch under way having run elapsed_s and compute_s:
 * every rank's loss sum gathered, rank 0 writes. Collective. */
static dl_status save_tally(const lab05_run *R, long step, int epoch, long batch, double elapsed_s, double compute_s)
{
    double *sums = R->w.sums;
    DL_TRY(dl_comm_allgather(R->E->comm, &R->tally.sum, sums, 1, DL_F64));
    if (R->E->rank != 0)
        return DL_OK;
    return kit_tally_save(&R->tally, R->o.ckpt_dir, step, epoch, batch, R->E->P, sums, elapsed_s, compute_s);
}

/* Epoch e from batch s to its end or the run's last step: the steps, the
 * epoch's metrics row (appended to the tally, with the part of the epoch
 * before a resume) and after each checkpoint the bookkeeping beside it
 * (after the epoch's last step, once its row is in). *step advances. */
dl_status lab05_run_epoch(lab05_run *R, int e, size_t s, long *step)
{
    kit_tally *ty = &R->tally;
    dl_sampler_set_epoch(&R->smp, e);
    dl_status st = dl_sampler_indices(&R->smp, R->w.idx);
    if (st == DL_OK)
        st = dl_devset_order(&R->tr, R->w.idx, R->per); // the epoch's one upload
    if (st == DL_OK) // the epoch's losses add up on the device, from what a resumed epoch had
        st = dl_mlp_loss_reset(&R->m, ty->sum);
    if (st == DL_OK)
        st = dl_comm_barrier(R->E->comm);
    double t0 = dl_now(), loss = 0;
    long first_step = *step;
    int due = 0;
    for (; st == DL_OK && s < R->steps_per_epoch && *step < R->last_step; s++, (*step)++) {
        int skipped = 0;
        st = train_step(R, e, s, *step, &loss, &skipped);
        ty->counted += !skipped; // a skipped step's loss (inf/NaN) is not averaged in
        dl_progress_step(&R->E->pr, e, s + 1, R->B * R->K * (size_t)R->E->P, loss);
        due = ckpt_due(R, *step);
        if (st == DL_OK && due && s + 1 < R->steps_per_epoch)
            st = dl_mlp_loss_total(&R->m, &ty->sum);
        if (st == DL_OK && due && s + 1 < R->steps_per_epoch)
            st = save_tally(R, *step + 1, e, (long)s + 1, ty->elapsed_s + dl_now() - t0,
                            ty->compute_s + compute_between(first_step, *step + 1));
    }
    double *r = ty->rows + KIT_METRIC_COLS * ty->done;
    if (st == DL_OK)
        st = dl_mlp_loss_total(&R->m, &ty->sum); // the epoch's one read of its losses
    if (st == DL_OK)
        st = end_epoch(R, e, first_step, *step, t0, ty->counted ? ty->sum / (double)ty->counted : 0, r);
    if (st != DL_OK)
        return st;
    r[KIT_M_EPOCH_S] += ty->elapsed_s, r[KIT_M_COMPUTE_S] += ty->compute_s;
    ty->done++;
    ty->sum = 0, ty->counted = 0, ty->elapsed_s = ty->compute_s = 0;
    dl_progress_line(&R->E->pr, 0, "epoch %d: loss %.4f, validation accuracy %.4f, %.2f s", e + 1, r[KIT_M_LOSS],
                     r[KIT_M_VAL_ACC], r[KIT_M_EPOCH_S]);
    return due && s == R->steps_per_epoch ? save_tally(R, *step, e + 1, 0, 0, 0) : DL_OK;
}
