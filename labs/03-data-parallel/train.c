/* train.c — lab 03's training around the student's functions (ddp.h): an
 * epoch of DDP or of the naive attempt, the distributed scaler's use, the
 * projection of the last whole epoch and the comparisons (the naive
 * attempt's steady epoch, rank 0 alone at the global batch). See
 * outputs.h. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "ddp.h" // the student's sampler, scaler, sync, lr and timing
#include "dl/batch.h" // dl_batch_gather
#include "dl/epoch.h" // dl_epoch, dl_steady_seconds
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/replica.h" // dl_replica_diff, dl_replica_mlp_diff
#include "dl/trace.h" // dl_trace_events: the compute time
#include "dl/trainopt.h" // dl_train_stop
#include "outputs.h" // lab03_run

// ---- the training loop ----

/* Forward, loss and backward on the training rows at positions at..at+b-1
 * of the epoch's order (dl_devset_order), gathered on the device. */
static dl_status gradient(lab03_run *R, dl_mlp *m, dl_batch *bt, size_t at, size_t b, double *loss)
{
    DL_TRY(dl_batch_take(bt, &R->dtrain, at, b));
    DL_TRY(dl_mlp_forward(m, bt->X, b));
    DL_TRY(dl_mlp_loss(m, bt->y, b, loss));
    return dl_mlp_backward(m, bt->X, b, 0, NULL, NULL);
}

/* The compute of the spans the trace recorded from index `first` on: each
 * forward, backward and optimizer pass — on a GPU the device's own times
 * (CUDA events), so measuring the compute costs the steps no wait. */
static double compute_since(size_t first)
{
    size_t n;
    const dl_span *sp = dl_trace_events(&n);
    double s = 0;
    for (size_t i = first; i < n; i++)
        if (sp[i].t1 >= sp[i].t0 &&
            (sp[i].kind == DL_EV_FORWARD || sp[i].kind == DL_EV_BACKWARD || sp[i].kind == DL_EV_OPTIM))
            s += sp[i].t1 - sp[i].t0;
    return s;
}

dl_status lab03_train_epoch(lab03_run *R, lab03_trainer *T, int epoch, lab03_epoch *e)
{
    memcpy(T->prev, T->idx, T->per * sizeof *T->idx);
    ddp_sampler_set_epoch(&T->s, epoch); // task 1
    DL_TRY(ddp_sampler_indices(&T->s, T->idx));
    lab03_warn_same_order(R, T->idx, T->prev, T->per, epoch);
    DL_TRY(dl_devset_order(&R->dtrain, T->idx, T->per)); // the epoch's one upload
    double t0 = 0, lr = NAN;
    DL_TRY(ddp_epoch_begin(R->E->comm, &t0)); // task 6
    dl_epoch E;
    dl_epoch_begin(&E, R->E->comm); // count the steps only
    dl_trace_clear(); // the epoch's compute: the spans recorded from here on
    size_t start = 0;
    for (; start < T->per && !dl_train_stop(&R->E->t, T->m.steps); start += T->b) {
        size_t b = T->per - start < T->b ? T->per - start : T->b;
        double loss = 0; // read back: the step's one wait for the device
        dl_dev_stats io0, io1; // what the step asks of the device (summary.json's device_io)
        dl_dev_stats_get(&io0);
        DL_TRY(gradient(R, &T->m, &R->batch, start, b, &loss));
        if (!R->naive)
            DL_TRY(ddp_sync_grads(R->E->comm, &T->m)); // task 4
        lr = ddp_lr_at(&T->lr, T->m.steps); // task 5
        if (T->m.steps == 0 && !(lr > 0))
            return dl_error_set(DL_ERR_TODO,
                                "ddp_lr_at gave learning rate %g at step 0 (not implemented yet: lab03 "
                                "task 5?)",
                                lr);
        DL_TRY(dl_mlp_sgd(&T->m, (float)lr, (float)R->E->t.momentum, (float)R->E->t.weight_decay));
        dl_dev_stats_get(&io1);
        dl_run_io_steps(&R->E->io, &io0, &io1, 1);
        if (T->m.steps <= R->compare_steps)
            T->step_loss[T->m.steps - 1] = loss;
        if (R->bar != NULL)
            dl_progress_step(R->bar, epoch, (size_t)E.steps, b * (size_t)(R->naive ? 1 : R->E->P), loss);
        dl_epoch_step(&E, b, loss);
    }
    dl_epoch_stop(&E); // before the timing and the checks add their own traffic
    e->tm = (ddp_timing){0, 0, R->per_rank, 0};
    DL_TRY(ddp_epoch_end(R->E->comm, t0, compute_since(0), &e->tm)); // task 6
    dl_mlp_cost cost;
    dl_mlp_step_cost(R->E->sizes, R->E->n_sizes, T->b, &cost);
    DL_TRY(dl_epoch_reduce(&E, cost.mem_bytes, cost.launches, (double)R->train->n, &e->sums));
    // naive: one rank's loss, as the first attempt reports it; DDP: the mean over all rows
    e->loss = R->naive ? e->sums.local_loss : e->sums.loss;
    e->lr = lr;
    e->complete = start >= T->per;
    DL_TRY(dl_replica_mlp_diff(R->E->comm, &T->m, &e->diff));
    if (R->naive) // the ranks hold different models: rank 0's is the one reported
        return dl_eval_accuracy_on(R->E->comm, 0, &T->m, &R->dval, R->batch.cap, &e->acc);
    return dl_eval_accuracy(R->E->comm, &T->m, &R->dval, R->batch.cap, &e->acc);
}

dl_status lab03_trainer_init(lab03_run *R, lab03_trainer *T, int naive)
{
    int P = naive ? 1 : R->E->P;
    memset(T, 0, sizeof *T);
    T->b = (size_t)R->E->a.batch_size;
    // every rank starts from its own init, as separate processes do
    DL_TRY(dl_mlp_create(&T->m, &R->E->dev, R->E->sizes, R->E->n_sizes, T->b, R->E->a.seed + (uint64_t)R->E->rank));
    ddp_sampler s = {.n = R->train->n,
                     .rank = naive ? 0 : R->E->rank,
                     .world = P,
                     .seed = R->E->a.seed,
                     .shuffle = 1,
                     .drop_last = R->E->t.drop_last,
                     .labels = R->E->t.stratified ? R->train->y : NULL,
                     .C = (int)R->E->sizes[R->E->n_sizes - 1]};
    T->s = s;
    T->per = ddp_sampler_num_samples(&T->s); // task 1
    if (T->per == 0)
        return dl_error_set(DL_ERR_TODO, "ddp_sampler_num_samples returned 0 rows per rank (not implemented yet: "
                                         "lab03 task 1?)");
    T->steps_per_epoch = (T->per + T->b - 1) / T->b;
    ddp_lr_config lr = {R->E->a.lr,
                        (size_t)R->E->t.base_batch,
                        T->b * (size_t)P,
                        R->E->t.warmup,
                        (long)T->steps_per_epoch * R->E->a.epochs,
                        R->E->t.cosine};
    T->lr = lr;
    T->idx = calloc(T->per, sizeof *T->idx);
    T->prev = calloc(T->per, sizeof *T->prev);
    T->step_loss = calloc((size_t)R->compare_steps, sizeof *T->step_loss);
    return T->idx && T->prev && T->step_loss ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
}

void lab03_trainer_free(lab03_trainer *T)
{
    dl_mlp_free(&T->m);
    free(T->idx), free(T->prev), free(T->step_loss);
}

/* The standardised rows made resident where the model computes: uploaded once. */
static dl_status upload(lab03_run *R)
{
    DL_TRY(dl_devset_make(&R->dtrain, &R->E->dev, R->train, 0, R->train->n));
    DL_TRY(dl_devset_make(&R->dval, &R->E->dev, &R->val, 0, R->val.n));
    return dl_devset_make(&R->dtest, &R->E->dev, &R->test, 0, R->test.n);
}

/* Standardises the training and evaluation rows with the statistics of all ranks' shards (task 2). */
static dl_status standardise(lab03_run *R, float *mean, float *scale, double *diff)
{
    const dl_dataset *tr = R->train;
    size_t d = tr->d, P = (size_t)(R->naive ? 1 : R->E->P), r = R->naive ? 0 : (size_t)R->E->rank;
    size_t n_local = tr->n / P + (r < tr->n % P);
    float *shard = malloc((n_local ? n_local : 1) * d * sizeof *shard);
    if (shard == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n_local; k++) // this rank's static shard: rows r, r + P, ...
        memcpy(shard + k * d, tr->X + (r + k * P) * d, d * sizeof *shard);
    dl_status st = ddp_scaler_fit(R->E->comm, shard, n_local, d, mean, scale);
    free(shard);
    DL_TRY(st);
    DL_TRY(dl_replica_diff(R->E->comm, mean, d, diff)); // every rank must hold the same statistics
    dl_dataset_standardise(&R->E->data.train, mean, scale);
    dl_dataset_standardise(&R->val, mean, scale);
    dl_dataset_standardise(&R->test, mean, scale);
    return DL_OK;
}

dl_status lab03_scale_and_upload(lab03_run *R)
{
    dl_train_report *r = &R->S.r;
    if (!R->no_scaler) {
        float *mean = malloc(R->train->d * sizeof *mean), *scale = malloc(R->train->d * sizeof *scale);
        r->mean = mean, r->std = scale;
        DL_TRY(mean && scale ? standardise(R, mean, scale, &r->scaler_diff) : DL_ERR_NOMEM);
    }
    return upload(R);
}

dl_status lab03_dump(const lab03_run *R, const char *path)
{
    return path != NULL && R->E->rank == 0 ? dl_mlp_write_params(&R->T.m, path) : DL_OK;
}

// ---- the comparisons (several ranks, DDP) ----

/* The naive first attempt for two epochs, the first a warm-up: its steady epoch and its projection. */
static dl_status naive_epochs(const lab03_run *R, lab03_results *S)
{
    lab03_run Rn = *R;
    dl_engine En = *R->E; // no step limit: the naive epochs run whole
    En.t.max_steps = 0;
    Rn.E = &En;
    Rn.naive = 1;
    Rn.bar = NULL;
    lab03_trainer N;
    lab03_epoch e[2];
    dl_status st = lab03_trainer_init(&Rn, &N, 1);
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = lab03_train_epoch(&Rn, &N, k, &e[k]);
    lab03_trainer_free(&N);
    DL_TRY(st);
    double t[2] = {e[0].tm.epoch_s, e[1].tm.epoch_s};
    S->naive_s = dl_steady_seconds(t, 2, 1);
    return dl_project_against(&R->E->prof, &e[1].sums.w, R->E->P, &R->one, &S->naive);
}

/* Rank 0 alone, a world of one at batch P·B, with DDP's seed and row order: its first K losses. */
static dl_status one_rank_curve(lab03_run *R, const lab03_trainer *T, long K, double *curve)
{
    size_t PB = T->b * (size_t)R->E->P;
    ddp_sampler s = {R->train->n, 0, 1, R->E->a.seed, 0, 1, R->E->t.drop_last, NULL, 0};
    size_t per = ddp_sampler_num_samples(&s), *idx = malloc(per * sizeof *idx);
    dl_mlp m;
    dl_batch bt;
    memset(&m, 0, sizeof m), memset(&bt, 0, sizeof bt);
    dl_status st = idx ? dl_mlp_create(&m, &R->E->dev, R->E->sizes, R->E->n_sizes, PB, R->E->a.seed) : DL_ERR_NOMEM;
    if (st == DL_OK)
        st = dl_batch_create(&bt, &R->E->dev, PB, R->train->d);
    for (int e = 0; st == DL_OK && m.steps < K; e++) {
        ddp_sampler_set_epoch(&s, e);
        st = ddp_sampler_indices(&s, idx);
        if (st == DL_OK)
            st = dl_devset_order(&R->dtrain, idx, per);
        for (size_t start = 0; st == DL_OK && start < per && m.steps < K; start += PB) {
            size_t b = per - start < PB ? per - start : PB;
            st = gradient(R, &m, &bt, start, b, &curve[m.steps]);
            if (st == DL_OK)
                st = dl_mlp_sgd(&m, (float)ddp_lr_at(&T->lr, m.steps), (float)R->E->t.momentum,
                                (float)R->E->t.weight_decay);
        }
    }
    dl_batch_free(&bt);
    dl_mlp_free(&m);
    free(idx);
    return st;
}

dl_status lab03_compare(lab03_run *R)
{
    lab03_results *S = &R->S;
    const lab03_trainer *T = &R->T;
    S->naive_s = NAN;
    if (R->no_compare || R->E->P == 1 || R->naive)
        return DL_OK;
    R->bar = NULL;
    DL_TRY(naive_epochs(R, S));
    dl_progress_line(&R->E->pr, 0,
                     "lab03: naive attempt (every rank all %zu rows, no sync): a steady epoch takes %.3f s here "
                     "against %.3f s for DDP; projected speedup %.2fx",
                     R->train->n, S->naive_s, S->r.steady_epoch_seconds, S->naive.speedup);
    S->one_curve = R->E->rank == 0 && S->K > 0 ? calloc((size_t)S->K, sizeof *S->one_curve) : NULL;
    return S->one_curve != NULL ? one_rank_curve(R, T, S->K, S->one_curve) : DL_OK;
}

dl_status lab03_project(lab03_run *R)
{
    lab03_results *S = &R->S;
    dl_train_report *r = &S->r;
    r->why_not = R->E->P == 1        ? "a world of one communicates nothing: run it on P ranks (common/bin/dlrun -n "
                                       "4) to project data parallelism"
                 : !S->full.complete ? "no epoch ran to its end (--max-steps): part of an epoch does not project one"
                                     : NULL;
    if (r->why_not != NULL) {
        dl_progress_line(&R->E->pr, 0, "lab03: no projection: %s", r->why_not);
        return DL_OK;
    }
    DL_TRY(dl_project_against(&R->E->prof, &S->full.sums.w, R->E->P, &R->one, &r->proj));
    dl_progress_line(&R->E->pr, R->E->rank == 0,
                     "lab03: projected on %d GPU(s) of %s: epoch %.3f ms = compute %.3f + comm %.3f; one GPU %.3f "
                     "ms; speedup %.2fx (projected)",
                     R->E->P, R->E->prof.name, 1e3 * r->proj.epoch_s, 1e3 * r->proj.compute_s, 1e3 * r->proj.comm_s,
                     1e3 * r->proj.single_s, r->proj.speedup);
    return DL_OK;
}
