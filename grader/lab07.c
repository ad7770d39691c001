/* lab07.c — lab 07's grader: tensor parallelism of an MLP block.
 *
 * Every expected value is the grader's own (lab07_ref.c, in double, from
 * the kit's check block; the split is its own arithmetic) and each item
 * judges the lab's point, naming the classic mistake when the evidence is
 * that mistake's own ([diagnosis: name], which grader/mutants/07-*.diff
 * trigger):
 * - tp_shards (worker): tp_shard for every rank of 1 to 4 against the
 *   grader's split: layer 1's rows, layer 2's columns, the whole b2.
 * - tp_forward, tp_backward (judge): the driver's --check on 2, 3 and 4
 *   real ranks (7 hidden units: uneven on 2, 3 and 4): every rank's Y, dX
 *   and gradients against the whole block's, in double.
 * - tp_equivalence (judge): a short training run on 3 ranks (uneven shards),
 *   every rank's shards at the end against the grader's own one-rank
 *   training of the same model on the same batches.
 * - tp_traffic (judge): the same run's bytes and messages, as the
 *   transport counted them, against the ring's closed form computed here:
 *   one allreduce of the activations forward and one of their gradients
 *   backward per block, none backward for the first. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/batch.h" // dl_batch
#include "dl/data.h" // dl_data_load
#include "dl/json.h" // dl_jv
#include "dl/mlp.h" // dl_mlp
#include "dl/ring.h" // dl_ring_bytes
#include "dl/rng.h" // dl_rng_permutation
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "lab07_ref.h"
#include "tp.h"

#define G7_SEED 5
#define G7_TOL 1e-5 /* float sums of at most 7 products of values below 2, in another order than double's */

static int near(double got, double want)
{
    return fabs(got - want) <= G7_TOL * (1 + fabs(want));
}

/* The first index where got (float) and want differ beyond the tolerance, or n. */
static size_t first_bad(const float *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!near(got[i], want[i]))
            return i;
    return n;
}

// ---- task 1, in-process ----

static float *fl(const double *a, size_t n) // a float copy (malloc'ed)
{
    float *f = malloc((n + 1) * sizeof *f);
    ck_assert_msg(f != NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        f[i] = (float)a[i];
    return f;
}

START_TEST(test_shards)
{
    gr7_whole w;
    gr7_whole_of(G7_SEED, &w);
    float *W1 = fl(w.W1, G7_H * G7_I), *b1 = fl(w.b1, G7_H), *W2 = fl(w.W2, G7_O * G7_H), *b2 = fl(w.b2, G7_O);
    dl_mlp_layer first = {.in = G7_I, .out = G7_H, .W = W1, .b = b1},
                 second = {.in = G7_H, .out = G7_O, .W = W2, .b = b2};
    dl_device dev;
    GR_OK(dl_device_open("cpu", &dev));
    for (int P = 1; P <= 4; P++)
        for (int r = 0; r < P; r++) {
            gr7_rank ref;
            gr7_rank_of(&w, P, r, &ref);
            size_t h = ref.h, h0 = ref.h0;
            float W1s[G7_H * G7_I] = {0}, b1s[G7_H] = {0}, W2s[G7_O * G7_H] = {0}, b2s[G7_O] = {0};
            tp_block b = {
                .dev = &dev, .P = P, .r = r, .in = G7_I, .hidden = G7_H, .out = G7_O, .h0 = h0, .h = h, .max_batch = 1};
            b.col = (dl_mlp_layer){.in = G7_I, .out = h, .W = W1s, .b = b1s};
            b.row = (dl_mlp_layer){.in = h, .out = G7_O, .W = W2s, .b = b2s};
            dl_status st = tp_shard(&b, &first, &second);
            if (st != DL_OK)
                GR_FAIL("tp_shard, rank %d of %d: %s: %s", r, P, dl_status_name(st), dl_last_error());
            int w2_rows = 1, w1_cols = 1, at_zero = h0 > 0;
            for (size_t k = 0; k < h * G7_O; k++) // W2 (out, hidden) read as if it were (hidden, out): rows h0..
                w2_rows &= W2s[k] == W2[h0 * G7_O + k];
            for (size_t j = 0; j < h; j++)
                for (size_t i = 0; i < G7_I; i++) {
                    w1_cols &= W1s[j * G7_I + i] == W1[i * G7_H + h0 + j]; // W1 read as if it were (in, hidden)
                    at_zero &= W1s[j * G7_I + i] == W1[j * G7_I + i];
                }
            if (P > 1 && (w2_rows || w1_cols) &&
                first_bad(W1s, ref.W1, h * G7_I) + first_bad(W2s, ref.W2, G7_O * h) < h * G7_I + G7_O * h)
                GR_FAIL(GR_DIAG("split-transposed") "tp_shard, rank %d of %d: %s holds the elements of the weight "
                                                    "read as (%s), not as the kit stores it, W (out, in): rank %d's "
                                                    "hidden units are rows %zu..%zu of W1 (%d, %d) and columns "
                                                    "%zu..%zu of W2 (%d, %d)",
                        r, P, w1_cols ? "col.W" : "row.W", w1_cols ? "in, hidden" : "hidden, out", r, h0, h0 + h - 1,
                        G7_H, G7_I, h0, h0 + h - 1, G7_O, G7_H);
            if (at_zero && first_bad(W1s, ref.W1, h * G7_I) < h * G7_I)
                GR_FAIL(GR_DIAG("shard-offset") "tp_shard, rank %d of %d: col.W holds rows 0..%zu of W1, rank 0's, "
                                                "not rows %zu..%zu: every rank's shard starts at its own h0",
                        r, P, h - 1, h0, h0 + h - 1);
            size_t bad = first_bad(W1s, ref.W1, h * G7_I);
            if (bad < h * G7_I)
                GR_FAIL("tp_shard, rank %d of %d: col.W[%zu][%zu] = %g, expected W1[%zu][%zu] = %g", r, P, bad / G7_I,
                        bad % G7_I, W1s[bad], h0 + bad / G7_I, bad % G7_I, ref.W1[bad]);
            if ((bad = first_bad(b1s, ref.b1, h)) < h)
                GR_FAIL("tp_shard, rank %d of %d: col.b[%zu] = %g, expected b1[%zu] = %g", r, P, bad, b1s[bad],
                        h0 + bad, ref.b1[bad]);
            if ((bad = first_bad(W2s, ref.W2, G7_O * h)) < G7_O * h)
                GR_FAIL("tp_shard, rank %d of %d: row.W[%zu][%zu] = %g, expected W2[%zu][%zu] = %g", r, P, bad / h,
                        bad % h, W2s[bad], bad / h, h0 + bad % h, ref.W2[bad]);
            if ((bad = first_bad(b2s, ref.b2, G7_O)) < G7_O)
                GR_FAIL("tp_shard, rank %d of %d: row.b[%zu] = %g, expected the whole b2's, %g: every rank holds "
                        "all of layer 2's bias (the sum over ranks adds it once)",
                        r, P, bad, b2s[bad], ref.b2[bad]);
        }
    dl_device_close(&dev);
    free(W1), free(b1), free(W2), free(b2);
}
END_TEST

// ---- tasks 2 and 3: the driver's --check on P ranks ----

/* Rank r's array NAME from the check run (on P ranks), malloc'ed, of n values (failing otherwise). */
static float *checked(const char *run, int P, int r, const char *name, size_t n)
{
    char file[1400];
    snprintf(file, sizeof file, "%s/out/r%d_%s.npy", run, r, name);
    size_t got = 0;
    float *a = gr_load_npy(file, &got);
    if (got != n)
        GR_FAIL("the check on %d rank(s): rank %d's %s holds %zu values, expected %zu", P, r, name, got, n);
    return a;
}

/* The driver's --check on P ranks (0: one, without the launcher) into run, on device (NULL: the CPU). */
static void run_check(const char *run, int P, const char *device)
{
    char args[200];
    snprintf(args, sizeof args, "--check out --seed %d%s%s", G7_SEED, device != NULL ? " --device " : "",
             device != NULL ? device : "");
    int rc = gr_run_driver(P, run, args);
    if (rc != 0)
        gr_fail_run(run, rc);
}

/* Every rank's Y from the check run on P ranks against the block's. */
static void check_forward(const gr7_whole *w, const char *run, int P)
{
    int ranks = P > 0 ? P : 1;
    for (int r = 0; r < ranks; r++) {
        gr7_rank ref;
        gr7_rank_of(w, ranks, r, &ref);
        float *Y = checked(run, ranks, r, "Y", G7_N * G7_O);
        size_t bad = first_bad(Y, ref.Y, G7_N * G7_O), n = G7_N * G7_O;
        if (bad < n) {
            int part = 1, part_b = 1, extra = 0; // extra: b2 added this many times too many, when that is all
            for (size_t i = 0; i < n; i++) {
                part &= near(Y[i], ref.Y_part[i]);
                part_b &= near(Y[i], ref.Y_part[i] + w->b2[i % G7_O]);
            }
            for (int k = 1; k <= ranks && !extra; k++) {
                int all = 1;
                for (size_t i = 0; i < n && all; i++)
                    all = near(Y[i], ref.Y[i] + k * w->b2[i % G7_O]);
                extra = all ? k : 0;
            }
            if (extra > 0 && ranks > 1)
                GR_FAIL(GR_DIAG("bias-added-P-times") "%d ranks, rank %d: Y is the block's output plus b2 %d more "
                                                      "time(s): b2 was added before the sum over ranks, where each "
                                                      "rank's copy counts. Add it once, after the allreduce",
                        ranks, r, extra);
            if ((part || part_b) && ranks > 1)
                GR_FAIL(GR_DIAG("forward-allreduce-missing") "%d ranks, rank %d: Y holds only the sum over this "
                                                             "rank's hidden units %zu..%zu%s: each rank's output "
                                                             "is a partial sum until the ranks add them up",
                        ranks, r, ref.h0, ref.h0 + ref.h - 1, part_b ? " (plus b2)" : "");
            GR_FAIL("%s, %d rank(s), rank %d: Y[%zu][%zu] = %g, expected %g", run, ranks, r, bad / G7_O, bad % G7_O,
                    Y[bad], ref.Y[bad]);
        }
        free(Y);
    }
}

typedef void (*check_fn)(const gr7_whole *w, const char *run, int P);

/* check on the --check runs of 2, 3 and 4 ranks (7 hidden units: uneven on each), then say what passed. */
static void on_cpu_ranks(check_fn check, const char *passed)
{
    gr7_whole w;
    gr7_whole_of(G7_SEED, &w);
    for (int P = 2; P <= 4; P++) {
        char run[16];
        snprintf(run, sizeof run, "check%d", P);
        run_check(run, P, NULL);
        check(&w, run, P);
    }
    gr_note("%s right on every rank of 2, 3 and 4 (7 hidden units)", passed);
}

START_TEST(test_forward)
{
    on_cpu_ranks(check_forward, "Y");
}
END_TEST

/* Every rank's dX and gradients from the check run on P ranks against the block's. */
static void check_backward(const gr7_whole *w, const char *run, int P)
{
    int ranks = P > 0 ? P : 1;
    for (int r = 0; r < ranks; r++) {
        gr7_rank ref;
        gr7_rank_of(w, ranks, r, &ref);
        size_t h = ref.h, nx = G7_N * G7_I;
        float *dX = checked(run, ranks, r, "dX", nx);
        size_t bad = first_bad(dX, ref.dX, nx);
        if (bad < nx && ranks > 1 && first_bad(dX, ref.dX_part, nx) == nx)
            GR_FAIL(GR_DIAG("backward-allreduce-missing") "%d ranks, rank %d: dX holds only the gradient "
                                                          "through this rank's hidden units %zu..%zu: X reaches "
                                                          "the loss through every rank's units, so its gradient "
                                                          "is the sum over ranks",
                    ranks, r, ref.h0, ref.h0 + h - 1);
        if (bad < nx)
            GR_FAIL("%s, %d rank(s), rank %d: dX[%zu][%zu] = %g, expected %g", run, ranks, r, bad / G7_I, bad % G7_I,
                    dX[bad], ref.dX[bad]);
        free(dX);
        const char *names[] = {"gW1", "gb1", "gW2", "gb2"};
        const double *want[] = {ref.gW1, ref.gb1, ref.gW2, ref.gb2};
        size_t counts[] = {h * G7_I, h, G7_O * h, G7_O};
        for (int k = 0; k < 4; k++) {
            float *g = checked(run, ranks, r, names[k], counts[k]);
            if ((bad = first_bad(g, want[k], counts[k])) < counts[k]) {
                int summed = k == 3 && ranks > 1;
                for (size_t i = 0; i < counts[k] && summed; i++)
                    summed = near(g[i], ranks * want[k][i]);
                if (summed)
                    GR_FAIL(GR_DIAG("bias-gradient-summed") "%d ranks, rank %d: row.gb is %d times b2's gradient: "
                                                            "every rank already holds the whole dY, and so the "
                                                            "whole gradient of b2; summing it over ranks counts "
                                                            "it %d times",
                            ranks, r, ranks, ranks);
                GR_FAIL("%s, %d rank(s), rank %d: %s[%zu] = %g, expected %g", run, ranks, r, names[k], bad, g[bad],
                        want[k][bad]);
            }
            free(g);
        }
    }
}

START_TEST(test_backward)
{
    on_cpu_ranks(check_backward, "dX and every gradient");
}
END_TEST

/* The GPU tiers: the same check on device memory, one GPU (a world of one) and four (NCCL moves the data). */
/* The check on P GPUs (0: one, a world of one), forward and backward. */
static void on_gpus(const char *run, int P)
{
    gr7_whole w;
    gr7_whole_of(G7_SEED, &w);
    run_check(run, P, "cuda");
    check_forward(&w, run, P);
    check_backward(&w, run, P);
    gr_note("%s: Y, dX and every gradient right on every rank", run);
}

START_TEST(test_gpu1)
{
    on_gpus("gpu1", 0);
}
END_TEST

START_TEST(test_gpu4)
{
    on_gpus("gpu4", 4);
}
END_TEST

// ---- the training run: equivalence and traffic ----

#define G7_RUN_P 3
#define G7_DATA "fashion_mnist:train=1000,test=100"
#define G7_HIDDEN_ARG "25,16,25" /* 25 hidden units: 9, 8, 8 on 3 ranks */
#define G7_BATCH 32
#define G7_STEPS 20
#define G7_LR 0.05
#define G7_MU 0.9
#define G7_WD 5e-4

static void run_train(void)
{
    char args[600];
    snprintf(args, sizeof args,
             "--data %s --hidden %s --batch-size %d --max-steps %d --epochs 1 --lr %g --momentum %g "
             "--weight-decay %g --seed %d --dump shards",
             G7_DATA, G7_HIDDEN_ARG, G7_BATCH, G7_STEPS, G7_LR, G7_MU, G7_WD, G7_SEED);
    int rc = gr_run_driver(G7_RUN_P, "train", args);
    if (rc != 0)
        gr_fail_run("train", rc);
}

START_TEST(test_equivalence)
{
    run_train();
    dl_data data;
    GR_OK(dl_data_load(G7_DATA, &data));
    const dl_dataset *tr = &data.train;
    size_t sizes[5] = {tr->d, 25, 16, 25, (size_t)tr->n_classes}, *order = malloc(tr->n * sizeof *order);
    dl_mlp m;
    dl_batch batch;
    GR_OK(dl_mlp_create(&m, dl_cpu(), sizes, 5, G7_BATCH, G7_SEED));
    GR_OK(dl_batch_create(&batch, dl_cpu(), G7_BATCH, tr->d));
    dl_rng g;
    dl_rng_seed(&g, G7_SEED, 11); // epoch 0's order, as the driver draws it
    dl_rng_permutation(&g, order, tr->n);
    for (size_t s = 0; s < G7_STEPS; s++) { // the one-rank model on the same batches
        GR_OK(dl_batch_gather(&batch, tr, order + s * G7_BATCH, G7_BATCH));
        GR_OK(dl_mlp_forward(&m, batch.X, G7_BATCH));
        GR_OK(dl_mlp_loss(&m, batch.y, G7_BATCH, NULL));
        GR_OK(dl_mlp_backward(&m, batch.X, G7_BATCH, 0, NULL, NULL));
        GR_OK(dl_mlp_sgd(&m, (float)G7_LR, (float)G7_MU, (float)G7_WD));
    }
    double worst = 0;
    for (int k = 0; k < 2; k++) {
        const dl_mlp_layer *A = &m.layer[2 * k], *Z = &m.layer[2 * k + 1];
        size_t H = A->out, I = A->in, O = Z->out;
        for (int r = 0; r < G7_RUN_P; r++) {
            size_t h = dl_ring_offset(H, G7_RUN_P, r + 1) - dl_ring_offset(H, G7_RUN_P, r), n[4] = {h * I, h, O * h, O};
            const char *what[4] = {"W1", "b1", "W2", "b2"};
            for (int j = 0; j < 4; j++) {
                char file[1400];
                snprintf(file, sizeof file, "train/shards/r%d_b%d_%s.npy", r, k, what[j]);
                size_t got = 0;
                float *a = gr_load_npy(file, &got);
                if (got != n[j])
                    GR_FAIL("block %d, rank %d: %s holds %zu values after the run, expected %zu", k, r, what[j], got,
                            n[j]);
                for (size_t i = 0; i < n[j]; i++) {
                    double d = fabs(a[i] - gr7_shard_at(A, Z, G7_RUN_P, r, j, i));
                    worst = d > worst || d != d ? d : worst;
                }
                free(a);
            }
        }
    }
    dl_batch_free(&batch);
    dl_mlp_free(&m);
    dl_data_free(&data);
    free(order);
    if (!(worst <= 1e-5))
        GR_FAIL("after %d steps on %d ranks, a parameter is %.3g away from the one-rank model's (tolerance 1e-5): "
                "the split model is another model",
                G7_STEPS, G7_RUN_P, worst);
    gr_note("%d steps on %d ranks: every parameter within %.2g of the one-rank model's", G7_STEPS, G7_RUN_P, worst);
}
END_TEST

START_TEST(test_traffic)
{
    run_train();
    dl_jv *s = gr_summary("train");
    const dl_jv *tp = dl_jv_get(s, "tp");
    double bytes = dl_jv_num(dl_jv_get(tp, "bytes_per_step"), -1),
           msgs = dl_jv_num(dl_jv_get(tp, "messages_per_step"), -1);
    dl_jv_free(s);
    // the closed form here: block 0 (784 -> 25 -> 16) allreduces n x 16 forward; block 1 (16 -> 25 -> 10)
    // n x 10 forward and n x 16 backward; every rank's bytes, one step of G7_BATCH rows
    size_t ar[3] = {G7_BATCH * 16, G7_BATCH * 10, G7_BATCH * 16};
    double want = 0, want_msgs = 0;
    for (int r = 0; r < G7_RUN_P; r++)
        for (int k = 0; k < 3; k++)
            want += (double)dl_ring_bytes(ar[k], G7_RUN_P, r, 4), want_msgs += 2 * (G7_RUN_P - 1);
    if (bytes == want && msgs == want_msgs) {
        gr_note("%.0f bytes and %.0f messages a step on %d ranks, as the closed form says", bytes, msgs, G7_RUN_P);
        return;
    }
    double one = (double)dl_ring_bytes(G7_BATCH * 16, G7_RUN_P, 0, 4) * G7_RUN_P;
    if (bytes < want && fabs(want - bytes - one) < 1)
        GR_FAIL(GR_DIAG("backward-allreduce-missing") "%.0f bytes a step on %d ranks, the closed form's %.0f less one "
                                                      "allreduce of n x 16 activations' gradients: block 2's dX was "
                                                      "never summed",
                bytes, G7_RUN_P, want);
    if (bytes < want)
        GR_FAIL(GR_DIAG("too-few-allreduces") "%.0f bytes a step on %d ranks, less than the closed form's %.0f: one "
                                              "allreduce forward per block and one backward per block but the first",
                bytes, G7_RUN_P, want);
    GR_FAIL(GR_DIAG("extra-traffic") "%.0f bytes (%.0f messages) a step on %d ranks, more than the closed form's %.0f "
                                     "(%.0f): the first block's dX is not needed (its input is the data), and nothing "
                                     "else moves",
            bytes, msgs, G7_RUN_P, want, want_msgs);
}
END_TEST

static const gr_item items[] = {
    GR_ITEM(test_shards, "tp_shards", "tp_shard: layer 1's rows, layer 2's columns, the whole b2, on 1-4 ranks", 15,
            GR_CPU, NULL, "rank r's hidden units are rows of W1 and columns of W2 in the kit's (out, in) layout",
            "task-1-the-shard-15-points", 30, GR_WORKER),
    GR_ITEM(test_forward, "tp_forward", "tp_forward on 2, 3, 4 ranks: the whole Y on every rank, b2 once", 20, GR_CPU,
            "tp_shards", "each rank's Y is a partial sum over its own hidden units until the ring adds them",
            "task-2-forward-20-points", 120, GR_JUDGE),
    GR_ITEM(test_backward, "tp_backward", "tp_backward on 2, 3, 4 ranks: every gradient, dX whole on every rank", 20,
            GR_CPU, "tp_forward", "X feeds every rank's hidden units: its gradient is a sum over ranks",
            "task-3-backward-20-points", 120, GR_JUDGE),
    GR_ITEM(test_equivalence, "tp_equivalence", "20 steps on 3 ranks: every shard within 1e-5 of the one-rank model",
            15, GR_CPU, "tp_backward", "when tp_forward and tp_backward pass, read the run's log", "what-the-run-shows",
            180, GR_JUDGE),
    GR_ITEM(test_traffic, "tp_traffic", "the bytes and messages a step, exactly the ring's closed form", 10, GR_CPU,
            "tp_backward", "one allreduce forward per block, one backward per block but the first", "the-traffic", 180,
            GR_JUDGE),
    GR_ITEM(gr_test_pp_layers, "pp_layers", "pp_layers: runs of consecutive layers, as equal as they can be", 10,
            GR_CPU, NULL, "the first L mod P stages one layer longer", "task-4-the-stages-10-points", 30, GR_WORKER),
    GR_ITEM(gr_test_pp_gpipe, "pp_gpipe",
            "GPipe on 3 ranks: the one-rank model, every forward first, bubble (P - 1)/(m + P - 1)", 20, GR_CPU,
            "pp_layers", "each micro-batch's loss weighs 1/m of the step's", "task-5-gpipe-20-points", 120, GR_JUDGE),
    GR_ITEM(gr_test_pp_1f1b, "pp_1f1b",
            "1F1B on 3 ranks: the one-rank model, at most P - s micro-batches held, the same bubble", 25, GR_CPU,
            "pp_gpipe", "hold no more micro-batches than the stages after this one need to stay busy",
            "task-6-1f1b-35-points", 120, GR_JUDGE),
    GR_ITEM(gr_test_pp_deadlock, "pp_deadlock", "1F1B on 4 ranks with messages above the eager limit runs to the end",
            10, GR_CPU, "pp_1f1b", "where neighbours send to each other at once, one exchange",
            "above-the-eager-limit-10-points", 120, GR_JUDGE),
    GR_ITEM(gr_test_plan_memory, "plan_memory", "plan_memory: parameters, state, activations of every layout", 10,
            GR_CPU, NULL, "16 bytes a parameter, ZeRO's share, 1F1B's micro-batches on stage 0",
            "task-7-memory-10-points", 60, GR_WORKER),
    GR_ITEM(gr_test_plan_time, "plan_time", "plan_time: compute with its bubble, tensor, pipeline and data traffic", 15,
            GR_CPU, NULL, "each term as planner.h states it: the message names the one that differs",
            "task-8-time-15-points", 60, GR_WORKER),
    GR_ITEM(gr_test_plan_best, "plan_best", "plan_best: every layout, the fastest that fits; PTD-P's choice", 15,
            GR_CPU, "plan_time", "the fastest of those that fit", "task-9-the-plan-15-points", 60, GR_WORKER),
    GR_ITEM(test_gpu1, "gpu1", "one GPU: tasks 1-3 on device memory, as on the CPU", 5, GR_GPU1, "tp_backward",
            "the same code: dl/layer.h and the ring take device pointers", "running-on-gpus", 300, GR_JUDGE),
    GR_ITEM(test_gpu4, "gpu4", "four GPUs: tasks 1-3 on every rank, the ring over NCCL", 5, GR_GPU4, "tp_backward",
            "one GPU per rank (dlrun -n 4 --device cuda)", "running-on-gpus", 600, GR_JUDGE),
    GR_ITEM(gr_test_pp_gpu4, "gpu4_pp", "four GPUs: 1F1B, one stage a GPU, as on the CPU", 5, GR_GPU4, "pp_1f1b",
            "one GPU per rank: the stages' messages go through NCCL", "running-on-gpus", 600, GR_JUDGE),
};

GR_LAB("07", "the model split itself: tensor parallelism by hand", "07-model-parallel", items);
