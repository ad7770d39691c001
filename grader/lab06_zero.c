/* lab06_zero.c — lab 06's task 3 items: ZeRO-1 trained by the driver under
 * test on 2 and 3 ranks (one run each, read by all three items): its
 * parameters against the judge's own simulation of the ranks, its ledger
 * against the grader's shard arithmetic, its step traffic from the
 * transport's log. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcmp, strcmp
#include <unistd.h> // access

#include "drivers.h" // gr_csv
#include "lab06_ref.h"

static const struct {
    const char *name;
    int P;
} runs[] = {{"z2", 2}, {"z3", 3}};
#define N_RUNS (sizeof runs / sizeof runs[0])

static float *params_of(const char *name, int r, size_t *n)
{
    char f[64];
    snprintf(f, sizeof f, "params.%d.npy", r);
    return gr6_dumped(name, f, n);
}

/* Every rank's parameters bitwise equal; rank 0's the reference's. */
static void check_zero1(const char *name, int P)
{
    char what[64];
    snprintf(what, sizeof what, "ZeRO-1 on %d ranks x batch %d, %d steps", P, G6_BATCH, G6_STEPS);
    size_t n0 = 0, nr = 0, nref = 0;
    float *p0 = params_of(name, 0, &n0);
    for (int r = 1; r < P; r++) {
        float *pr = params_of(name, r, &nr);
        if (nr == n0 && memcmp(pr, p0, n0 * sizeof *p0) == 0) {
            free(pr);
            continue;
        }
        double worst = 0;
        for (size_t k = 0; k < n0 && k < nr; k++)
            worst = fabs((double)pr[k] - p0[k]) > worst ? fabs((double)pr[k] - p0[k]) : worst;
        float *s0 = gr6_reference(P, G6_STEPS, G6_STALE, 0, NULL, &nref);
        float *sr = gr6_reference(P, G6_STEPS, G6_STALE, r, NULL, &nref);
        if (nref == n0 && nr == n0 && gr6_excess(p0, s0, n0) <= 1 && gr6_excess(pr, sr, n0) <= 1)
            GR_FAIL(GR_DIAG("stale-shard") "%s: rank %d's parameters differ from rank 0's by up to %g, and each "
                                           "rank holds its own shard one update ahead of the others' copies of "
                                           "it: the shards were all-gathered before their owners updated them. "
                                           "All-gather after dl_mlp_sgd_slice, so the update goes round",
                    what, r, worst);
        GR_FAIL(GR_DIAG("ranks-diverge") "%s: rank %d's parameters differ from rank 0's by up to %g: the ranks did "
                                         "not end the step with the same model. Every rank must all-gather every "
                                         "updated shard (and compute its gradient on the same parameters)",
                what, r, worst);
    }
    gr6_check_mean(what, p0, n0, P, 1, "scale each reduced shard by 1/P");
    free(p0);
}

GR_TEST(test_zero1_equivalence)
{
    for (size_t k = 0; k < N_RUNS; k++) {
        gr6_run_zero1(runs[k].name, runs[k].P);
        check_zero1(runs[k].name, runs[k].P);
    }
}
END_TEST

/* Rank r's ledger peaks, by kind name. */
static void peaks_of(const char *name, int r, double *params, double *grads, double *optim, double *comm)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/dump/memory.%d.csv", gr_path(name), r);
    if (access(path, R_OK) != 0)
        GR_FAIL("the driver run '%s' left no ledger for rank %d (%s)", name, r, path);
    gr_csv t;
    gr_csv_load(&t, path);
    int c_kind = gr_csv_col(&t, "kind"), c_peak = gr_csv_col(&t, "peak");
    double *dst[4] = {params, grads, optim, comm};
    const char *kinds[4] = {"params", "grads", "optim", "comm"};
    for (int q = 0; q < 4; q++) {
        *dst[q] = -1;
        for (size_t k = 0; k < t.nrows; k++)
            if (strcmp(gr_csv_str(&t, k, c_kind), kinds[q]) == 0)
                *dst[q] = gr_csv_num(&t, k, c_peak);
        if (*dst[q] < 0)
            GR_FAIL("%s holds no row for %s", path, kinds[q]);
    }
    gr_csv_free(&t);
}

GR_TEST(test_zero1_memory)
{
    for (size_t k = 0; k < N_RUNS; k++) {
        const char *name = runs[k].name;
        int P = runs[k].P;
        gr6_run_zero1(name, P);
        size_t n = 0, lo;
        free(params_of(name, 0, &n));
        double model = 4.0 * (double)n, biggest = 4.0 * (double)((n + (size_t)P - 1) / (size_t)P);
        for (int r = 0; r < P; r++) {
            double params, grads, optim, comm, want = 4.0 * (double)gr6_shard(n, P, r, &lo);
            peaks_of(name, r, &params, &grads, &optim, &comm);
            if (params != model || grads != model)
                GR_FAIL("%d ranks, rank %d: the ledger's peaks are %.0f bytes of parameters and %.0f of gradients, "
                        "expected the model's %.0f each (ZeRO-1 keeps both whole; nothing else of yours is either)",
                        P, r, params, grads, model);
            if (optim >= model && optim != want)
                GR_FAIL(GR_DIAG("optimizer-replicated") "%d ranks, rank %d: the optimizer state peaked at %.0f "
                                                        "bytes, the whole model's momentum (%.0f): ZeRO-1 keeps "
                                                        "only its shard's, 4 x %zu = %.0f bytes",
                        P, r, optim, model, (size_t)want / 4, want);
            if (optim != want)
                GR_FAIL("%d ranks, rank %d: the optimizer state peaked at %.0f bytes, expected the momentum of its "
                        "shard exactly: 4 x %zu = %.0f bytes (shard %d of %zu over %d, the first n mod P one "
                        "longer)",
                        P, r, optim, (size_t)want / 4, want, r, n, P);
            if (comm > biggest)
                GR_FAIL("%d ranks, rank %d: the communication buffers peaked at %.0f bytes, more than the largest "
                        "shard's %.0f: the ring needs one shard of scratch, not a copy of the model",
                        P, r, comm, biggest);
        }
        gr_note("%d ranks: optimizer state %.0f bytes on rank 0 (DDP's: %.0f)\n", P,
                4.0 * (double)gr6_shard(n, P, 0, &lo), model);
    }
}
END_TEST

GR_TEST(test_zero1_traffic)
{
    for (size_t k = 0; k < N_RUNS; k++) {
        const char *name = runs[k].name;
        int P = runs[k].P;
        gr6_run_zero1(name, P);
        size_t n = 0, nl = 0;
        free(params_of(name, 0, &n));
        double want = 2.0 * (P - 1) / P * 4.0 * (double)n, slack = 2.0 * 4.0 * (P - 1);
        for (int r = 0; r < P; r++) {
            gr6_rec *log = gr6_read_log(name, r, &nl);
            for (long s = 0; s < G6_STEPS; s++) {
                double bytes;
                long messages;
                char other[24];
                size_t found = gr6_phase_traffic(log, nl, "step", s, &bytes, &messages, other, sizeof other);
                if (found == 0)
                    GR_FAIL("%d ranks, rank %d: the transport logged nothing in step %ld (of %d): the step sent "
                            "nothing?",
                            P, r, s, G6_STEPS);
                if (other[0] != '\0')
                    GR_FAIL("%d ranks, rank %d, step %ld: the step called the library's %s: ZeRO-1 moves its data "
                            "with your ring's point-to-point messages only",
                            P, r, s, other);
                long want_msgs = gr6_reduce_scatter_messages(n, P, r) + (P - 1);
                if (messages != want_msgs || fabs(bytes - want) > slack)
                    GR_FAIL("%d ranks, rank %d, step %ld: %ld messages of %.0f bytes in all, expected %ld (the "
                            "reduce-scatter's pieces, then P - 1) of 2(P-1)/P x 4n = %.0f bytes (± %.0f for uneven "
                            "shards): one reduce-scatter and one all-gather of the %zu parameters, what DDP's ring "
                            "allreduce sends",
                            P, r, s, messages, bytes, want_msgs, want, slack, n);
            }
            free(log);
        }
        gr_note("%d ranks: %.0f bytes per rank per step, as DDP's ring allreduce\n", P, want);
    }
}
END_TEST
