/* main.c — lab 06's driver: data-parallel training of the kit's MLP on
 * Fashion-MNIST with the optimizer state sharded (ZeRO-1, your zero_step),
 * everything sharded (FSDP, your fsdp_step), or everything replicated as in
 * DDP, measuring the memory every rank holds.
 *
 *   common/bin/dlrun -n 4 build/labs/lab06                 ZeRO-1 (yours)
 *   common/bin/dlrun -n 4 build/labs/lab06 --mode fsdp     FSDP (yours)
 *   common/bin/dlrun -n 4 build/labs/lab06 --mode ddp      DDP: everything replicated
 *   build/labs/lab06 --help                                every flag
 *
 * Every rank holds the data and the same initial model (same seed); the
 * kit's sampler (dl/sampler.h) deals each epoch's rows to the ranks, and
 * every step takes --batch-size rows per rank. Every buffer the training
 * holds is in the ledger (shard.h): the model's own when it is made, and
 * whatever your code allocates through shard_alloc. At the end the ranks
 * compare their parameters (dl/replica.h: 0 when they hold one model), and
 * rank 0 writes into --out: metrics.csv (per epoch), memory.csv (the
 * ledger's peaks beside the closed form of DDP, ZeRO-1 and FSDP for P = 1
 * to 64), largest.csv (the largest model each way on every shipped
 * profile's GPUs), summary.json and the plots. --dump DIR writes each
 * rank's parameters, ledger and transport log for the grader;
 * --selftest reduce_scatter|all_gather --dump DIR runs task 2 alone on the
 * kit's cases (kit.h) for it, --selftest start task 4's.
 *
 * What the grader reads is written where your code no longer runs: --mode
 * ddp calls none of it; in the other modes the end of the run gives your
 * state back (zero_free, fsdp_free, then the hooks removed) on every rank
 * before the kit writes anything (a barrier), and the process ends with
 * _exit. The operating system's peak resident set, which the grader reads
 * from outside when a rank ends, starts again after the set-up
 * (kit_rss_restart): it counts the training, whatever holds the memory.
 * Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN
#include <stdio.h> // fprintf, fflush
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp
#include <unistd.h> // _exit

#include "dl/batch.h" // dl_devset, dl_batch_take
#include "dl/cli.h" // dl_cli_parse
#include "dl/data.h" // dl_data_load
#include "dl/epoch.h" // dl_epoch_clock_begin
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/lr.h" // dl_lr_at
#include "dl/plot.h" // dl_plots_draw
#include "dl/progress.h" // dl_progress_line
#include "dl/rank.h" // dl_rank_device, dl_rank_exit
#include "dl/replica.h" // dl_replica_mlp_diff
#include "dl/sampler.h" // dl_sampler
#include "dl/summary.h" // dl_summary_write
#include "dl/trainopt.h" // dl_train_opts
#include "kit.h"

#define MAX_EPOCHS 64
// clang-format off
#define METRICS(X)                        \
    X(M_EPOCH, "epoch")                   \
    X(M_LOSS, "loss")                     \
    X(M_VAL_ACC, "val_accuracy")          \
    X(M_EPOCH_S, "epoch_s")               \
    X(M_SENT, "sent_bytes_per_step")
// clang-format on
DL_CSV_SCHEMA(metrics, METRICS);

typedef struct run {
    dl_args a;
    dl_train_opts t;
    const char *dump, *selftest;
    int mode_arg; /* --mode (DL_OPT_ENUM: its choices in kit_mode's order) */
    int no_prefetch;
    long val_rows; /* the last rows of the training set: validation, never trained on */
    int yours; /* your state (zero_init's, fsdp_init's) is live: zero_free or fsdp_free to call */
    kit_mode mode;
    dl_comm *comm;
    int rank, P;
    dl_device dev;
    dl_data data;
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    int n_sizes;
    dl_mlp m;
    dl_profile prof; /* the projection's target */
    shard_mem mem;
    kit_record rec; /* what the kit records of the run for the grader (kit.h) */
    zero_state z;
    fsdp_state f;
    float *params; /* (n_params,) host: the final parameters, put together */
    dl_sampler smp;
    dl_devset tr, val, test;
    dl_batch bt;
    size_t *idx, per, B, steps_per_epoch;
    dl_lr_config lrc;
    dl_progress pr;
    int epochs_run;
    long steps;
    double rows[MAX_EPOCHS][METRICS_NCOLS];
    double test_acc, param_diff, model_total;
    dl_run_io io; /* what the run asked of its device: summary.json's device_io */
    char plots[600];
} run;

static int parse(int argc, char **argv, run *R)
{
    dl_args_defaults(&R->a);
    R->a.data = "fashion_mnist:train=12000,test=2000";
    R->a.epochs = 4;
    R->a.batch_size = 64;
    R->a.lr = 0.05;
    R->a.out = "build/run/06-sharded";
    dl_train_opts_defaults(&R->t);
    R->t.hidden = "512,512,512,512";
    R->t.base_batch = 256;
    R->mode_arg = KIT_ZERO1;
    R->val_rows = 2000;
    dl_opt opts[5 + DL_TRAIN_OPTS] = {
        {"mode", DL_OPT_ENUM, &R->mode_arg, "MODE",
         "zero1 (yours: the optimizer state sharded), fsdp (yours: everything sharded) or ddp", "ddp|zero1|fsdp", 1, 0,
         0},
        {"no-prefetch", DL_OPT_FLAG, &R->no_prefetch, NULL, "fsdp: gather each layer only when it is needed", NULL, 1,
         0, 0},
        {"dump", DL_OPT_STRING, &R->dump, "DIR", "each rank's parameters, ledger and transport log (the grader's)",
         NULL, 1, 0, 0},
        {"selftest", DL_OPT_CHOICE, &R->selftest, "HALF",
         "instead of training, run your reduce_scatter, all_gather or both starts on the kit's cases into --dump "
         "DIR (the grader's)",
         "reduce_scatter|all_gather|start", 1, 0, 0},
        {"val-rows", DL_OPT_LONG, &R->val_rows, "N", "the last N training rows: validation, never trained on", NULL, 1,
         1e9, 0},
    };
    int n = 5,
        k = dl_train_opts_pick(&R->t, "hidden,base-batch,warmup,momentum,weight-decay,max-steps,profile", opts + n);
    if (k < 0)
        return DL_CLI_ERROR;
    int rc = dl_cli_parse(argc, argv, "lab06",
                          "Lab 06: sharded data parallelism, ZeRO-1 and FSDP on your own reduce-scatter and "
                          "all-gather. Start it with common/bin/dlrun -n P.",
                          &R->a, opts, n + k);
    return rc == DL_CLI_RUN ? dl_profile_cli("lab06", R->t.profile) : rc; // --profile list
}

/* The world, the device, the data, the model in the ledger, your state. */
static dl_status setup(run *R)
{
    R->rank = dl_comm_rank(R->comm);
    R->P = dl_comm_size(R->comm);
    R->a.quiet |= R->rank != 0; // one voice
    R->mode = (kit_mode)R->mode_arg;
    if (R->no_prefetch && R->mode != KIT_FSDP)
        return dl_error_set(DL_ERR_ARG, "--no-prefetch is for --mode fsdp, not --mode %s", kit_mode_names[R->mode]);
    DL_TRY(dl_mlp_parse_hidden("--hidden", R->t.hidden, R->sizes, &R->n_sizes));
    if (R->a.batch_size < 1)
        return dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 06 needs a per-rank batch of at least 1 row",
                            R->a.batch_size);
    if (R->rank == 0) // a run that fails leaves no summary.json that looks like its own
        DL_TRY(dl_summary_prepare(R->a.out));
    DL_TRY(dl_profile_load(R->t.profile != NULL ? R->t.profile : dl_profile_default(), &R->prof));
    DL_TRY(dl_rank_device(R->comm, &R->a.dev, &R->dev));
    DL_TRY(dl_data_load(R->a.data, &R->data));
    const dl_dataset *tr = &R->data.train;
    size_t val = (size_t)R->val_rows;
    if (!R->data.has_test || tr->n <= val + (size_t)R->P)
        return dl_error_set(DL_ERR_ARG,
                            "--data %s: lab 06 needs a test split and more than %zu training rows (%zu for "
                            "--val-rows and one per rank)",
                            R->a.data, val + (size_t)R->P, val);
    R->sizes[0] = tr->d;
    R->sizes[R->n_sizes - 1] = (size_t)tr->n_classes;
    R->B = (size_t)R->a.batch_size;
    R->smp = (dl_sampler){.n = tr->n - val, .rank = R->rank, .world = R->P, .seed = R->a.seed, .shuffle = 1};
    R->per = dl_sampler_num_samples(&R->smp);
    R->steps_per_epoch = R->per / R->B;
    if (R->steps_per_epoch == 0)
        return dl_error_set(DL_ERR_ARG, "--batch-size %zu: more than the %zu rows each of the %d ranks gets per epoch",
                            R->B, R->per, R->P);
    R->lrc = (dl_lr_config){.base_lr = R->a.lr,
                            .base_batch = (size_t)R->t.base_batch,
                            .global_batch = R->B * (size_t)R->P,
                            .warmup_steps = R->t.warmup};
    R->idx = malloc(R->per * sizeof *R->idx);
    R->params = malloc((size_t)1 << 20); // grown once the model is known
    if (R->idx == NULL || R->params == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu row indices", R->per);
    DL_TRY(dl_devset_make(&R->tr, &R->dev, tr, 0, R->smp.n));
    DL_TRY(dl_devset_make(&R->val, &R->dev, tr, tr->n - val, val));
    DL_TRY(dl_devset_make(&R->test, &R->dev, &R->data.test, 0, R->data.test.n));
    DL_TRY(dl_batch_create(&R->bt, &R->dev, R->B, tr->d));
    R->mem.dev = &R->dev;
    DL_TRY(dl_mlp_create(&R->m, &R->dev, R->sizes, R->n_sizes, R->B, R->a.seed));
    DL_TRY(kit_mem_model_buffers(&R->mem, &R->m, R->mode == KIT_DDP));
    float *grown = realloc(R->params, R->m.n_params * sizeof *R->params);
    if (grown == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu parameters", R->m.n_params);
    R->params = grown;
    R->z = (zero_state){.comm = R->comm, .model = &R->m, .mem = &R->mem};
    R->f = (fsdp_state){.comm = R->comm, .model = &R->m, .mem = &R->mem, .prefetch = !R->no_prefetch};
    if (R->mode == KIT_DDP) // the kit's step alone: none of your code runs in this mode
        return DL_OK;
    kit_layout_record(&R->rec, &R->m, R->P); // the shards your task 1 cuts, for the grader
    R->yours = 1;
    if (R->mode == KIT_ZERO1)
        return zero_init(&R->z);
    DL_TRY(fsdp_init(&R->f));
    kit_mem_drop_full(&R->mem, &R->m); // from here on each rank holds its shards only
    return DL_OK;
}

/* Accuracy on set: FSDP's every rank runs every chunk (each forward gathers, a collective). */
static dl_status accuracy(run *R, const dl_devset *set, double *acc)
{
    if (R->mode == KIT_FSDP)
        return kit_eval_every_rank(&R->m, set, R->B, acc);
    return dl_eval_accuracy(R->comm, &R->m, set, R->B, acc);
}

/* One optimizer step of the run's mode on the batch staged in R->bt. */
static dl_status step(run *R, const shard_sgd *opt)
{
    switch (R->mode) {
    case KIT_ZERO1:
        return zero_step(&R->z, R->bt.X, R->bt.y, R->B, opt);
    case KIT_FSDP:
        kit_fsdp_watch(&R->rec, &R->m); // the kit's hooks around yours: a layer not whole named; --dump: marked
        return fsdp_step(&R->f, R->bt.X, R->bt.y, R->B, opt);
    default:
        return kit_ddp_step(R->comm, &R->m, R->bt.X, R->bt.y, R->B, opt);
    }
}

/* One epoch: this rank's rows, a step per batch, the loss and validation. */
static dl_status epoch(run *R, int e)
{
    dl_sampler_set_epoch(&R->smp, e);
    DL_TRY(dl_sampler_indices(&R->smp, R->idx));
    DL_TRY(dl_devset_order(&R->tr, R->idx, R->per));
    DL_TRY(dl_mlp_loss_reset(&R->m, 0));
    double t0;
    DL_TRY(dl_epoch_clock_begin(R->comm, &t0));
    dl_comm_stats_reset(R->comm);
    size_t s = 0;
    for (; s < R->steps_per_epoch && !dl_train_stop(&R->t, R->steps); s++, R->steps++) {
        shard_sgd opt = {(float)dl_lr_at(&R->lrc, R->steps), (float)R->t.momentum, (float)R->t.weight_decay};
        dl_dev_stats io0, io1; // what the step asks of the device (summary.json's device_io)
        dl_dev_stats_get(&io0);
        DL_TRY(dl_batch_take(&R->bt, &R->tr, s * R->B, R->B));
        kit_phase(&R->rec, R->comm, KIT_PH_STEP, R->steps); // the step's own traffic, told apart in the log
        kit_mem_watch(&R->mem, R->steps == 1); // the second step's memory, as a timeline (the first is alike)
        DL_TRY(step(R, &opt));
        kit_mem_watch(&R->mem, 0);
        kit_phase(&R->rec, R->comm, KIT_PH_NONE, -1);
        DL_TRY(dl_mlp_loss_commit(&R->m, 1, 1, NULL));
        dl_dev_stats_get(&io1);
        if (R->steps > 0) // the steady steps: the first fills the blocks shard_free keeps for reuse
            dl_run_io_steps(&R->io, &io0, &io1, 1);
        dl_progress_step(&R->pr, e, s + 1, R->B * (size_t)R->P, NAN);
    }
    dl_comm_stats st;
    dl_comm_stats_get(R->comm, &st);
    double *row = R->rows[e], epoch_s, imbalance, total,
           steps = (double)(s > 0 ? s : 1); // --max-steps may stop it early
    DL_TRY(dl_epoch_clock_end(R->comm, t0, 0, NULL, &epoch_s, &imbalance));
    DL_TRY(dl_mlp_loss_total(&R->m, &total));
    DL_TRY(dl_comm_allreduce(R->comm, &total, 1, DL_F64, DL_RED_AVG));
    row[M_EPOCH] = e + 1;
    row[M_LOSS] = total / steps;
    row[M_EPOCH_S] = epoch_s;
    // the bytes this rank sent: your collectives' point-to-point messages, or what DDP's ring would send
    row[M_SENT] =
        R->mode != KIT_DDP ? (double)st.bytes[DL_OP_SENDRECV] / steps : kit_sent_bytes(KIT_DDP, R->m.n_params, R->P);
    DL_TRY(accuracy(R, &R->val, &row[M_VAL_ACC]));
    dl_progress_line(&R->pr, 0, "lab06: epoch %d  loss %.4f  val acc %.4f  %.2f s  sent %.0f B/step", e + 1,
                     row[M_LOSS], row[M_VAL_ACC], epoch_s, row[M_SENT]);
    R->epochs_run = e + 1;
    return DL_OK;
}

static void summary(dl_json *j, const void *ctx)
{
    const run *R = ctx;
    const double *last = R->rows[R->epochs_run - 1];
    double ddp[SHARD_KINDS], mine[SHARD_KINDS];
    double ddp_total = kit_mem_bytes(KIT_DDP, R->sizes, R->n_sizes, R->B, R->P, ddp);
    double fsdp_total = kit_mem_bytes(KIT_FSDP, R->sizes, R->n_sizes, R->B, R->P, mine);
    dl_json_str(j, "lab", "06");
    dl_json_str(j, "mode", kit_mode_names[R->mode]);
    dl_json_int(j, "ranks", R->P);
    dl_json_str(j, "device", dl_device_describe(&R->dev));
    dl_json_str(j, "dataset", R->a.data);
    dl_json_int(j, "n_params", (long)R->m.n_params);
    dl_json_int(j, "epochs_run", R->epochs_run);
    dl_json_int(j, "steps", R->steps);
    dl_json_num(j, "final_loss", last[M_LOSS]);
    dl_json_num(j, "val_accuracy", last[M_VAL_ACC]);
    dl_json_num(j, "test_accuracy", R->test_acc);
    dl_json_num(j, "param_diff_across_ranks", R->param_diff);
    dl_json_num(j, "sent_bytes_per_step", last[M_SENT]);
    dl_json_num(j, "ddp_sent_bytes_per_step", kit_sent_bytes(KIT_DDP, R->m.n_params, R->P));
    dl_json_num(j, "fsdp_sent_bytes_per_step", kit_sent_bytes(KIT_FSDP, R->m.n_params, R->P));
    dl_json_num(j, "steady_epoch_s", dl_steady_seconds(&R->rows[0][M_EPOCH_S], R->epochs_run, METRICS_NCOLS));
    dl_json_object(j, "projection"); // one step on the profile's GPUs (kit_project_step)
    dl_json_str(j, "profile", R->prof.name);
    dl_json_int(j, "gpus", R->prof.gpus);
    for (int md = 0; md < KIT_MODES; md++) {
        char key[32];
        kit_projection pj = kit_project_step((kit_mode)md, R->sizes, R->n_sizes, R->B, &R->prof);
        snprintf(key, sizeof key, "%s_step_ms", kit_mode_names[md]);
        dl_json_num(j, key, 1e3 * pj.step_s);
        snprintf(key, sizeof key, "%s_exposed_ms", kit_mode_names[md]);
        dl_json_num(j, key, 1e3 * pj.exposed_s);
    }
    dl_json_end_object(j);
    dl_json_object(j, "memory"); // rank 0's ledger, at its peaks
    for (int k = 0; k < SHARD_KINDS; k++)
        dl_json_num(j, shard_mem_kind_name((shard_mem_kind)k), (double)kit_ledger()->peak[k]);
    dl_json_num(j, "total", (double)kit_ledger()->peak_total);
    dl_json_num(j, "reserved", (double)kit_reserved_peak()); // the ledger's and the blocks kept for reuse
    long rss_peak, rss_now; // the operating system's count of this process: the peak resident set since the set-up
    kit_rss_kib(&rss_peak, &rss_now);
    dl_json_num(j, "rss_peak", 1024.0 * (double)rss_peak);
    dl_json_num(j, "model_total", R->model_total);
    dl_json_num(j, "ddp_total", ddp_total);
    dl_json_num(j, "fsdp_total", fsdp_total);
    dl_json_num(j, "optim_share_of_ddp", (double)kit_ledger()->peak[SHARD_OPTIM] / ddp[SHARD_OPTIM]);
    dl_json_num(j, "saving_vs_ddp", 1.0 - (double)kit_ledger()->peak_total / ddp_total);
    dl_json_end_object(j);
    dl_summary_device_io(j, &R->io);
    dl_json_str(j, "plots", R->plots);
}

/* Rank 0: the files and the plots. */
static dl_status write_outputs(run *R)
{
    double b[SHARD_KINDS];
    R->model_total = kit_mem_bytes(R->mode, R->sizes, R->n_sizes, R->B, R->P, b);
    if (R->rank != 0)
        return DL_OK;
    DL_TRY(dl_csv_write(R->a.out, "metrics.csv", metrics, &R->rows[0][0], R->epochs_run));
    DL_TRY(kit_write_memory(R->a.out, R->sizes, R->n_sizes, R->B, R->mode, R->P));
    DL_TRY(kit_write_largest(R->a.out));
    DL_TRY(kit_write_mem_step(R->a.out));
    DL_TRY(kit_write_projection(R->a.out, R->sizes, R->n_sizes, R->B));
    dl_plots p = {"labs/06-sharded/plots", R->a.plot, R->a.out, "lab06", ""};
    dl_plots_draw(&p, "memory", "data='%s/memory.csv'; P=%d; mode='%s'", R->a.out, R->P, kit_mode_names[R->mode]);
    dl_plots_draw(&p, "step_memory", "data='%s/memory_step.csv'; P=%d; mode='%s'", R->a.out, R->P,
                  kit_mode_names[R->mode]);
    dl_plots_draw(&p, "projection", "data='%s/projection.csv'; batch=%zu", R->a.out, R->B);
    dl_plots_draw(&p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", R->a.out, kit_mode_names[R->mode], R->P);
    snprintf(R->plots, sizeof R->plots, "%s", p.list);
    return dl_summary_write(R->a.out, R->a.json, summary, R);
}

/* Your code's last call: your state given back, the hooks removed; nothing of yours runs after it. */
static void release_yours(run *R)
{
    if (!R->yours)
        return;
    R->yours = 0;
    if (R->mode == KIT_ZERO1)
        zero_free(&R->z);
    if (R->mode == KIT_FSDP)
        fsdp_free(&R->f);
    dl_mlp_set_hooks(&R->m, NULL, NULL, NULL);
}

static void release(run *R)
{
    release_yours(R);
    kit_pool_release(); // the blocks shard_free kept for reuse
    dl_mlp_free(&R->m);
    dl_batch_free(&R->bt);
    dl_devset_free(&R->tr), dl_devset_free(&R->val), dl_devset_free(&R->test);
    dl_data_free(&R->data);
    free(R->idx), free(R->params);
}

/* Ends the process without atexit handlers or destructors: nothing runs after the kit's last word. */
static _Noreturn void end(int rc)
{
    fflush(NULL);
    _exit(rc);
}

static _Noreturn void die(run *R, dl_status st)
{
    release(R);
    end(dl_rank_exit(R->comm, st, "lab06"));
}

/* After training: the final parameters put together (R->params), your state given back first, the ranks
 * compared; then, once every rank is past its last call of your code, the kit's files. */
static dl_status finish(run *R)
{
    kit_shards keep = {{0}, {0}, NULL};
    kit_pool_release(); // the freed blocks go back first: what stays is what the state holds
    dl_status st = R->mode == KIT_FSDP ? kit_fsdp_keep(&R->m, &R->f, &keep) : DL_OK; // before fsdp_free
    release_yours(R);
    kit_pool_release();
    kit_mem_drop_grads(&R->mem, &R->m); // what stays of the training: the parameters
    if (st == DL_OK) // FSDP's whole model exists only put together from every rank's shards
        st = R->mode == KIT_FSDP ? kit_fsdp_params(R->comm, &R->m, &keep, R->params)
                                 : dl_mlp_get_params(&R->m, R->params);
    kit_shards_free(&keep);
    kit_mem_drop_model(&R->mem, &R->m); // read: the model's own parameters go too
    if (st == DL_OK)
        st = dl_replica_diff(R->comm, R->params, R->m.n_params, &R->param_diff);
    if (st == DL_OK && R->param_diff != 0 && R->rank == 0)
        fprintf(stderr,
                "lab06: warning: at the end the ranks' parameters differ by up to %g: they did not all apply "
                "the same update (a shard not all-gathered after its step?)\n",
                R->param_diff);
    if (st == DL_OK)
        st = dl_comm_barrier(R->comm); // every rank has given its state back
    if (st == DL_OK && R->dump != NULL)
        st = kit_dump(&R->rec, R->dump, R->comm, R->params, R->m.n_params);
    return st == DL_OK ? write_outputs(R) : st;
}

int main(int argc, char **argv)
{
    kit_malloc_returns(); // freed blocks go back to the system: its count of the memory follows the ledger's
    static run R; // zeroed
    kit_record_init(&R.rec);
    dl_dev_stats_get(&R.io.start);
    dl_status st = dl_comm_init(&argc, &argv, &R.comm);
    if (st != DL_OK)
        end(dl_rank_exit(NULL, st, "lab06"));
    int rc = parse(argc, argv, &R);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(R.comm);
        end(rc == DL_CLI_HELP ? 0 : 2);
    }
    if (R.selftest != NULL) { // task 2 on its own: no data, no model
        if ((st = dl_rank_device(R.comm, &R.a.dev, &R.dev)) == DL_OK)
            st = kit_selftest(&R.rec, R.comm, &R.dev, R.selftest, R.dump);
        if (st != DL_OK)
            die(&R, st);
        dl_comm_finalize(R.comm);
        end(0);
    }
    if ((st = setup(&R)) != DL_OK)
        die(&R, st);
    dl_progress_begin(&R.pr, R.a.epochs, R.steps_per_epoch, R.a.quiet);
    dl_progress_line(&R.pr, 0, "lab06: %s on %d rank(s) (%s, %s), model %s (%zu parameters), batch %zu x %d ranks",
                     kit_mode_names[R.mode], R.P, dl_comm_backend(R.comm), dl_device_describe(&R.dev), R.t.hidden,
                     R.m.n_params, R.B, R.P);
    dl_comm_log_start(R.comm, 0); // the transport's own record, for the grader
    if (R.dump != NULL && R.mode == KIT_FSDP)
        kit_fsdp_record(&R.rec, &R.m,
                        &R.f); // and FSDP's: the trace, the operations started and waited, the layers' marks
    kit_rss_restart(); // the OS's peak from here: the training's, not the set-up's
    dl_dev_stats_get(&R.io.resident); // the data is where the model reads it
    for (int e = 0; e < R.a.epochs && e < MAX_EPOCHS && st == DL_OK && !dl_train_stop(&R.t, R.steps); e++)
        st = epoch(&R, e);
    dl_dev_stats_get(&R.io.end);
    R.io.epochs = R.epochs_run;
    dl_progress_end(&R.pr);
    if (st == DL_OK)
        st = accuracy(&R, &R.test, &R.test_acc);
    if (st == DL_OK)
        st = finish(&R);
    if (st != DL_OK)
        die(&R, st);
    release(&R);
    dl_comm_finalize(R.comm);
    end(0);
}
