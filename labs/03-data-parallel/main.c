/* main.c — lab 03's driver: data-parallel training of the kit's MLP, and the
 * classic first attempt beside it.
 *
 *   common/bin/dlrun -n 4 build/labs/lab03                 your DDP on Fashion-MNIST
 *   common/bin/dlrun -n 4 build/labs/lab03 --mode naive    four serial copies (no sharding, no sync)
 *   build/labs/lab03 --help                                 every flag
 *
 * Each epoch rank 0 prints the loss, the test accuracy, the rows each rank
 * processed, the largest parameter difference across ranks (0 when the ranks
 * are in sync) and the epoch time. At the end it projects the epoch onto the
 * target machine (--profile, default 4 x A10 on PCIe) from what the run
 * counted, and with --compare (the default with several ranks) it also times
 * one naive epoch and trains rank 0 alone at the global batch for the first
 * steps, to show that P ranks at batch B equal one rank at batch P·B.
 * Outputs (rank 0) in --out: metrics.csv, steps.csv, shards.csv, lr.csv,
 * projection.csv, summary.json and the plots. Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, NAN
#include <stdio.h> // printf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, strcmp

#include "ddp.h"
#include "dl/blas.h" // dl_flops
#include "dl/cli.h" // dl_cli_parse
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_data_load
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // summary.json
#include "dl/metrics.h" // CSV
#include "dl/mlp.h" // dl_mlp
#include "dl/plot.h" // dl_plot
#include "dl/progress.h" // dl_progress_line
#include "dl/project.h" // dl_project
#include "dl/rank.h" // dl_rank_device
#include "dl/timer.h" // dl_now
#include "kit.h"

#define MAX_SIZES 6

typedef struct options {
    dl_args a;
    const char *mode, *hidden, *profile, *dump_params, *dump_init;
    double momentum, weight_decay;
    long base_batch, warmup, max_steps;
    int cosine, stratified, drop_last, no_scaler, compare, no_compare, compare_steps;
} options;

typedef struct run {
    dl_comm *comm;
    const dl_device *dev;
    const options *o;
    int rank, P, naive;
    size_t sizes[MAX_SIZES];
    int n_sizes;
    size_t n, d, nt;
    float *X, *Xt; /* standardised train and test rows (host) */
    int32_t *y, *yt;
    float *dXb; /* device batch (CUDA) */
    int32_t *dyb;
    float *hXb; /* host batch */
    int32_t *hyb;
    dl_progress *pr; /* the bar on rank 0's terminal (NULL: none) */
} run;

static int fail(dl_comm *c, dl_status st)
{
    const char *msg = dl_last_error()[0] ? dl_last_error() : dl_status_str(st);
    if (c != NULL && dl_comm_size(c) > 1)
        dl_comm_abort(c, dl_exit_code(st), "lab03: %s", msg);
    fprintf(stderr, "lab03: error: %s\n", msg);
    dl_comm_finalize(c);
    return dl_exit_code(st);
}

static int parse_hidden(const char *s, size_t *out, int max)
{
    int k = 0;
    while (*s && k < max) {
        char *end = NULL;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 65536 || (*end != ',' && *end != '\0'))
            return -1;
        out[k++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : k;
}

/* Gathers rows idx[0..b) into the batch buffers (and onto the device). */
static dl_status load_batch(run *R, const size_t *idx, size_t b, const float **X, const int32_t **y)
{
    for (size_t k = 0; k < b; k++) {
        memcpy(R->hXb + k * R->d, R->X + idx[k] * R->d, R->d * sizeof(float));
        R->hyb[k] = R->y[idx[k]];
    }
    if (R->dev->kind == DL_DEVICE_CUDA) {
        DL_TRY(dl_memcpy_h2d(R->dev, R->dXb, R->hXb, b * R->d * sizeof(float)));
        DL_TRY(dl_memcpy_h2d(R->dev, R->dyb, R->hyb, b * sizeof(int32_t)));
        *X = R->dXb;
        *y = R->dyb;
    } else {
        *X = R->hXb;
        *y = R->hyb;
    }
    return DL_OK;
}

static dl_status accuracy(run *R, dl_mlp *m, double *acc)
{
    int32_t *pred = malloc(R->nt * sizeof *pred);
    float *dX = NULL;
    if (pred == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    const float *X = R->Xt;
    dl_status st = DL_OK;
    if (R->dev->kind == DL_DEVICE_CUDA) {
        st = dl_malloc(R->dev, (void **)&dX, R->nt * R->d * sizeof(float));
        if (st == DL_OK)
            st = dl_memcpy_h2d(R->dev, dX, R->Xt, R->nt * R->d * sizeof(float));
        X = dX;
    }
    if (st == DL_OK)
        st = dl_mlp_predict(m, X, R->nt, pred);
    size_t right = 0;
    for (size_t i = 0; st == DL_OK && i < R->nt; i++)
        right += pred[i] == R->yt[i];
    if (st == DL_OK)
        *acc = (double)right / (double)R->nt;
    dl_free(R->dev, dX);
    free(pred);
    return st;
}

/* Largest |p − p_rank0| over all parameters and ranks: 0 when in sync. */
static dl_status param_diff(run *R, dl_mlp *m, float *host0, float *host, double *diff)
{
    DL_TRY(dl_mlp_get_params(m, host));
    memcpy(host0, host, m->n_params * sizeof *host);
    if (R->P == 1) {
        *diff = 0;
        return DL_OK;
    }
    dl_comm_stats keep;
    dl_comm_stats_get(R->comm, &keep);
    // the CPU copies go over MPI even when the model is on a GPU
    dl_status st = DL_OK;
    if (R->dev->kind == DL_DEVICE_CPU) {
        st = dl_comm_broadcast(R->comm, host0, m->n_params, DL_F32, 0);
    } else {
        float *d0 = NULL;
        st = dl_malloc(R->dev, (void **)&d0, m->n_params * sizeof *d0);
        if (st == DL_OK)
            st = dl_memcpy_d2d(R->dev, d0, m->params, m->n_params * sizeof *d0);
        if (st == DL_OK)
            st = dl_comm_broadcast(R->comm, d0, m->n_params, DL_F32, 0);
        if (st == DL_OK)
            st = dl_memcpy_d2h(R->dev, host0, d0, m->n_params * sizeof *d0);
        dl_free(R->dev, d0);
    }
    double mx = 0;
    for (size_t k = 0; st == DL_OK && k < m->n_params; k++) {
        double dd = fabs((double)host[k] - host0[k]);
        mx = dd > mx ? dd : mx;
    }
    if (st == DL_OK)
        st = dl_comm_allreduce(R->comm, &mx, 1, DL_F64, DL_RED_MAX);
    *diff = mx;
    (void)keep;
    return st;
}

typedef struct epoch_out {
    double loss, acc, diff, epoch_s, compute_s, imbalance, lr_end;
    double samples_min, samples_max;
    dl_workload w; /* this epoch, the slowest rank's counters */
} epoch_out;

typedef struct train_state {
    dl_mlp m;
    ddp_sampler s;
    ddp_lr_config lr;
    size_t per, b, steps_per_epoch;
    long step;
    size_t *idx;
    double *step_loss; /* local loss per step (first steps, for the equivalence curve) */
    long step_loss_cap;
    float *h0, *h1;
} train_state;

static dl_status train_epoch(run *R, train_state *T, int epoch, epoch_out *e)
{
    const options *o = R->o;
    ddp_sampler_set_epoch(&T->s, epoch);
    DL_TRY(ddp_sampler_indices(&T->s, T->idx));
    dl_comm_stats_reset(R->comm);
    dl_flops_reset();
    double t0 = 0, compute = 0, loss_sum = 0, steps = 0, samples = 0;
    DL_TRY(ddp_epoch_begin(R->comm, &t0));
    dl_comm_stats_reset(R->comm); // count the steps only
    for (size_t start = 0; start < T->per; start += T->b) {
        if (o->max_steps > 0 && T->step >= o->max_steps)
            break;
        size_t b = T->per - start < T->b ? T->per - start : T->b;
        const float *X;
        const int32_t *y;
        double tc = dl_now(), loss = 0;
        DL_TRY(load_batch(R, T->idx + start, b, &X, &y));
        DL_TRY(dl_mlp_forward(&T->m, X, b));
        DL_TRY(dl_mlp_loss(&T->m, y, b, &loss));
        DL_TRY(dl_mlp_backward(&T->m, X, b, 0, NULL, NULL));
        DL_TRY(dl_device_sync(R->dev));
        compute += dl_now() - tc;
        if (!R->naive)
            DL_TRY(ddp_sync_grads(R->comm, &T->m));
        double lr = ddp_lr_at(&T->lr, T->step);
        if (T->step == 0 && !(lr > 0))
            return dl_error_set(DL_ERR_TODO,
                                "ddp_lr_at gave learning rate %g at step 0 (not implemented yet: lab03 "
                                "task 5?)",
                                lr);
        tc = dl_now();
        DL_TRY(dl_mlp_sgd(&T->m, (float)lr, (float)o->momentum, (float)o->weight_decay));
        DL_TRY(dl_device_sync(R->dev));
        compute += dl_now() - tc;
        if (T->step < T->step_loss_cap)
            T->step_loss[T->step] = loss;
        T->step++;
        e->lr_end = lr;
        if (R->pr != NULL)
            dl_progress_step(R->pr, epoch, (size_t)steps, b * (size_t)(R->naive ? 1 : R->P), loss);
        loss_sum += loss * (double)b;
        samples += (double)b;
        steps++;
    }
    // what the epoch's steps did, before the timing and bookkeeping add their own traffic
    dl_comm_stats cs;
    dl_comm_stats_get(R->comm, &cs);
    double flops = (double)dl_flops();
    ddp_timing tm;
    double *per_rank = malloc((size_t)R->P * sizeof *per_rank);
    if (per_rank == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    tm.per_rank_compute = per_rank;
    dl_status st = ddp_epoch_end(R->comm, t0, compute, &tm);
    free(per_rank);
    DL_TRY(st);
    dl_workload *w = &e->w;
    memset(w, 0, sizeof *w);
    w->flops = flops;
    w->steps = steps;
    w->mem_bytes = ddp_step_mem_bytes(R->sizes, R->n_sizes, T->b) * steps;
    w->launches = ddp_step_launches(R->n_sizes) * steps;
    w->allreduce_calls = (double)(cs.calls[DL_OP_ALLREDUCE] + cs.calls[DL_OP_ALLREDUCE_ASYNC]);
    w->allreduce_bytes = (double)(cs.bytes[DL_OP_ALLREDUCE] + cs.bytes[DL_OP_ALLREDUCE_ASYNC]);
    w->bcast_calls = (double)(cs.calls[DL_OP_BROADCAST] + cs.calls[DL_OP_ALLGATHER]);
    w->bcast_bytes = (double)(cs.bytes[DL_OP_BROADCAST] + cs.bytes[DL_OP_ALLGATHER]);
    w->samples = samples;
    w->dataset = (double)R->n;
    double mine[3] = {loss_sum, samples, steps}, tot[3];
    memcpy(tot, mine, sizeof mine);
    DL_TRY(dl_comm_allreduce(R->comm, tot, 3, DL_F64, DL_RED_SUM));
    double smin = samples, smax = samples, fmax_ = w->flops;
    DL_TRY(dl_comm_allreduce(R->comm, &smin, 1, DL_F64, DL_RED_MIN));
    DL_TRY(dl_comm_allreduce(R->comm, &smax, 1, DL_F64, DL_RED_MAX));
    DL_TRY(dl_comm_allreduce(R->comm, &fmax_, 1, DL_F64, DL_RED_MAX));
    if (w->flops < fmax_) { // the slowest rank sets the pace: project its work
        w->samples *= fmax_ / (w->flops > 0 ? w->flops : 1);
        w->flops = fmax_;
    }
    e->samples_min = smin;
    e->samples_max = smax;
    // naive: report one rank's loss, as the first attempt does; ddp: the global mean
    e->loss = R->naive ? (samples > 0 ? loss_sum / samples : NAN) : (tot[1] > 0 ? tot[0] / tot[1] : NAN);
    e->epoch_s = tm.epoch_s;
    e->compute_s = compute;
    e->imbalance = tm.imbalance;
    DL_TRY(param_diff(R, &T->m, T->h0, T->h1, &e->diff));
    e->acc = NAN;
    if (R->rank == 0)
        DL_TRY(accuracy(R, &T->m, &e->acc));
    return dl_comm_broadcast(R->comm, &e->acc, 1, DL_F64, 0);
}

static dl_status setup_train(run *R, train_state *T, int naive, uint64_t seed_offset)
{
    const options *o = R->o;
    memset(T, 0, sizeof *T);
    T->b = (size_t)o->a.batch_size;
    DL_TRY(dl_mlp_create(&T->m, R->dev, R->sizes, R->n_sizes, T->b, o->a.seed + seed_offset));
    int P = naive ? 1 : R->P;
    ddp_sampler s = {R->n,
                     naive ? 0 : R->rank,
                     P,
                     o->a.seed,
                     0,
                     1,
                     o->drop_last,
                     o->stratified ? R->y : NULL,
                     (int)R->sizes[R->n_sizes - 1]};
    T->s = s;
    T->per = ddp_sampler_num_samples(&T->s);
    if (T->per == 0)
        return dl_error_set(DL_ERR_TODO, "ddp_sampler_num_samples returned 0 rows per rank (not implemented yet: "
                                         "lab03 task 1?)");
    T->steps_per_epoch = (T->per + T->b - 1) / T->b;
    ddp_lr_config lr = {
        o->a.lr, (size_t)o->base_batch, T->b * (size_t)P, o->warmup, (long)T->steps_per_epoch * o->a.epochs, o->cosine};
    T->lr = lr;
    T->idx = malloc(T->per * sizeof *T->idx);
    T->step_loss_cap = o->compare_steps > 0 ? o->compare_steps : 1;
    T->step_loss = calloc((size_t)T->step_loss_cap, sizeof *T->step_loss);
    T->h0 = malloc(T->m.n_params * sizeof(float));
    T->h1 = malloc(T->m.n_params * sizeof(float));
    if (!T->idx || !T->step_loss || !T->h0 || !T->h1)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    return DL_OK;
}

static void free_train(train_state *T)
{
    dl_mlp_free(&T->m);
    free(T->idx), free(T->step_loss), free(T->h0), free(T->h1);
    memset(T, 0, sizeof *T);
}

/* Standardise train and test rows with statistics of all ranks' shards. */
static dl_status standardise(run *R, double *max_diff, float **mean_out, float **scale_out)
{
    size_t d = R->d, P = (size_t)(R->naive ? 1 : R->P), r = R->naive ? 0 : (size_t)R->rank;
    size_t n_local = R->n / P + (r < R->n % P);
    float *shard = malloc((n_local ? n_local : 1) * d * sizeof *shard);
    float *mean = malloc(d * sizeof *mean), *scale = malloc(d * sizeof *scale);
    if (shard == NULL || mean == NULL || scale == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n_local; k++) // this rank's static shard: rows r, r + P, ...
        memcpy(shard + k * d, R->X + (r + k * P) * d, d * sizeof *shard);
    dl_status st = ddp_scaler_fit(R->comm, shard, n_local, d, mean, scale);
    free(shard);
    if (st != DL_OK)
        return st;
    // every rank must hold the same statistics
    float *m0 = malloc(d * sizeof *m0);
    memcpy(m0, mean, d * sizeof *m0);
    st = dl_comm_broadcast(R->comm, m0, d, DL_F32, 0);
    double mx = 0;
    for (size_t j = 0; st == DL_OK && j < d; j++)
        mx = fmax(mx, fabs((double)m0[j] - mean[j]));
    if (st == DL_OK)
        st = dl_comm_allreduce(R->comm, &mx, 1, DL_F64, DL_RED_MAX);
    free(m0);
    *max_diff = mx;
    for (size_t i = 0; st == DL_OK && i < R->n * d; i++)
        R->X[i] = (R->X[i] - mean[i % d]) / scale[i % d];
    for (size_t i = 0; st == DL_OK && i < R->nt * d; i++)
        R->Xt[i] = (R->Xt[i] - mean[i % d]) / scale[i % d];
    *mean_out = mean;
    *scale_out = scale;
    return st;
}

// ---- outputs (rank 0) ----

/* Per-rank label counts of epoch 0's shards, random and stratified. */
static dl_status shard_histograms(run *R, double *rows /* C × (1 + 2P) */)
{
    int C = (int)R->sizes[R->n_sizes - 1], P = R->P;
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < P; r++) {
            ddp_sampler s = {R->n, r, P, R->o->a.seed, 0, 1, 0, k ? R->y : NULL, C};
            size_t per = ddp_sampler_num_samples(&s);
            size_t *idx = malloc((per ? per : 1) * sizeof *idx);
            if (idx == NULL)
                return dl_error_set(DL_ERR_NOMEM, "out of memory");
            dl_status st = ddp_sampler_indices(&s, idx);
            for (size_t i = 0; st == DL_OK && i < per; i++)
                rows[(size_t)R->y[idx[i]] * (1 + 2 * P) + 1 + k * P + r] += 1;
            free(idx);
            DL_TRY(st);
        }
    }
    for (int c = 0; c < C; c++)
        rows[(size_t)c * (1 + 2 * P)] = c;
    return DL_OK;
}

int main(int argc, char **argv)
{
    options o;
    dl_args_defaults(&o.a);
    o.a.data = "fashion_mnist";
    o.a.epochs = 25;
    o.a.batch_size = 4096;
    o.a.lr = 0.024;
    o.a.out = "build/run/03-data-parallel";
    o.mode = "ddp";
    o.hidden = "256";
    o.profile = NULL;
    o.dump_params = NULL;
    o.dump_init = NULL;
    o.momentum = 0.9;
    o.weight_decay = 5e-4;
    o.base_batch = 4096;
    o.warmup = 10;
    o.max_steps = 0;
    o.cosine = 0;
    o.stratified = 0;
    o.drop_last = 0;
    o.no_scaler = 0;
    o.no_compare = 0;
    o.compare_steps = 20;
    const dl_opt extra[] = {
        {"mode", DL_OPT_CHOICE, &o.mode, "MODE", "ddp, or naive: every rank trains alone on all the data", "ddp|naive",
         1, 0},
        {"hidden", DL_OPT_STRING, &o.hidden, "LIST", "hidden layer widths, comma-separated", NULL, 1, 0},
        {"base-batch", DL_OPT_LONG, &o.base_batch, "N", "the batch --lr was tuned for (LR scales by global/base)", NULL,
         1, 1e9},
        {"warmup", DL_OPT_LONG, &o.warmup, "N", "linear warmup steps", NULL, 0, 1e9},
        {"cosine", DL_OPT_FLAG, &o.cosine, NULL, "cosine decay after warmup", NULL, 1, 0},
        {"momentum", DL_OPT_DOUBLE, &o.momentum, "X", "SGD momentum", NULL, 0, 0.9999},
        {"weight-decay", DL_OPT_DOUBLE, &o.weight_decay, "X", "L2 weight decay (weights only)", NULL, 0, 1},
        {"stratified", DL_OPT_FLAG, &o.stratified, NULL, "stratified shards (equal class counts per rank)", NULL, 1, 0},
        {"drop-last", DL_OPT_FLAG, &o.drop_last, NULL, "drop the tail instead of padding the shards", NULL, 1, 0},
        {"no-scaler", DL_OPT_FLAG, &o.no_scaler, NULL, "train on the raw pixels (no distributed scaler)", NULL, 1, 0},
        {"max-steps", DL_OPT_LONG, &o.max_steps, "N", "stop after N optimizer steps (0 = all epochs)", NULL, 0, 1e12},
        {"no-compare", DL_OPT_FLAG, &o.no_compare, NULL, "skip the naive epoch and the one-rank comparison", NULL, 1,
         0},
        {"compare-steps", DL_OPT_INT, &o.compare_steps, "N", "steps of the one-rank comparison", NULL, 1, 100000},
        {"profile", DL_OPT_STRING, &o.profile, "FILE", "target machine of the projection", NULL, 1, 0},
        {"dump-params", DL_OPT_STRING, &o.dump_params, "FILE", "write the final parameters (rank 0) as .npy", NULL, 1,
         0},
        {"dump-init", DL_OPT_STRING, &o.dump_init, "FILE", "write the parameters after the broadcast (rank 0) as .npy",
         NULL, 1, 0},
    };
    dl_comm *comm = NULL;
    dl_status st = dl_comm_init(&argc, &argv, &comm);
    if (st != DL_OK)
        return fail(NULL, st);
    int rank = dl_comm_rank(comm), P = dl_comm_size(comm);
    int rc = dl_cli_parse(argc, argv, "lab03",
                          "Lab 03: data-parallel training of an MLP on Fashion-MNIST. Start it with "
                          "common/bin/dlrun -n P; --mode naive runs the classic first attempt.",
                          &o.a, extra, sizeof extra / sizeof extra[0]);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(comm);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    o.a.quiet |= rank != 0; // one voice
    run R;
    memset(&R, 0, sizeof R);
    R.comm = comm;
    R.o = &o;
    R.rank = rank;
    R.P = P;
    R.naive = strcmp(o.mode, "naive") == 0;
    size_t hidden[MAX_SIZES];
    int nh = parse_hidden(o.hidden, hidden, MAX_SIZES - 2);
    if (nh < 1) {
        dl_error_set(DL_ERR_ARG, "--hidden '%s': expected 1 to %d widths from 1 to 65536, comma-separated", o.hidden,
                     MAX_SIZES - 2);
        return fail(comm, DL_ERR_ARG);
    }
    dl_profile prof;
    st = dl_profile_load(o.profile != NULL ? o.profile : dl_profile_default(), &prof);
    if (st != DL_OK)
        return fail(comm, st);

    // ---- device: one GPU per rank, by local rank ----
    dl_device dev;
    st = dl_rank_device(comm, o.a.device, &dev);
    if (st != DL_OK)
        return fail(comm, st);
    R.dev = &dev;

    // ---- data, on every rank ----
    dl_data data;
    st = dl_data_load(o.a.data, &data);
    if (st != DL_OK)
        return fail(comm, st);
    dl_dataset *tr = &data.train;
    if (!data.has_test) {
        dl_error_set(DL_ERR_ARG, "--data %s has no test split; lab 03 needs one (fashion_mnist)", o.a.data);
        return fail(comm, DL_ERR_ARG);
    }
    R.n = tr->n;
    R.d = tr->d;
    R.nt = data.test.n;
    R.X = tr->X;
    R.y = tr->y;
    R.Xt = data.test.X;
    R.yt = data.test.y;
    R.sizes[0] = R.d;
    for (int k = 0; k < nh; k++)
        R.sizes[1 + k] = hidden[k];
    R.sizes[1 + nh] = (size_t)tr->n_classes;
    R.n_sizes = nh + 2;
    size_t B = (size_t)o.a.batch_size;
    if (B == 0) {
        dl_error_set(DL_ERR_ARG, "--batch-size 0: lab 03 needs a per-rank batch size");
        return fail(comm, DL_ERR_ARG);
    }
    R.hXb = malloc(B * R.d * sizeof(float));
    R.hyb = malloc(B * sizeof(int32_t));
    if (dev.kind == DL_DEVICE_CUDA) {
        st = dl_malloc(&dev, (void **)&R.dXb, B * R.d * sizeof(float));
        if (st == DL_OK)
            st = dl_malloc(&dev, (void **)&R.dyb, B * sizeof(int32_t));
        if (st != DL_OK)
            return fail(comm, st);
    }
    char summary[1200];
    snprintf(summary, sizeof summary, "%s/summary.json", o.a.out);
    if (rank == 0) {
        st = dl_mkdir_p(o.a.out);
        remove(summary);
    }
    if (st != DL_OK)
        return fail(comm, st);
    dl_progress pr;
    dl_progress_begin(&pr, o.a.epochs, 1, o.a.quiet);
    dl_progress_line(&pr, 0,
                     "lab03: %s mode, %d rank(s) (%s), %s, %zu train / %zu test rows, MLP %s -> %zu, batch %zu "
                     "per rank, device %s",
                     o.mode, P, dl_comm_backend(comm), data.name, R.n, R.nt, o.hidden, R.sizes[R.n_sizes - 1], B,
                     dl_device_describe(&dev));

    // ---- the distributed scaler ----
    double scaler_diff = 0;
    float *mean = NULL, *scale = NULL;
    if (!o.no_scaler) {
        st = standardise(&R, &scaler_diff, &mean, &scale);
        if (st != DL_OK)
            return fail(comm, st);
    }

    // ---- training ----
    // Every rank starts from its own random init (as separate processes do);
    // DDP's broadcast makes them one model.
    train_state T;
    double init_diff = NAN;
    st = setup_train(&R, &T, R.naive, (uint64_t)rank);
    if (st == DL_OK && !R.naive)
        st = ddp_broadcast_params(comm, &T.m);
    if (st == DL_OK)
        st = param_diff(&R, &T.m, T.h0, T.h1, &init_diff);
    if (st == DL_OK && o.dump_init != NULL && rank == 0) {
        st = dl_mlp_get_params(&T.m, T.h1);
        if (st == DL_OK)
            st = dl_npy_write_f32(o.dump_init, T.h1, T.m.n_params, 0);
    }
    if (st != DL_OK)
        return fail(comm, st);
    pr.steps_per_epoch = T.steps_per_epoch;
    R.pr = &pr;
    int E = o.a.epochs;
    double *mrows = calloc((size_t)E * 10, sizeof *mrows);
    epoch_out last;
    memset(&last, 0, sizeof last);
    int done = 0;
    double t_train = dl_now();
    for (int e = 0; e < E; e++) {
        epoch_out eo;
        st = train_epoch(&R, &T, e, &eo);
        if (st != DL_OK)
            return fail(comm, st);
        double row[10] = {e + 1,   eo.loss,    eo.acc,       eo.samples_min, eo.samples_max,
                          eo.diff, eo.epoch_s, eo.compute_s, eo.imbalance,   eo.lr_end};
        memcpy(mrows + (size_t)e * 10, row, sizeof row);
        dl_progress_line(&pr, 0,
                         "epoch %2d/%d  loss %.4f  test_acc %.4f  rows/rank %.0f%s  |dparam| %.3g  epoch %.3f s  "
                         "imbalance %.2f  lr %.4g",
                         e + 1, E, eo.loss, eo.acc, eo.samples_max, eo.samples_min != eo.samples_max ? " (uneven)" : "",
                         eo.diff, eo.epoch_s, eo.imbalance, eo.lr_end);
        if (eo.w.steps > 0)
            last = eo;
        done = e + 1;
        if (o.max_steps > 0 && T.step >= o.max_steps)
            break;
    }
    t_train = dl_now() - t_train;
    if (o.dump_params != NULL && rank == 0) {
        float *p = malloc(T.m.n_params * sizeof *p);
        st = p ? dl_mlp_get_params(&T.m, p) : dl_error_set(DL_ERR_NOMEM, "out of memory");
        if (st == DL_OK)
            st = dl_npy_write_f32(o.dump_params, p, T.m.n_params, 0);
        free(p);
    }
    double final_diff = last.diff, final_acc = last.acc;
    st = st == DL_OK ? dl_comm_broadcast(comm, &final_acc, 1, DL_F64, 0) : st;
    if (st != DL_OK)
        return fail(comm, st);
    // the per-step losses of the first steps, averaged over ranks (one call, after training)
    long K = T.step < T.step_loss_cap ? T.step : T.step_loss_cap;
    double *ddp_curve = calloc((size_t)(K > 0 ? K : 1), sizeof *ddp_curve);
    memcpy(ddp_curve, T.step_loss, (size_t)K * sizeof *ddp_curve);
    if (K > 0 && !R.naive)
        st = dl_comm_allreduce(comm, ddp_curve, (size_t)K, DL_F64, DL_RED_AVG);

    // ---- projection from this run's counters ----
    dl_projection proj;
    memset(&proj, 0, sizeof proj);
    // the same run on the target: as many GPUs as this run had ranks
    if (st == DL_OK && last.w.steps > 0)
        st = dl_project(&prof, &last.w, P, &proj);
    if (st != DL_OK)
        return fail(comm, st);
    dl_progress_line(&pr, rank == 0,
                     "lab03: %s, %d epoch(s), %.1f s: test accuracy %.4f, params differ across ranks by %.3g", o.mode,
                     done, t_train, final_acc, final_diff);
    dl_progress_line(&pr, rank == 0,
                     "lab03: projected on %d GPU(s) of %s: epoch %.3f ms = compute %.3f + comm %.3f; "
                     "one GPU %.3f ms; speedup %.2fx (projected)",
                     P, prof.name, 1e3 * proj.epoch_s, 1e3 * proj.compute_s, 1e3 * proj.comm_s, 1e3 * proj.single_s,
                     proj.speedup);

    // ---- comparisons: one naive epoch, and one rank at the global batch ----
    int compare = !o.no_compare && P > 1 && !R.naive;
    R.pr = NULL;
    double naive_epoch_s = NAN, naive_speedup = NAN, *one_curve = NULL;
    if (compare) {
        run Rn = R;
        Rn.naive = 1;
        train_state N;
        options on = o;
        on.max_steps = 0;
        Rn.o = &on;
        st = setup_train(&Rn, &N, 1, (uint64_t)rank);
        epoch_out en;
        if (st == DL_OK)
            st = train_epoch(&Rn, &N, 0, &en);
        dl_projection pn;
        if (st == DL_OK)
            st = dl_project(&prof, &en.w, P, &pn);
        if (st == DL_OK) {
            naive_epoch_s = en.epoch_s;
            naive_speedup = pn.speedup;
            dl_progress_line(&pr, 0,
                             "lab03: one naive epoch (every rank all %zu rows, no sync): %.3f s here vs %.3f s "
                             "for DDP; projected speedup %.2fx",
                             R.n, en.epoch_s, last.epoch_s, pn.speedup);
        }
        free_train(&N);
    }
    if (st == DL_OK && compare && rank == 0 && K > 0) {
        // rank 0 alone: a world of one at batch P·B, the same seed and data order
        one_curve = calloc((size_t)K, sizeof *one_curve);
        train_state S;
        memset(&S, 0, sizeof S);
        size_t PB = B * (size_t)P;
        st = dl_mlp_create(&S.m, &dev, R.sizes, R.n_sizes, PB, o.a.seed);
        ddp_sampler s1 = {R.n, 0, 1, o.a.seed, 0, 1, o.drop_last, NULL, 0};
        size_t per1 = ddp_sampler_num_samples(&s1);
        size_t *idx1 = malloc(per1 * sizeof *idx1);
        float *bx = malloc(PB * R.d * sizeof *bx), *dbx = NULL;
        int32_t *by = malloc(PB * sizeof *by), *dby = NULL;
        if (st == DL_OK && dev.kind == DL_DEVICE_CUDA) {
            st = dl_malloc(&dev, (void **)&dbx, PB * R.d * sizeof *dbx);
            if (st == DL_OK)
                st = dl_malloc(&dev, (void **)&dby, PB * sizeof *dby);
        }
        ddp_lr_config lr1 = T.lr;
        long step = 0;
        for (int e = 0; st == DL_OK && step < K; e++) {
            ddp_sampler_set_epoch(&s1, e);
            st = ddp_sampler_indices(&s1, idx1);
            for (size_t start = 0; st == DL_OK && start < per1 && step < K; start += PB, step++) {
                size_t b = per1 - start < PB ? per1 - start : PB;
                for (size_t k = 0; k < b; k++) {
                    memcpy(bx + k * R.d, R.X + idx1[start + k] * R.d, R.d * sizeof *bx);
                    by[k] = R.y[idx1[start + k]];
                }
                const float *X = bx;
                const int32_t *Y = by;
                if (dev.kind == DL_DEVICE_CUDA) {
                    st = dl_memcpy_h2d(&dev, dbx, bx, b * R.d * sizeof *bx);
                    if (st == DL_OK)
                        st = dl_memcpy_h2d(&dev, dby, by, b * sizeof *by);
                    X = dbx, Y = dby;
                }
                double loss = 0;
                if (st == DL_OK)
                    st = dl_mlp_forward(&S.m, X, b);
                if (st == DL_OK)
                    st = dl_mlp_loss(&S.m, Y, b, &loss);
                if (st == DL_OK)
                    st = dl_mlp_backward(&S.m, X, b, 0, NULL, NULL);
                if (st == DL_OK)
                    st = dl_mlp_sgd(&S.m, (float)ddp_lr_at(&lr1, step), (float)o.momentum, (float)o.weight_decay);
                one_curve[step] = loss;
            }
        }
        dl_free(&dev, dbx), dl_free(&dev, dby);
        free(idx1), free(bx), free(by);
        dl_mlp_free(&S.m);
    }
    if (st != DL_OK)
        return fail(comm, st);

    // ---- rows per rank, for the accounting ----
    double my_rows = last.w.samples, *rows_per_rank = malloc((size_t)P * sizeof *rows_per_rank);
    st = dl_comm_allgather(comm, &my_rows, rows_per_rank, 1, DL_F64);
    if (st != DL_OK)
        return fail(comm, st);

    // ---- files (rank 0) ----
    char plots[600] = "";
    if (rank == 0) {
        const char *mcols[] = {"epoch",      "loss",    "test_acc",  "rows_min",  "rows_max",
                               "param_diff", "epoch_s", "compute_s", "imbalance", "lr"};
        st = dl_csv_write(o.a.out, "metrics.csv", mcols, 10, mrows, done);
        if (st == DL_OK && K > 0) {
            const char *scols[] = {"step", "ddp", "one_rank"};
            double *rows = calloc((size_t)K * 3, sizeof *rows);
            for (long k = 0; rows && k < K; k++) {
                rows[k * 3] = (double)k;
                rows[k * 3 + 1] = ddp_curve[k];
                rows[k * 3 + 2] = one_curve ? one_curve[k] : NAN;
            }
            st = rows ? dl_csv_write(o.a.out, "steps.csv", scols, 3, rows, (int)K) : dl_error_set(DL_ERR_NOMEM, "oom");
            free(rows);
        }
        long total = T.lr.total_steps > 0 ? T.lr.total_steps : T.step;
        if (st == DL_OK && total > 0) {
            const char *lcols[] = {"step", "lr", "unscaled"};
            double *rows = calloc((size_t)total * 3, sizeof *rows);
            for (long k = 0; rows && k < total; k++) {
                rows[k * 3] = (double)k;
                rows[k * 3 + 1] = ddp_lr_at(&T.lr, k);
                rows[k * 3 + 2] = o.a.lr;
            }
            st = rows ? dl_csv_write(o.a.out, "lr.csv", lcols, 3, rows, (int)total) : dl_error_set(DL_ERR_NOMEM, "oom");
            free(rows);
        }
        if (st == DL_OK) {
            int C = (int)R.sizes[R.n_sizes - 1], w = 1 + 2 * P;
            double *rows = calloc((size_t)C * w, sizeof *rows);
            char names[2 * 8 + 1][32];
            const char *cols[2 * 8 + 1];
            int np = P < 8 ? P : 8;
            snprintf(names[0], 32, "class");
            cols[0] = names[0];
            for (int k = 0; k < 2; k++) {
                for (int r = 0; r < np; r++) {
                    snprintf(names[1 + k * np + r], 32, "%s_rank%d", k ? "stratified" : "random", r);
                    cols[1 + k * np + r] = names[1 + k * np + r];
                }
            }
            st = rows ? shard_histograms(&R, rows) : dl_error_set(DL_ERR_NOMEM, "oom");
            if (st == DL_OK && P <= 8)
                st = dl_csv_write(o.a.out, "shards.csv", cols, 1 + 2 * P, rows, C);
            free(rows);
        }
        if (st == DL_OK) { // how the projected speedup moves with the per-rank batch
            const char *pcols[] = {"batch_per_rank", "speedup", "compute_ms", "comm_ms"};
            double rows[9 * 4];
            int k = 0;
            size_t per_rank = (R.n + (size_t)prof.gpus - 1) / (size_t)prof.gpus;
            for (size_t b = 256; b <= per_rank && k < 9; b *= 2, k++) {
                dl_workload w;
                dl_projection p;
                ddp_ideal_workload(R.sizes, R.n_sizes, R.n, prof.gpus, b, &w);
                dl_project(&prof, &w, prof.gpus, &p);
                double r[4] = {(double)b, p.speedup, 1e3 * p.compute_s, 1e3 * p.comm_s};
                memcpy(rows + k * 4, r, sizeof r);
            }
            st = dl_csv_write(o.a.out, "projection.csv", pcols, 4, rows, k);
        }
        if (st == DL_OK) {
            char vars[1600];
            snprintf(vars, sizeof vars, "data='%s/metrics.csv'; mode='%s'; P=%d", o.a.out, o.mode, P);
            dl_plot_listed("labs/03-data-parallel/plots/training.gp", o.a.plot, o.a.out, "training", vars, "lab03",
                           plots, sizeof plots);
            if (P > 1 && P <= 8) {
                snprintf(vars, sizeof vars, "data='%s/shards.csv'; P=%d", o.a.out, P);
                dl_plot_listed("labs/03-data-parallel/plots/shards.gp", o.a.plot, o.a.out, "shards", vars, "lab03",
                               plots, sizeof plots);
            }
            if (K > 0 && one_curve != NULL) {
                snprintf(vars, sizeof vars, "data='%s/steps.csv'; P=%d; B=%zu", o.a.out, P, B);
                dl_plot_listed("labs/03-data-parallel/plots/equivalence.gp", o.a.plot, o.a.out, "equivalence", vars,
                               "lab03", plots, sizeof plots);
            }
            snprintf(vars, sizeof vars, "data='%s/lr.csv'; P=%d", o.a.out, R.naive ? 1 : P);
            dl_plot_listed("labs/03-data-parallel/plots/lr.gp", o.a.plot, o.a.out, "lr", vars, "lab03", plots,
                           sizeof plots);
            snprintf(vars, sizeof vars, "data='%s/projection.csv'; B=%zu; profile='%s'", o.a.out, B, prof.name);
            dl_plot_listed("labs/03-data-parallel/plots/speedup_batch.gp", o.a.plot, o.a.out, "speedup_batch", vars,
                           "lab03", plots, sizeof plots);
            if (compare) {
                char path[1200];
                snprintf(path, sizeof path, "%s/epoch_time.csv", o.a.out);
                FILE *f = fopen(path, "w"); // text labels: written by hand
                if (f != NULL) {
                    fprintf(f,
                            "run,epoch_s\n\"naive: every rank all rows, no sync\",%.6f\n"
                            "\"DDP: sharded rows + gradient allreduce\",%.6f\n",
                            naive_epoch_s, last.epoch_s);
                    fclose(f);
                }
                snprintf(vars, sizeof vars, "data='%s'; pnaive=%g; pddp=%g; P=%d; profile='%s'", path, naive_speedup,
                         proj.speedup, P, prof.name);
                dl_plot_listed("labs/03-data-parallel/plots/epoch_time.gp", o.a.plot, o.a.out, "epoch_time", vars,
                               "lab03", plots, sizeof plots);
            }
        }
        for (int k = 0; k < 2 && st == DL_OK; k++) {
            const char *path = k == 0 ? summary : o.a.json;
            if (path == NULL)
                continue;
            dl_json j;
            st = dl_json_open(&j, path);
            if (st != DL_OK)
                break;
            dl_json_object(&j, NULL);
            dl_json_str(&j, "lab", "03-data-parallel");
            dl_json_str(&j, "mode", o.mode);
            dl_json_int(&j, "ranks", P);
            dl_json_str(&j, "backend", dl_comm_backend(comm));
            dl_json_str(&j, "device", dl_device_describe(&dev));
            dl_json_str(&j, "dataset", data.name);
            dl_json_object(&j, "config");
            dl_json_str(&j, "hidden", o.hidden);
            dl_json_int(&j, "batch_per_rank", (long long)B);
            dl_json_int(&j, "global_batch", (long long)(B * (size_t)(R.naive ? 1 : P)));
            dl_json_num(&j, "base_lr", o.a.lr);
            dl_json_int(&j, "base_batch", o.base_batch);
            dl_json_num(&j, "peak_lr", ddp_lr_at(&T.lr, o.warmup));
            dl_json_int(&j, "warmup", o.warmup);
            dl_json_int(&j, "epochs", o.a.epochs);
            dl_json_bool(&j, "stratified", o.stratified);
            dl_json_bool(&j, "scaler", !o.no_scaler);
            dl_json_int(&j, "seed", (long long)o.a.seed);
            dl_json_end_object(&j);
            dl_json_int(&j, "epochs_run", done);
            dl_json_int(&j, "steps", T.step);
            dl_json_int(&j, "n_params", (long long)T.m.n_params);
            dl_json_num(&j, "final_loss", done > 0 ? mrows[(size_t)(done - 1) * 10 + 1] : NAN);
            dl_json_num(&j, "test_accuracy", final_acc);
            dl_json_num(&j, "param_diff_across_ranks", final_diff);
            dl_json_num(&j, "param_diff_after_broadcast", init_diff);
            dl_json_f64s(&j, "rows_per_rank", rows_per_rank, (size_t)P);
            dl_json_int(&j, "dataset_rows", (long long)R.n);
            dl_json_num(&j, "train_seconds", t_train);
            dl_json_num(&j, "epoch_seconds", last.epoch_s);
            dl_json_num(&j, "imbalance", last.imbalance);
            if (mean != NULL) {
                dl_json_object(&j, "scaler");
                dl_json_f32s(&j, "mean", mean, R.d);
                dl_json_f32s(&j, "std", scale, R.d);
                dl_json_num(&j, "max_diff_across_ranks", scaler_diff);
                dl_json_end_object(&j);
            }
            dl_json_object(&j, "counters_last_epoch");
            dl_json_num(&j, "flops", last.w.flops);
            dl_json_num(&j, "steps", last.w.steps);
            dl_json_num(&j, "allreduce_calls", last.w.allreduce_calls);
            dl_json_num(&j, "allreduce_bytes", last.w.allreduce_bytes);
            dl_json_num(&j, "samples", last.w.samples);
            dl_json_end_object(&j);
            dl_json_object(&j, "projection");
            dl_json_str(&j, "profile", prof.name);
            dl_json_int(&j, "gpus", P);
            dl_json_num(&j, "epoch_ms", 1e3 * proj.epoch_s);
            dl_json_num(&j, "compute_ms", 1e3 * proj.compute_s);
            dl_json_num(&j, "comm_ms", 1e3 * proj.comm_s);
            dl_json_num(&j, "single_gpu_ms", 1e3 * proj.single_s);
            dl_json_num(&j, "speedup", proj.speedup);
            dl_json_bool(&j, "projected", 1);
            dl_json_end_object(&j);
            if (compare) {
                dl_json_object(&j, "naive");
                dl_json_num(&j, "epoch_seconds", naive_epoch_s);
                dl_json_num(&j, "projected_speedup", naive_speedup);
                dl_json_end_object(&j);
                double worst = 0;
                for (long q = 0; one_curve != NULL && q < K; q++)
                    worst = fmax(worst, fabs(one_curve[q] - ddp_curve[q]) / fmax(fabs(one_curve[q]), 1e-12));
                dl_json_num(&j, "one_rank_curve_max_rel_diff", worst);
            }
            dl_json_str(&j, "plots", plots);
            dl_json_end_object(&j);
            st = dl_json_close(&j);
        }
    }
    if (st == DL_OK && rank == 0)
        dl_progress_line(&pr, 0, "lab03: wrote %s/{metrics,steps,lr,shards,projection}.csv, summary.json%s%s", o.a.out,
                         plots[0] ? ", " : "", plots);
    if (st != DL_OK)
        return fail(comm, st);
    dl_progress_end(&pr);
    free_train(&T);
    free(mrows), free(ddp_curve), free(one_curve), free(rows_per_rank), free(mean), free(scale);
    free(R.hXb), free(R.hyb);
    dl_free(&dev, R.dXb), dl_free(&dev, R.dyb);
    dl_data_free(&data);
    dl_device_close(&dev);
    dl_comm_finalize(comm);
    return 0;
}
