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
 * is libddplab's (dl/batch.h, eval.h, replica.h, epoch.h, summary.h); what
 * is here is the lab's story around the student's functions (ddp.h). Not a
 * student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, isnan, fabs, fmax
#include <stdio.h> // snprintf, fprintf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcmp, memcpy, memset, strcmp

#include "ddp.h" // the student's sampler, scaler, sync, lr and timing
#include "dl/batch.h" // dl_batch_gather
#include "dl/cli.h" // dl_cli_parse
#include "dl/epoch.h" // dl_epoch, dl_steady_seconds, dl_loss_exploded, dl_epoch_ideal_workload
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/metrics.h" // dl_table, dl_csv_write, dl_csv_write_named
#include "dl/plot.h" // dl_plots
#include "dl/progress.h" // dl_progress_line
#include "dl/rank.h" // dl_rank_device, dl_rank_exit
#include "dl/replica.h" // dl_replica_diff, dl_replica_mlp_diff
#include "dl/split.h" // dl_split_hold_out
#include "dl/summary.h" // dl_summary_write, dl_summary_training
#include "dl/trainopt.h" // dl_train_opts: the flags every data-parallel driver shares
#include "kit.h" // ddp_projection_sweep

typedef struct options {
    dl_args a; /* the flags of every driver (dl/cli.h) */
    dl_train_opts t; /* those of every data-parallel driver (dl/trainopt.h) */
    const char *mode; /* lab 03's own */
    int no_scaler, no_compare, compare_steps;
} options;

typedef struct run {
    dl_comm *comm;
    dl_device dev;
    options o;
    dl_profile prof;
    int rank, P, naive;
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    int n_sizes;
    dl_data data;
    const dl_dataset *train, *eval; /* the rows trained on; the rows scored after every epoch (val) */
    dl_dataset val, test; /* the two halves of the official test split */
    dl_batch batch; /* B rows: training batches and evaluation chunks */
    double *per_rank; /* (P,) every rank's compute time, for ddp_epoch_end */
    dl_workload one; /* the job on one GPU: the baseline of every projected speedup */
    dl_progress pr, *bar; /* rank 0's progress; bar: the step bar (NULL: none) */
    int warned_order, warned_loss; /* each warning is given once */
} run;

typedef struct trainer {
    dl_mlp m; /* m.steps counts the optimizer steps */
    ddp_sampler s;
    ddp_lr_config lr;
    size_t per, b, steps_per_epoch;
    size_t *idx, *prev; /* this epoch's rows, and the last epoch's (the order check) */
    double *step_loss; /* this rank's loss of the first steps (the equivalence curve) */
} trainer;

typedef struct epoch_out {
    double loss, acc, diff, lr;
    ddp_timing tm; /* epoch_s, compute_s, imbalance (task 6) */
    dl_epoch_sums sums; /* rows per rank, the workload */
    int complete; /* every step of the epoch ran (not cut by --max-steps) */
} epoch_out;

// ---- the training loop ----

/* Forward, loss and backward on training rows idx[0..b). */
static dl_status gradient(run *R, dl_mlp *m, dl_batch *bt, const size_t *idx, size_t b, double *loss)
{
    DL_TRY(dl_batch_gather(bt, R->train, idx, b));
    DL_TRY(dl_mlp_forward(m, bt->X, b));
    DL_TRY(dl_mlp_loss(m, bt->y, b, loss));
    return dl_mlp_backward(m, bt->X, b, 0, NULL, NULL);
}

/* What the grader would say, said while the run goes on (rank 0, once each). */
static void warn_same_order(run *R, const trainer *T, int epoch)
{
    if (epoch == 0 || R->rank != 0 || R->warned_order || memcmp(T->idx, T->prev, T->per * sizeof *T->idx) != 0)
        return;
    R->warned_order = fprintf(stderr,
                              "lab03: warning: epochs %d and %d give rank 0 the same rows in the same order: is the "
                              "epoch passed to the sampler (ddp_sampler_set_epoch, task 1)?\n",
                              epoch, epoch + 1);
}

static void warn_exploding(run *R, int epoch, double loss, double best)
{
    if (R->rank != 0 || R->warned_loss || !dl_loss_exploded(loss, best, (int)R->sizes[R->n_sizes - 1]))
        return;
    R->warned_loss =
        fprintf(stderr, "lab03: warning: the loss is %g in epoch %d (the best so far: %g): %s\n", loss, epoch + 1, best,
                R->P > 1 && !R->naive ? "summed gradients instead of averaged (task 4)? Summed over P "
                                        "ranks, every step is P times too long"
                                      : "is the learning rate too large?");
}

static dl_status train_epoch(run *R, trainer *T, int epoch, epoch_out *e)
{
    memcpy(T->prev, T->idx, T->per * sizeof *T->idx);
    ddp_sampler_set_epoch(&T->s, epoch); // task 1
    DL_TRY(ddp_sampler_indices(&T->s, T->idx));
    warn_same_order(R, T, epoch);
    double t0 = 0, lr = NAN;
    DL_TRY(ddp_epoch_begin(R->comm, &t0)); // task 6
    dl_epoch E;
    dl_epoch_begin(&E, R->comm); // count the steps only
    size_t start = 0;
    for (; start < T->per && !dl_train_stop(&R->o.t, T->m.steps); start += T->b) {
        size_t b = T->per - start < T->b ? T->per - start : T->b;
        double loss = 0;
        dl_timer_start(&E.compute);
        DL_TRY(gradient(R, &T->m, &R->batch, T->idx + start, b, &loss));
        DL_TRY(dl_device_sync(&R->dev));
        dl_timer_stop(&E.compute);
        if (!R->naive)
            DL_TRY(ddp_sync_grads(R->comm, &T->m)); // task 4
        lr = ddp_lr_at(&T->lr, T->m.steps); // task 5
        if (T->m.steps == 0 && !(lr > 0))
            return dl_error_set(DL_ERR_TODO,
                                "ddp_lr_at gave learning rate %g at step 0 (not implemented yet: lab03 "
                                "task 5?)",
                                lr);
        dl_timer_start(&E.compute);
        DL_TRY(dl_mlp_sgd(&T->m, (float)lr, (float)R->o.t.momentum, (float)R->o.t.weight_decay));
        DL_TRY(dl_device_sync(&R->dev));
        dl_timer_stop(&E.compute);
        if (T->m.steps <= R->o.compare_steps)
            T->step_loss[T->m.steps - 1] = loss;
        if (R->bar != NULL)
            dl_progress_step(R->bar, epoch, (size_t)E.steps, b * (size_t)(R->naive ? 1 : R->P), loss);
        dl_epoch_step(&E, b, loss);
    }
    dl_epoch_stop(&E); // before the timing and the checks add their own traffic
    e->tm = (ddp_timing){0, 0, R->per_rank, 0};
    DL_TRY(ddp_epoch_end(R->comm, t0, dl_timer_seconds(&E.compute), &e->tm)); // task 6
    dl_mlp_cost cost;
    dl_mlp_step_cost(R->sizes, R->n_sizes, T->b, &cost);
    DL_TRY(dl_epoch_reduce(&E, cost.mem_bytes, cost.launches, (double)R->train->n, &e->sums));
    // naive: one rank's loss, as the first attempt reports it; DDP: the mean over all rows
    e->loss = R->naive ? e->sums.local_loss : e->sums.loss;
    e->lr = lr;
    e->complete = start >= T->per;
    DL_TRY(dl_replica_mlp_diff(R->comm, &T->m, &e->diff));
    if (R->naive) // the ranks hold different models: rank 0's is the one reported
        return dl_eval_accuracy_on(R->comm, 0, &T->m, &R->batch, R->eval, &e->acc);
    return dl_eval_accuracy(R->comm, &T->m, &R->batch, R->eval, &e->acc);
}

static dl_status trainer_init(run *R, trainer *T, int naive)
{
    const options *o = &R->o;
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

static void trainer_free(trainer *T)
{
    dl_mlp_free(&T->m);
    free(T->idx), free(T->prev), free(T->step_loss);
}

/* Standardises the training and evaluation rows with the statistics of all ranks' shards (task 2). */
static dl_status standardise(run *R, float *mean, float *scale, double *diff)
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

// ---- what the run reports ----

typedef struct results {
    dl_table metrics; /* one row per epoch (mcols) */
    dl_train_report r; /* what summary.json says of the run */
    epoch_out last, full; /* the last epoch that ran steps, and the last that ran them all */
    double best; /* the lowest epoch loss so far (NAN before the first) */
    long K; /* steps of the equivalence curves */
    double *ddp_curve, *one_curve; /* DDP's step losses averaged over ranks; rank 0 alone at P·B (or NULL) */
    dl_projection naive; /* the naive attempt's projection */
    double naive_s; /* its steady epoch time (NAN: not compared) */
    int sweep; /* rows of projection.csv */
    char plots[600];
} results;

static const char *const mcols[] = {"epoch",      "loss",    "val_acc",   "rows_min",  "rows_max",
                                    "param_diff", "epoch_s", "compute_s", "imbalance", "lr"};

// ---- the comparisons (several ranks, DDP) ----

/* The naive first attempt for two epochs, the first a warm-up: its steady epoch and its projection. */
static dl_status naive_epochs(const run *R, results *S)
{
    run Rn = *R;
    Rn.naive = 1;
    Rn.bar = NULL;
    Rn.o.t.max_steps = 0;
    trainer N;
    epoch_out e[2];
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
static dl_status one_rank_curve(run *R, const trainer *T, long K, double *curve)
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
        for (size_t start = 0; st == DL_OK && start < per && m.steps < K; start += PB) {
            size_t b = per - start < PB ? per - start : PB;
            st = gradient(R, &m, &bt, idx + start, b, &curve[m.steps]);
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

static dl_status compare(run *R, const trainer *T, results *S)
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

// ---- outputs (rank 0) ----

/* shards.csv: how many rows of each class every rank gets in epoch 1, random and stratified shards. */
static dl_status write_shards(run *R)
{
    int C = (int)R->sizes[R->n_sizes - 1], P = R->P;
    double *rows = calloc((size_t)C * 2 * P, sizeof *rows);
    char(*names)[32] = malloc((size_t)(C + 2 * P) * sizeof *names);
    const char **labels = malloc((size_t)(C + 1 + 2 * P) * sizeof *labels), **cols = labels + C;
    dl_status st = rows && names && labels ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int k = 0; st == DL_OK && k < 2 * P; k++) { // ranks 0..P-1 random, then stratified
        ddp_sampler s = {R->train->n, k % P, P, R->o.a.seed, 0, 1, 0, k < P ? NULL : R->train->y, C};
        size_t per = ddp_sampler_num_samples(&s), *idx = malloc((per ? per : 1) * sizeof *idx);
        st = idx ? ddp_sampler_indices(&s, idx) : DL_ERR_NOMEM;
        for (size_t i = 0; st == DL_OK && i < per; i++)
            rows[(size_t)R->train->y[idx[i]] * 2 * P + k] += 1;
        free(idx);
        snprintf(names[C + k], 32, "%s_rank%d", k < P ? "random" : "stratified", k % P);
        cols[1 + k] = names[C + k];
    }
    for (int c = 0; st == DL_OK && c < C; c++) // "Pullover", or "class 2" for a set without names
        labels[c] = dl_dataset_class_name(R->train, c, names[c], 32);
    cols[0] = "class";
    if (st == DL_OK)
        st = dl_csv_write_named(R->o.a.out, "shards.csv", cols, 1 + 2 * P, labels, rows, C);
    free(rows), free(names), free(labels);
    return st;
}

static dl_status write_tables(run *R, const trainer *T, results *S)
{
    const char *out = R->o.a.out;
    long total = T->lr.total_steps > 0 ? T->lr.total_steps : T->m.steps;
    double *rows = calloc(3 * (size_t)(S->K > total ? S->K : total) + 4 * 9, sizeof *rows);
    if (rows == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    dl_status st = dl_table_write(&S->metrics, out, "metrics.csv");
    for (long k = 0; k < S->K; k++) {
        rows[3 * k] = (double)k;
        rows[3 * k + 1] = S->ddp_curve[k];
        rows[3 * k + 2] = S->one_curve != NULL ? S->one_curve[k] : NAN;
    }
    if (st == DL_OK && S->K > 0)
        st = dl_csv_write(out, "steps.csv", (const char *[]){"step", "ddp", "one_rank"}, 3, rows, (int)S->K);
    for (long k = 0; k < total; k++) {
        rows[3 * k] = (double)k;
        rows[3 * k + 1] = ddp_lr_at(&T->lr, k);
        rows[3 * k + 2] = R->o.a.lr;
    }
    if (st == DL_OK && total > 0)
        st = dl_csv_write(out, "lr.csv", (const char *[]){"step", "lr", "unscaled"}, 3, rows, (int)total);
    if (st == DL_OK && R->P <= 8)
        st = write_shards(R);
    int k = S->sweep = ddp_projection_sweep(R->sizes, R->n_sizes, R->train->n, &R->prof, (double(*)[4])rows, 9);
    if (st == DL_OK)
        st = k < 0 ? DL_ERR_ARG
                   : dl_csv_write(out, "projection.csv",
                                  (const char *[]){"batch_per_rank", "speedup", "compute_ms", "comm_ms"}, 4, rows, k);
    const char *runs[2] = {"naive: every rank all rows, no sync", "DDP: sharded rows + gradient allreduce"};
    if (st == DL_OK && !isnan(S->naive_s))
        st = dl_csv_write_named(out, "epoch_time.csv", (const char *[]){"run", "epoch_s"}, 2, runs,
                                (double[2]){S->naive_s, S->r.steady_epoch_seconds}, 2);
    free(rows);
    return st;
}

static void draw(run *R, const trainer *T, results *S)
{
    const char *out = R->o.a.out;
    dl_plots p = {"labs/03-data-parallel/plots", R->o.a.plot, out, "lab03", ""};
    dl_plots_draw(&p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", out, R->o.mode, R->P);
    if (R->P > 1 && R->P <= 8)
        dl_plots_draw(&p, "shards", "data='%s/shards.csv'; P=%d", out, R->P);
    if (S->K > 0 && S->one_curve != NULL)
        dl_plots_draw(&p, "equivalence", "data='%s/steps.csv'; P=%d; B=%zu", out, R->P, T->b);
    dl_plots_draw(&p, "lr", "data='%s/lr.csv'; P=%d", out, R->naive ? 1 : R->P);
    if (S->sweep > 0)
        dl_plots_draw(&p, "speedup_batch", "data='%s/projection.csv'; B=%zu; profile='%s'; gpus=%d", out, T->b,
                      R->prof.name, R->prof.gpus);
    if (!isnan(S->naive_s))
        dl_plots_draw(&p, "epoch_time", "data='%s/epoch_time.csv'; pnaive=%g; pddp=%g; P=%d; profile='%s'", out,
                      S->naive.speedup, S->r.why_not ? -1.0 : S->r.proj.speedup, R->P, R->prof.name);
    memcpy(S->plots, p.list, sizeof S->plots);
}

typedef struct report {
    const run *R;
    const trainer *T;
    const results *S;
} report;

static void summary(dl_json *j, const void *ctx)
{
    const report *rp = ctx;
    const options *o = &rp->R->o;
    const trainer *T = rp->T;
    const results *S = rp->S;
    dl_summary_run(j, "03-data-parallel", o->mode, rp->R->comm, &rp->R->dev, rp->R->data.name);
    dl_json_object(j, "config");
    dl_json_str(j, "hidden", o->t.hidden);
    dl_json_int(j, "batch_per_rank", (long long)T->b);
    dl_json_int(j, "global_batch", (long long)(T->b * (size_t)(rp->R->naive ? 1 : rp->R->P)));
    dl_json_num(j, "base_lr", o->a.lr);
    dl_json_int(j, "base_batch", o->t.base_batch);
    dl_json_num(j, "peak_lr", ddp_lr_at(&T->lr, o->t.warmup));
    dl_json_int(j, "warmup", o->t.warmup);
    dl_json_int(j, "epochs", o->a.epochs);
    dl_json_bool(j, "stratified", o->t.stratified);
    dl_json_bool(j, "scaler", !o->no_scaler);
    dl_json_int(j, "seed", (long long)o->a.seed);
    dl_json_end_object(j);
    dl_summary_training(j, &S->r);
    if (!isnan(S->naive_s)) {
        dl_json_object(j, "naive");
        dl_json_num(j, "epoch_seconds", S->naive_s);
        dl_json_num(j, "projected_speedup", S->naive.speedup);
        dl_json_end_object(j);
        double worst = 0;
        for (long q = 0; S->one_curve != NULL && q < S->K; q++)
            worst = fmax(worst, fabs(S->one_curve[q] - S->ddp_curve[q]) / fmax(fabs(S->one_curve[q]), 1e-12));
        dl_json_num(j, "one_rank_curve_max_rel_diff", worst);
    }
    dl_json_str(j, "plots", S->plots);
}

static dl_status write_outputs(run *R, const trainer *T, results *S)
{
    if (R->rank != 0)
        return DL_OK;
    DL_TRY(write_tables(R, T, S));
    draw(R, T, S);
    report rp = {R, T, S};
    DL_TRY(dl_summary_write(R->o.a.out, R->o.a.json, summary, &rp));
    dl_progress_line(&R->pr, 0, "lab03: wrote %s/{metrics,steps,lr,shards,projection%s}.csv, summary.json%s%s",
                     R->o.a.out, isnan(S->naive_s) ? "" : ",epoch_time", S->plots[0] ? ", " : "", S->plots);
    return DL_OK;
}

// ---- setting up ----

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    dl_args_defaults(&o->a);
    o->a.data = "fashion_mnist";
    o->a.epochs = 25;
    o->a.batch_size = 4096;
    o->a.lr = 0.024;
    o->a.out = "build/run/03-data-parallel";
    dl_train_opts_defaults(&o->t);
    o->mode = "ddp";
    o->compare_steps = 20;
    dl_opt opts[DL_TRAIN_OPTS + 4] = {
        {"mode", DL_OPT_CHOICE, &o->mode, "MODE", "ddp, or naive: every rank trains alone on all the data", "ddp|naive",
         1, 0},
        {"no-scaler", DL_OPT_FLAG, &o->no_scaler, NULL, "train on the raw pixels (no distributed scaler)", NULL, 1, 0},
        {"no-compare", DL_OPT_FLAG, &o->no_compare, NULL, "skip the naive epochs and the one-rank comparison", NULL, 1,
         0},
        {"compare-steps", DL_OPT_INT, &o->compare_steps, "N", "steps of the one-rank comparison", NULL, 1, 100000},
    };
    int n = 4 + dl_train_opts_table(&o->t, opts + 4);
    return dl_cli_parse(argc, argv, "lab03",
                        "Lab 03: data-parallel training of an MLP on Fashion-MNIST. Start it with "
                        "common/bin/dlrun -n P; --mode naive runs the classic first attempt.",
                        &o->a, opts, (size_t)n);
}

/* The model's sizes, the profile, the device (one GPU per rank), the data, the batch, --out. */
static dl_status setup(run *R)
{
    const options *o = &R->o;
    DL_TRY(dl_mlp_parse_hidden("--hidden", o->t.hidden, R->sizes, &R->n_sizes));
    DL_TRY(dl_profile_load(o->t.profile != NULL ? o->t.profile : dl_profile_default(), &R->prof));
    DL_TRY(dl_rank_device(R->comm, o->a.device, &R->dev));
    DL_TRY(dl_data_load(o->a.data, &R->data));
    if (!R->data.has_test)
        return dl_error_set(DL_ERR_ARG, "--data %s has no test split; lab 03 needs one (fashion_mnist)", o->a.data);
    if (o->a.batch_size == 0)
        return dl_error_set(DL_ERR_ARG, "--batch-size 0: lab 03 needs a per-rank batch size");
    // validation and test: two stratified halves of the official test split (dl/split.h)
    DL_TRY(dl_split_hold_out(&R->data.test, 0.5, o->a.seed, &R->val, &R->test));
    R->train = &R->data.train;
    R->eval = &R->val;
    R->sizes[0] = R->train->d;
    R->sizes[R->n_sizes - 1] = (size_t)R->train->n_classes;
    dl_epoch_ideal_workload(R->sizes, R->n_sizes, R->train->n, 1, (size_t)o->a.batch_size, &R->one);
    R->per_rank = calloc((size_t)R->P, sizeof *R->per_rank);
    if (R->per_rank == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    DL_TRY(dl_batch_create(&R->batch, &R->dev, (size_t)o->a.batch_size, R->train->d));
    if (R->rank == 0)
        DL_TRY(dl_summary_prepare(o->a.out));
    dl_progress_begin(&R->pr, o->a.epochs, 1, o->a.quiet);
    dl_progress_line(&R->pr, 0,
                     "lab03: %s mode, %d rank(s) (%s), %s, %zu train / %zu val / %zu test rows, MLP %s -> %zu, batch "
                     "%ld per rank, device %s",
                     o->mode, R->P, dl_comm_backend(R->comm), R->data.name, R->train->n, R->val.n, R->test.n,
                     o->t.hidden, R->sizes[R->n_sizes - 1], o->a.batch_size, dl_device_describe(&R->dev));
    return DL_OK;
}

/* --dump-init, --dump-params: rank 0's parameters as .npy, for the grader's comparisons. */
static dl_status dump(const run *R, const dl_mlp *m, const char *path)
{
    return path != NULL && R->rank == 0 ? dl_mlp_write_params(m, path) : DL_OK;
}

/* One epoch's row of metrics.csv, its line, and what the run remembers of it. */
static dl_status record_epoch(run *R, results *S, int e, const epoch_out *eo)
{
    double row[10] = {e + 1,    eo->loss,       eo->acc,          eo->sums.rows_min, eo->sums.rows_max,
                      eo->diff, eo->tm.epoch_s, eo->tm.compute_s, eo->tm.imbalance,  eo->lr};
    DL_TRY(dl_table_add(&S->metrics, row));
    dl_progress_line(&R->pr, 0,
                     "epoch %2d/%d  loss %.4f  val_acc %.4f  rows/rank %.0f%s  |dparam| %.3g  epoch %.3f s  "
                     "imbalance %.2f  lr %.4g",
                     e + 1, R->o.a.epochs, eo->loss, eo->acc, eo->sums.rows_max,
                     eo->sums.rows_min != eo->sums.rows_max ? " (uneven)" : "", eo->diff, eo->tm.epoch_s,
                     eo->tm.imbalance, eo->lr);
    warn_exploding(R, e, eo->loss, S->best);
    S->best = isnan(S->best) || eo->loss < S->best ? eo->loss : S->best;
    S->last = *eo;
    S->full = eo->complete ? *eo : S->full;
    S->r.epochs_run = e + 1;
    return DL_OK;
}

/* What summary.json says of the run, from its last epochs. */
static void sum_up(const run *R, const trainer *T, results *S)
{
    dl_train_report *r = &S->r;
    r->steps = T->m.steps;
    r->n_params = T->m.n_params;
    r->final_loss = S->last.loss;
    r->val_accuracy = S->last.acc;
    r->val_rows = R->val.n;
    r->test_rows = R->test.n;
    r->param_diff = S->last.diff;
    r->ranks = R->P;
    r->dataset_rows = R->train->n;
    r->epoch_seconds = S->last.tm.epoch_s;
    // the epochs after the first, which pays the warm-up: what the naive attempt is compared with
    r->steady_epoch_seconds = dl_steady_seconds(dl_table_column(&S->metrics, "epoch_s"), S->metrics.n, 10);
    r->imbalance = S->last.tm.imbalance;
    r->d = R->train->d;
    r->counters = S->last.sums.w;
    r->prof = &R->prof;
}

/* The last whole epoch projected on the target, against the same job on one GPU; or why not. */
static dl_status project(run *R, results *S)
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

static void teardown(run *R, trainer *T, results *S)
{
    dl_progress_end(&R->pr);
    trainer_free(T);
    dl_table_free(&S->metrics);
    free(S->one_curve), free((void *)S->r.rows_per_rank), free((void *)S->r.mean), free((void *)S->r.std);
    free(R->per_rank);
    dl_batch_free(&R->batch);
    dl_dataset_free(&R->val), dl_dataset_free(&R->test);
    dl_data_free(&R->data);
    dl_device_close(&R->dev);
    dl_comm_finalize(R->comm);
}

int main(int argc, char **argv)
{
    run R;
    memset(&R, 0, sizeof R);
    dl_status st = dl_comm_init(&argc, &argv, &R.comm);
    if (st != DL_OK)
        return dl_rank_exit(NULL, st, "lab03");
    int rc = parse(argc, argv, &R.o);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(R.comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    const options *o = &R.o;
    R.rank = dl_comm_rank(R.comm);
    R.P = dl_comm_size(R.comm);
    R.naive = strcmp(o->mode, "naive") == 0;
    R.o.a.quiet |= R.rank != 0; // one voice
    st = setup(&R);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");
    results S;
    memset(&S, 0, sizeof S);
    S.best = NAN;
    dl_table_init(&S.metrics, mcols, 10);
    dl_train_report *r = &S.r;

    // ---- task 2: the distributed scaler ----
    float *mean = NULL, *scale = NULL;
    if (!o->no_scaler) {
        r->mean = mean = malloc(R.train->d * sizeof *mean);
        r->std = scale = malloc(R.train->d * sizeof *scale);
        st = mean && scale ? standardise(&R, mean, scale, &r->scaler_diff) : DL_ERR_NOMEM;
    }
    // ---- task 3: one model on every rank ----
    trainer T;
    if (st == DL_OK)
        st = trainer_init(&R, &T, R.naive);
    if (st == DL_OK && !R.naive)
        st = ddp_broadcast_params(R.comm, &T.m);
    if (st == DL_OK)
        st = dl_replica_mlp_diff(R.comm, &T.m, &r->init_diff);
    if (st == DL_OK)
        st = dump(&R, &T.m, o->t.dump_init);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");

    // ---- training: tasks 1 and 4 to 6 every epoch ----
    R.pr.steps_per_epoch = T.steps_per_epoch;
    R.bar = &R.pr;
    double t0 = dl_now();
    for (int e = 0; e < o->a.epochs && !dl_train_stop(&o->t, T.m.steps); e++) {
        epoch_out eo;
        st = train_epoch(&R, &T, e, &eo);
        if (st == DL_OK)
            st = record_epoch(&R, &S, e, &eo);
        if (st != DL_OK)
            return dl_rank_exit(R.comm, st, "lab03");
    }
    r->train_seconds = dl_now() - t0;
    sum_up(&R, &T, &S);

    // ---- the test half, scored once ----
    if (R.naive) // rank 0's model, as in every epoch
        st = dl_eval_accuracy_on(R.comm, 0, &T.m, &R.batch, &R.test, &r->test_accuracy);
    else
        st = dl_eval_accuracy(R.comm, &T.m, &R.batch, &R.test, &r->test_accuracy);
    if (st == DL_OK)
        st = dump(&R, &T.m, o->t.dump_params);
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
                     o->mode, r->epochs_run, r->train_seconds, r->test_accuracy, R.test.n, r->param_diff);

    // ---- the projection, the naive attempt and one rank at the global batch, the files ----
    st = project(&R, &S);
    if (st == DL_OK)
        st = compare(&R, &T, &S);
    double *rows = calloc((size_t)R.P, sizeof *rows); // rows per rank, for the accounting
    if (st == DL_OK)
        st = rows ? dl_comm_allgather(R.comm, &S.last.sums.w.samples, rows, 1, DL_F64) : DL_ERR_NOMEM;
    r->rows_per_rank = rows;
    if (st == DL_OK)
        st = write_outputs(&R, &T, &S);
    if (st != DL_OK)
        return dl_rank_exit(R.comm, st, "lab03");
    teardown(&R, &T, &S);
    return 0;
}
