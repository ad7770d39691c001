/* lab05_amp.c — lab 05 part 2, its items: the loss scaler in-process
 * (recorded in the worker, replayed in the judge) against GradScaler's
 * update written from its definition, and the AMP step through the driver's
 * runs, against one rank training in the same 16-bit type with fp32 masters
 * (lab05_ref.c). The table is lab05.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, isfinite
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, memcmp

#include "amp.h"
#include "dl/comm.h" // dl_comm_log
#include "dl/trace.h" // DL_EV_ALLREDUCE
#include "drivers.h" // gr_csv_load, gr_fail_run
#include "grader.h"
#include "lab05_ref.h" // gr_reference_amp, gr_run_amp, gr_read_amp, the AMP tolerances

// ---- part 2: the loss scaler (in-process) and the AMP step (the driver) ----

GR_TEST(test_scaler)
{
    /* sequences of found_inf (1 = overflow) with the growth interval's edges:
     * the interval-th good step grows, an overflow resets the count, growth
     * that would reach inf does not happen, backoff below 1 is allowed */
    static const struct {
        float init;
        long interval;
        const char *seq;
    } cases[] = {{65536.0f, 3, "0001000110000"},
                 {1024.0f, 1, "0010011"},
                 {3.0e38f, 2, "00000"},
                 {1.0f, 2000, "1111"},
                 {8.0f, 4, "0001000000001"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        amp_scaler s = {cases[c].init, 0, 2.0f, 0.5f, cases[c].interval}, r = s;
        for (int k = 0; cases[c].seq[k]; k++) {
            int inf = cases[c].seq[k] == '1', skip = -1;
            float was = s.scale;
            dl_status st = amp_scaler_update(&s, inf, &skip);
            if (st == DL_ERR_TODO)
                GR_FAIL("%s", dl_last_error());
            GR_OK(st);
            int want_skip = gr_ref_scaler(&r, inf);
            char at[160];
            snprintf(at, sizeof at, "init scale %g, growth_interval %ld, overflow sequence %s, call %d (found_inf %d)",
                     (double)cases[c].init, cases[c].interval, cases[c].seq, k + 1, inf);
            if (inf && skip != 1)
                GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "%s: skip = %d; a step whose gradients hold inf/NaN "
                                                           "must be skipped, or the weights become inf/NaN",
                        at, skip);
            if (inf && s.growth_tracker != 0)
                GR_FAIL(GR_DIAG("tracker-not-reset-on-overflow") "%s: growth_tracker = %ld after an overflow; it "
                                                                 "counts good steps in a row, so it restarts at 0",
                        at, s.growth_tracker);
            if (isinf(s.scale))
                GR_FAIL(GR_DIAG("scale-grows-to-inf") "%s: the scale became inf; growth that would overflow the "
                                                      "float is not taken (the scale stays %g)",
                        at, (double)was);
            if (!inf && r.scale > was && s.scale <= was)
                GR_FAIL(GR_DIAG("scale-never-grows") "%s: the scale stayed %g after %ld good steps in a row; it "
                                                     "doubles on the growth_interval-th one (and the count restarts)",
                        at, (double)s.scale, cases[c].interval);
            if (skip != want_skip || s.scale != r.scale || s.growth_tracker != r.growth_tracker)
                GR_FAIL("%s: scale %g, growth_tracker %ld, skip %d; expected scale %g, growth_tracker %ld, skip %d", at,
                        (double)s.scale, s.growth_tracker, skip, (double)r.scale, r.growth_tracker, want_skip);
        }
    }
    int skip = 0;
    if (amp_scaler_update(NULL, 0, &skip) != DL_ERR_ARG)
        GR_FAIL("amp_scaler_update(NULL, ...) should return DL_ERR_ARG");
}
END_TEST

/* One --amp fp16 (t = DL_F16) or --amp bf16 run on P ranks of B rows,
 * judged against the grader's own 16-bit step at P·B rows; the master
 * weights' check; what backward was told. */
static void check_amp_run(const char *name, int P, size_t B, dl_dtype t)
{
    const long steps = AMP_STEPS;
    const char *tn = t == DL_BF16 ? "bf16" : "fp16";
    const double atol = t == DL_BF16 ? AMP_BF16_ATOL : AMP_ATOL, rtol = t == DL_BF16 ? AMP_BF16_RTOL : AMP_RTOL;
    gr_run_amp(name, P, B, steps, -1, 0, t);
    size_t n = 0, np = 0;
    float *p = gr_amp_same_params(name, P, &n);
    // the scale the student's scaler kept, and the one the kit's backward used
    amp_scaler sc = gr_amp_scaler_for(t);
    long nr = 0;
    amp_row *a = gr_read_amp(name, 0, &nr);
    if (nr != steps)
        GR_FAIL("run '%s' recorded %ld steps, expected %ld", name, nr, steps);
    for (long k = 0; k < nr; k++) {
        if (a[k].model_scale == 1.0 && a[k].scale != 1.0)
            GR_FAIL(GR_DIAG("no-loss-scaling") "step %ld: the scaler's scale is %g but the model's backward ran "
                                               "with loss scale 1: the loss was never scaled, so small gradients "
                                               "still flush to zero in fp16",
                    k + 1, a[k].scale);
        if (a[k].model_scale != a[k].scale)
            GR_FAIL("step %ld: backward ran with loss scale %g, the scaler held %g", k + 1, a[k].model_scale,
                    a[k].scale);
        if (a[k].scale != sc.scale)
            GR_FAIL(GR_DIAG("scale-never-grows") "--amp %s, step %ld: the loss scale was %g, expected %g (init %g, "
                                                 "multiplied by %g after every %ld steps without overflow)",
                    tn, k + 1, a[k].scale, (double)sc.scale, (double)gr_amp_scaler_for(t).scale,
                    (double)sc.growth_factor, sc.growth_interval);
        gr_ref_scaler(&sc, 0);
    }
    // master weights: fp32 keeps what 16-bit weights would round away
    size_t exact16 = 0;
    for (size_t k = 0; k < n; k++)
        exact16 += (size_t)gr_representable(p[k], t);
    float *ref = gr_reference_amp(P, B, steps, -1, t, &np);
    if (np != n)
        GR_FAIL("the driver's model has %zu parameters, expected %zu", n, np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    dl_cmp c;
    if (!dl_allclose_f32(p, rd, np, atol, rtol, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "parameters", buf, sizeof buf);
        if (exact16 == n)
            GR_FAIL(GR_DIAG("master-weights-fp16") "every one of the %zu parameters is exactly a %s value: the "
                                                   "master weights were kept (or rounded) in %s, so updates "
                                                   "smaller than half a %s ulp are lost (%s)",
                    n, tn, tn, tn, buf);
        if (t == DL_BF16)
            GR_FAIL(GR_DIAG("amp-not-bf16") "--amp bf16 on %d ranks x batch %zu vs one rank at batch %zu in bf16 "
                                            "after %ld steps: %s. --amp fp16 passed: does your step cast the "
                                            "master weights to fp16 whatever the model's type (m->compute)?",
                    P, B, B * (size_t)P, steps, buf);
        GR_FAIL("--amp %s on %d ranks x batch %zu vs one rank at batch %zu in %s after %ld steps: %s", tn, P, B,
                B * (size_t)P, tn, steps, buf);
    }
    if (exact16 == n)
        GR_FAIL(GR_DIAG("master-weights-fp16") "every one of the %zu parameters is exactly a %s value: the "
                                               "master weights must stay fp32",
                n, tn);
    gr_note("--amp %s, %d ranks: %zu of %zu parameters happen to be %s values (fp32 masters)\n", tn, P, exact16, n, tn);
    free(p), free(ref), free(rd), free(a);
}

GR_TEST(test_amp_training)
{
    check_amp_run("amp2", 2, 32, DL_F16);
    check_amp_run("amp4", 4, 16, DL_F16);
    check_amp_run("ampbf16", 2, 32, DL_BF16); // the same step in bf16: written for m->compute, not for fp16
}
END_TEST

/* The first step where rank r decided otherwise than the poisoned rank
 * (the last), naming which way they parted; the rows are every rank's. */
static void check_same_decisions(amp_row *const *a, int P, long steps, long poisoned)
{
    const amp_row *hit = a[P - 1]; // the rank whose input held the inf
    for (long k = 0; k < steps; k++)
        for (int r = 0; r + 1 < P; r++) {
            double mine = a[r][k].skipped, theirs = hit[k].skipped;
            if ((mine != 0) == (theirs != 0))
                continue;
            if (k == poisoned && theirs != 0)
                GR_FAIL(GR_DIAG("inf-check-before-allreduce") "step %ld: rank %d, whose gradients held the inf, "
                                                              "skipped; rank %d did not: the ranks took different "
                                                              "skip decisions. Is the inf check or the unscale done "
                                                              "before the allreduce, on each rank's own gradient? "
                                                              "Unscale and check the summed buckets, where an inf "
                                                              "on any rank is an inf on every rank",
                        k + 1, P - 1, r);
            GR_FAIL(GR_DIAG("ranks-diverge") "step %ld: rank %d skipped = %g, rank %d skipped = %g: the ranks took "
                                             "different skip decisions; decide on a flag reduced over the ranks "
                                             "(an inf anywhere skips the step everywhere)",
                    k + 1, r, mine, P - 1, theirs);
        }
}

/* Judges, from the transport's log of run `name` on rank r, that every
 * step's skip decision came after a reduction of the flag over the ranks:
 * an allreduce of one element outside the gradient buffer (max, sum or
 * avg) after the step's buckets started. */
static void check_flag_reduced(const char *name, int r)
{
    recorded w;
    gr_read_recorded(name, r, gr_graded_layers(), 1, &w);
    for (long s = 0; s < w.steps; s++) {
        int flag = 0;
        for (size_t i = 0; i < w.n; i++) {
            const rec *e = &w.ev[i];
            if (e->step != s || e->kind != DL_EV_ALLREDUCE)
                continue;
            const xrec *x = &w.x[e->xport];
            if (x->offset >= 0)
                flag = 0; // a bucket: the flag comes after the last one
            else if (x->count == 1 && strcmp(x->red, "min") != 0)
                flag = 1;
        }
        if (!flag)
            GR_FAIL(GR_DIAG("flag-not-reduced") "--amp fp16, step %ld on rank %d: no allreduce of the inf/NaN flag "
                                                "(one element, max or sum over the ranks) after the buckets' "
                                                "allreduces: each rank decided alone on its own check. The summed "
                                                "buckets agree here, so the decisions matched, but the rule is a "
                                                "decision that rests on the flag reduced over the ranks",
                    s + 1, r);
    }
    gr_recorded_free(&w);
}

GR_TEST(test_amp_skip)
{
    enum { P = 2 };
    const long steps = AMP_STEPS, poisoned = 3;
    gr_run_amp("ampskip", P, 32, steps, poisoned, 0, DL_F16);
    amp_row *a[P];
    for (int r = 0; r < P; r++) {
        long nr = 0;
        a[r] = gr_read_amp("ampskip", r, &nr);
        if (nr != steps)
            GR_FAIL("run 'ampskip' rank %d recorded %ld steps, expected %ld", r, nr, steps);
    }
    // the decisions first: where the ranks part, the parameters say only that they did
    check_same_decisions(a, P, steps, poisoned);
    // then the weights: a step taken on inf leaves NaN, and every later step skips
    size_t n = 0;
    float *p = gr_amp_same_params("ampskip", P, &n);
    for (int r = 0; r < P; r++) {
        for (long k = 0; k < steps; k++) {
            int want = k == poisoned;
            double got = a[r][k].skipped;
            if ((got != 0) != want)
                GR_FAIL(GR_DIAG("skip-not-together") "rank %d, step %ld: skipped = %g, expected %d: an inf reached "
                                                     "rank %d's gradients at step %ld; every rank must skip that "
                                                     "step, and only that one",
                        r, k + 1, got, want, P - 1, poisoned + 1);
        }
        double before = a[r][poisoned].scale, after = a[r][poisoned + 1].scale;
        if (after != before * 0.5)
            GR_FAIL("rank %d: the scale went from %g to %g after the overflow, expected it halved", r, before, after);
    }
    for (int r = 0; r < P; r++)
        check_flag_reduced("ampskip", r);
    for (int r = 0; r < P; r++)
        free(a[r]);
    free(p);
}
END_TEST

// ---- part 2 on one GPU ----

/* The AMP step on one GPU for 8 steps of 64 rows, an inf in the input of
 * step 3, against the judge's fp16 step on the CPU. Both sides multiply
 * fp16 values and sum the products in fp32, but cuBLAS sums in its own
 * order, so an activation may round to the neighbouring fp16 value: the
 * parameters get amp_training's tolerance, 5e-3 + 5e-2·|ref| (the same
 * rounding argument; a wrong unscale or a step taken on inf is far
 * outside it). The skip decisions and the scale are exact on any device. */
GR_TEST(test_amp_gpu)
{
    const long steps = AMP_STEPS, poisoned = 3;
    const size_t B = 64;
    gr_run_amp("ampgpu", 1, B, steps, poisoned, 1, DL_F16);
    long nr = 0;
    amp_row *a = gr_read_amp("ampgpu", 0, &nr);
    if (nr != steps)
        GR_FAIL("run 'ampgpu' recorded %ld steps, expected %ld", nr, steps);
    amp_scaler sc = {(float)AMP_INIT, 0, 2.0f, 0.5f, AMP_GROWTH};
    for (long k = 0; k < steps; k++) {
        double want_scale = sc.scale, got_scale = a[k].scale, got_skip = a[k].skipped;
        int want_skip = gr_ref_scaler(&sc, k == poisoned);
        if (k == poisoned && got_skip == 0)
            GR_FAIL(GR_DIAG("step-not-skipped-on-inf") "on the GPU, step %ld: skipped = 0, but an inf was in its "
                                                       "input: the check must see the gradients the device summed, "
                                                       "as it does on the CPU",
                    k + 1);
        if ((got_skip != 0) != want_skip || got_scale != want_scale)
            GR_FAIL("on the GPU, step %ld: scale %g, skipped = %g; on the CPU the same steps give scale %g, skipped = "
                    "%d (init %g, doubled after every %d good steps, an inf at step %ld)",
                    k + 1, got_scale, got_skip, want_scale, want_skip, AMP_INIT, AMP_GROWTH, poisoned + 1);
    }
    size_t n = 0, np = 0;
    float *p = gr_amp_same_params("ampgpu", 1, &n);
    float *ref = gr_reference_amp(1, B, steps, poisoned, DL_F16, &np);
    double *rd = malloc(np * sizeof *rd);
    for (size_t k = 0; k < np; k++)
        rd[k] = ref[k];
    GR_ALLCLOSE_F32("parameters after 8 fp16 steps (one skipped) on one GPU vs the CPU", p, rd, n < np ? n : np,
                    AMP_ATOL, AMP_RTOL, "");
    free(p), free(ref), free(rd), free(a);
}
END_TEST
