/* main.c — lab 03's driver: data-parallel training of the kit's MLP, and the
 * classic first attempt beside it.
 *
 *   common/bin/dlrun -n 4 build/labs/lab03                 your DDP on Fashion-MNIST
 *   common/bin/dlrun -n 4 build/labs/lab03 --mode naive    four serial copies (no sharding, no sync)
 *   build/labs/lab03 --help                                 every flag
 *
 * The official test split is cut in two stratified halves: validation,
 * scored after every epoch, and test, scored once at the end; the training
 * rows are the whole training split (the grader's references assume so).
 * Each epoch rank 0 prints the loss, the validation accuracy, the rows each
 * rank processed, the largest parameter difference across ranks (0 when
 * they are in sync) and the epoch time, and warns as the grader would when
 * two epochs give the same order or the loss blows up. At the end it
 * projects the last whole epoch onto the target machine (--profile, default
 * 4 x A10 on PCIe) from what the run counted, against one baseline: the
 * same job on one GPU (a world of one, or epochs cut short by --max-steps,
 * have nothing to project, and it says so). With several ranks, unless
 * --no-compare, it also times the naive attempt (two epochs, the first a
 * warm-up like DDP's first: steady epochs are compared) and trains rank 0
 * alone at the global batch for the first steps, to show that P ranks at
 * batch B equal one rank at batch P·B.
 * Outputs (rank 0) in --out: metrics.csv, steps.csv, shards.csv, lr.csv,
 * projection.csv, epoch_time.csv, summary.json and the plots. The plumbing
 * is libddplab's (dl/batch.h, eval.h, replica.h, epoch.h, summary.h) and
 * outputs.c's (the flags, set-up, each epoch's report, the files); what is
 * here is the lab's story around the student's functions (ddp.h). Not a
 * student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "ddp.h" // the student's sampler, scaler, sync, lr and timing
#include "dl/batch.h" // dl_batch_gather
#include "dl/epoch.h" // dl_epoch, dl_steady_seconds
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/rank.h" // dl_rank_exit
#include "dl/progress.h" // dl_progress_line, dl_progress_step
#include "dl/replica.h" // dl_replica_diff, dl_replica_mlp_diff
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_start, dl_trace_events: the compute time
#include "dl/trainopt.h" // dl_train_stop
#include "outputs.h" // lab03_run, lab03_results: set-up, each epoch's report, the files

/* One model's training: its sampler, its schedule, this epoch's rows. */
typedef struct trainer {
    dl_mlp m; /* m.steps counts the optimizer steps */
    ddp_sampler s;
    ddp_lr_config lr;
    size_t per, b, steps_per_epoch;
    size_t *idx, *prev; /* this epoch's rows, and the last epoch's (the order check) */
    double *step_loss; /* this rank's loss of the first steps (the equivalence curve) */
} trainer;

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

/* One epoch of training (tasks 1, 4, 5, 6), and what it gives in e. */
static dl_status train_epoch(lab03_run *R, trainer *T, int epoch, lab03_epoch *e)
{
    memcpy(T->prev, T->idx, T->per * sizeof *T->idx);
    ddp_sampler_set_epoch(&T->s, epoch); // task 1
    DL_TRY(ddp_sampler_indices(&T->s, T->idx));
    lab03_warn_same_order(R, T->idx, T->prev, T->per, epoch);
    DL_TRY(dl_devset_order(&R->dtrain, T->idx, T->per)); // the epoch's one upload
    double t0 = 0, lr = NAN;
    DL_TRY(ddp_epoch_begin(R->comm, &t0)); // task 6
    dl_epoch E;
    dl_epoch_begin(&E, R->comm); // count the steps only
    dl_trace_clear(); // the epoch's compute: the spans recorded from here on
    size_t start = 0;
    for (; start < T->per && !dl_train_stop(&R->o.t, T->m.steps); start += T->b) {
        size_t b = T->per - start < T->b ? T->per - start : T->b;
        double loss = 0; // read back: the step's one wait for the device
        dl_dev_stats io0, io1; // what the step asks of the device (summary.json's device_io)
        dl_dev_stats_get(&io0);
        DL_TRY(gradient(R, &T->m, &R->batch, start, b, &loss));
        if (!R->naive)
            DL_TRY(ddp_sync_grads(R->comm, &T->m)); // task 4
        lr = ddp_lr_at(&T->lr, T->m.steps); // task 5
        if (T->m.steps == 0 && !(lr > 0))
            return dl_error_set(DL_ERR_TODO,
                                "ddp_lr_at gave learning rate %g at step 0 (not implemented yet: lab03 "
                                "task 5?)",
                                lr);
        DL_TRY(dl_mlp_sgd(&T->m, (float)lr, (float)R->o.t.momentum, (float)R->o.t.weight_decay));
        dl_dev_stats_get(&io1);
        dl_run_io_steps(&R->io, &io0, &io1, 1);
        if (T->m.steps <= R->o.compare_steps)
            T->step_loss[T->m.steps - 1] = loss;
        if (R->bar != NULL)
            dl_progress_step(R->bar, epoch, (size_t)E.steps, b * (size_t)(R->naive ? 1 : R->P), loss);
        dl_epoch_step(&E, b, loss);
    }
    dl_epoch_stop(&E); // before the timing and the checks add their own traffic
    e->tm = (ddp_timing){0, 0, R->per_rank, 0};
    DL_TRY(ddp_epoch_end(R->comm, t0, compute_since(0), &e->tm)); // task 6
    dl_mlp_cost cost;
    dl_mlp_step_cost(R->sizes, R->n_sizes, T->b, &cost);
    DL_TRY(dl_epoch_reduce(&E, cost.mem_bytes, cost.launches, (double)R->train->n, &e->sums));
    // naive: one rank's loss, as the first attempt reports it; DDP: the mean over all rows
    e->loss = R->naive ? e->sums.local_loss : e->sums.loss;
    e->lr = lr;
    e->complete = start >= T->per;
    DL_TRY(dl_replica_mlp_diff(R->comm, &T->m, &e->diff));
    if (R->naive) // the ranks hold different models: rank 0's is the one reported
        return dl_eval_accuracy_on(R->comm, 0, &T->m, &R->dval, R->batch.cap, &e->acc);
    return dl_eval_accuracy(R->comm, &T->m, &R->dval, R->batch.cap, &e->acc);
}

/* T ready to train on R's rows: naive, every rank alone on all of them. */
static dl_status trainer_init(lab03_run *R, trainer *T, int naive)
{
    const lab03_options *o = &R->o;
    int P = naive ? 1 : R->P;
    memset(T, 0, sizeof *T);
    T->b = (size_t)o->a.batch_size;
    // every rank starts from its own init, as separate processes do
    DL_TRY(dl_mlp_create(&T->m, &R->dev, R->sizes, R->n_sizes, T->b, o->a.seed + (uint64_t)R->rank));
    ddp_sampler s = {.n = R->train->n,
                     .rank = naive ? 0 : R->rank,
                     .world = P,
                     .seed = o->a.seed,
                     .shuffle = 1,
                     .drop_last = o->t.drop_last,
                     .labels = o->t.stratified ? R->train->y : NULL,
                     .C = (int)R->sizes[R->n_sizes - 1]};
    T->s = s;
    T->per = ddp_sampler_num_samples(&T->s); // task 1
    if (T->per == 0)
        return dl_error_set(DL_ERR_TODO, "ddp_sampler_num_samples returned 0 rows per rank (not implemented yet: "
                                         "lab03 task 1?)");
    T->steps_per_epoch = (T->per + T->b - 1) / T->b;
    ddp_lr_config lr = {
        o->a.lr,    (size_t)o->t.base_batch, T->b * (size_t)P, o->t.warmup, (long)T->steps_per_epoch * o->a.epochs,
        o->t.cosine};
    T->lr = lr;
    T->idx = calloc(T->per, sizeof *T->idx);
    T->prev = calloc(T->per, sizeof *T->prev);
    T->step_loss = calloc((size_t)o->compare_steps, sizeof *T->step_loss);
    return T->idx && T->prev && T->step_loss ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
}

/* Frees what trainer_init allocated. */
static void trainer_free(trainer *T)
{
    dl_mlp_free(&T->m);
    free(T->idx), free(T->prev), free(T->step_loss);
}

/* The standardised rows made resident where the model computes: uploaded once. */
static dl_status upload(lab03_run *R)
{
    DL_TRY(dl_devset_make(&R->dtrain, &R->dev, R->train, 0, R->train->n));
    DL_TRY(dl_devset_make(&R->dval, &R->dev, &R->val, 0, R->val.n));
    return dl_devset_make(&R->dtest, &R->dev, &R->test, 0, R->test.n);
}

/* Standardises the training and evaluation rows with the statistics of all ranks' shards (task 2). */
static dl_status standardise(lab03_run *R, float *mean, float *scale, double *diff)
{
    const dl_dataset *tr = R->train;
    size_t d = tr->d, P = (size_t)(R->naive ? 1 : R->P), r = R->naive ? 0 : (size_t)R->rank;
    size_t n_local = tr->n / P + (r < tr->n % P);
    float *shard = malloc((n_local ? n_local : 1) * d * sizeof *shard);
    if (shard == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n_local; k++) // this rank's static shard: rows r, r + P, ...
        memcpy(shard + k * d, tr->X + (r + k * P) * d, d * sizeof *shard);
    dl_status st = ddp_scaler_fit(R->comm, shard, n_local, d, mean, scale);
    free(shard);
    DL_TRY(st);
    DL_TRY(dl_replica_diff(R->comm, mean, d, diff)); // every rank must hold the same statistics
    dl_dataset_standardise(&R->data.train, mean, scale);
    dl_dataset_standardise(&R->val, mean, scale);
    dl_dataset_standardise(&R->test, mean, scale);
    return DL_OK;
}

// ---- the comparisons (several ranks, DDP) ----

/* The naive first attempt for two epochs, the first a warm-up: its steady epoch and its projection. */
static dl_status naive_epochs(const lab03_run *R, lab03_results *S)
{
    lab03_run Rn = *R;
    Rn.naive = 1;
    Rn.bar = NULL;
    Rn.o.t.max_steps = 0;
    trainer N;
    lab03_epoch e[2];
    dl_status st = trainer_init(&Rn, &N, 1);
    for (int k = 0; k < 2 && st == DL_OK; k++)
        st = train_epoch(&Rn, &N, k, &e[k]);
    trainer_free(&N);
    DL_TRY(st);
    double t[2] = {e[0].tm.epoch_s, e[1].tm.epoch_s};
    S->naive_s = dl_steady_seconds(t, 2, 1);
    return dl_project_against(&R->prof, &e[1].sums.w, R->P, &R->one, &S->naive);
}

/* Rank 0 alone, a world of one at batch P·B, with DDP's seed and row order: its first K losses. */
static dl_status one_rank_curve(lab03_run *R, const trainer *T, long K, double *curve)
{
    size_t PB = T->b * (size_t)R->P;
    ddp_sampler s = {R->train->n, 0, 1, R->o.a.seed, 0, 1, R->o.t.drop_last, NULL, 0};
    size_t per = ddp_sampler_num_samples(&s), *idx = malloc(per * sizeof *idx);
    dl_mlp m;
    dl_batch bt;
    memset(&m, 0, sizeof m), memset(&bt, 0, sizeof bt);
    dl_status st = idx ? dl_mlp_create(&m, &R->dev, R->sizes, R->n_sizes, PB, R->o.a.seed) : DL_ERR_NOMEM;
    if (st == DL_OK)
        st = dl_batch_create(&bt, &R->dev, PB, R->train->d);
    for (int e = 0; st == DL_OK && m.steps < K; e++) {
        ddp_sampler_set_epoch(&s, e);
        st = ddp_sampler_indices(&s, idx);
        if (st == DL_OK)
            st = dl_devset_order(&R->dtrain, idx, per);
        for (size_t start = 0; st == DL_OK && start < per && m.steps < K; start += PB) {
            size_t b = per - start < PB ? per - start : PB;
            st = gradient(R, &m, &bt, start, b, &curve[m.steps]);
            if (st == DL_OK)
                st = dl_mlp_sgd(&m, (float)ddp_lr_at(&T->lr, m.steps), (float)R->o.t.momentum,
                                (float)R->o.t.weight_decay);
        }
    }
    dl_batch_free(&bt);
    dl_mlp_free(&m);
    free(idx);
    return st;
}

/* With several DDP ranks and unless --no-compare: the naive attempt and
 * rank 0 alone at the global batch, into S. */
static dl_status compare(lab03_run *R, const trainer *T, lab03_results *S)
{
    S->naive_s = NAN;
    if (R->o.no_compare || R->P == 1 || R->naive)
        return DL_OK;
    R->bar = NULL;
    DL_TRY(naive_epochs(R, S));
    dl_progress_line(&R->pr, 0,
                     "lab03: naive attempt (every rank all %zu rows, no sync): a steady epoch takes %.3f s here "
                     "against %.3f s for DDP; projected speedup %.2fx",
                     R->train->n, S->naive_s, S->r.steady_epoch_seconds, S->naive.speedup);
    S->one_curve = R->rank == 0 && S->K > 0 ? calloc((size_t)S->K, sizeof *S->one_curve) : NULL;
    return S->one_curve != NULL ? one_rank_curve(R, T, S->K, S->one_curve) : DL_OK;
}

/* The last whole epoch projected on the target, against the same job on one GPU; or why not. */
static dl_status project(lab03_run *R, lab03_results *S)
{
    dl_train_report *r = &S->r;
    r->why_not = R->P == 1           ? "a world of one communicates nothing: run it on P ranks (common/bin/dlrun -n "
                                       "4) to project data parallelism"
                 : !S->full.complete ? "no epoch ran to its end (--max-steps): part of an epoch does not project one"
                                     : NULL;
    if (r->why_not != NULL) {
        dl_progress_line(&R->pr, 0, "lab03: no projection: %s", r->why_not);
        return DL_OK;
    }
    DL_TRY(dl_project_against(&R->prof, &S->full.sums.w, R->P, &R->one, &r->proj));
    dl_progress_line(&R->pr, R->rank == 0,
                     "lab03: projected on %d GPU(s) of %s: epoch %.3f ms = compute %.3f + comm %.3f; one GPU %.3f "
                     "ms; speedup %.2fx (projected)",
                     R->P, R->prof.name, 1e3 * r->proj.epoch_s, 1e3 * r->proj.compute_s, 1e3 * r->proj.comm_s,
                     1e3 * r->proj.single_s, r->proj.speedup);
    return DL_OK;
}

/* Every rank: set up, scale (task 2), start from one model (task 3), train
 * (tasks 1, 4-6), score test once, project, compare, and rank 0 writes. */
int main(int argc, char **argv)
{
    lab03_run R;
    memset(&R, 0, sizeof R);
    dl_dev_stats_get(&R.io.start);
    dl_status st = dl_comm_init(&argc, &argv, &R.comm);
    if (st != DL_OK)
        return dl_rank_exit(NULL, st, "lab03");
    int rc = lab03_parse(argc, argv, &R.o);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(R.comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    const lab03_options *o = &R.o;
    st = lab03_setup(&R);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");
    lab03_results S;
    lab03_results_init(&S);
    dl_train_report *r = &S.r;

    // ---- task 2: the distributed scaler ----
    float *mean = NULL, *scale = NULL;
    if (!o->no_scaler) {
        r->mean = mean = malloc(R.train->d * sizeof *mean);
        r->std = scale = malloc(R.train->d * sizeof *scale);
        st = mean && scale ? standardise(&R, mean, scale, &r->scaler_diff) : DL_ERR_NOMEM;
    }
    if (st == DL_OK)
        st = upload(&R);
    // ---- task 3: one model on every rank ----
    trainer T;
    if (st == DL_OK)
        st = trainer_init(&R, &T, R.naive);
    if (st == DL_OK && !R.naive)
        st = ddp_broadcast_params(R.comm, &T.m);
    if (st == DL_OK)
        st = dl_replica_mlp_diff(R.comm, &T.m, &r->init_diff);
    if (st == DL_OK)
        st = lab03_dump(&R, &T.m, o->t.dump_init);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");

    // ---- training: tasks 1 and 4 to 6 every epoch ----
    dl_trace_start(0); // each epoch's compute, from the device's clock on a GPU
    R.pr.steps_per_epoch = T.steps_per_epoch;
    R.bar = &R.pr;
    double t0 = dl_now();
    dl_dev_stats_get(&R.io.resident); // the data is where the model reads it
    for (int e = 0; e < o->a.epochs && !dl_train_stop(&o->t, T.m.steps); e++) {
        lab03_epoch eo;
        st = train_epoch(&R, &T, e, &eo);
        if (st == DL_OK)
            st = lab03_record_epoch(&R, &S, e, &eo);
        if (st != DL_OK)
            return dl_rank_exit(R.comm, st, "lab03");
        R.io.epochs = e + 1;
    }
    dl_dev_stats_get(&R.io.end);
    r->train_seconds = dl_now() - t0;
    lab03_sum_up(&R, &T.m, &T.lr, &S);

    // ---- the test half, scored once ----
    if (R.naive) // rank 0's model, as in every epoch
        st = dl_eval_accuracy_on(R.comm, 0, &T.m, &R.dtest, R.batch.cap, &r->test_accuracy);
    else
        st = dl_eval_accuracy(R.comm, &T.m, &R.dtest, R.batch.cap, &r->test_accuracy);
    if (st == DL_OK)
        st = lab03_dump(&R, &T.m, o->t.dump_params);
    // the first steps' losses averaged over the ranks (one call, after training)
    S.K = T.m.steps < o->compare_steps ? T.m.steps : o->compare_steps;
    S.ddp_curve = T.step_loss;
    if (st == DL_OK && S.K > 0 && !R.naive)
        st = dl_comm_allreduce(R.comm, S.ddp_curve, (size_t)S.K, DL_F64, DL_RED_AVG);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");
    dl_progress_line(&R.pr, R.rank == 0,
                     "lab03: %s, %d epoch(s), %.1f s: test accuracy %.4f (%zu held-out rows, scored once), params "
                     "differ across ranks by %.3g",
                     lab03_mode_names[o->mode], r->epochs_run, r->train_seconds, r->test_accuracy, R.test.n,
                     r->param_diff);

    // ---- the projection, the naive attempt and one rank at the global batch, the files ----
    st = project(&R, &S);
    if (st == DL_OK)
        st = compare(&R, &T, &S);
    if (st == DL_OK)
        st = lab03_write_outputs(&R, &S);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");
    trainer_free(&T);
    lab03_teardown(&R, &S);
    return 0;
}
