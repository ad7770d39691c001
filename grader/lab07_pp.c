/* lab07_pp.c — lab 07's pipeline items (part 2), for lab07.c's table.
 *
 * - pp_layers (worker): pp_layers for every L of 1 to 8 and P of 1 to L
 *   against the grader's split (lab07_ref.c).
 * - pp_gpipe, pp_1f1b (judge): the driver's pipeline on 3 ranks (4 layers:
 *   stages of 2, 1, 1), 4 micro-batches of 8 rows (messages of 1 KiB at
 *   most, below the eager limit) for 3 steps, each rank's
 *   stage dumped: its layers against the grader's own one-rank training on
 *   the same batches; its order (the kit's record) and its peak of slots
 *   held; the bubble of the orders from the kit's pp_sim (forward 1,
 *   backward 2) against (P − 1)/(m + P − 1).
 * - pp_deadlock (judge): 1F1B on 4 ranks with activations of 8 KiB and more
 *   a message, above Open MPI's eager limit: it must finish; a hang is
 *   named from the watchdog's line (which names the ranks). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // free
#include <string.h> // strstr

#include "dl/batch.h" // dl_batch
#include "dl/data.h" // dl_data_load
#include "dl/fs.h" // dl_read_file
#include "dl/mlp.h" // dl_mlp
#include "dl/ops.h" // dl_scale
#include "dl/rng.h" // dl_rng_permutation
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "lab07_ref.h"
#include "pipe.h"
#include "pipe_kit.h" // pp_sim, PP_OP

#define G7P_DATA "fashion_mnist:train=1000,test=100"
#define G7P_HIDDEN "32,24,16" /* 784 -> 32 -> 24 -> 16 -> 10: 4 layers */
#define G7P_ROWS 8 /* a micro-batch: messages of 8 x 32 floats (1 KiB) at most, below the eager limit */
#define G7P_WIDE_HIDDEN "128,96,64" /* pp_deadlock's: 8 KiB at the narrowest, above it */
#define G7P_WIDE_ROWS 32
#define G7P_M 4
#define G7P_STEPS 3
#define G7P_SEED 5
#define G7P_LR 0.05
#define G7P_MU 0.9
#define G7P_WD 5e-4

GR_TEST(test_pp_layers)
{
    int a = 0, b = 0;
    if (pp_layers(3, 4, 0, &a, &b) != DL_ERR_ARG)
        GR_FAIL("pp_layers(L = 3, P = 4) must return DL_ERR_ARG: 4 stages of at least one layer need 4 layers");
    // first every split's shape (one run, cut in pieces of about equal length), then where the longer ones are
    for (int pass = 0; pass < 2; pass++)
        for (int L = 1; L <= 8; L++)
            for (int P = 1; P <= L; P++) {
                int end = 0, longest = 0, shortest = L;
                for (int s = 0; s < P; s++) {
                    int f = -1, l = -1, wf, wl;
                    dl_status st = pp_layers(L, P, s, &f, &l);
                    if (st != DL_OK)
                        GR_FAIL("pp_layers(L = %d, P = %d, s = %d) returned %s: %s", L, P, s, dl_status_name(st),
                                dl_last_error());
                    gr7_layers(L, P, s, &wf, &wl);
                    if (pass == 0 && (f != end || l <= f))
                        GR_FAIL(GR_DIAG("stages-not-contiguous") "pp_layers(L = %d, P = %d): stage %d holds layers "
                                                                 "%d .. %d, but stage %d ended at layer %d: the "
                                                                 "stages are one run of layers cut into pieces of "
                                                                 "at least one, each starting where the one before "
                                                                 "ended",
                                L, P, s, f, l - 1, s - 1, end - 1);
                    if (pass == 1 && (f != wf || l != wl))
                        GR_FAIL("pp_layers(L = %d, P = %d): stage %d holds layers %d .. %d, expected %d .. %d (the "
                                "first L mod P stages one layer longer)",
                                L, P, s, f, l - 1, wf, wl - 1);
                    longest = l - f > longest ? l - f : longest;
                    shortest = l - f < shortest ? l - f : shortest;
                    end = l;
                }
                if (pass == 0 && end != L)
                    GR_FAIL(GR_DIAG("stages-not-contiguous") "pp_layers(L = %d, P = %d): the last stage ends at layer "
                                                             "%d, not at the model's last, %d",
                            L, P, end - 1, L - 1);
                if (pass == 0 && longest - shortest > 1)
                    GR_FAIL(GR_DIAG("stages-unbalanced") "pp_layers(L = %d, P = %d): stages of %d to %d layers: the "
                                                         "slowest stage sets the pipeline's pace, so their lengths "
                                                         "differ by one at most",
                            L, P, shortest, longest);
            }
}
END_TEST

/* The driver's pipeline with schedule on P ranks into run (once per grading), its stages dumped; wide: messages
 * above the eager limit. */
static void run_pp(const char *run, const char *schedule, int P, int wide, const char *device)
{
    char args[600];
    snprintf(args, sizeof args,
             "--part pp --schedule %s --micro %d --micro-rows %d --pp-steps %d --data %s --hidden %s --seed %d "
             "--lr %g --momentum %g --weight-decay %g --dump stages%s%s",
             schedule, G7P_M, wide ? G7P_WIDE_ROWS : G7P_ROWS, G7P_STEPS, G7P_DATA, wide ? G7P_WIDE_HIDDEN : G7P_HIDDEN,
             G7P_SEED, G7P_LR, G7P_MU, G7P_WD, device != NULL ? " --device " : "", device != NULL ? device : "");
    // a few small steps: ranks that wait for each other 10 s are deadlocked, caught in 10 s
    gr_set_watchdog(10);
    int rc = gr_run_driver(P, run, args);
    gr_set_watchdog(0);
    if (rc == 0)
        return;
    char path[1300], *text = NULL;
    snprintf(path, sizeof path, "%s.log", gr_path(run));
    if (dl_read_file(path, &text, NULL) == DL_OK) {
        const char *hit = strstr(text, "released before its backward"), *timed = strstr(text, " timed out");
        if (hit != NULL) {
            const char *line = hit;
            while (line > text && line[-1] != '\n')
                line--;
            GR_FAIL(GR_DIAG("released-early") "the %s run on %d ranks stopped: %.*s. A micro-batch's activations "
                                              "are what its backward reads: give its slot back after its backward, "
                                              "never before",
                    schedule, P, (int)strcspn(line, "\n"), line);
        }
        if (timed != NULL) {
            const char *line = timed;
            while (line > text && line[-1] != '\n')
                line--;
            GR_FAIL(GR_DIAG("deadlock") "the %s run on %d ranks hung until the watchdog stopped it: %.*s. Two "
                                        "neighbouring stages each sent first and waited for the other to receive: "
                                        "above the transport's eager limit a send waits for its receive. Where a "
                                        "stage sends one way while its neighbour sends the other, pair them in one "
                                        "exchange (dl_comm_sendrecv)",
                    schedule, P, (int)strcspn(line, "\n"), line);
        }
        free(text);
    }
    gr_fail_run(run, rc);
}

/* Rank r's dumped array NAME of run, *n values (malloc'ed). */
static float *stage_array(const char *run, const char *schedule, int r, const char *name, size_t *n)
{
    char file[600];
    snprintf(file, sizeof file, "%s/stages/%s-m%d/r%d_%s.npy", run, schedule, G7P_M, r, name);
    return gr_load_npy(file, n);
}

/* The one-rank model after the steps, trained on the pipeline's batches (scale: its gradients times it, the
 * mistake of a loss not weighed by 1/m when m). */
static void reference(dl_mlp *m, float scale)
{
    dl_data data;
    GR_OK(dl_data_load(G7P_DATA, &data));
    const dl_dataset *tr = &data.train;
    size_t sizes[5] = {tr->d, 32, 24, 16, (size_t)tr->n_classes}, B = G7P_M * G7P_ROWS;
    size_t *order = malloc(tr->n * sizeof *order);
    dl_batch batch;
    GR_OK(dl_mlp_create(m, dl_cpu(), sizes, 5, B, G7P_SEED));
    GR_OK(dl_batch_create(&batch, dl_cpu(), B, tr->d));
    dl_rng g;
    dl_rng_seed(&g, G7P_SEED, 13); // the driver's order of the pipeline's rows
    dl_rng_permutation(&g, order, tr->n);
    for (size_t k = 0; k < G7P_STEPS; k++) {
        GR_OK(dl_batch_gather(&batch, tr, order + (k * B) % (tr->n - B + 1), B));
        GR_OK(dl_mlp_forward(m, batch.X, B));
        GR_OK(dl_mlp_loss(m, batch.y, B, NULL));
        GR_OK(dl_mlp_backward(m, batch.X, B, 0, NULL, NULL));
        if (scale != 1.0f)
            GR_OK(dl_scale(dl_cpu(), m->grads, m->n_params, DL_F32, scale));
        GR_OK(dl_mlp_sgd(m, (float)G7P_LR, (float)G7P_MU, (float)G7P_WD));
    }
    dl_batch_free(&batch);
    dl_data_free(&data);
    free(order);
}

/* The largest |difference| of every rank's dumped layers from m's. */
static double stages_vs(const char *run, const char *schedule, int P, const dl_mlp *m)
{
    double worst = 0;
    for (int r = 0; r < P; r++) {
        size_t n = 0;
        float *meta = stage_array(run, schedule, r, "stage", &n);
        if (n != 4)
            GR_FAIL("the %s run: rank %d's stage record holds %zu values, expected 4", schedule, r, n);
        int first = (int)meta[0], last = (int)meta[1];
        free(meta);
        for (int l = first; l < last; l++) {
            char name[16];
            snprintf(name, sizeof name, "layer%d", l);
            const dl_mlp_layer *L = &m->layer[l];
            float *a = stage_array(run, schedule, r, name, &n);
            if (n != L->in * L->out + L->out)
                GR_FAIL("the %s run: rank %d's layer %d holds %zu values, expected %zu", schedule, r, l, n,
                        L->in * L->out + L->out);
            for (size_t i = 0; i < n; i++) {
                double want = i < L->in * L->out ? L->W[i] : L->b[i - L->in * L->out], d = fabs(a[i] - want);
                worst = d > worst || d != d ? d : worst;
            }
            free(a);
        }
    }
    return worst;
}

/* The run's stages against the one-rank model: within 1e-5, or the mistake named. */
static void check_equivalence(const char *run, const char *schedule, int P)
{
    dl_mlp m;
    reference(&m, 1.0f);
    double worst = stages_vs(run, schedule, P, &m);
    dl_mlp_free(&m);
    if (worst <= 1e-5)
        return;
    reference(&m, (float)G7P_M);
    double unscaled = stages_vs(run, schedule, P, &m);
    dl_mlp_free(&m);
    if (unscaled <= 1e-5)
        GR_FAIL(GR_DIAG("loss-not-scaled") "the %s run on %d ranks: after %d steps the stages equal a model whose "
                                           "gradients were %d times too large: each of the %d micro-batches' losses "
                                           "weighs 1/%d of the step's (pp_backward's scale at the last stage)",
                schedule, P, G7P_STEPS, G7P_M, G7P_M, G7P_M);
    GR_FAIL("the %s run on %d ranks: after %d steps a parameter is %.3g from the one-rank model's trained on the same "
            "batches (tolerance 1e-5)",
            schedule, P, G7P_STEPS, worst);
}

/* Every rank's order and peak; the bubble of the orders. */
static double orders(const char *run, const char *schedule, int P, int *ops, int *peak)
{
    for (int r = 0; r < P; r++) {
        size_t n = 0;
        float *o = stage_array(run, schedule, r, "ops", &n), *meta = stage_array(run, schedule, r, "stage", &n);
        for (int j = 0; j < 2 * G7P_M; j++)
            ops[r * 2 * G7P_M + j] = (int)o[j];
        peak[r] = (int)meta[2];
        free(o), free(meta);
    }
    double T = 0;
    if (pp_sim(ops, P, G7P_M, 1.0, 2.0, NULL, NULL, &T) != DL_OK)
        GR_FAIL("the %s run on %d ranks: the stages' recorded orders cannot make a schedule: %s", schedule, P,
                dl_last_error());
    return 1.0 - G7P_M * 3.0 / T;
}

#define G7P_MAX_P 4

/* One graded pipeline run: schedule on P ranks (device NULL: the CPU) against the one-rank model, each stage's
 * order into ops (P x 2m) and peak into peak; the bubble of the orders checked against the closed form. */
static void graded(const char *run, const char *schedule, int P, const char *device, int *ops, int *peak)
{
    run_pp(run, schedule, P, 0, device);
    check_equivalence(run, schedule, P);
    double bubble = orders(run, schedule, P, ops, peak), model = (P - 1.0) / (G7P_M + P - 1.0);
    if (fabs(bubble - model) > 1e-9)
        GR_FAIL("%s on %d ranks, %d micro-batches: the bubble of the stages' orders is %.4f, the closed form "
                "(P - 1)/(m + P - 1) %.4f: a stage waits where it need not",
                schedule, P, G7P_M, bubble, model);
}

/* 1F1B's bound on what stage r holds, min(m, P - s), named as not-1f1b when a stage held every micro-batch. */
static void check_1f1b_peaks(const char *where, int P, const int *peak)
{
    for (int r = 0; r < P; r++) {
        int bound = G7P_M < P - r ? G7P_M : P - r;
        if (peak[r] > bound && peak[r] == G7P_M)
            GR_FAIL(GR_DIAG("not-1f1b") "1F1B on %d %s: stage %d held all %d micro-batches' activations at once: "
                                        "it ran every forward before its first backward, as GPipe does. Once the "
                                        "stages after it have work, each forward is followed by a backward, so "
                                        "stage s holds at most P - s = %d",
                    P, where, r, G7P_M, P - r);
        if (peak[r] > bound)
            GR_FAIL("1F1B on %d %s: stage %d held %d micro-batches' activations at once, more than min(m, P - s) = %d",
                    P, where, r, peak[r], bound);
    }
}

GR_TEST(test_pp_gpipe)
{
    const int P = 3;
    int ops[G7P_MAX_P * 2 * G7P_M], peak[G7P_MAX_P];
    graded("gpipe", "gpipe", P, NULL, ops, peak);
    for (int r = 0; r < P; r++) {
        for (int j = 0; j < G7P_M; j++)
            if (ops[r * 2 * G7P_M + j] / PP_MAX_M != PP_F)
                GR_FAIL("GPipe on %d ranks: stage %d's op %d is a backward: GPipe runs every micro-batch's forward "
                        "before any backward",
                        P, r, j);
        if (peak[r] != G7P_M)
            GR_FAIL("GPipe on %d ranks: stage %d held %d micro-batches' activations at most, expected all %d (every "
                    "forward comes before the first backward)",
                    P, r, peak[r], G7P_M);
    }
    gr_note("GPipe, 3 stages, 4 micro-batches: the one-rank model's parameters, the closed form's bubble, 4 "
            "micro-batches held on every stage");
}
END_TEST

GR_TEST(test_pp_1f1b)
{
    int ops[G7P_MAX_P * 2 * G7P_M], peak[G7P_MAX_P];
    graded("1f1b", "1f1b", 3, NULL, ops, peak);
    check_1f1b_peaks("ranks", 3, peak);
    gr_note("1F1B, 3 stages, 4 micro-batches: the one-rank model's parameters, the closed form's bubble, at most 3, "
            "2, 1 micro-batches held");
}
END_TEST

GR_TEST(test_pp_deadlock)
{
    run_pp("wide", "1f1b", 4, 1, NULL);
    gr_note("1F1B on 4 ranks with messages of 8 KiB and more (above the eager limit) ran to the end");
}
END_TEST

/* Four GPUs, one stage each (NCCL carries the messages): as on the CPU. Tolerance 1e-5 as there: 3 steps. */
GR_TEST(test_pp_gpu4)
{
    int ops[G7P_MAX_P * 2 * G7P_M], peak[G7P_MAX_P];
    graded("gpu4-pp", "1f1b", 4, "cuda", ops, peak);
    check_1f1b_peaks("GPUs", 4, peak);
    gr_note("1F1B on 4 GPUs: the one-rank model's step, the closed form's bubble, at most P - s held");
}
END_TEST
