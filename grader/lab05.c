/* lab05.c — grader for lab 05: DDP as PyTorch builds it.
 *
 * The bucket assignment is called in-process (recorded in the worker,
 * replayed here) on crafted parameter lists and compared with the grader's
 * own assignment. Everything else runs the lab's driver, built from the code
 * under test, under common/bin/dlrun with real MPI processes and its --dump
 * mode: each rank writes its final parameters and the kit's trace (dl/trace.h:
 * every forward, each layer's backward, each allreduce with its bytes, in
 * the order they began — recorded by the kit, not by the student's code).
 * The judge computes the expected parameters itself, without any student
 * code: one rank trains the same model on the union of every rank's
 * micro-batches (the kit's sampler, the same seed, learning rate and steps),
 * and it judges the overlap from the recorded order against its own buckets.
 * Tolerances: parameters after 20 steps within 1e-6 + 1e-5·|ref| (the sums
 * run in another order: P partial means of B rows vs one mean of P·B rows);
 * across ranks exactly equal (every rank applies the same allreduced
 * gradient). The projection is recomputed here from the recorded order. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf, sscanf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, memcmp
#include <unistd.h> // access

#include "amp.h"
#include "dl/bf16.h" // dl_f2bf
#include "dl/half.h" // dl_f2h
#include "dl/ops.h" // dl_cast, dl_unscale
#include "dl/data.h" // dl_data_load
#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_read_file, dl_home
#include "dl/json.h" // dl_jv
#include "dl/lr.h" // dl_lr_at
#include "dl/project.h" // dl_project_step
#include "dl/sampler.h" // dl_sampler
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "items.h" // gr_code_dir
#include "kit.h" // kit_sim_layers
#include "lab05_ref.h" // the workload, the references and readers, the items of part 2 and task 6

START_TEST(test_buckets)
{
    static const struct {
        int n;
        size_t counts[8], first, cap;
        const char *what;
    } cases[] = {
        {4, {100, 10, 50, 5}, 100, 200, "small caps"},
        {6, {1000, 10, 1000, 10, 1000, 10}, 4000, 4000, "one parameter per cap"},
        {6, {1000, 10, 1000, 10, 1000, 10}, 100, 100000, "a small first bucket, then one big one"},
        {5, {10, 10, 100000, 10, 10}, 50, 50, "an oversized parameter alone"},
        {3, {7, 7, 7}, 1, 1, "a cap of one byte: one bucket per parameter"},
        {4, {25, 25, 25, 25}, 100, 100, "a bucket closes when it reaches the cap exactly"},
        {8, {784 * 48, 48, 48 * 40, 40, 40 * 32, 32, 32 * 10, 10}, FIRST_CAP, CAP, "the model the driver is graded on"},
        {1, {3}, 1 << 20, 25 << 20, "one parameter"},
    };
    ddp_bucket got[DDP_MAX_BUCKETS], want[DDP_MAX_BUCKETS];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = cases[c].n, nb = -1;
        memset(got, 0, sizeof got);
        GR_OK(ddp_assign_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, got, &nb));
        int nw = gr_ref_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, want);
        char g[512], w[512];
        gr_describe(got, nb > 0 && nb <= DDP_MAX_BUCKETS ? nb : 0, g, sizeof g);
        gr_describe(want, nw, w, sizeof w);
        if (gr_same_buckets(got, nb, want, nw))
            continue;
        ddp_bucket fwd[DDP_MAX_BUCKETS];
        int nf = gr_forward_buckets(cases[c].counts, n, 4, cases[c].first, cases[c].cap, fwd);
        if (gr_same_buckets(got, nb, fwd, nf) || (nb > 1 && got[0].first == 0))
            GR_FAIL(GR_DIAG("forward-order") "%s (counts of %d parameters, caps %zu/%zu bytes): buckets %s, expected "
                                             "%s. Your first bucket starts with parameter 0, which backward produces "
                                             "last: walk the parameters from the last one",
                    cases[c].what, n, cases[c].first, cases[c].cap, g, w);
        GR_FAIL("%s (counts of %d parameters, caps %zu/%zu bytes of 4-byte elements): buckets %s, expected %s "
                "(first..last parameter in launch order; a bucket closes once it holds at least its cap; check "
                "offset and count too: got offset %zu count %zu for the first, expected %zu and %zu)",
                cases[c].what, n, cases[c].first, cases[c].cap, g, w, nb > 0 ? got[0].offset : 0,
                nb > 0 ? got[0].count : 0, want[0].offset, want[0].count);
    }
    int nb = 0;
    if (ddp_assign_buckets((const size_t[]){4, 0}, 2, 4, 8, 8, got, &nb) != DL_ERR_ARG)
        GR_FAIL("ddp_assign_buckets accepted a parameter of 0 elements; expected DL_ERR_ARG");
    if (ddp_assign_buckets((const size_t[]){4}, 1, 4, 0, 8, got, &nb) != DL_ERR_ARG)
        GR_FAIL("ddp_assign_buckets accepted a first cap of 0 bytes; expected DL_ERR_ARG");
}
END_TEST

/* Every rank's parameters are bitwise equal; rank 0's match the reference. */
static void check_params(const char *name, int P, size_t B, int accum, long steps, const char *what)
{
    size_t n0 = 0, nr = 0, np = 0;
    float *p0 = gr_dumped_params(name, 0, &n0);
    for (int r = 1; r < P; r++) {
        float *pr = gr_dumped_params(name, r, &nr);
        if (nr != n0 || memcmp(pr, p0, n0 * sizeof *p0) != 0) {
            double worst = 0;
            for (size_t k = 0; k < n0 && k < nr; k++)
                worst = fabs((double)pr[k] - p0[k]) > worst ? fabs((double)pr[k] - p0[k]) : worst;
            GR_FAIL(GR_DIAG("ranks-diverge") "%s: after %ld steps rank %d's parameters differ from rank 0's by up to "
                                             "%g: the ranks did not apply the same gradient. A bucket allreduced "
                                             "before all its gradients were final, or a bucket never started or "
                                             "never waited for, gives each rank its own update",
                    what, steps, r, worst);
        }
        free(pr);
    }
    float *init = NULL;
    float *ref = gr_reference(P, B, accum, steps, &init, &np);
    if (np != n0)
        GR_FAIL("%s: the driver's model has %zu parameters, expected %zu", what, n0, np);
    double *rd = malloc(np * sizeof *rd), up_p = 0, up_1 = 0;
    for (size_t k = 0; k < np; k++) {
        rd[k] = ref[k];
        up_p += fabs((double)p0[k] - init[k]);
        up_1 += fabs((double)ref[k] - init[k]);
    }
    dl_cmp c;
    if (!dl_allclose_f32(p0, rd, np, 1e-6, 1e-5, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "parameters", buf, sizeof buf);
        double ratio = up_p / up_1;
        gr_note("%s: the parameters moved %.3f times as far as the reference's\n", what, ratio);
        if (accum > 1 && ratio > 0.6 * accum)
            GR_FAIL(GR_DIAG("loss-not-divided-by-k") "%s: the parameters moved %.2f times as far as one rank at "
                                                     "batch %zu: the %d micro-batches' gradients were added up, not "
                                                     "averaged; divide by the number of micro-batches too (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, accum, buf);
        if (ratio > 1.5)
            GR_FAIL(GR_DIAG("grad-sum-not-average") "%s: the parameters moved %.2f times as far as one rank at batch "
                                                    "%zu: the ranks' gradients were summed, not averaged; divide "
                                                    "each bucket by the world size before the sum (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, buf);
        if (ratio < 0.75)
            GR_FAIL(GR_DIAG("average-applied-twice") "%s: the parameters moved only %.2f times as far as one rank at "
                                                     "batch %zu: the gradients were divided by the world size more "
                                                     "than once (a pre-divide and an average?) (%s)",
                    what, ratio, B * (size_t)accum * (size_t)P, buf);
        GR_FAIL("%s vs one rank at batch %zu after %ld steps: %s", what, B * (size_t)accum * (size_t)P, steps, buf);
    }
    free(p0), free(ref), free(init), free(rd);
}

START_TEST(test_equivalence)
{
    gr_run_dumped("eq2", 2, 32, 1, 20);
    check_params("eq2", 2, 32, 1, 20, "2 ranks x batch 32");
    gr_run_dumped("eq4", 4, 16, 1, 20);
    check_params("eq4", 4, 16, 1, 20, "4 ranks x batch 16");
}
END_TEST

/* Judges each step's recorded order on rank r of an fp32 run without
 * accumulation, from the trace held against the transport's log: one
 * asynchronous allreduce per bucket, in bucket order, each on the bucket's
 * view of the gradient buffer and after its lowest parameter's layer, and
 * every bucket that can start before layer 0's backward did. */
static void check_order(const char *name, int r)
{
    ddp_bucket want[DDP_MAX_BUCKETS];
    int nw = 0;
    size_t n_params = 0;
    gr_model_buckets(want, &nw, &n_params);
    recorded w;
    gr_read_recorded(name, r, (int)n_params / 2, 1, &w);
    for (long s = 0; s < w.steps; s++) {
        int calls = 0;
        for (size_t i = 0; i < w.n; i++)
            calls += w.ev[i].step == s && w.ev[i].kind == DL_EV_ALLREDUCE && w.ev[i].async;
        if (calls == (int)n_params && nw != (int)n_params)
            GR_FAIL(GR_DIAG("per-parameter-allreduce") "step %ld on rank %d: %d allreduces, one per parameter, "
                                                       "instead of %d buckets: each call pays the latency of the "
                                                       "whole ring",
                    s, r, calls, nw);
        int got = 0, blocking = 0, blocking_during = 0, seen_layer[DL_MLP_MAX_LAYERS] = {0};
        int before_end = 0; // launched before layer 0's backward began
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s)
                continue;
            if (e->kind == DL_EV_FORWARD) {
                memset(seen_layer, 0, sizeof seen_layer);
            } else if (e->kind == DL_EV_BACKWARD && e->id >= 0 && e->id < DL_MLP_MAX_LAYERS) {
                seen_layer[e->id] = 1;
            } else if (e->kind == DL_EV_ALLREDUCE) {
                const xrec *x = &w.x[e->xport];
                if (!e->async) {
                    blocking++;
                    blocking_during += !seen_layer[0];
                    continue;
                }
                if (got < nw) {
                    const ddp_bucket *b = &want[got];
                    int layer = b->first / 2, view = x->offset == (long)b->offset && x->count == b->count;
                    if (!seen_layer[layer] && view)
                        GR_FAIL(GR_DIAG("bucket-before-ready") "step %ld on rank %d: bucket %d (parameters %d..%d) "
                                                               "started before layer %d's backward: part of it was "
                                                               "not computed yet. Start a bucket only once its "
                                                               "lowest parameter's gradient is final",
                                s, r, got, b->first, b->last, layer);
                    if (!view) {
                        const ddp_bucket *o = &want[nw - 1 - got];
                        char a[160];
                        if (nw > 1 && o != b && x->offset == (long)o->offset && x->count == o->count)
                            GR_FAIL(GR_DIAG("forward-order") "step %ld on rank %d: allreduce %d ran on bucket %d's "
                                                             "view, the bucket from the wrong end: the buckets went "
                                                             "in forward order",
                                    s, r, got, nw - 1 - got);
                        GR_FAIL("step %ld on rank %d: allreduce %d ran on %s, expected bucket %d's view of the "
                                "gradient buffer, elements [%zu, %zu) (parameters %d..%d): one allreduce per "
                                "bucket, in bucket order, on the bucket's whole view (no copy)",
                                s, r, got, gr_range(x->offset, x->count, a, sizeof a), got, b->offset,
                                b->offset + b->count, b->first, b->last);
                    }
                    if (!seen_layer[0])
                        before_end++;
                }
                got++;
            }
        }
        if (got == 0 && blocking_during > 0)
            GR_FAIL(GR_DIAG("blocking-allreduce") "step %ld on rank %d: %d blocking allreduce(s) started during "
                                                  "backward and no asynchronous one: backward waits for each, so "
                                                  "nothing overlaps it",
                    s, r, blocking_during);
        if (got == 0 && blocking > 0)
            GR_FAIL(GR_DIAG("allreduce-after-backward") "step %ld on rank %d: %d blocking allreduce(s) after "
                                                        "backward and no asynchronous one: nothing overlaps "
                                                        "backward",
                    s, r, blocking);
        if (got != nw || blocking > 0)
            GR_FAIL("step %ld on rank %d: %d asynchronous and %d blocking allreduces, expected one asynchronous "
                    "allreduce per bucket (%d)",
                    s, r, got, blocking, nw);
        int could = 0; // buckets whose gradients were all final before layer 0
        for (int k = 0; k < nw; k++)
            could += want[k].first / 2 > 0;
        if (before_end < could)
            GR_FAIL(GR_DIAG("allreduce-after-backward") "step %ld on rank %d: %d of the %d buckets that could start "
                                                        "during backward started after it: start each bucket from "
                                                        "ddp_grad_ready as soon as its gradients are final",
                    s, r, could - before_end, could);
    }
    gr_recorded_free(&w);
}

START_TEST(test_overlap)
{
    gr_run_dumped("eq2", 2, 32, 1, 20);
    check_order("eq2", 0);
    check_order("eq2", 1);
    gr_run_dumped("eq4", 4, 16, 1, 20);
    check_order("eq4", 3);
}
END_TEST

/* Judges task 3 on rank r of run `name` (accum micro-batches per step):
 * nothing allreduced before the step's last micro-batch (PyTorch's
 * no_sync), and no step that made the host wait for the device (the driver
 * passes ddp_step loss NULL; the step's span counts the kit's host waits,
 * the same on the CPU as on a GPU). How the buckets overlap backward is the
 * overlap item's. */
static void check_accumulation(const char *name, int r, int accum)
{
    recorded w;
    gr_read_recorded(name, r, gr_graded_layers(), accum, &w);
    for (long s = 0; s < w.steps; s++) {
        int micro = 0;
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s)
                continue;
            micro += e->kind == DL_EV_FORWARD;
            if (e->kind == DL_EV_ALLREDUCE && micro < accum)
                GR_FAIL(GR_DIAG("sync-every-micro-step") "step %ld on rank %d: an allreduce during micro-batch %d of "
                                                         "%d: with gradient accumulation only the last micro-batch "
                                                         "communicates (the others only add up their gradients, as "
                                                         "PyTorch's no_sync does)",
                        s, r, micro, accum);
        }
    }
    for (size_t i = 0; i < w.n; i++)
        if (w.ev[i].kind == DL_EV_STEP && w.ev[i].syncs != 0)
            GR_FAIL(GR_DIAG("loss-read-every-step") "step %ld on rank %d waited for the device %.0f time(s): given "
                                                    "loss NULL, ddp_step must not read anything back (pass NULL to "
                                                    "dl_mlp_loss: on a GPU each read stalls the step; the kit sums "
                                                    "the losses on the device)",
                    w.ev[i].step, r, w.ev[i].syncs);
    gr_recorded_free(&w);
}

START_TEST(test_accumulation)
{
    gr_run_dumped("acc", 2, 16, 3, 10);
    check_accumulation("acc", 0, 3);
    check_params("acc", 2, 16, 3, 10, "2 ranks x 3 micro-batches of 16");
}
END_TEST

// ---- the projection, recomputed from the recorded order ----

START_TEST(test_projection)
{
    const char *name = "proj";
    char args[1024];
    // the default model and buckets on 2 ranks of 64 rows: the projection reads only the recorded order (which
    // layer's backward each allreduce followed, and its bytes); the layers' costs are the grader's own, at 4096 rows
    snprintf(args, sizeof args, "--data %s --batch-size 64 --max-steps 2 --bucket-mb 1 --dump '%s/dump'", DATA,
             gr_path(name));
    int rc = gr_run_driver(2, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
    // the default model at the default batch, on the default profile
    dl_profile prof;
    GR_OK(dl_profile_load(dl_profile_default(), &prof));
    const size_t sizes[] = {784, 512, 512, 512, 512, 10};
    dl_mlp m;
    GR_OK(dl_mlp_create(&m, dl_cpu(), sizes, 6, 1, SEED));
    size_t counts[DDP_MAX_PARAMS];
    int n = kit_param_counts(&m, counts);
    ddp_bucket want[DDP_MAX_BUCKETS];
    int nw = gr_ref_buckets(counts, n, 4, 1 << 20, 1 << 20, want);
    dl_sim_layer layers[DL_MLP_MAX_LAYERS];
    dl_sim_bucket ref[DDP_MAX_BUCKETS], got[DDP_MAX_BUCKETS];
    double ob, ol;
    kit_sim_layers(&m, 4096, 0, layers);
    kit_sim_optim(&m, 0, &ob, &ol);
    kit_structural_buckets(want, nw, 4, ref);
    recorded w;
    gr_read_recorded(name, 0, m.n_layers, 1, &w);
    // the student's recorded order of step 1, as kit_recorded_buckets reads it: each allreduce of the
    // gradient buffer started during backward, after the layer whose backward ended last before it
    int ng = 0, last = -1, in_bwd = 0;
    for (size_t i = 0; i < w.n && ng < DDP_MAX_BUCKETS; i++) {
        const rec *e = &w.ev[i];
        if (e->step != 1)
            continue;
        if (e->kind == DL_EV_FORWARD)
            last = -1, in_bwd = 0;
        else if (e->kind == DL_EV_BACKWARD)
            last = e->id, in_bwd = 1;
        else if (e->kind == DL_EV_ALLREDUCE && in_bwd && w.x[e->xport].offset >= 0)
            got[ng++] = (dl_sim_bucket){e->bytes, last == 0 ? -1 : last};
    }
    gr_recorded_free(&w);
    dl_sim_step one, sr, sg;
    GR_OK(dl_project_step(&prof, 1, 1, layers, m.n_layers, NULL, 0, ob, ol, &one));
    GR_OK(dl_project_step(&prof, prof.gpus, 1, layers, m.n_layers, ref, nw, ob, ol, &sr));
    GR_OK(dl_project_step(&prof, prof.gpus, 1, layers, m.n_layers, got, ng, ob, ol, &sg));
    double s_ref = prof.gpus * one.step_s / sr.step_s, s_got = prof.gpus * one.step_s / sg.step_s;
    gr_note("projected on %d GPUs of %s: your order %.2fx, the reference's %.2fx (communication exposed %.1f%% vs "
            "%.1f%% of the step)\n",
            prof.gpus, prof.name, s_got, s_ref, dl_pct(sg.exposed_s / sg.step_s, 1),
            dl_pct(sr.exposed_s / sr.step_s, 1));
    dl_mlp_free(&m);
    if (!(s_got >= 0.9 * s_ref))
        GR_FAIL("your recorded order projects %.2fx on %d GPUs of %s, below 0.9 x the reference's %.2fx (%d "
                "allreduces recorded in step 1, %d buckets expected)",
                s_got, prof.gpus, prof.name, s_ref, ng, nw);
}
END_TEST

// ---- one GPU ----

START_TEST(test_gpu_one_rank)
{
    char args[1024];
    snprintf(args, sizeof args,
             "--device cuda --data %s --hidden %s --batch-size 64 --max-steps 20 --epochs 50 --lr %g --base-batch %d "
             "--warmup %d --seed %d --first-bucket-cap %zu --bucket-cap %zu --dump '%s/dump'",
             DATA, HIDDEN, LR, BASE, WARMUP, SEED, (size_t)FIRST_CAP, (size_t)CAP, gr_path("gpu1"));
    int rc = gr_run_driver(0, "gpu1", args);
    if (rc != 0)
        gr_fail_run("gpu1", rc);
    size_t n = 0, np = 0;
    float *p = gr_dumped_params("gpu1", 0, &n), *init = NULL;
    float *ref = gr_reference(1, 64, 1, 20, &init, &np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    GR_ALLCLOSE_F32("parameters after 20 steps on one GPU vs the CPU", p, rd, n < np ? n : np, 1e-5, 1e-4, "");
    free(p), free(ref), free(init), free(rd);
}
END_TEST

// ---- four GPUs ----

/* On four GPUs: the recorded order of a bucketed run is judged as the overlap
 * item judges it on the CPU (NCCL's asynchronous allreduces, started from the
 * ready callbacks), then the measured speedup, 1 GPU vs 4, of your driver and
 * the reference's, side by side in this run. */
START_TEST(test_gpu4_measured)
{
    gr_run_dumped_on("--device cuda ", "gpu4order", 4, 16, 1, 20);
    for (int r = 0; r < 4; r++)
        check_order("gpu4order", r);
    // 512 rows per rank: 105 steps per epoch on one GPU, 26 on four
    double want, yours = gr_gpu4_speedup("--device cuda --batch-size 512 --epochs 6 --plot none --quiet",
                                         "projection.bucketed.speedup", &want);
    if (!(yours >= want))
        GR_FAIL("measured 4-GPU speedup %.2fx (steady epoch time on 1 GPU / on 4), below %.2fx: look at what the "
                "timeline (trace.json of run m4) shows between backward and the step",
                yours, want);
}
END_TEST

// ---- the table ----

static const gr_item items[] = {
    GR_ITEM(
        test_buckets, "buckets", "buckets: reverse order, first cap, whole parameters, exact views", 20, GR_CPU, NULL,
        "the first bucket holds what backward produces first; no bucket closes below its cap, none splits a parameter",
        "task-1-buckets-20-points", 30, GR_WORKER),
    GR_ITEM(test_equivalence, "equivalence",
            "bucketed P ranks equal one rank at P x batch after 20 steps (P = 2, 4); ranks bitwise equal", 25, GR_CPU,
            "buckets",
            "after the step every rank holds the mean gradient of the global batch, the same bits on every rank",
            "task-2-overlap-60-points", 300, GR_JUDGE),
    GR_ITEM(
        test_overlap, "overlap",
        "recorded order, held against the transport's log: one allreduce per bucket view, in order, during backward",
        20, GR_CPU, "buckets",
        "a bucket can go once every gradient in it is final, not before; once per step, in order, on its view",
        "task-2-overlap-60-points", 300, GR_JUDGE),
    GR_ITEM(test_accumulation, "accumulation",
            "accumulation: no communication before the last micro-batch; K x B equals K P B; no wait for the device",
            15, GR_CPU, "equivalence",
            "the micro-batches before the last only add up; the step equals one rank's on all K x P x B rows",
            "task-3-gradient-accumulation-15-points", 300, GR_JUDGE),
    GR_ITEM(test_projection, "projection",
            "your recorded order projects >= 0.9 x the reference's speedup on the default profile", 15, GR_CPU,
            "overlap", "the earlier a bucket starts, the more of its allreduce hides under backward",
            "reading-the-timeline", 600, GR_JUDGE),
    GR_ITEM(test_gpu_one_rank, "gpu_one_rank", "one GPU: 20 bucketed steps equal the CPU reference", 5, GR_GPU1,
            "equivalence", "the same code on device pointers", "running-on-gpus", 300, GR_JUDGE),
    GR_ITEM(test_gpu4_measured, "gpu4_measured",
            "4 GPUs: buckets overlap backward on the device; measured speedup >= 0.8 x the reference's, same run", 10,
            GR_GPU4, "overlap", "one GPU per rank (dlrun -n 4 --device cuda); every bucket started from ddp_grad_ready",
            "running-on-gpus", 600, GR_JUDGE),
    GR_ITEM(gr_test_scaler, "scaler", "loss scaler: GradScaler's state machine on crafted overflow sequences", 10,
            GR_CPU, NULL,
            "back off and skip on inf; grow on the growth_interval-th good step in a row, to a finite value",
            "task-4-the-loss-scaler-10-points", 30, GR_WORKER),
    GR_ITEM(
        gr_test_amp_training, "amp_training",
        "--amp fp16 on 2 and 4 ranks, bf16 on 2: 8 steps equal one rank in the same type; fp32 masters; ranks equal",
        15, GR_CPU, "equivalence",
        "backward sees the current masters in the model's type and the scaled loss; the optimizer, fp32 unscaled "
        "gradients",
        "task-5-the-amp-step-25-points", 300, GR_JUDGE),
    GR_ITEM(gr_test_amp_skip, "amp_skip", "an inf on one rank before the sync: every rank skips that step together", 10,
            GR_CPU, "amp_training",
            "every rank takes one decision from what every rank saw: it rests on a flag reduced over the ranks",
            "task-5-the-amp-step-25-points", 300, GR_JUDGE),
    GR_ITEM(gr_test_amp_gpu, "amp_gpu", "one GPU: 8 fp16 steps equal the CPU's; the poisoned one skipped on the device",
            5, GR_GPU1, "amp_training", "the same step on device pointers: every pass runs where its data lives",
            "running-on-gpus", 300, GR_JUDGE),
    GR_ITEM(gr_test_ckpt_roundtrip, "ckpt_roundtrip",
            "checkpoint: saved and loaded back bitwise (weights, momentum, scaler, sampler, step, rng)", 10, GR_CPU,
            NULL, "every field of ckpt_state goes into the payload, and comes back bitwise",
            "task-6-checkpoints-35-points", 30, GR_WORKER),
    GR_ITEM(gr_test_ckpt_rejects, "ckpt_rejects",
            "checkpoint: truncated, corrupt and foreign files refused, naming the file, s untouched", 8, GR_CPU,
            "ckpt_roundtrip",
            "believe nothing of a file until all of it checks out; refuse it naming the file, s untouched",
            "task-6-checkpoints-35-points", 30, GR_WORKER),
    GR_ITEM(gr_test_ckpt_atomic, "ckpt_atomic",
            "checkpoint: a save that fails half-way leaves the old one loadable and no temporary file", 7, GR_CPU,
            "ckpt_roundtrip",
            "path changes only once a complete file exists; a failed save leaves the old one whole, no stray file",
            "task-6-checkpoints-35-points", 30, GR_WORKER),
    GR_ITEM(gr_test_ckpt_resume, "ckpt_resume",
            "--amp fp16 stopped after 5 steps, saved and resumed: bitwise the run that never stopped, loss scale too",
            10, GR_CPU, "ckpt_roundtrip",
            "what the next step reads must come back: weights, momentum, step, scaler, "
            "position",
            "task-6-checkpoints-35-points", 300, GR_JUDGE),
};

GR_LAB("05", "DDP as PyTorch builds it: buckets overlapped with backward", "05-ddp-amp", items);
