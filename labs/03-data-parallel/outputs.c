/* outputs.c — lab 03's hooks of the engine (dl/engine.h): the flags, set-up
 * and tear-down, what each epoch reports, and the files rank 0 writes (see
 * outputs.h). Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN, isnan, fabs, fmax
#include <stdio.h> // snprintf, fprintf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcmp, memcpy

#include "dl/bandwidth.h" // dl_bw_factor, dl_bw_ring_steps
#include "dl/json.h" // summary.json
#include "dl/plot.h" // dl_plots
#include "dl/split.h" // dl_split_hold_out
#include "kit.h" // ddp_projection_sweep
#include "outputs.h"

const char *const lab03_mode_names[LAB03_MODES] = {"ddp", "naive"};

// ---- setting up ----

void lab03_defaults(dl_engine *E)
{
    lab03_run *R = E->ctx;
    R->E = E;
    E->a.data = "fashion_mnist";
    E->a.epochs = 25;
    E->a.batch_size = 4096;
    E->a.lr = 0.024;
    R->mode = LAB03_DDP;
    R->compare_steps = 20;
    R->S.best = NAN;
}

int lab03_options(dl_engine *E, dl_opt *out)
{
    lab03_run *R = E->ctx;
    const dl_opt opts[] = {
        {"mode", DL_OPT_ENUM, &R->mode, "MODE", "ddp, or naive: every rank trains alone on all the data", "ddp|naive",
         1, 0},
        {"no-scaler", DL_OPT_FLAG, &R->no_scaler, NULL, "train on the raw pixels (no distributed scaler)", NULL, 1, 0},
        {"no-compare", DL_OPT_FLAG, &R->no_compare, NULL, "skip the naive epochs and the one-rank comparison", NULL, 1,
         0},
        {"compare-steps", DL_OPT_INT, &R->compare_steps, "N", "steps of the one-rank comparison", NULL, 1, 100000},
    };
    memcpy(out, opts, sizeof opts);
    return (int)(sizeof opts / sizeof opts[0]);
}

dl_status lab03_setup(dl_engine *E)
{
    lab03_run *R = E->ctx;
    R->naive = R->mode == LAB03_NAIVE;
    if (!E->data.has_test)
        return dl_error_set(DL_ERR_ARG, "--data %s has no test split; lab 03 needs one (fashion_mnist)", E->a.data);
    if (E->a.batch_size == 0)
        return dl_error_set(DL_ERR_ARG, "--batch-size 0: lab 03 needs a per-rank batch size");
    // validation and test: two stratified halves of the official test split (dl/split.h)
    DL_TRY(dl_split_hold_out(&E->data.test, 0.5, E->a.seed, &R->val, &R->test));
    R->train = &E->data.train;
    R->eval = &R->val;
    dl_epoch_ideal_workload(E->sizes, E->n_sizes, R->train->n, 1, (size_t)E->a.batch_size, &R->one);
    R->per_rank = calloc((size_t)E->P, sizeof *R->per_rank);
    if (R->per_rank == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    return dl_batch_create(&R->batch, &E->dev, (size_t)E->a.batch_size, R->train->d);
}

// ---- every epoch ----

// what the grader would say, said while the run goes on (rank 0, once each)
void lab03_warn_same_order(lab03_run *R, const size_t *idx, const size_t *prev, size_t per, int epoch)
{
    if (epoch == 0 || R->E->rank != 0 || R->warned_order || memcmp(idx, prev, per * sizeof *idx) != 0)
        return;
    R->warned_order = fprintf(stderr,
                              "lab03: warning: epochs %d and %d give rank 0 the same rows in the same order: is the "
                              "epoch passed to the sampler (ddp_sampler_set_epoch, task 1)?\n",
                              epoch, epoch + 1);
}

/* Rank 0, once: the loss of epoch (0-based) blew up against best. */
static void warn_exploding(lab03_run *R, int epoch, double loss, double best)
{
    if (R->E->rank != 0 || R->warned_loss || !dl_loss_exploded(loss, best, (int)R->E->sizes[R->E->n_sizes - 1]))
        return;
    R->warned_loss =
        fprintf(stderr, "lab03: warning: the loss is %g in epoch %d (the best so far: %g): %s\n", loss, epoch + 1, best,
                R->E->P > 1 && !R->naive ? "summed gradients instead of averaged (task 4)? Summed over P "
                                           "ranks, every step is P times too long"
                                         : "is the learning rate too large?");
}

dl_status lab03_row(dl_engine *E, int e)
{
    lab03_run *R = E->ctx;
    lab03_results *S = &R->S;
    const lab03_epoch *eo = &R->eo;
    E->stop = dl_train_stop(&E->t, R->T.m.steps);
    double row[LAB03_METRICS_NCOLS] = {[LAB03_EPOCH] = e + 1,
                                       [LAB03_LOSS] = eo->loss,
                                       [LAB03_VAL_ACC] = eo->acc,
                                       [LAB03_ROWS_MIN] = eo->sums.rows_min,
                                       [LAB03_ROWS_MAX] = eo->sums.rows_max,
                                       [LAB03_PARAM_DIFF] = eo->diff,
                                       [LAB03_EPOCH_S] = eo->tm.epoch_s,
                                       [LAB03_COMPUTE_S] = eo->tm.compute_s,
                                       [LAB03_IMBALANCE] = eo->tm.imbalance,
                                       [LAB03_LR] = eo->lr};
    DL_TRY(dl_table_add(&E->metrics, row));
    dl_progress_line(&E->pr, 0,
                     "epoch %2d/%d  loss %.4f  val_acc %.4f  rows/rank %.0f%s  |dparam| %.3g  epoch %.3f s  "
                     "imbalance %.2f  lr %.4g",
                     e + 1, E->a.epochs, eo->loss, eo->acc, eo->sums.rows_max,
                     eo->sums.rows_min != eo->sums.rows_max ? " (uneven)" : "", eo->diff, eo->tm.epoch_s,
                     eo->tm.imbalance, eo->lr);
    warn_exploding(R, e, eo->loss, S->best);
    S->best = isnan(S->best) || eo->loss < S->best ? eo->loss : S->best;
    S->last = *eo;
    S->full = eo->complete ? *eo : S->full;
    S->r.epochs_run = e + 1;
    return DL_OK;
}

void lab03_sum_up(lab03_run *R)
{
    lab03_results *S = &R->S;
    const dl_mlp *m = &R->T.m;
    dl_train_report *r = &S->r;
    r->train_seconds = R->E->train_seconds;
    S->lr = R->T.lr;
    r->steps = m->steps;
    r->n_params = m->n_params;
    r->final_loss = S->last.loss;
    r->val_accuracy = S->last.acc;
    r->val_rows = R->val.n;
    r->test_rows = R->test.n;
    r->param_diff = S->last.diff;
    r->ranks = R->E->P;
    r->dataset_rows = R->train->n;
    r->epoch_seconds = S->last.tm.epoch_s;
    // the epochs after the first, which pays the warm-up: what the naive attempt is compared with
    r->steady_epoch_seconds =
        dl_steady_seconds(dl_table_column(&R->E->metrics, lab03_metrics_names[LAB03_EPOCH_S]), R->E->metrics.n, 10);
    r->imbalance = S->last.tm.imbalance;
    r->d = R->train->d;
    r->counters = S->last.sums.w;
    r->prof = &R->E->prof;
}

// ---- outputs (rank 0) ----

/* Epoch 1's rows of each class on each rank, random shards (k < P) or
 * stratified (P <= k < 2P): rows[class * stride + k] += 1. */
static dl_status shard_counts(const lab03_run *R, int k, double *rows, size_t stride)
{
    int C = (int)R->E->sizes[R->E->n_sizes - 1], P = R->E->P;
    ddp_sampler s = {R->train->n, k % P, P, R->E->a.seed, 0, 1, 0, k < P ? NULL : R->train->y, C};
    size_t per = ddp_sampler_num_samples(&s), *idx = malloc((per ? per : 1) * sizeof *idx);
    dl_status st = idx ? ddp_sampler_indices(&s, idx) : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == DL_OK && i < per; i++)
        rows[(size_t)R->train->y[idx[i]] * stride + (size_t)k] += 1;
    free(idx);
    return st;
}

/* shards.csv: how many rows of each class every rank gets in epoch 1, random and stratified shards. */
static dl_status write_shards(const lab03_run *R)
{
    int C = (int)R->E->sizes[R->E->n_sizes - 1], P = R->E->P;
    double *rows = calloc((size_t)C * 2 * P, sizeof *rows);
    char(*names)[32] = malloc((size_t)(C + 2 * P) * sizeof *names);
    const char **labels = malloc((size_t)(C + 1 + 2 * P) * sizeof *labels), **cols = labels + C;
    dl_status st = rows && names && labels ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (int k = 0; st == DL_OK && k < 2 * P; k++) { // ranks 0..P-1 random, then stratified
        st = shard_counts(R, k, rows, 2 * (size_t)P);
        snprintf(names[C + k], 32, "%s_rank%d", k < P ? "random" : "stratified", k % P);
        cols[1 + k] = names[C + k];
    }
    for (int c = 0; st == DL_OK && c < C; c++) // "Pullover", or "class 2" for a set without names
        labels[c] = dl_dataset_class_name(R->train, c, names[c], 32);
    cols[0] = "class";
    if (st == DL_OK)
        st = dl_csv_write_named(R->E->a.out, "shards.csv", (dl_cols){cols, 1 + 2 * P}, labels, rows, C);
    free(rows), free(names), free(labels);
    return st;
}

#define STEPS(X) X(ST_STEP, "step") X(ST_DDP, "ddp") X(ST_ONE_RANK, "one_rank")
DL_CSV_SCHEMA(steps_cols, STEPS);
#define LR(X) X(LR_STEP, "step") X(LR_LR, "lr") X(LR_UNSCALED, "unscaled")
DL_CSV_SCHEMA(lr_cols, LR);
#define EPOCH_TIME(X) X(ET_RUN, "run") X(ET_EPOCH_S, "epoch_s")
DL_CSV_SCHEMA(epoch_time, EPOCH_TIME);

/* steps.csv, lr.csv, shards.csv (P <= 8), projection.csv and,
 * after the comparison, epoch_time.csv; S->sweep gets projection.csv's rows. */
static dl_status write_tables(const lab03_run *R, lab03_results *S)
{
    const char *out = R->E->a.out;
    long total = S->lr.total_steps > 0 ? S->lr.total_steps : S->r.steps;
    double(*steps)[STEPS_NCOLS] = calloc((size_t)S->K + 1, sizeof *steps);
    double(*lr)[LR_NCOLS] = calloc((size_t)total + 1, sizeof *lr);
    double(*proj)[LAB03_PROJECTION_NCOLS] = calloc(9, sizeof *proj);
    dl_status st = steps && lr && proj ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (long k = 0; st == DL_OK && k < S->K; k++) {
        steps[k][ST_STEP] = (double)k;
        steps[k][ST_DDP] = S->ddp_curve[k];
        steps[k][ST_ONE_RANK] = S->one_curve != NULL ? S->one_curve[k] : NAN;
    }
    if (st == DL_OK && S->K > 0)
        st = dl_csv_write(out, "steps.csv", steps_cols, steps[0], (int)S->K);
    for (long k = 0; st == DL_OK && k < total; k++) {
        lr[k][LR_STEP] = (double)k;
        lr[k][LR_LR] = ddp_lr_at(&S->lr, k);
        lr[k][LR_UNSCALED] = R->E->a.lr;
    }
    if (st == DL_OK && total > 0)
        st = dl_csv_write(out, "lr.csv", lr_cols, lr[0], (int)total);
    if (st == DL_OK && R->E->P <= 8)
        st = write_shards(R);
    int k = S->sweep = proj ? ddp_projection_sweep(R->E->sizes, R->E->n_sizes, R->train->n, &R->E->prof, proj, 9) : -1;
    if (st == DL_OK)
        st = k < 0 ? DL_ERR_ARG : dl_csv_write(out, "projection.csv", lab03_projection, proj[0], k);
    // no comma inside a name: gnuplot's strcol() cuts a quoted field at its comma
    const char *runs[2] = {"naive: every rank all rows and no sync", "DDP: sharded rows + gradient allreduce"};
    double times[2][EPOCH_TIME_NCOLS - 1]; // without the run's name
    times[0][ET_EPOCH_S - 1] = S->naive_s;
    times[1][ET_EPOCH_S - 1] = S->r.steady_epoch_seconds;
    if (st == DL_OK && !isnan(S->naive_s))
        st = dl_csv_write_named(out, "epoch_time.csv", epoch_time, runs, times[0], 2);
    free(steps), free(lr), free(proj);
    const int wrote[4] = {S->K > 0, total > 0, R->E->P <= 8, !isnan(S->naive_s)};
    const char *const names[4] = {"steps.csv", "lr.csv", "shards.csv", "epoch_time.csv"};
    for (int f = 0; st == DL_OK && f < 4; f++)
        if (!wrote[f])
            dl_csv_drop(out, names[f]);
    return st;
}

/* The plots of what write_tables wrote, into p. A plot this run does not
 * draw is removed (an earlier run's). Cannot fail. */
void lab03_plots(dl_engine *E, dl_plots *pl)
{
    const lab03_run *R = E->ctx;
    const lab03_results *S = &R->S;
    const char *out = E->a.out;
    size_t b = (size_t)E->a.batch_size;
    dl_plots_draw(pl, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", out, lab03_mode_names[R->mode], R->E->P);
    if (R->E->P > 1 && R->E->P <= 8)
        dl_plots_draw(pl, "shards", "data='%s/shards.csv'; P=%d", out, R->E->P);
    else
        dl_plots_skip(pl, "shards");
    if (S->K > 0 && S->one_curve != NULL)
        dl_plots_draw(pl, "equivalence", "data='%s/steps.csv'; P=%d; B=%zu", out, R->E->P, b);
    else
        dl_plots_skip(pl, "equivalence");
    dl_plots_draw(pl, "lr", "data='%s/lr.csv'; P=%d", out, R->naive ? 1 : R->E->P);
    if (S->sweep > 0)
        dl_plots_draw(pl, "speedup_batch", "data='%s/projection.csv'; B=%zu; profile='%s'; gpus=%d", out, b,
                      R->E->prof.name, R->E->prof.gpus);
    else
        dl_plots_skip(pl, "speedup_batch");
    if (!isnan(S->naive_s))
        dl_plots_draw(pl, "epoch_time",
                      "data='%s/epoch_time.csv'; pnaive=%g; pddp=%g; P=%d; profile='%s'; one_ms=%.17g; "
                      "naive_ms=%.17g; ddp_ms=%.17g",
                      out, S->naive.speedup, S->r.why_not ? -1.0 : S->r.proj.speedup, R->E->P, R->E->prof.name,
                      1e3 * S->naive.single_s, 1e3 * S->naive.epoch_s, S->r.why_not ? -1.0 : 1e3 * S->r.proj.epoch_s);
    else
        dl_plots_skip(pl, "epoch_time");
}

// ---- the numbers slides/03-data-parallel.md quotes that summary.json held only in files or arrays ----

/* shards: the fewest and the most rows of one class on one rank among the
 * random shards of epoch 1 (shards.csv's random columns), with the class and
 * the rank (the first on ties), and each class's fair share on a rank. */
static void shard_ends(dl_json *j, const lab03_run *R)
{
    int C = (int)R->E->sizes[R->E->n_sizes - 1], P = R->E->P;
    double *rows = calloc((size_t)C * (size_t)P, sizeof *rows);
    int ok = rows != NULL;
    for (int k = 0; ok && k < P; k++)
        ok = shard_counts(R, k, rows, (size_t)P) == DL_OK;
    size_t lo = 0, hi = 0;
    for (size_t q = 1; ok && q < (size_t)C * (size_t)P; q++)
        lo = rows[q] < rows[lo] ? q : lo, hi = rows[q] > rows[hi] ? q : hi;
    if (ok && C > 0 && P > 0) {
        const size_t ends[2] = {lo, hi};
        const char *const keys[2] = {"random_fewest", "random_most"};
        char buf[32];
        dl_json_object(j, "shards");
        for (int e = 0; e < 2; e++) {
            dl_json_object(j, keys[e]);
            dl_json_int(j, "rows", (long long)rows[ends[e]]);
            dl_json_str(j, "class", dl_dataset_class_name(R->train, (int)(ends[e] / (size_t)P), buf, sizeof buf));
            dl_json_int(j, "rank", (long long)(ends[e] % (size_t)P));
            dl_json_end_object(j);
        }
        dl_json_num(j, "fair_share", (double)R->train->n / C / P);
        dl_json_end_object(j);
    }
    free(rows);
}

/* From metrics.csv: the epochs' imbalance, its lowest and highest; the
 * first epoch's loss, validation accuracy and learning rate, and the last's
 * learning rate. */
static void epoch_rows(dl_json *j, const dl_table *t)
{
    const double *col = dl_table_column(t, lab03_metrics_names[LAB03_IMBALANCE]);
    double lo = NAN, hi = NAN;
    for (int e = 0; col != NULL && e < t->n; e++) {
        double v = col[(size_t)e * t->cols.n];
        lo = v == v && !(v >= lo) ? v : lo;
        hi = v == v && !(v <= hi) ? v : hi;
    }
    if (lo == lo) {
        dl_json_num(j, "imbalance_min", lo);
        dl_json_num(j, "imbalance_max", hi);
    }
    if (t->n == 0)
        return;
    const double *first = t->rows, *last = t->rows + (size_t)(t->n - 1) * t->cols.n;
    dl_json_object(j, "first_epoch");
    dl_json_num(j, "loss", first[LAB03_LOSS]);
    dl_json_num(j, "val_accuracy", first[LAB03_VAL_ACC]);
    dl_json_num(j, "lr", first[LAB03_LR]);
    dl_json_end_object(j);
    dl_json_num(j, "last_epoch_lr", last[LAB03_LR]);
}

/* The profile's figures, and the projection of the last epoch worked out term
 * by term as dl_project does it (dl/project.h), so that a slide can do the
 * sum by hand: projection_by_hand, in ms unless named otherwise. */
static void projection_by_hand(dl_json *j, const lab03_run *R, const lab03_results *S)
{
    const dl_profile *p = &R->E->prof;
    const dl_workload *w = &S->r.counters, *one = &R->one;
    int P = R->E->P;
    dl_json_object(j, "profile_figures");
    dl_json_num(j, "fp32_tflops", p->fp32_peak * 1e-12);
    dl_json_num(j, "fp32_efficiency", p->fp32_efficiency);
    dl_json_num(j, "fp32_tflops_achievable", p->fp32_peak * p->fp32_efficiency * 1e-12);
    dl_json_num(j, "mem_gbs", p->mem_bw * 1e-9);
    dl_json_num(j, "mem_efficiency", p->mem_efficiency);
    dl_json_num(j, "bus_gbs", p->bus_bw * 1e-9);
    dl_json_num(j, "hop_latency_us", p->hop_latency * 1e6);
    dl_json_num(j, "launch_us", p->launch_overhead * 1e6);
    dl_json_end_object(j);
    if (S->r.why_not != NULL)
        return;
    double flop_rate = p->fp32_peak * p->fp32_efficiency, mem_rate = p->mem_bw * p->mem_efficiency;
    double flops_ms = w->flops / flop_rate * 1e3, mem_ms = w->mem_bytes / mem_rate * 1e3;
    double launch_ms = w->launches * p->launch_overhead * 1e3;
    int hops = dl_bw_ring_steps(DL_BW_ALLREDUCE, P);
    double latency_ms = P > 1 ? w->allreduce_calls * hops * p->hop_latency * 1e3 : 0;
    double factor = dl_bw_factor(DL_BW_ALLREDUCE, P);
    double bandwidth_ms = P > 1 ? factor * w->allreduce_bytes / p->bus_bw * 1e3 : 0;
    double compute_ms = S->r.proj.compute_s * 1e3, comm_ms = S->r.proj.comm_s * 1e3;
    double one_flops_ms = one->flops / flop_rate * 1e3, one_mem_ms = one->mem_bytes / mem_rate * 1e3;
    dl_json_object(j, "projection_by_hand");
    dl_json_num(j, "gflops", w->flops * 1e-9);
    dl_json_num(j, "flops_ms", flops_ms);
    dl_json_num(j, "mem_ms", mem_ms);
    dl_json_num(j, "launch_ms", launch_ms);
    dl_json_int(j, "hops_per_call", hops);
    dl_json_num(j, "latency_ms", latency_ms);
    dl_json_num(j, "busbw_factor", factor);
    dl_json_num(j, "allreduce_mb", w->allreduce_bytes * 1e-6);
    dl_json_num(j, "bandwidth_ms", bandwidth_ms);
    dl_json_num(j, "comm_share", S->r.proj.epoch_s > 0 ? S->r.proj.comm_s / S->r.proj.epoch_s : 0);
    dl_json_num(j, "step_comm_ms", w->steps > 0 ? comm_ms / w->steps : 0);
    dl_json_num(j, "step_compute_ms", w->steps > 0 ? compute_ms / w->steps : 0);
    dl_json_num(j, "ideal_speedup", compute_ms > 0 ? P / (1 + comm_ms / compute_ms) : 0);
    dl_json_object(j, "one_gpu");
    dl_json_int(j, "rows", (long long)one->samples);
    dl_json_int(j, "steps", (long long)one->steps);
    dl_json_int(j, "launches", (long long)one->launches);
    dl_json_num(j, "arith_ms", one_flops_ms > one_mem_ms ? one_flops_ms : one_mem_ms);
    dl_json_num(j, "launch_ms", one->launches * p->launch_overhead * 1e3);
    dl_json_end_object(j);
    dl_json_end_object(j);
}

/* projection_sweep.B: projection.csv's row of B rows per rank. */
static void projection_sweep(dl_json *j, const lab03_run *R)
{
    double rows[9][LAB03_PROJECTION_NCOLS];
    int n = ddp_projection_sweep(R->E->sizes, R->E->n_sizes, R->train->n, &R->E->prof, rows, 9);
    if (n <= 0)
        return;
    dl_json_object(j, "projection_sweep");
    for (int k = 0; k < n; k++) {
        char key[32];
        snprintf(key, sizeof key, "%.0f", rows[k][LAB03_PR_BATCH]);
        dl_json_object(j, key);
        dl_json_num(j, "speedup", rows[k][LAB03_PR_SPEEDUP]);
        dl_json_num(j, "compute_ms", rows[k][LAB03_PR_COMPUTE_MS]);
        dl_json_num(j, "comm_ms", rows[k][LAB03_PR_COMM_MS]);
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
}

/* The first step of the one-rank comparison (steps.csv's first row). */
static void comparison_start(dl_json *j, const lab03_results *S)
{
    if (S->K <= 0 || S->one_curve == NULL)
        return;
    dl_json_object(j, "one_rank_curve");
    dl_json_int(j, "steps", S->K);
    dl_json_num(j, "first_loss", S->ddp_curve[0]);
    dl_json_end_object(j);
}

/* The body of summary.json (dl_summary_fn). */
void lab03_summary(dl_json *j, const void *engine)
{
    const dl_engine *E = engine;
    const lab03_run *R = E->ctx;
    const lab03_results *S = &R->S;
    size_t b = (size_t)E->a.batch_size;
    dl_summary_run(j, "03-data-parallel", lab03_mode_names[R->mode], E->comm, &E->dev, E->data.name);
    dl_json_object(j, "config");
    dl_json_str(j, "hidden", E->t.hidden);
    dl_json_int(j, "batch_per_rank", (long long)b);
    dl_json_int(j, "global_batch", (long long)(b * (size_t)(R->naive ? 1 : R->E->P)));
    dl_json_num(j, "base_lr", E->a.lr);
    dl_json_int(j, "base_batch", E->t.base_batch);
    dl_json_num(j, "peak_lr", ddp_lr_at(&S->lr, E->t.warmup));
    dl_json_int(j, "warmup", E->t.warmup);
    dl_json_int(j, "epochs", E->a.epochs);
    dl_json_bool(j, "stratified", E->t.stratified);
    dl_json_bool(j, "scaler", !R->no_scaler);
    dl_json_int(j, "seed", (long long)E->a.seed);
    dl_json_end_object(j);
    dl_summary_training(j, &S->r);
    dl_summary_device_io(j, &R->E->io);
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
    epoch_rows(j, &E->metrics);
    comparison_start(j, S);
    if (R->E->P > 1 && R->E->P <= 8)
        shard_ends(j, R);
    projection_by_hand(j, R, S);
    projection_sweep(j, R);
}

dl_status lab03_files(dl_engine *E)
{
    lab03_run *R = E->ctx;
    lab03_results *S = &R->S;
    double *rows = calloc((size_t)R->E->P, sizeof *rows); // rows per rank, for the accounting
    S->r.rows_per_rank = rows;
    DL_TRY(rows ? dl_comm_allgather(R->E->comm, &S->last.sums.w.samples, rows, 1, DL_F64) : DL_ERR_NOMEM);
    if (R->E->rank != 0)
        return DL_OK;
    return write_tables(R, S);
}

void lab03_closing(dl_engine *E)
{
    const lab03_run *R = E->ctx;
    dl_progress_line(&E->pr, 0, "lab03: wrote %s/{metrics,steps,lr,shards,projection%s}.csv, summary.json%s%s",
                     E->a.out, isnan(R->S.naive_s) ? "" : ",epoch_time", E->plots[0] ? ", " : "", E->plots);
}

void lab03_teardown(dl_engine *E)
{
    lab03_run *R = E->ctx;
    lab03_results *S = &R->S;
    lab03_trainer_free(&R->T);
    free(S->one_curve), free((void *)S->r.rows_per_rank), free((void *)S->r.mean), free((void *)S->r.std);
    free(R->per_rank);
    dl_batch_free(&R->batch);
    dl_devset_free(&R->dtrain), dl_devset_free(&R->dval), dl_devset_free(&R->dtest);
    dl_dataset_free(&R->val), dl_dataset_free(&R->test);
}
