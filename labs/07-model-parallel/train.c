/* train.c — lab 07's driver hooks (driver.h): the flags, the two models,
 * the epochs, the comparison and what rank 0 writes. Not a student file. */
#include <math.h> // fabs, NAN
#include <stdio.h> // fflush
#include <stdlib.h> // malloc, free
#include <unistd.h> // _exit

#include "dl/rank.h" // dl_rank_device
#include "dl/rng.h" // dl_rng_permutation
#include "dl/timer.h" // dl_now
#include "driver.h"
#include "pipe_kit.h" // PP_MAX_M

#define METRICS(X)                             \
    X(M_EPOCH, "epoch")                        \
    X(M_LOSS, "loss")                          \
    X(M_REF_LOSS, "ref_loss")                  \
    X(M_MAX_ABS_DIFF, "max_abs_diff")          \
    X(M_BYTES, "bytes_per_step")               \
    X(M_BYTES_MODEL, "bytes_per_step_model")   \
    X(M_MSGS, "messages_per_step")             \
    X(M_MSGS_MODEL, "messages_per_step_model") \
    X(M_SECONDS, "epoch_seconds")
DL_CSV_SCHEMA(metrics, METRICS);
#define STEPS(X) X(S_STEP, "step") X(S_LOSS, "loss") X(S_REF_LOSS, "ref_loss") X(S_DIFF, "loss_diff")
DL_CSV_SCHEMA(step_cols, STEPS);
#define SCHEDULES(X)                         \
    X(P_SCHED, "schedule")                   \
    X(P_M, "m")                              \
    X(P_BUBBLE, "bubble")                    \
    X(P_BUBBLE_MODEL, "bubble_model")        \
    X(P_PEAK, "peak_slots")                  \
    X(P_PEAK_BYTES, "peak_activation_bytes") \
    X(P_DIFF, "max_abs_diff")
DL_CSV_SCHEMA(sched_cols, SCHEDULES);
#define TIMELINE(X)        \
    X(T_SCHED, "schedule") \
    X(T_STAGE, "stage")    \
    X(T_KIND, "backward")  \
    X(T_MICRO, "micro")    \
    X(T_START, "start")    \
    X(T_END, "end")
DL_CSV_SCHEMA(time_cols, TIMELINE);
#define STAGES(X)                   \
    X(G_STAGE, "stage")             \
    X(G_GPIPE, "gpipe")             \
    X(G_1F1B, "1f1b")               \
    X(G_GPIPE_MODEL, "gpipe_model") \
    X(G_1F1B_MODEL, "1f1b_model")   \
    X(G_GPIPE_BYTES, "gpipe_bytes") \
    X(G_1F1B_BYTES, "1f1b_bytes")
DL_CSV_SCHEMA(stage_cols, STAGES);

/* The sweep point the pictures show: --micro's, or m = 8 of the sweep (1F1B holds P of them, GPipe all). */
static int shown(const lab07_run *R)
{
    return R->n_pp == 1 ? 0 : 3;
}

/* schedules.csv (every run), timeline.csv and stages.csv (the point shown): rank 0. */
static dl_status pipeline_files(dl_engine *E)
{
    lab07_run *R = E->ctx;
    dl_table t, tl, sg;
    dl_table_init(&t, sched_cols), dl_table_init(&tl, time_cols), dl_table_init(&sg, stage_cols);
    dl_status st = DL_OK;
    for (int sc = 0; sc < 2; sc++)
        for (int k = 0; k < R->n_pp && st == DL_OK; k++) {
            const pp_result *r = &R->pp[sc][k];
            if (r->ops == NULL)
                continue;
            double row[SCHEDULES_NCOLS] = {
                sc, r->m, r->bubble, r->bubble_model, r->peak_slots_max, r->peak_bytes_max, r->max_diff};
            st = dl_table_add(&t, row);
            for (int q = 0; q < E->P && k == shown(R) && st == DL_OK; q++)
                for (int j = 0; j < r->n_ops && st == DL_OK; j++) {
                    int op = r->ops[q * r->n_ops + j];
                    double w[TIMELINE_NCOLS] = {
                        sc, q, op / PP_MAX_M, op % PP_MAX_M, r->start[q * r->n_ops + j], r->end[q * r->n_ops + j]};
                    st = dl_table_add(&tl, w);
                }
        }
    const pp_result *g = &R->pp[0][shown(R)], *f = &R->pp[1][shown(R)];
    for (int q = 0; q < E->P && q < 64 && st == DL_OK; q++) {
        int m = g->ops != NULL ? g->m : f->m;
        double w[STAGES_NCOLS] = {q,
                                  g->ops != NULL ? g->peak_slots[q] : NAN,
                                  f->ops != NULL ? f->peak_slots[q] : NAN,
                                  m,
                                  m < E->P - q ? m : E->P - q,
                                  g->ops != NULL ? g->peak_bytes[q] : NAN,
                                  f->ops != NULL ? f->peak_bytes[q] : NAN};
        st = dl_table_add(&sg, w);
    }
    if (st == DL_OK)
        st = dl_table_write(&t, E->a.out, "schedules.csv");
    if (st == DL_OK)
        st = dl_table_write(&tl, E->a.out, "timeline.csv");
    if (st == DL_OK)
        st = dl_table_write(&sg, E->a.out, "stages.csv");
    dl_table_free(&t), dl_table_free(&tl), dl_table_free(&sg);
    return st;
}

enum { PART_TP = 0, PART_PP = 1, PART_PLAN = 2, PART_ALL = 3 };

#define PLAN(X)                       \
    X(L_D, "d")                       \
    X(L_T, "t")                       \
    X(L_P, "p")                       \
    X(L_ZERO, "zero")                 \
    X(L_MEM, "mem_gb")                \
    X(L_FITS, "fits")                 \
    X(L_STEP, "step_s")               \
    X(L_COMPUTE, "compute_s")         \
    X(L_TP, "tp_s")                   \
    X(L_PP, "pp_s")                   \
    X(L_DP, "dp_s")                   \
    X(L_BUBBLE, "bubble")             \
    X(L_INSIDE, "tensor_inside_node") \
    X(L_BEST, "best")
DL_CSV_SCHEMA(plan_cols, PLAN);

/* plan.csv: every layout the planner saw (rank 0). */
static dl_status plan_file(dl_engine *E)
{
    lab07_run *R = E->ctx;
    dl_table t;
    dl_table_init(&t, plan_cols);
    dl_status st = DL_OK;
    for (int k = 0; k < R->n_layouts && st == DL_OK; k++) {
        const plan_layout *l = &R->layouts[k];
        double row[PLAN_NCOLS] = {
            l->d,    l->t,    l->p,    l->zero,   l->mem_bytes / 1e9,       l->fits,     l->step_s, l->compute_s,
            l->tp_s, l->pp_s, l->dp_s, l->bubble, l->t <= R->gpus_per_node, k == R->best};
        st = dl_table_add(&t, row);
    }
    if (st == DL_OK)
        st = dl_table_write(&t, E->a.out, "plan.csv");
    dl_table_free(&t);
    return st;
}

/* 1 when this run does part (PART_TP, PART_PP or PART_PLAN). */
static int does(const lab07_run *R, int part)
{
    return R->part == PART_ALL || R->part == part;
}

static void defaults(dl_engine *E)
{
    lab07_run *R = E->ctx;
    R->part = PART_ALL, R->schedule = 2, R->micro = 0, R->micro_rows = 16, R->pp_steps = 3;
    // part 3's example: a model of about 116 billion parameters (96 blocks of width 12288), a step of 1536
    // sequences of 2048 tokens in micro-batches of one, on 128 nodes of 8 A100s (a DGX A100 SuperPOD's scale)
    R->pm = (plan_model){.layers = 96, .width = 12288, .rows = 1536.0 * 2048, .micro_rows = 2048};
    R->plan_profile = "a100", R->nodes = 128, R->gpus_per_node = 8;
    E->a.data = "fashion_mnist:train=6000,test=1000";
    E->a.batch_size = 64;
    E->a.lr = 0.05;
    E->t.hidden = "128,64,128"; // two blocks: 784 -> 128 -> 64, then 64 -> 128 -> 10
}

static int options(dl_engine *E, dl_opt *out)
{
    lab07_run *R = E->ctx;
    const dl_opt opts[] = {
        {"check", DL_OPT_STRING, &R->check, "DIR",
         "instead of training, run your tasks 1-3 on the kit's small block into DIR (the grader's)", NULL, 1, 0, 0, 0},
        {"dump", DL_OPT_STRING, &R->dump, "DIR",
         "each rank's shards after the run, and its stage of each pipeline run, into DIR (the grader's)", NULL, 1, 0, 0,
         0},
        {"part", DL_OPT_ENUM, &R->part, "PART",
         "tp (tensor parallelism: the epochs), pp (pipeline parallelism: the schedules), plan (the planner) or all",
         "tp|pp|plan|all", 1, 0, 0, 0},
        {"schedule", DL_OPT_ENUM, &R->schedule, "S", "the pipeline's schedules: gpipe, 1f1b or both", "gpipe|1f1b|both",
         1, 0, 0, 0},
        {"micro", DL_OPT_INT, &R->micro, "M", "micro-batches a pipeline step (0: 1, 2, 4 and 8 in turn)", NULL, 0,
         PP_MAX_M, 0, 0},
        {"micro-rows", DL_OPT_LONG, &R->micro_rows, "N", "rows per micro-batch", NULL, 1, 4096, 0, 0},
        {"pp-steps", DL_OPT_INT, &R->pp_steps, "K", "steps of each pipeline run", NULL, 1, 1000, 0, 0},
        {"plan-blocks", DL_OPT_INT, &R->pm.layers, "L", "the planner's model: blocks", NULL, 1, 100000, 0, 0},
        {"plan-width", DL_OPT_DOUBLE, &R->pm.width, "W", "the planner's model: width (a block is W -> 4W -> W)", NULL,
         1, 1e7, 0, 0},
        {"plan-rows", DL_OPT_DOUBLE, &R->pm.rows, "N", "the planner's step: rows (tokens), all replicas", NULL, 1, 1e15,
         0, 0},
        {"plan-micro-rows", DL_OPT_DOUBLE, &R->pm.micro_rows, "N", "the planner's micro-batch: rows", NULL, 1, 1e12, 0,
         0},
        {"plan-profile", DL_OPT_STRING, &R->plan_profile, "NAME|FILE", "the planner's GPU and links (--profile list)",
         NULL, 1, 0, 0, 0},
        {"nodes", DL_OPT_INT, &R->nodes, "N", "the planner's machine: nodes", NULL, 1, 100000, 0, 0},
        {"gpus-per-node", DL_OPT_INT, &R->gpus_per_node, "G", "the planner's machine: GPUs a node", NULL, 1, 1024, 0,
         0},
    };
    int n = (int)(sizeof opts / sizeof *opts);
    for (int k = 0; k < n; k++)
        out[k] = opts[k];
    return n;
}

static dl_status check(dl_engine *E)
{
    lab07_run *R = E->ctx;
    if (R->check != NULL) { // the check alone, then the end
        dl_status st = dl_rank_device(E->comm, &E->a.dev, &E->dev);
        if (st == DL_OK)
            st = tp_selftest(E->comm, &E->dev, E->a.seed, R->check);
        if (st != DL_OK)
            return st;
        dl_comm_finalize(E->comm);
        fflush(NULL);
        _exit(0);
    }
    if (E->a.batch_size < 1)
        return dl_error_set(DL_ERR_ARG, "--batch-size %ld: lab 07 needs a batch of at least 1 row", E->a.batch_size);
    if ((E->n_sizes - 1) % 2 != 0)
        return dl_error_set(DL_ERR_ARG, "--hidden %s: %d layers; a block is two layers, so give 1, 3, 5 or 7 widths",
                            E->t.hidden, E->n_sizes - 1);
    if (does(R, PART_PLAN)) {
        DL_TRY(dl_profile_load(R->plan_profile, &R->plan_gpu));
        if (R->nodes > 1 && !(R->plan_gpu.nic_bw > 0))
            return dl_error_set(DL_ERR_ARG, "--plan-profile %s: %s has no nic_bw, the links between nodes: --nodes 1",
                                R->plan_profile, R->plan_gpu.path);
        if (!(R->plan_gpu.gpu_mem > 0))
            return dl_error_set(DL_ERR_ARG, "--plan-profile %s: %s has no gpu_mem", R->plan_profile, R->plan_gpu.path);
    }
    if (does(R, PART_PP) && E->P > E->n_sizes - 1)
        return dl_error_set(DL_ERR_ARG, "--hidden %s: %d layers cannot make %d pipeline stages of at least one",
                            E->t.hidden, E->n_sizes - 1, E->P);
    for (int k = 1; k < E->n_sizes - 1 && does(R, PART_TP); k += 2)
        if (E->sizes[k] < (size_t)E->P)
            return dl_error_set(DL_ERR_ARG,
                                "--hidden %s: block %d's %zu hidden units cannot give each of %d ranks "
                                "one",
                                E->t.hidden, k / 2 + 1, E->sizes[k], E->P);
    return DL_OK;
}

static dl_status setup(dl_engine *E)
{
    lab07_run *R = E->ctx;
    R->B = (size_t)E->a.batch_size;
    if (R->B > E->data.train.n)
        R->B = E->data.train.n;
    DL_TRY(dl_mlp_create(&R->ref, &E->dev, E->sizes, E->n_sizes, R->B, E->a.seed));
    if (does(R, PART_TP))
        DL_TRY(tp_model_init(&R->M, E->comm, &E->dev, &R->ref, R->B)); // your tp_shard
    DL_TRY(dl_batch_create(&R->batch, &E->dev, R->B, E->data.train.d));
    if ((R->order = malloc(E->data.train.n * sizeof *R->order)) == NULL)
        return dl_error_set(DL_ERR_NOMEM, "an epoch's order of %zu rows", E->data.train.n);
    dl_table_init(&R->steps, step_cols);
    return DL_OK;
}

static dl_status start(dl_engine *E)
{
    lab07_run *R = E->ctx;
    E->pr.steps_per_epoch = (E->data.train.n + R->B - 1) / R->B;
    if (R->part == PART_PLAN)
        dl_progress_line(&E->pr, 0,
                         "lab07: the planner, a model of %d blocks of width %g on %d node(s) of %d GPUs (%s)",
                         R->pm.layers, R->pm.width, R->nodes, R->gpus_per_node, R->plan_gpu.name);
    else
        dl_progress_line(&E->pr, 0, "lab07: %s on %d rank(s) (%s, %s), model %zu-%s-%zu: %d layers, %zu parameters",
                         R->part == PART_TP     ? "tensor parallelism"
                         : R->part == PART_PP   ? "pipeline parallelism"
                         : R->part == PART_PLAN ? "the planner"
                                                : "tensor, then pipeline parallelism, then the planner",
                         E->P, dl_comm_backend(E->comm), dl_device_describe(&E->dev), E->sizes[0], E->t.hidden,
                         E->sizes[E->n_sizes - 1], E->n_sizes - 1, R->ref.n_params);
    E->stop = !does(R, PART_TP); // no epoch of tensor parallelism
    return DL_OK;
}

static dl_status epoch(dl_engine *E, int e)
{
    lab07_run *R = E->ctx;
    const dl_dataset *tr = &E->data.train;
    dl_rng g;
    dl_rng_seed(&g, E->a.seed + (uint64_t)e, 11);
    dl_rng_permutation(&g, R->order, tr->n); // the same order on every rank: every rank sees every row
    dl_comm_stats_reset(E->comm);
    double t0 = dl_now(), sum = 0, ref_sum = 0, bytes_model = 0, msgs_model = 0;
    float lr = (float)E->a.lr, mu = (float)E->t.momentum, wd = (float)E->t.weight_decay;
    long steps = 0;
    for (size_t at = 0; at < tr->n && !E->stop; at += R->B, steps++) {
        size_t n = tr->n - at < R->B ? tr->n - at : R->B;
        double loss, ref_loss;
        DL_TRY(dl_batch_gather(&R->batch, tr, R->order + at, n));
        DL_TRY(tp_model_step(&R->M, R->batch.X, R->batch.y, n, lr, mu, wd, &loss)); // yours
        DL_TRY(dl_mlp_forward(&R->ref, R->batch.X, n));
        DL_TRY(dl_mlp_loss(&R->ref, R->batch.y, n, &ref_loss));
        DL_TRY(dl_mlp_loss_commit(&R->ref, 1, 1, NULL));
        DL_TRY(dl_mlp_backward(&R->ref, R->batch.X, n, 0, NULL, NULL));
        DL_TRY(dl_mlp_sgd(&R->ref, lr, mu, wd));
        bytes_model += (double)tp_model_bytes(&R->M, n);
        for (int k = 0; k < R->M.K; k++) {
            const tp_block *b = &R->M.blk[k];
            msgs_model += (double)dl_ring_messages(n * b->out, E->P, E->rank);
            msgs_model += k > 0 ? (double)dl_ring_messages(n * b->in, E->P, E->rank) : 0;
        }
        sum += loss * (double)n, ref_sum += ref_loss * (double)n;
        double row[STEPS_NCOLS] = {(double)++R->step, loss, ref_loss, fabs(loss - ref_loss)};
        R->loss_diff = row[S_DIFF] > R->loss_diff || row[S_DIFF] != row[S_DIFF] ? row[S_DIFF] : R->loss_diff;
        DL_TRY(dl_table_add(&R->steps, row));
        dl_progress_step(&E->pr, e, (size_t)steps + 1, n, loss);
        E->stop = dl_train_stop(&E->t, R->step);
    }
    double secs = dl_now() - t0, diff = 0;
    dl_comm_stats s;
    dl_comm_stats_get(E->comm, &s);
    double traffic[4] = {(double)s.bytes[DL_OP_SENDRECV], bytes_model, (double)s.messages, msgs_model};
    DL_TRY(tp_model_diff(&R->M, &R->ref, &diff)); // every rank's shards against the one-rank model's
    DL_TRY(dl_comm_allreduce(E->comm, traffic, 4, DL_F64, DL_RED_SUM)); // every rank's sends
    R->max_diff = diff > R->max_diff || diff != diff ? diff : R->max_diff;
    R->bytes += traffic[0], R->bytes_model += traffic[1], R->msgs += traffic[2], R->msgs_model += traffic[3];
    size_t rows = tr->n < (size_t)(steps * (long)R->B) ? tr->n : (size_t)(steps * (long)R->B);
    double per = steps > 0 ? 1.0 / (double)steps : NAN, r[METRICS_NCOLS] = {e + 1,
                                                                            sum / (double)rows,
                                                                            ref_sum / (double)rows,
                                                                            diff,
                                                                            traffic[0] * per,
                                                                            traffic[1] * per,
                                                                            traffic[2] * per,
                                                                            traffic[3] * per,
                                                                            secs};
    dl_progress_line(&E->pr, 0, "epoch %2d  loss %.4f  one rank %.4f  max |diff| %.2g  %.0f bytes/step (model %.0f)",
                     e + 1, r[M_LOSS], r[M_REF_LOSS], diff, r[M_BYTES], r[M_BYTES_MODEL]);
    return dl_table_add(&E->metrics, r);
}

static dl_status pipeline(dl_engine *E)
{
    lab07_run *R = E->ctx;
    static const int sweep[4] = {1, 2, 4, 8};
    R->n_pp = R->micro > 0 ? 1 : 4;
    for (int sc = 0; sc < 2; sc++) {
        if (R->schedule != 2 && R->schedule != sc)
            continue;
        for (int k = 0; k < R->n_pp; k++) {
            int m = R->micro > 0 ? R->micro : sweep[k];
            char dir[1200];
            if (R->dump != NULL)
                snprintf(dir, sizeof dir, "%s/%s-m%d", R->dump, pp_sched_names[sc], m);
            pp_result *r = &R->pp[sc][k];
            DL_TRY(pp_run(E, sc, m, (size_t)R->micro_rows, R->pp_steps, R->dump != NULL ? dir : NULL, r));
            dl_progress_line(&E->pr, 0,
                             "pipeline %-5s m %d: bubble %.3f (closed form %.3f), at most %d micro-batches' "
                             "activations held, max |diff| %.2g",
                             pp_sched_names[sc], m, r->bubble, r->bubble_model, r->peak_slots_max, r->max_diff);
        }
    }
    return DL_OK;
}

/* Part 3 (rank 0): every layout of the planner's machine, and the fastest that fits (your plan_best). */
static dl_status planner(dl_engine *E)
{
    lab07_run *R = E->ctx;
    if (E->rank != 0)
        return DL_OK;
    enum { MAX_LAYOUTS = 20000 };
    if ((R->layouts = calloc(MAX_LAYOUTS, sizeof *R->layouts)) == NULL)
        return dl_error_set(DL_ERR_NOMEM, "the planner's layouts");
    plan_machine mc = {.gpu = &R->plan_gpu, .gpus_per_node = R->gpus_per_node, .nodes = R->nodes};
    DL_TRY(plan_best(&R->pm, &mc, R->layouts, MAX_LAYOUTS, &R->n_layouts, &R->best)); // yours
    int fit = 0;
    for (int k = 0; k < R->n_layouts; k++)
        fit += R->layouts[k].fits;
    if (R->best < 0) {
        dl_progress_line(&E->pr, 0, "plan: %d layouts of %d x %d GPUs (%s); none fits", R->n_layouts, R->nodes,
                         R->gpus_per_node, R->plan_gpu.name);
        return DL_OK;
    }
    const plan_layout *b = &R->layouts[R->best];
    dl_progress_line(&E->pr, 0,
                     "plan: %d layouts of %d x %d GPUs (%s), %d fit; the fastest d %d x t %d x p %d, ZeRO %d: "
                     "%.3g s a step, %.1f GB a GPU",
                     R->n_layouts, R->nodes, R->gpus_per_node, R->plan_gpu.name, fit, b->d, b->t, b->p, b->zero,
                     b->step_s, b->mem_bytes / 1e9);
    return DL_OK;
}

static dl_status finish(dl_engine *E)
{
    lab07_run *R = E->ctx;
    if (does(R, PART_PP))
        DL_TRY(pipeline(E));
    if (does(R, PART_PLAN))
        DL_TRY(planner(E));
    if (!does(R, PART_TP))
        return DL_OK;
    const dl_dataset *te = E->data.has_test ? &E->data.test : &E->data.train;
    double right = 0, ref_right = 0;
    for (size_t at = 0; at < te->n; at += R->B) {
        size_t n = te->n - at < R->B ? te->n - at : R->B;
        DL_TRY(dl_batch_range(&R->batch, te, at, n));
        DL_TRY(tp_model_right(&R->M, R->batch.X, R->batch.y, n, &right));
        DL_TRY(dl_mlp_count_right(&R->ref, R->batch.X, R->batch.y, n));
    }
    DL_TRY(dl_mlp_take_right(&R->ref, &ref_right));
    R->test_acc = right / (double)te->n, R->ref_test_acc = ref_right / (double)te->n;
    dl_progress_line(&E->pr, 0,
                     "test accuracy %.4f split over %d rank(s), %.4f on one; largest parameter "
                     "difference over the run %.2g",
                     R->test_acc, E->P, R->ref_test_acc, R->max_diff);
    return DL_OK;
}

static dl_status files(dl_engine *E)
{
    lab07_run *R = E->ctx;
    if (R->dump != NULL && does(R, PART_TP))
        DL_TRY(tp_model_dump(&R->M, R->dump));
    if (E->rank != 0)
        return DL_OK;
    // what a run of another part left in --out would look like this run's
    static const char *const made[3][3] = {
        {"steps.csv"}, {"schedules.csv", "timeline.csv", "stages.csv"}, {"plan.csv"}};
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < 3 && made[part][k] != NULL && !does(R, part); k++)
            dl_csv_drop(E->a.out, made[part][k]);
    if (does(R, PART_PP))
        DL_TRY(pipeline_files(E));
    if (does(R, PART_PLAN))
        DL_TRY(plan_file(E));
    return does(R, PART_TP) ? dl_table_write(&R->steps, E->a.out, "steps.csv") : DL_OK;
}

static void plots(dl_engine *E, dl_plots *p)
{
    lab07_run *R = E->ctx;
    if (does(R, PART_PLAN) && R->best >= 0)
        dl_plots_draw(p, "plan", "data='%s/plan.csv'; mem=%g; nodes=%d; G=%d; gpu='%s'", E->a.out,
                      R->plan_gpu.gpu_mem / 1e9, R->nodes, R->gpus_per_node, R->plan_gpu.name);
    else
        dl_plots_skip(p, "plan");
    if (does(R, PART_TP)) {
        dl_plots_draw(p, "equivalence", "data='%s/steps.csv'; P=%d; diff=%g", E->a.out, E->P, R->max_diff);
        dl_plots_draw(p, "traffic", "data='%s/metrics.csv'", E->a.out);
    } else {
        dl_plots_skip(p, "equivalence"), dl_plots_skip(p, "traffic");
    }
    if (!does(R, PART_PP)) {
        dl_plots_skip(p, "schedules"), dl_plots_skip(p, "bubble"), dl_plots_skip(p, "stage_memory");
        return;
    }
    int m = R->pp[0][shown(R)].ops != NULL ? R->pp[0][shown(R)].m : R->pp[1][shown(R)].m;
    dl_plots_draw(p, "schedules", "data='%s/timeline.csv'; P=%d; m=%d", E->a.out, E->P, m);
    dl_plots_draw(p, "bubble", "data='%s/schedules.csv'; P=%d", E->a.out, E->P);
    dl_plots_draw(p, "stage_memory", "data='%s/stages.csv'; P=%d; m=%d", E->a.out, E->P, m);
}

static void summary(dl_json *j, const void *engine)
{
    const dl_engine *E = engine;
    const lab07_run *R = E->ctx;
    const dl_table *t = &E->metrics;
    double steps = (double)R->step;
    dl_json_str(j, "lab", "07");
    dl_json_int(j, "ranks", E->P);
    dl_json_str(j, "backend", dl_comm_backend(E->comm));
    dl_json_str(j, "device", dl_device_describe(&E->dev));
    dl_json_str(j, "hidden", E->t.hidden);
    if (does(R, PART_TP)) {
        dl_json_int(j, "blocks", R->M.K);
        dl_json_int(j, "parameters", (long long)R->ref.n_params);
        dl_json_int(j, "batch", (long long)R->B);
        dl_json_int(j, "steps", R->step);
        dl_json_num(j, "loss", t->n > 0 ? dl_table_at(t, t->n - 1, "loss") : NAN);
        dl_json_num(j, "ref_loss", t->n > 0 ? dl_table_at(t, t->n - 1, "ref_loss") : NAN);
        dl_json_num(j, "test_accuracy", R->test_acc);
        dl_json_num(j, "ref_test_accuracy", R->ref_test_acc);
    }
    if (does(R, PART_PLAN) && R->layouts != NULL) {
        dl_json_object(j, "plan");
        dl_json_str(j, "profile", R->plan_gpu.name);
        dl_json_int(j, "nodes", R->nodes);
        dl_json_int(j, "gpus_per_node", R->gpus_per_node);
        dl_json_int(j, "blocks", R->pm.layers);
        dl_json_num(j, "width", R->pm.width);
        dl_json_num(j, "parameters", R->pm.layers * (8 * R->pm.width * R->pm.width + 5 * R->pm.width));
        dl_json_int(j, "layouts", R->n_layouts);
        int fit = 0;
        for (int k = 0; k < R->n_layouts; k++)
            fit += R->layouts[k].fits;
        dl_json_int(j, "fitting", fit);
        if (R->best >= 0) {
            const plan_layout *b = &R->layouts[R->best];
            dl_json_object(j, "best");
            dl_json_int(j, "d", b->d), dl_json_int(j, "t", b->t), dl_json_int(j, "p", b->p);
            dl_json_int(j, "zero", b->zero);
            dl_json_bool(j, "tensor_inside_node", b->t <= R->gpus_per_node);
            dl_json_num(j, "step_s", b->step_s), dl_json_num(j, "mem_bytes", b->mem_bytes);
            dl_json_num(j, "bubble", b->bubble), dl_json_num(j, "compute_s", b->compute_s);
            dl_json_num(j, "tp_s", b->tp_s), dl_json_num(j, "pp_s", b->pp_s), dl_json_num(j, "dp_s", b->dp_s);
            dl_json_end_object(j);
        }
        dl_json_end_object(j);
    }
    if (does(R, PART_TP)) {
        dl_json_object(j, "tp");
        dl_json_num(j, "max_abs_diff", R->max_diff);
        dl_json_num(j, "loss_diff", R->loss_diff);
        dl_json_num(j, "tolerance", 1e-5);
        dl_json_num(j, "bytes_per_step", R->bytes / steps);
        dl_json_num(j, "bytes_per_step_model", R->bytes_model / steps);
        dl_json_num(j, "messages_per_step", R->msgs / steps);
        dl_json_num(j, "messages_per_step_model", R->msgs_model / steps);
        dl_json_num(j, "allreduces_per_step", E->P > 1 ? R->msgs / steps / (2.0 * (E->P - 1) * E->P) : 0);
        dl_json_int(j, "allreduces_per_step_model", E->P > 1 ? tp_model_allreduces(&R->M) : 0);
        dl_json_end_object(j);
    }
    if (!does(R, PART_PP))
        return;
    dl_json_object(j, "schedules");
    for (int sc = 0; sc < 2; sc++) {
        const pp_result *r = &R->pp[sc][shown(R)];
        if (r->ops == NULL)
            continue;
        dl_json_object(j, pp_sched_names[sc]);
        dl_json_int(j, "m", r->m);
        dl_json_int(j, "stages", E->P);
        dl_json_num(j, "bubble_measured", r->bubble);
        dl_json_num(j, "bubble_model", r->bubble_model);
        dl_json_int(j, "peak_slots", r->peak_slots_max);
        dl_json_num(j, "peak_activation_bytes", r->peak_bytes_max);
        dl_json_num(j, "max_abs_diff", r->max_diff);
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
}

static void teardown(dl_engine *E)
{
    lab07_run *R = E->ctx;
    for (int sc = 0; sc < 2; sc++)
        for (int k = 0; k < 4; k++)
            pp_result_free(&R->pp[sc][k]);
    tp_model_free(&R->M);
    free(R->layouts);
    dl_mlp_free(&R->ref);
    dl_batch_free(&R->batch);
    free(R->order);
    dl_table_free(&R->steps);
}

const dl_lab lab07 = {
    .prog = "lab07",
    .dir = "07-model-parallel",
    .about = "Lab 07: tensor parallelism, the MLP's blocks split over the ranks by your tp.c, trained beside the "
             "one-rank model. Start it with common/bin/dlrun -n P.",
    .train_opts = "hidden,momentum,weight-decay,max-steps",
    .epochs = 3,
    .metrics = metrics,
    .defaults = defaults,
    .options = options,
    .check = check,
    .setup = setup,
    .start = start,
    .epoch = epoch,
    .finish = finish,
    .files = files,
    .plots = plots,
    .summary = summary,
    .teardown = teardown,
    .flags = DL_LAB_NO_TRACE,
};
