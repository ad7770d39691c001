/* lab06.c — grader for lab 06: sharded data parallelism, ZeRO-1.
 *
 * Task 1's shard arithmetic is called in-process (recorded in the worker,
 * replayed here) on crafted (n, P). Task 2 runs the lab's driver, built from
 * the code under test, under common/bin/dlrun on 2, 3 and 4 ranks in its
 * --selftest mode: each rank's buffer after the student's reduce-scatter
 * (from the kit's seeded per-rank inputs) and all-gather (from known
 * shards), and the transport's log of each call, written by the kit once
 * the student's last call is over. The judge computes the mean in double
 * itself. Task 2 (and every later item) is judged on the student's own
 * shards when they partition n (gr6_layout_get): a slip of task 1 costs the
 * shards item alone. Tolerance of a reduce-scatter's
 * element i: the ring adds the P ranks' values in fp32 in some order and
 * scales by fl(1/P), so |got − mean| <= (P + 2)·2^-24·Σ_r |x_r,i| / P (the
 * bound of P − 1 roundings of the sum, the scale's and 1/P's); the
 * all-gather moves bits, so bit for bit. Task 3's items are in
 * lab06_zero.c, part 2's (tasks 4 and 5) in lab06_fsdp.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, ldexp
#include <stdio.h> // snprintf
#include <stdlib.h> // free
#include <string.h> // memcmp
#include <unistd.h> // access

#include "grader.h"
#include "kit.h" // kit_selftest_n, kit_selftest_value
#include "lab06_ref.h"
#include "shard.h"

START_TEST(test_shards)
{
    if (shard_offset(10, 3, 3) == 0 && shard_count(10, 3, 0) == 0)
        GR_FAIL("shard_offset and shard_count return 0 for n = 10, P = 3 (not implemented yet: lab06 task 1?)");
    static const struct {
        size_t n;
        int P;
    } cases[] = {{10, 3}, {12, 4}, {3, 4},      {0, 2},       {0, 3},
                 {1, 1},  {7, 7},  {100003, 4}, {1000003, 8}, {((size_t)1 << 33) + 5, 7}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = cases[k].n, off[9], cnt[8], want_off[9], want_cnt[8];
        int P = cases[k].P, bad = -1;
        for (int s = 0; s <= P; s++) {
            off[s] = shard_offset(n, P, s);
            want_cnt[s < P ? s : 0] = s < P ? gr6_shard(n, P, s, &want_off[s]) : want_cnt[0];
            if (s == P)
                want_off[s] = n;
            if (s < P)
                cnt[s] = shard_count(n, P, s);
            if (bad < 0 && (off[s] != want_off[s] || (s < P && cnt[s] != want_cnt[s])))
                bad = s;
        }
        if (bad < 0)
            continue;
        size_t base = n / (size_t)P;
        int last_gets_rest = n % (size_t)P != 0 && cnt[P - 1] == n - (size_t)(P - 1) * base;
        for (int s = 0; s < P; s++)
            last_gets_rest &= off[s] == (size_t)s * base && (s == P - 1 || cnt[s] == base);
        if (last_gets_rest)
            GR_FAIL(GR_DIAG("remainder-in-last-shard") "n = %zu over P = %d: shards of n/P = %zu elements and the "
                                                       "last one %zu: the last rank gets the whole remainder. The "
                                                       "first n mod P = %zu shards hold one element more (lab 04's "
                                                       "segments), so no shard is more than one longer than another",
                    n, P, base, cnt[P - 1], n % (size_t)P);
        if (bad == P)
            GR_FAIL("n = %zu over P = %d: shard_offset(n, P, P) is %zu, expected n (the end of the last shard)", n, P,
                    off[P]);
        GR_FAIL("n = %zu over P = %d: shard %d is [%zu, +%zu), expected [%zu, +%zu) (the first n mod P shards are one "
                "longer)",
                n, P, bad, off[bad], cnt[bad], want_off[bad], want_cnt[bad]);
    }
}
END_TEST

/* The traffic of rank r's call k of a self-test: point-to-point only, (P − 1)/P·4n
 * bytes within one element a ring step, and, when every shard holds an element,
 * the messages the ring sends (gr6_reduce_scatter_messages; P − 1 for the all-gather). */
static void check_call_traffic(const gr6_rec *log, size_t nl, const char *half, const gr6_layout *L, int r, int k)
{
    int P = L->P;
    size_t n = kit_selftest_n(P, k);
    double bytes, want = (double)(P - 1) / P * 4.0 * (double)n, slack = 4.0 * (P - 1);
    long messages;
    char other[24];
    gr6_phase_traffic(log, nl, half, k, &bytes, &messages, other, sizeof other);
    const char *fn = half[0] == 'r' ? "shard_reduce_scatter" : "shard_all_gather";
    if (other[0] != '\0')
        GR_FAIL("%s on %d ranks, n = %zu: rank %d called the library's %s: move the shards with dl_comm_sendrecv "
                "only, round the ring",
                fn, P, n, r, other);
    if (fabs(bytes - want) > slack)
        GR_FAIL("%s on %d ranks, n = %zu: rank %d sent %.0f bytes, expected (P-1)/P x 4n = %.0f (± %.0f): each rank "
                "passes P - 1 shards to its neighbour, %s",
                fn, P, n, r, bytes, want, slack,
                bytes > want ? "not the whole buffer, nor everything through one rank"
                             : "every rank as much as every other (no rank gathers for the others)");
    long want_msgs = half[0] == 'r' ? gr6_reduce_scatter_messages(L, r) : P - 1;
    if (n >= (size_t)P && messages != want_msgs)
        GR_FAIL("%s on %d ranks, n = %zu: rank %d sent %ld messages, expected %ld: %s", fn, P, n, r, messages,
                want_msgs,
                half[0] == 'r' ? "P - 1 ring steps, each its shard in pieces of at most SHARD_CHUNK elements"
                               : "P - 1 ring steps, one shard each");
}

/* Rank r's buffer after call k of a self-test (malloc'ed), checked for its length. */
static float *selftest_buf(const char *name, const char *prefix, int P, int r, int k)
{
    char f[64];
    size_t got = 0, n = kit_selftest_n(P, k);
    snprintf(f, sizeof f, "%s.%d.%d.npy", prefix, k, r);
    if (n == 0) { // nothing to read (the kit writes an empty .npy: shape (0,))
        char file[300];
        snprintf(file, sizeof file, "%s/dump/%s", name, f);
        if (access(gr6_path(file), R_OK) != 0)
            GR_FAIL("the self-test on %d ranks left no %s", P, f);
        return malloc(sizeof(float));
    }
    float *b = gr6_dumped(name, f, &got);
    if (got != n)
        GR_FAIL("the self-test on %d ranks wrote %zu elements for rank %d's buffer of n = %zu", P, got, r, n);
    return b;
}

/* Rank r's shard r after the reduce-scatter of case k, against the mean. */
static void check_mean(const char *name, const gr6_layout *L, int r, int k)
{
    int P = L->P;
    size_t n = kit_selftest_n(P, k), lo, cnt = gr6_layout_shard(L, r, &lo);
    float *b = selftest_buf(name, "rs", P, r, k);
    double *mean = malloc((n ? n : 1) * sizeof *mean), *tol = malloc((n ? n : 1) * sizeof *tol);
    for (size_t i = 0; i < n; i++) {
        double s = 0, a = 0;
        for (int q = 0; q < P; q++) {
            double v = kit_selftest_value(KIT_ST_INPUT, k, q, i);
            s += v, a += fabs(v);
        }
        mean[i] = s / P;
        tol[i] = (P + 2) * ldexp(1, -24) * a / P;
    }
    size_t bad = 0, first = 0, summed = 0;
    for (size_t i = lo; i < lo + cnt; i++) {
        if (fabs(b[i] - mean[i]) <= tol[i])
            continue;
        first = bad++ ? first : i;
        summed += fabs(b[i] - P * mean[i]) <= P * tol[i];
    }
    if (bad > 0) {
        if (summed == cnt)
            GR_FAIL(GR_DIAG("summed-not-averaged") "shard_reduce_scatter on %d ranks, n = %zu: rank %d's shard %d "
                                                   "holds P times the mean (element %zu: %.8g, mean %.8g): the sum "
                                                   "of the ranks' shards, not their mean. Scale your own shard by "
                                                   "1/P at the end",
                    P, n, r, r, first, (double)b[first], mean[first]);
        for (int s = 0; s < P; s++) { // is the mean in another shard of this rank's buffer?
            size_t slo, sc = gr6_layout_shard(L, s, &slo), ok = 0;
            for (size_t i = slo; i < slo + sc; i++)
                ok += fabs(b[i] - mean[i]) <= tol[i];
            if (s != r && sc > 0 && ok == sc)
                GR_FAIL(GR_DIAG("wrong-shard") "shard_reduce_scatter on %d ranks, n = %zu: rank %d completed the mean "
                                               "of shard %d, not its own shard %d: after P - 1 steps rank r must "
                                               "hold shard r (start by sending shard r - 1)",
                        P, n, r, s, r);
        }
        if (bad < cnt)
            GR_FAIL(GR_DIAG("wrong-shard") "shard_reduce_scatter on %d ranks, n = %zu: %zu of the %zu elements of rank "
                                           "%d's shard [%zu, %zu) hold the mean, the others not (element %zu: %.8g, "
                                           "mean %.8g): the shards' boundaries are not shard_offset's",
                    P, n, bad > 0 ? cnt - bad : cnt, cnt, r, lo, lo + cnt, first, (double)b[first], mean[first]);
        GR_FAIL("shard_reduce_scatter on %d ranks, n = %zu: rank %d's shard %d [%zu, %zu) is not the mean of the "
                "ranks' shards (element %zu: %.8g, mean %.8g, tolerance %.2g)",
                P, n, r, r, lo, lo + cnt, first, (double)b[first], mean[first], tol[first]);
    }
    free(b), free(mean), free(tol);
}

static const int selftest_P[] = {2, 3, 4};

/* The student's shards of each case of self-test `name` on P ranks (checked once: rank 0 notes when they are not
 * the contract's). */
int gr6_case_layouts(const char *name, int P, gr6_layout *L)
{
    int own = 0, left = 0, usable = 0;
    for (int k = 0; k < KIT_SELFTEST_CASES; k++) {
        char of[16];
        snprintf(of, sizeof of, "case%d", k);
        gr6_layout_get(name, P, of, kit_selftest_n(P, k), &L[k]);
        own += L[k].own;
        left += !gr6_layout_usable(&L[k]);
        usable += gr6_layout_usable(&L[k]) && kit_selftest_n(P, k) > 0;
    }
    if (own > 0)
        gr_note("%d ranks: %d of the %d cases cut otherwise than the contract says (the shards item names that): %d "
                "judged on your own shards, %d left to task 1\n",
                P, own, KIT_SELFTEST_CASES, own - left, left);
    return usable;
}

void gr6_judged_some(int usable)
{
    if (usable == 0)
        GR_FAIL("your shard_offset and shard_count cut no case of the self-test, on any number of ranks, as the "
                "contract does (the first n mod P shards one longer) or as the collectives may assume (shard 0 the "
                "largest, none above n/P rounded up): task 1 must hold first (the shards item)");
}

START_TEST(test_reduce_scatter)
{
    int usable = 0;
    for (size_t q = 0; q < sizeof selftest_P / sizeof *selftest_P; q++) {
        int P = selftest_P[q];
        char name[32];
        gr6_layout L[KIT_SELFTEST_CASES];
        snprintf(name, sizeof name, "rs%d", P);
        gr6_run_selftest(name, P, "reduce_scatter");
        usable += gr6_case_layouts(name, P, L);
        for (int r = 0; r < P; r++) {
            size_t nl = 0;
            gr6_rec *log = gr6_read_log(name, r, &nl);
            for (int k = 0; k < KIT_SELFTEST_CASES; k++) {
                if (!gr6_layout_usable(&L[k]))
                    continue;
                check_mean(name, &L[k], r, k);
                check_call_traffic(log, nl, "reduce_scatter", &L[k], r, k);
            }
            free(log);
        }
    }
    gr6_judged_some(usable);
}
END_TEST

START_TEST(test_all_gather)
{
    for (size_t q = 0; q < sizeof selftest_P / sizeof *selftest_P; q++) {
        int P = selftest_P[q];
        char name[32];
        gr6_layout L[KIT_SELFTEST_CASES];
        snprintf(name, sizeof name, "ag%d", P);
        gr6_run_selftest(name, P, "all_gather");
        gr6_case_layouts(name, P, L);
        for (int r = 0; r < P; r++) {
            size_t nl = 0;
            gr6_rec *log = gr6_read_log(name, r, &nl);
            for (int k = 0; k < KIT_SELFTEST_CASES; k++) {
                size_t n = kit_selftest_n(P, k);
                float *b = selftest_buf(name, "ag", P, r, k);
                for (int s = 0; s < P; s++) {
                    size_t lo, cnt = gr6_layout_shard(&L[k], s, &lo), wrong = 0, junk = 0, first = 0;
                    for (size_t i = lo; i < lo + cnt; i++) {
                        float want = kit_selftest_value(KIT_ST_SHARD, k, 0, i);
                        if (memcmp(&b[i], &want, sizeof want) == 0)
                            continue;
                        first = wrong++ ? first : i;
                        float mine = kit_selftest_value(KIT_ST_JUNK, k, r, i);
                        junk += memcmp(&b[i], &mine, sizeof mine) == 0;
                    }
                    if (wrong > 0)
                        GR_FAIL("shard_all_gather on %d ranks, n = %zu: rank %d's copy of shard %d [%zu, %zu) is not "
                                "its owner's: %zu element(s) differ (element %zu: %.8g, the owner's %.8g)%s",
                                P, n, r, s, lo, lo + cnt, wrong, first, (double)b[first],
                                (double)kit_selftest_value(KIT_ST_SHARD, k, 0, first),
                                junk == wrong ? "; they still hold what the rank held before: the shard never arrived"
                                              : "");
                }
                free(b);
                check_call_traffic(log, nl, "all_gather", &L[k], r, k);
            }
            free(log);
        }
    }
}
END_TEST

static const gr_item items[] = {
    GR_ITEM(test_shards, "shards",
            "shard offsets and counts on crafted (n, P): uneven, n < P, n = 0, n > 2^32; the first n mod P longer", 10,
            GR_CPU, NULL, "the first n mod P shards hold one element more; shard_offset(n, P, P) = n",
            "task-1-shards-10-points", 30, GR_WORKER),
    GR_ITEM(test_reduce_scatter, "reduce_scatter",
            "reduce-scatter on 2, 3, 4 ranks: shard r of rank r is the mean; a ring of sendrecv, (P-1)/P x 4n bytes",
            20, GR_CPU, NULL,
            "P - 1 steps round the ring, adding as the shards pass; rank r ends with shard r, scaled by 1/P",
            "task-2-the-two-halves-of-the-ring-35-points", 120, GR_JUDGE),
    GR_ITEM(test_all_gather, "all_gather",
            "all-gather on 2, 3, 4 ranks: every rank holds every owner's shard bit for bit; P - 1 messages a rank", 15,
            GR_CPU, NULL, "P - 1 steps round the ring, each passing on the shard that arrived last",
            "task-2-the-two-halves-of-the-ring-35-points", 120, GR_JUDGE),
    GR_ITEM(gr_test_zero1_equivalence, "zero1_equivalence",
            "ZeRO-1 on 2 and 3 ranks, 20 steps: ranks bitwise equal, equal to one rank on every rank's batches", 25,
            GR_CPU, "reduce_scatter",
            "mean gradient reduce-scattered, your shard's step with its own momentum, then the all-gather",
            "task-3-zero-1-55-points", 180, GR_JUDGE),
    GR_ITEM(
        gr_test_zero1_memory, "zero1_memory",
        "ZeRO-1's memory: the ledger's momentum 4 x shard_count bytes a rank, scratch one piece, filed as comm; "
        "what the OS saw of each rank against DDP's run beside it",
        20, GR_CPU, NULL,
        "momentum for your own shard only and shard_scratch_bytes of scratch, each from shard_alloc under its kind; "
        "nothing kept outside the ledger",
        "task-3-zero-1-55-points", 180, GR_JUDGE),
    GR_ITEM(gr_test_zero1_traffic, "zero1_traffic",
            "ZeRO-1's steps: a reduce-scatter and an all-gather, 2(P-1)/P x 4n bytes a rank, point to point: DDP's "
            "ring volume",
            10, GR_CPU, NULL, "one reduce-scatter of the gradients and one all-gather of the parameters a step",
            "task-3-zero-1-55-points", 180, GR_JUDGE),
    GR_ITEM(gr_test_async_collectives, "async_collectives",
            "started, then waited: on 2, 3, 4 ranks the owners' shards bit for bit and the mean; P - 1 exchanges, "
            "(P-1)/P x 4n bytes; rank 0's starts return before any peer has started",
            20, GR_CPU, NULL,
            "the P - 1 exchanges posted with dl_comm_isendrecv, none waited for in the start; shard_wait adds and "
            "scales by 1/P",
            "task-4-collectives-that-do-not-wait-20-points", 120, GR_JUDGE),
    GR_ITEM(
        gr_test_fsdp_equivalence, "fsdp_equivalence",
        "FSDP on 2 and 3 ranks, 20 steps: the parameters put together equal one rank's on every rank's batches", 20,
        GR_CPU, "async_collectives",
        "each layer whole for its forward and its backward, its gradient reduce-scattered to the mean, each shard's "
        "own step",
        "task-5-fsdp-55-points", 180, GR_JUDGE),
    GR_ITEM(gr_test_fsdp_memory, "fsdp_memory",
            "FSDP's memory: the ledger's momentum 4 x the layers' shards exactly, at most two layers' parameters and "
            "gradients whole; what the OS saw of each rank against DDP's run beside it",
            15, GR_CPU, NULL,
            "three shards per layer; a whole layer, a whole gradient and the slots each from shard_alloc under its "
            "kind, given back as soon as nothing needs them",
            "task-5-fsdp-55-points", 180, GR_JUDGE),
    GR_ITEM(gr_test_fsdp_traffic, "fsdp_traffic",
            "FSDP's steps: 3(P-1)/P x 4n bytes a rank, point to point: every layer gathered for forward and again for "
            "backward, reduce-scattered once",
            10, GR_CPU, NULL, "forward does not keep its gathered layers for backward", "task-5-fsdp-55-points", 180,
            GR_JUDGE),
    GR_ITEM(gr_test_fsdp_overlap, "fsdp_overlap",
            "FSDP's overlap, from the kit's record: the next layer's all-gather in flight while a layer computes, "
            "each gradient's reduce-scatter in flight while the layer below computes",
            10, GR_CPU, "async_collectives",
            "invariants 2 and 3 of task 5: what is started before a compute and finished after it moves while it runs",
            "task-5-fsdp-55-points", 180, GR_JUDGE),
    GR_ITEM(gr_test_gpu_one_rank, "gpu_one_rank", "one GPU: 20 steps of ZeRO-1 and of FSDP equal the CPU reference", 10,
            GR_GPU1, "zero1_equivalence",
            "the same code on device pointers: shard_alloc gives device memory there, and dl_add, dl_copy, dl_scale "
            "and the dl_comm calls take it",
            "running-on-gpus", 300, GR_JUDGE),
    GR_ITEM(gr_test_gpu4_ranks, "gpu4_ranks",
            "four GPUs: 20 steps of ZeRO-1 and of FSDP on every rank equal the four-rank reference", 10, GR_GPU4,
            "fsdp_equivalence", "one GPU per rank (dlrun -n 4 --device cuda): your exchanges go through NCCL",
            "running-on-gpus", 600, GR_JUDGE),
};

GR_LAB("06", "Sharded data parallelism: ZeRO-1 and FSDP on your own reduce-scatter and all-gather", "06-sharded",
       items);
