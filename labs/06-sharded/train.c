/* train.c — lab 06's training on the engine: its flags, the set-up of the
 * model in the ledger and your state, the epochs of steps in the run's
 * mode, and the end where your state is given back. See driver.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN
#include <stdio.h> // fprintf, fflush
#include <stdlib.h> // malloc, realloc, free
#include <unistd.h> // _exit

#include "dl/epoch.h" // dl_epoch_clock_begin
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/rank.h" // dl_rank_device
#include "dl/replica.h" // dl_replica_diff
#include "driver.h"

_Noreturn void lab06_end(int rc)
{
    fflush(NULL);
    _exit(rc);
}

// ---- the flags ----

void lab06_defaults(dl_engine *E)
{
    lab06_run *R = E->ctx;
    E->a.data = "fashion_mnist:train=12000,test=2000";
    E->a.batch_size = 64;
    E->a.lr = 0.05;
    E->t.hidden = "512,512,512,512";
    E->t.base_batch = 256;
    R->mode_arg = KIT_ZERO1;
    R->val_rows = 2000;
}

int lab06_options(dl_engine *E, dl_opt *out)
{
    lab06_run *R = E->ctx;
    const dl_opt opts[] = {
        {"mode", DL_OPT_ENUM, &R->mode_arg, "MODE",
         "zero1 (yours: the optimizer state sharded), fsdp (yours: everything sharded) or ddp", "ddp|zero1|fsdp", 1, 0,
         0},
        {"no-prefetch", DL_OPT_FLAG, &R->no_prefetch, NULL, "fsdp: gather each layer only when it is needed", NULL, 1,
         0, 0},
        {"dump", DL_OPT_STRING, &R->dump, "DIR", "each rank's parameters, ledger and transport log (the grader's)",
         NULL, 1, 0, 0},
        {"selftest", DL_OPT_CHOICE, &R->selftest, "HALF",
         "instead of training, run your reduce_scatter, all_gather or both starts (all: the three, each into its "
         "own folder) on the kit's cases into --dump DIR (the grader's)",
         "reduce_scatter|all_gather|start|all", 1, 0, 0},
        {"val-rows", DL_OPT_LONG, &R->val_rows, "N", "the last N training rows: validation, never trained on", NULL, 1,
         1e9, 0},
    };
    int n = (int)(sizeof opts / sizeof *opts);
    for (int k = 0; k < n; k++)
        out[k] = opts[k];
    return n;
}

/* --selftest: task 2 (or 4's starts) on its own, no data, no model, and the process ends here. Otherwise the
 * flags that need each other. */
dl_status lab06_check(dl_engine *E)
{
    lab06_run *R = E->ctx;
    if (R->selftest != NULL) {
        DL_TRY(dl_rank_device(E->comm, &E->a.dev, &E->dev));
        DL_TRY(kit_selftest(&R->rec, E->comm, &E->dev, R->selftest, R->dump));
        dl_comm_finalize(E->comm);
        lab06_end(0);
    }
    R->mode = (kit_mode)R->mode_arg;
    if (R->no_prefetch && R->mode != KIT_FSDP)
        return dl_error_set(DL_ERR_ARG, "--no-prefetch is for --mode fsdp, not --mode %s", kit_mode_names[R->mode]);
    if (E->a.batch_size < 1)
        return dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 06 needs a per-rank batch of at least 1 row",
                            E->a.batch_size);
    return DL_OK;
}

// ---- the set-up ----

/* The splits, the sampler, the model in the ledger, your state. */
dl_status lab06_setup(dl_engine *E)
{
    lab06_run *R = E->ctx;
    const dl_dataset *tr = &E->data.train;
    size_t val = (size_t)R->val_rows;
    if (!E->data.has_test || tr->n <= val + (size_t)E->P)
        return dl_error_set(DL_ERR_ARG,
                            "--data %s: lab 06 needs a test split and more than %zu training rows (%zu for "
                            "--val-rows and one per rank)",
                            E->a.data, val + (size_t)E->P, val);
    R->B = (size_t)E->a.batch_size;
    R->smp = (dl_sampler){.n = tr->n - val, .rank = E->rank, .world = E->P, .seed = E->a.seed, .shuffle = 1};
    R->per = dl_sampler_num_samples(&R->smp);
    R->steps_per_epoch = R->per / R->B;
    if (R->steps_per_epoch == 0)
        return dl_error_set(DL_ERR_ARG, "--batch-size %zu: more than the %zu rows each of the %d ranks gets per epoch",
                            R->B, R->per, E->P);
    R->lrc = (dl_lr_config){.base_lr = E->a.lr,
                            .base_batch = (size_t)E->t.base_batch,
                            .global_batch = R->B * (size_t)E->P,
                            .warmup_steps = E->t.warmup};
    R->idx = malloc(R->per * sizeof *R->idx);
    R->params = malloc((size_t)1 << 20); // grown once the model is known
    if (R->idx == NULL || R->params == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu row indices", R->per);
    DL_TRY(dl_devset_make(&R->tr, &E->dev, tr, 0, R->smp.n));
    DL_TRY(dl_devset_make(&R->val, &E->dev, tr, tr->n - val, val));
    DL_TRY(dl_devset_make(&R->test, &E->dev, &E->data.test, 0, E->data.test.n));
    DL_TRY(dl_batch_create(&R->bt, &E->dev, R->B, tr->d));
    R->mem.dev = &E->dev;
    DL_TRY(dl_mlp_create(&R->m, &E->dev, E->sizes, E->n_sizes, R->B, E->a.seed));
    DL_TRY(kit_mem_model_buffers(&R->mem, &R->m, R->mode == KIT_DDP));
    float *grown = realloc(R->params, R->m.n_params * sizeof *R->params);
    if (grown == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu parameters", R->m.n_params);
    R->params = grown;
    R->z = (zero_state){.comm = E->comm, .model = &R->m, .mem = &R->mem};
    R->f = (fsdp_state){.comm = E->comm, .model = &R->m, .mem = &R->mem, .prefetch = !R->no_prefetch};
    if (R->mode == KIT_DDP) // the kit's step alone: none of your code runs in this mode
        return DL_OK;
    kit_layout_record(&R->rec, &R->m, E->P); // the shards your task 1 cuts, for the grader
    R->yours = 1;
    if (R->mode == KIT_ZERO1)
        return zero_init(&R->z);
    DL_TRY(fsdp_init(&R->f));
    kit_mem_drop_full(&R->mem, &R->m); // from here on each rank holds its shards only
    return DL_OK;
}

// ---- the epochs ----

/* Accuracy on set: FSDP's every rank runs every chunk (each forward gathers, a collective). */
static dl_status accuracy(dl_engine *E, const dl_devset *set, double *acc)
{
    lab06_run *R = E->ctx;
    if (R->mode == KIT_FSDP)
        return kit_eval_every_rank(&R->m, set, R->B, acc);
    return dl_eval_accuracy(E->comm, &R->m, set, R->B, acc);
}

/* One optimizer step of the run's mode on the batch staged in R->bt. */
static dl_status step(dl_engine *E, const shard_sgd *opt)
{
    lab06_run *R = E->ctx;
    switch (R->mode) {
    case KIT_ZERO1:
        return zero_step(&R->z, R->bt.X, R->bt.y, R->B, opt);
    case KIT_FSDP:
        kit_fsdp_watch(&R->rec, &R->m); // the kit's hooks around yours: a layer not whole named; --dump: marked
        return fsdp_step(&R->f, R->bt.X, R->bt.y, R->B, opt);
    default:
        return kit_ddp_step(E->comm, &R->m, R->bt.X, R->bt.y, R->B, opt);
    }
}

/* One epoch: this rank's rows, a step per batch, the loss and validation into metrics.csv's row. */
dl_status lab06_epoch(dl_engine *E, int e)
{
    lab06_run *R = E->ctx;
    dl_sampler_set_epoch(&R->smp, e);
    DL_TRY(dl_sampler_indices(&R->smp, R->idx));
    DL_TRY(dl_devset_order(&R->tr, R->idx, R->per));
    DL_TRY(dl_mlp_loss_reset(&R->m, 0));
    double t0;
    DL_TRY(dl_epoch_clock_begin(E->comm, &t0));
    dl_comm_stats_reset(E->comm);
    size_t s = 0;
    for (; s < R->steps_per_epoch && !dl_train_stop(&E->t, R->steps); s++, R->steps++) {
        shard_sgd opt = {(float)dl_lr_at(&R->lrc, R->steps), (float)E->t.momentum, (float)E->t.weight_decay};
        dl_dev_stats io0, io1; // what the step asks of the device (summary.json's device_io)
        dl_dev_stats_get(&io0);
        DL_TRY(dl_batch_take(&R->bt, &R->tr, s * R->B, R->B));
        kit_phase(&R->rec, E->comm, KIT_PH_STEP, R->steps); // the step's own traffic, told apart in the log
        kit_mem_watch(&R->mem, R->steps == 1); // the second step's memory, as a timeline (the first is alike)
        DL_TRY(step(E, &opt));
        kit_mem_watch(&R->mem, 0);
        kit_phase(&R->rec, E->comm, KIT_PH_NONE, -1);
        DL_TRY(dl_mlp_loss_commit(&R->m, 1, 1, NULL));
        dl_dev_stats_get(&io1);
        if (R->steps > 0) // the steady steps: the first fills the blocks shard_free keeps for reuse
            dl_run_io_steps(&E->io, &io0, &io1, 1);
        dl_progress_step(&E->pr, e, s + 1, R->B * (size_t)E->P, NAN);
    }
    dl_comm_stats st;
    dl_comm_stats_get(E->comm, &st);
    double row[LAB06_METRICS_NCOLS], imbalance, total, steps = (double)(s > 0 ? s : 1); // --max-steps may stop it
    DL_TRY(dl_epoch_clock_end(E->comm, t0, 0, NULL, &row[M_EPOCH_S], &imbalance));
    DL_TRY(dl_mlp_loss_total(&R->m, &total));
    DL_TRY(dl_comm_allreduce(E->comm, &total, 1, DL_F64, DL_RED_AVG));
    row[M_EPOCH] = e + 1;
    row[M_LOSS] = total / steps;
    // the bytes this rank sent: your collectives' point-to-point messages, or what DDP's ring would send
    row[M_SENT] =
        R->mode != KIT_DDP ? (double)st.bytes[DL_OP_SENDRECV] / steps : kit_sent_bytes(KIT_DDP, R->m.n_params, E->P);
    DL_TRY(accuracy(E, &R->val, &row[M_VAL_ACC]));
    dl_progress_line(&E->pr, 0, "lab06: epoch %d  loss %.4f  val acc %.4f  %.2f s  sent %.0f B/step", e + 1,
                     row[M_LOSS], row[M_VAL_ACC], row[M_EPOCH_S], row[M_SENT]);
    return dl_table_add(&E->metrics, row);
}

// ---- the end ----

/* Your code's last call: your state given back, the hooks removed; nothing of yours runs after it. */
static void release_yours(lab06_run *R)
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

/* The test accuracy; the final parameters put together (R->params), your state given back first, the ranks
 * compared; then, once every rank is past its last call of your code, the grader's dump. */
dl_status lab06_finish(dl_engine *E)
{
    lab06_run *R = E->ctx;
    DL_TRY(accuracy(E, &R->test, &R->test_acc));
    kit_shards keep = {{0}, {0}, NULL};
    kit_pool_release(); // the freed blocks go back first: what stays is what the state holds
    dl_status st = R->mode == KIT_FSDP ? kit_fsdp_keep(&R->m, &R->f, &keep) : DL_OK; // before fsdp_free
    release_yours(R);
    kit_pool_release();
    kit_mem_drop_grads(&R->mem, &R->m); // what stays of the training: the parameters
    if (st == DL_OK) // FSDP's whole model exists only put together from every rank's shards
        st = R->mode == KIT_FSDP ? kit_fsdp_params(E->comm, &R->m, &keep, R->params)
                                 : dl_mlp_get_params(&R->m, R->params);
    kit_shards_free(&keep);
    kit_mem_drop_model(&R->mem, &R->m); // read: the model's own parameters go too
    if (st == DL_OK)
        st = dl_replica_diff(E->comm, R->params, R->m.n_params, &R->param_diff);
    if (st == DL_OK && R->param_diff != 0 && E->rank == 0)
        fprintf(stderr,
                "lab06: warning: at the end the ranks' parameters differ by up to %g: they did not all apply "
                "the same update (a shard not all-gathered after its step?)\n",
                R->param_diff);
    if (st == DL_OK)
        st = dl_comm_barrier(E->comm); // every rank has given its state back
    if (st == DL_OK && R->dump != NULL)
        st = kit_dump(&R->rec, R->dump, E->comm, R->params, R->m.n_params);
    return st;
}

void lab06_teardown(dl_engine *E)
{
    lab06_run *R = E->ctx;
    release_yours(R);
    kit_pool_release(); // the blocks shard_free kept for reuse
    dl_mlp_free(&R->m);
    dl_batch_free(&R->bt);
    dl_devset_free(&R->tr), dl_devset_free(&R->val), dl_devset_free(&R->test);
    free(R->idx), free(R->params);
}
