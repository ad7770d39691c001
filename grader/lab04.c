/* lab04.c — grader for lab 04: the ring AllReduce by hand.
 *
 * The segment arithmetic and a world of one are checked in-process. All the
 * rest runs the lab's driver, built from the code under test, under
 * common/bin/dlrun with 1 to 4 real MPI processes, in its --dump mode: each
 * rank writes what every algorithm left in its buffer, for element counts
 * 0, 1, P - 1, P, P + 1 and the prime 100003, and the communication counters
 * of each call. The grader computes every expected buffer itself (in double,
 * from the same kit function that made the inputs) and every expected count
 * of bytes and messages from the segment sizes. Integer inputs make every
 * sum exact in f32 and f16 (tolerance 0); random f16 inputs are held to the
 * bound of P - 1 roundings (see check_f16).
 *
 * Each item judges the lab's point, not only the result: every call whose
 * result an item reads must have moved its data itself (no library
 * collective in its counters or in the kit's record of it, gr_check_own_work),
 * and the pipelined ring must have had a chunk in flight while it added one
 * (check_pipeline, from the same record). The items of the ring share one
 * driver run; when it stops, each item reruns its own algorithm alone, so
 * that one algorithm's mistake fails its own item only (gr_get_dump). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, ldexp
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp
#include <unistd.h> // access

#include "dl/comm.h" // dl_comm_init
#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_read_file
#include "dl/half.h" // dl_h2f
#include "dl/json.h" // dl_jv
#include "dl/p2plog.h" // DL_P2P_START, DL_P2P_WAIT, DL_P2P_ADD: the record's kinds
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "items.h" // gr_code_dir
#include "lab04_dump.h" // gr_get_dump, gr_result_of, gr_sum_of, gr_seg_lo
#include "ring.h"

/* A failing reduce-scatter result on rank r, with the classic mistake it
 * looks like; only where the evidence is that mistake's own. */
static int two_ranks_ok; /* the algorithm under test was right on 2 ranks */

static void diagnose_rs(const dump *d, int r, size_t n, const double *got, const double *sum, const char *algo)
{
    int P = d->P;
    size_t lo = gr_seg_lo(n, P, r), hi = gr_seg_lo(n, P, r + 1), bad = gr_first_diff(got, sum, lo, hi);
    double *mine = gr_input_of(d, r, n);
    int twice = hi > lo;
    for (size_t i = lo; i < hi && twice; i++)
        twice &= got[i] == sum[i] + mine[i];
    if (twice && gr_first_diff(got, sum, lo, hi) < hi)
        GR_FAIL(GR_DIAG("one-step-too-many") "%s, %d ranks, n = %zu: rank %d's segment %d holds the sum plus its own "
                                             "share once more: a segment was added twice. The ring takes P - 1 "
                                             "steps, not P",
                algo, P, n, r, r);
    int shift = gr_shifted_sums(d, n, sum, algo);
    if (shift > 0)
        GR_FAIL(GR_DIAG("wrong-first-segment") "%s, %d ranks, n = %zu: rank %d holds the complete sum of segment %d, "
                                               "not of its own segment %d (every rank q holds segment q + %d's): "
                                               "every share was added, but each complete sum ended on the wrong "
                                               "rank. Which segment a rank completes last follows from which "
                                               "one it sends first: choose the first so that the last segment rank "
                                               "r receives and adds is segment r (write the table for P = 4)",
                algo, P, n, r, gr_seg_mod(r + shift, P), r, shift);
    if (P > 2 && two_ranks_ok && n % (size_t)P == 0)
        GR_FAIL(GR_DIAG("wrong-neighbour-direction") "%s: right on 2 ranks, wrong on %d (n = %zu, rank %d, element %zu "
                                                     "is %g, expected %g). With 2 ranks both neighbours are the same "
                                                     "rank; with 3 they differ: each step must send to r + 1 and "
                                                     "receive from r - 1 the segment the left neighbour is sending",
                algo, P, n, r, bad < hi ? bad : lo, got[bad < hi ? bad : lo], sum[bad < hi ? bad : lo]);
    size_t tail = n % (size_t)P;
    if (tail > 0 && bad < hi) {
        // the remainder dropped: the last n mod P elements were never summed
        // (each still holds this rank's own input), and every other element of
        // segment r is right
        int only_tail = 1;
        for (size_t i = lo; i < hi && only_tail; i++)
            only_tail &= got[i] == sum[i] || (i >= n - tail && got[i] == mine[i]);
        if (only_tail)
            GR_FAIL(GR_DIAG("remainder-dropped") "%s, %d ranks, n = %zu (n mod P = %zu): element %zu is %g, this "
                                                 "rank's own input, expected the sum %g: the last n mod P elements "
                                                 "were never sent or added, and all the others are right. Your "
                                                 "ring's segments leave them out: cut the segments with "
                                                 "ring_segment_offset and ring_segment_count, which give every "
                                                 "element a segment",
                    algo, P, n, tail, bad, got[bad], sum[bad]);
    }
    free(mine);
    GR_FAIL("%s, %d ranks, n = %zu: rank %d's segment %d (elements %zu..%zu) must hold the sum over all ranks; "
            "element %zu is %g, expected %g",
            algo, P, n, r, r, lo, hi, bad, got[bad], sum[bad]);
}

// ---- task 2 (part): segments, in-process ----

START_TEST(test_segments)
{
    if (ring_segment_offset(10, 3, 1) == 0 && ring_segment_count(10, 3, 0) == 0)
        GR_FAIL("ring_segment_offset and ring_segment_count return 0 for n = 10, P = 3 (not implemented yet: lab04 "
                "task 2)");
    const struct {
        size_t n;
        int P;
    } cases[] = {{10, 3}, {0, 4}, {1, 4}, {3, 4}, {4, 4}, {5, 4}, {100003, 4}, {7, 1}, {12, 5}, {1, 1}, {64, 8}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = cases[k].n, total = 0;
        int P = cases[k].P;
        for (int s = 0; s <= P; s++) {
            size_t off = ring_segment_offset(n, P, s), want = gr_seg_lo(n, P, s);
            if (off != want) {
                if (s == 1 && n >= (size_t)P && off == 0)
                    GR_FAIL("ring_segment_offset(n = %zu, P = %d, s = 1) = 0 (not implemented yet: lab04 task 2?)", n,
                            P);
                if (off == s * (n / (size_t)P) && n % (size_t)P != 0)
                    GR_FAIL(GR_DIAG("remainder-dropped") "ring_segment_offset(n = %zu, P = %d, s = %d) = %zu, "
                                                         "expected %zu: with n mod P = %zu the first %zu segments "
                                                         "are one element longer (n = 10, P = 3: 4, 3, 3)",
                            n, P, s, off, want, n % (size_t)P, n % (size_t)P);
                GR_FAIL("ring_segment_offset(n = %zu, P = %d, s = %d) = %zu, expected %zu (n = 10, P = 3 gives "
                        "offsets 0, 4, 7, 10)",
                        n, P, s, off, want);
            }
            if (s == P)
                break;
            size_t cnt = ring_segment_count(n, P, s);
            if (cnt != gr_seg_count(n, P, s) && cnt == n / (size_t)P && n % (size_t)P != 0) {
                // where the remainder went missing: in the offsets (the last n mod P
                // elements in no segment), or in the counts alone (beside right offsets)
                size_t next = ring_segment_offset(n, P, s + 1);
                if (next == gr_seg_lo(n, P, s + 1))
                    GR_FAIL(GR_DIAG("remainder-dropped") "ring_segment_count(n = %zu, P = %d, s = %d) = %zu = "
                                                         "floor(n/P), expected %zu: your offsets are right (segment "
                                                         "%d runs from %zu to %zu), but the count leaves the "
                                                         "remainder out, so the last element of each of the first "
                                                         "%zu segments would be in no segment. A segment's count is "
                                                         "its length, up to where the next one starts",
                            n, P, s, cnt, gr_seg_count(n, P, s), s, gr_seg_lo(n, P, s), gr_seg_lo(n, P, s + 1),
                            n % (size_t)P);
                GR_FAIL(GR_DIAG("remainder-dropped") "ring_segment_count(n = %zu, P = %d, s = %d) = %zu = "
                                                     "floor(n/P), expected %zu, and segment %d would start at %zu, "
                                                     "not %zu: segments of floor(n/P) leave the last n mod P = %zu "
                                                     "elements in no segment. The first n mod P segments are one "
                                                     "element longer (n = 10, P = 3: 4, 3, 3)",
                        n, P, s, cnt, gr_seg_count(n, P, s), s + 1, next, gr_seg_lo(n, P, s + 1), n % (size_t)P);
            }
            if (cnt != gr_seg_count(n, P, s))
                GR_FAIL("ring_segment_count(n = %zu, P = %d, s = %d) = %zu, expected %zu", n, P, s, cnt,
                        gr_seg_count(n, P, s));
            total += cnt;
        }
        if (total != n)
            GR_FAIL("the %d segments of n = %zu hold %zu elements", P, n, total);
    }
}
END_TEST

// ---- a world of one, in-process ----

START_TEST(test_world_of_one)
{
    dl_comm *c;
    GR_OK(dl_comm_init(NULL, NULL, &c)); // no launcher: P = 1
    const ring_algo algos[] = {RING_NAIVE, RING_REDUCE_SCATTER, RING_ALL_GATHER, RING_RING, RING_CHUNKED};
    for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++) {
        for (int t = 0; t < 2; t++) {
            dl_dtype dt = t ? DL_F16 : DL_F32;
            size_t n = 37, esz = dl_dtype_size(dt);
            char *buf = malloc(n * esz), *want = malloc(n * esz);
            char *scratch = malloc(ring_scratch_bytes(algos[k], n, 1, dt, 8) + 16);
            ring_data(buf, n, dt, 0, RING_DATA_RANDOM, 3);
            memcpy(want, buf, n * esz);
            GR_OK(ring_run(algos[k], c, dl_cpu(), buf, n, dt, 8, scratch));
            if (memcmp(buf, want, n * esz) != 0)
                GR_FAIL("%s on a world of one (P = 1, %s) changed the buffer: with one rank the sum is the buffer "
                        "itself",
                        ring_algo_name(algos[k]), dl_dtype_name(dt));
            free(buf), free(want), free(scratch);
        }
    }
    dl_comm_finalize(c);
}
END_TEST

// ---- task 1: the naive allreduce ----

static void check_allreduce(const dump *d, const char *algo, int want_identical)
{
    for (int q = 0; q < d->nc; q++) {
        size_t n = d->counts[q];
        double *sum = gr_sum_of(d, n), *first = NULL;
        for (int r = 0; r < d->P; r++) {
            double *got = gr_result_of(d, r, algo, n);
            size_t bad = gr_first_diff(got, sum, 0, n);
            if (bad < n) {
                size_t lo = gr_seg_lo(n, d->P, r), hi = gr_seg_lo(n, d->P, r + 1);
                if (strcmp(algo, "ring") == 0 && hi > lo && gr_first_diff(got, sum, lo, hi) == hi)
                    GR_FAIL(GR_DIAG("all-gather-missing") "ring, %d ranks, n = %zu: rank %d holds the full sum of its "
                                                          "own segment %d only (element %zu is %g, expected %g): "
                                                          "after the reduce-scatter the complete segments must go "
                                                          "round the ring once more (all-gather)",
                            d->P, n, r, r, bad, got[bad], sum[bad]);
                // the ring's reduce-scatter passed on its own (the item's parent): what
                // is left is the all-gather and how the two are put together
                GR_FAIL("%s, %d ranks, n = %zu: rank %d's element %zu is %g, expected the sum over all ranks %g%s",
                        algo, d->P, n, r, bad, got[bad], sum[bad],
                        strcmp(algo, "ring") == 0 ? ". Your reduce-scatter passed on its own: look at the all-gather "
                                                    "(item all_gather), and at the allreduce running the two on the "
                                                    "same buffer, in place"
                                                  : "");
            }
            if (want_identical && first != NULL && memcmp(first, got, n * sizeof *got) != 0)
                GR_FAIL("%s, %d ranks, n = %zu: ranks 0 and %d hold different results", algo, d->P, n, r);
            if (first == NULL)
                first = got;
            else
                free(got);
        }
        free(first);
        free(sum);
    }
}

START_TEST(test_naive)
{
    for (int P = 1; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", "naive", "naive");
        check_allreduce(&d, "naive", 1);
        // its cost lands on rank 0: (P - 1) n elements in and (P - 1) n out
        size_t n = PRIME;
        for (int r = 0; r < P && P > 1; r++) {
            const dl_jv *c = gr_call_of(&d, r, "naive", n);
            double sent = gr_counter(c, "sendrecv_bytes"), want = (r == 0 ? (double)(P - 1) : 1.0) * (double)n * 4;
            if (r != 0 && sent >= (double)(P - 1) * (double)n * 4 && P > 2)
                GR_FAIL(GR_DIAG("naive-sum-everywhere") "naive, %d ranks: rank %d sent %.0f bytes, (P - 1) n elements: "
                                                        "every rank sent its buffer to every other and summed "
                                                        "locally. The naive allreduce sends to rank 0 only, and "
                                                        "rank 0 sends the sum back: rank 0 carries all the traffic",
                        P, r, sent);
            if (sent != want)
                GR_FAIL("naive, %d ranks, n = %zu: rank %d sent %.0f bytes, expected %.0f (%s)", P, n, r, sent, want,
                        r == 0 ? "(P - 1) n elements: the sum to every other rank"
                               : "n elements: its buffer to rank 0");
        }
        gr_free_dump(&d);
    }
}
END_TEST

// ---- tasks 2-4: the ring ----

START_TEST(test_reduce_scatter)
{
    two_ranks_ok = 0;
    for (int P = 1; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", RING_ALGOS, "reduce-scatter");
        for (int q = 0; q < d.nc; q++) {
            size_t n = d.counts[q];
            double *sum = gr_sum_of(&d, n);
            for (int r = 0; r < P; r++) {
                double *got = gr_result_of(&d, r, "reduce-scatter", n);
                size_t lo = gr_seg_lo(n, P, r), hi = gr_seg_lo(n, P, r + 1);
                if (gr_first_diff(got, sum, lo, hi) < hi)
                    diagnose_rs(&d, r, n, got, sum, "reduce-scatter");
                free(got);
            }
            free(sum);
        }
        two_ranks_ok = P == 2;
        gr_free_dump(&d);
    }
}
END_TEST

START_TEST(test_all_gather)
{
    for (int P = 1; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", RING_ALGOS, "all-gather");
        check_allreduce(&d, "all-gather", 1);
        gr_free_dump(&d);
    }
}
END_TEST

START_TEST(test_allreduce)
{
    two_ranks_ok = 0;
    for (int P = 1; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", RING_ALGOS, "ring");
        check_allreduce(&d, "ring", 1);
        two_ranks_ok = P == 2;
        gr_free_dump(&d);
    }
}
END_TEST

START_TEST(test_bandwidth_optimal)
{
    // counted, not timed: each rank sends 2 (P - 1) segments in 2 (P - 1) messages
    for (int P = 2; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", RING_ALGOS, "ring");
        for (int q = 0; q < d.nc; q++) {
            size_t n = d.counts[q];
            for (int r = 0; r < P; r++) {
                double bytes = 0, msgs = 0;
                for (int k = 0; k < P - 1; k++) { // what the ring sends: reduce-scatter, then all-gather
                    size_t a = gr_seg_count(n, P, gr_seg_mod(r - k - 1, P)),
                           b = gr_seg_count(n, P, gr_seg_mod(r - k, P));
                    bytes += 4.0 * (double)(a + b);
                    msgs += (a > 0) + (b > 0);
                }
                const dl_jv *c = gr_call_of(&d, r, "ring", n);
                double got = gr_counter(c, "sendrecv_bytes"), got_msgs = gr_counter(c, "messages");
                gr_check_own_work(&d, r, "ring", n, c);
                if (got != bytes || got_msgs != msgs)
                    GR_FAIL("ring, %d ranks, n = %zu: rank %d sent %.0f bytes in %.0f messages; the ring sends %.0f "
                            "bytes in %.0f messages: 2 (P - 1) segment transfers, one segment each (%s)",
                            P, n, r, got, got_msgs, bytes, msgs,
                            got > bytes ? "more data than needed: a segment sent twice, or whole buffers"
                                        : "fewer: did every segment travel?");
            }
        }
        gr_free_dump(&d);
    }
}
END_TEST

// ---- fp16 ----

/* A ring of P ranks rounds each partial sum to fp16 at each of its P - 1
 * hops: |got - sum| <= (P - 1) u sum_r |x_r| with u = 2^-11 (half an ulp,
 * relative). */
static void check_f16(const dump *d, const char *algo)
{
    size_t n = PRIME;
    double *sum = gr_sum_of(d, n), *abs_sum = calloc(n, sizeof *abs_sum);
    for (int r = 0; r < d->P; r++) {
        double *x = gr_input_of(d, r, n);
        for (size_t i = 0; i < n; i++)
            abs_sum[i] += fabs(x[i]);
        free(x);
    }
    double u = ldexp(1.0, -11);
    for (int r = 0; r < d->P; r++) {
        double *got = gr_result_of(d, r, algo, n);
        size_t worst = 0;
        double worst_share = 0;
        for (size_t i = 0; i < n; i++) {
            double tol = (d->P - 1) * u * abs_sum[i] + ldexp(1.0, -24), share = fabs(got[i] - sum[i]) / tol;
            if (!(share <= worst_share))
                worst_share = share, worst = i;
        }
        if (!(worst_share <= 1))
            GR_FAIL("%s in f16, %d ranks, random inputs: rank %d's element %zu is %.6g, the exact sum %.6g: an error "
                    "of %.3g, %.0f%% of the bound (P - 1) u sum|x| = %.3g for P - 1 roundings",
                    algo, d->P, r, worst, got[worst], sum[worst], fabs(got[worst] - sum[worst]), dl_pct(worst_share, 0),
                    (d->P - 1) * u * abs_sum[worst]);
        free(got);
    }
    free(sum);
    free(abs_sum);
}

START_TEST(test_fp16)
{
    dump d;
    const char *algos[] = {"ring", "naive"};
    for (int k = 0; k < 2; k++) { // small integers: exact
        gr_get_dump(&d, 4, "half", "int", "naive,ring", algos[k]);
        check_allreduce(&d, algos[k], 1);
        gr_free_dump(&d);
    }
    for (int k = 0; k < 2; k++) {
        gr_get_dump(&d, 4, "half", "random", "naive,ring", algos[k]);
        check_f16(&d, algos[k]);
        gr_free_dump(&d);
    }
    // 2048 + 1 + 1 + 1: fp32 accumulation gives 2051, rounded once: 2052; fp16 accumulation keeps 2048
    gr_get_dump(&d, 4, "half", "crafted", "naive", "naive");
    double *got = gr_result_of(&d, 0, "naive", 1);
    double want = dl_h2f(dl_f2h(2051.0f));
    if (got[0] == 2048.0)
        GR_FAIL(GR_DIAG("fp16-accumulation") "naive in f16 on 4 ranks: 2048 + 1 + 1 + 1 gave 2048: the sum was "
                                             "accumulated in fp16, where the spacing at 2048 is 2 and each 2049 "
                                             "rounds back to 2048. Keep the running sum wider than fp16 and round "
                                             "it to fp16 once, at the end: %g",
                want);
    if (got[0] != want)
        GR_FAIL("naive in f16 on 4 ranks: 2048 + 1 + 1 + 1 gave %g, expected %g (2051 rounded once)", got[0], want);
    free(got);
    gr_free_dump(&d);
}
END_TEST

// ---- task 5: chunks ----

/* 1 when the byte ranges [a, a + na) and [b, b + nb) share a byte. */
static int meets(double a, double na, double b, double nb)
{
    return na > 0 && nb > 0 && a < b + nb && b < a + na;
}

/* A range of the record, in words: elements of buf or of scratch. */
static const char *range_name(const dump *d, double scratch_at, double at, double bytes)
{
    static char buf[4][96];
    static int k;
    k = (k + 1) % 4;
    double esz = (double)dl_dtype_size(d->t);
    const char *what = at >= scratch_at && scratch_at >= 0 ? "scratch" : "buf";
    double from = (what[0] == 's' ? at - scratch_at : at) / esz;
    snprintf(buf[k], sizeof buf[k], "%s elements %.0f..%.0f", what, from, from + bytes / esz - 1);
    return buf[k];
}

/* The pipeline, from the kit's record of rank r's ring-chunked call (what
 * dl_comm started and finished and what dl_add added, in order; the
 * student's code cannot write it, only make the calls it records):
 * - no buffer is touched while a transfer in flight uses it: no add reads
 *   or writes what an unfinished transfer receives into, or writes what it
 *   sends; no transfer starts on what one still in flight receives into;
 * - every element the reduce-scatter receives is added with dl_add, once;
 * - while a chunk is added, a transfer is in flight. The only adds allowed
 *   without one are one per step (its last chunk: nothing follows it). With
 *   the message count already exact, an in-flight transfer is a real chunk:
 *   the record can only show this by pipelining. */
static void check_pipeline(const dump *d, int r, size_t n, size_t chunk)
{
    int P = d->P;
    const dl_jv *c = gr_call_of(d, r, "ring-chunked", n);
    size_t ne = 0, n_open = 0, adds = 0, bare = 0;
    rec_ev *ev = gr_record_of(d, r, "ring-chunked", n, c, &ne);
    rec_ev **open = calloc(ne + 1, sizeof *open);
    double scratch_at = dl_jv_num(dl_jv_get(c, "scratch_at"), -1), added = 0;
    for (size_t k = 0; k < ne; k++) {
        const rec_ev *e = &ev[k];
        if (e->kind == DL_P2P_WAIT) {
            for (size_t i = 0; i < n_open; i++) {
                if (open[i]->id == e->id) {
                    open[i] = open[--n_open];
                    break;
                }
            }
            continue;
        }
        int carried = 0;
        for (size_t i = 0; i < n_open; i++) {
            const rec_ev *o = open[i];
            if (e->kind == DL_P2P_START &&
                (meets(e->b, e->b_bytes, o->b, o->b_bytes) || meets(e->b, e->b_bytes, o->a, o->a_bytes) ||
                 meets(e->a, e->a_bytes, o->b, o->b_bytes)))
                GR_FAIL(
                    GR_DIAG("buffer-in-flight") "ring-chunked, %d ranks, n = %zu: rank %d started a transfer on "
                                                "%s while an earlier one, not yet waited for, still used %s: a "
                                                "buffer was reused while a transfer using it was in flight. "
                                                "Wait for a transfer before its buffers take another chunk",
                    P, n, r,
                    range_name(d, scratch_at, meets(e->b, e->b_bytes, o->b, o->b_bytes) ? e->b : e->a,
                               meets(e->b, e->b_bytes, o->b, o->b_bytes) ? e->b_bytes : e->a_bytes),
                    range_name(d, scratch_at, o->b_bytes > 0 ? o->b : o->a, o->b_bytes > 0 ? o->b_bytes : o->a_bytes));
            if (e->kind == DL_P2P_ADD &&
                (meets(e->b, e->b_bytes, o->b, o->b_bytes) || meets(e->a, e->a_bytes, o->b, o->b_bytes)))
                GR_FAIL(GR_DIAG("buffer-in-flight") "ring-chunked, %d ranks, n = %zu: rank %d added %s into %s while "
                                                    "the transfer receiving into %s had not been waited for: a chunk "
                                                    "was added before its transfer finished. Wait for a chunk before "
                                                    "you add it",
                        P, n, r, range_name(d, scratch_at, e->b, e->b_bytes),
                        range_name(d, scratch_at, e->a, e->a_bytes), range_name(d, scratch_at, o->b, o->b_bytes));
            if (e->kind == DL_P2P_ADD && meets(e->a, e->a_bytes, o->a, o->a_bytes))
                GR_FAIL(GR_DIAG("buffer-in-flight") "ring-chunked, %d ranks, n = %zu: rank %d added into %s while the "
                                                    "transfer sending %s had not been waited for: a buffer was changed "
                                                    "while it was being sent",
                        P, n, r, range_name(d, scratch_at, e->a, e->a_bytes),
                        range_name(d, scratch_at, o->a, o->a_bytes));
            carried |= o->a_bytes + o->b_bytes > 0;
        }
        if (e->kind == DL_P2P_START)
            open[n_open++] = (rec_ev *)e;
        if (e->kind == DL_P2P_ADD) {
            adds++;
            bare += !carried;
            added += e->a_bytes;
        }
    }
    free(open);
    free(ev);
    double esz = (double)dl_dtype_size(d->t);
    double want = esz * (double)(n - gr_seg_count(n, P, gr_seg_mod(r - 1, P))); // every segment but the one it starts
    if (added != want)
        GR_FAIL("ring-chunked, %d ranks, n = %zu: rank %d added %.0f elements with dl_add, but its reduce-scatter "
                "receives %.0f: add each chunk that arrives with dl_add, once (the kit records every dl_add: that "
                "record is how the grader sees the pipeline)",
                P, n, r, added / esz, want / esz);
    if (bare > (size_t)(P - 1))
        GR_FAIL(
            GR_DIAG("no-chunk-in-flight") "ring-chunked, %d ranks, n = %zu, chunks of %zu: rank %d added %zu of its "
                                          "%zu chunks with no transfer in flight (the kit's record of the call): "
                                          "each chunk's transfer had finished, and the next one had not started, "
                                          "when it was added, so transfers and adds took turns instead of "
                                          "overlapping. Right sums, but not the pipeline: while a chunk is added, "
                                          "the next one must already be travelling (only a step's last chunk "
                                          "has none behind it)",
            P, n, chunk, r, bare, adds);
}

START_TEST(test_chunked)
{
    for (int P = 2; P <= 4; P++) {
        dump d;
        gr_get_dump(&d, P, "float", "int", RING_ALGOS, "ring-chunked");
        size_t chunk = CHUNK_BYTES / 4;
        for (int q = d.nc - 1; q >= 0; q--) { // the prime first: its chunks are long enough to tell races from ends
            size_t n = d.counts[q];
            double *sum = gr_sum_of(&d, n);
            for (int r = 0; r < P; r++) {
                double *got = gr_result_of(&d, r, "ring-chunked", n);
                size_t bad = gr_first_diff(got, sum, 0, n);
                if (bad < n) {
                    size_t s = 0;
                    while (s + 1 < (size_t)P && gr_seg_lo(n, P, (int)s + 1) <= bad)
                        s++;
                    size_t in_seg = bad - gr_seg_lo(n, P, (int)s);
                    // a boundary mistake spoils single elements at a chunk's ends; a race, whole chunks
                    size_t c0 = bad - in_seg % chunk, c1 = c0 + chunk, wrong_inside = 0;
                    c1 = c1 < gr_seg_lo(n, P, (int)s + 1) ? c1 : gr_seg_lo(n, P, (int)s + 1);
                    for (size_t i = c0 + 1; i + 1 < c1; i++)
                        wrong_inside += got[i] != sum[i];
                    if (wrong_inside == 0 && (in_seg % chunk == 0 || in_seg % chunk == chunk - 1))
                        GR_FAIL(GR_DIAG("chunk-boundary") "ring-chunked, %d ranks, n = %zu, chunks of %zu: element %zu "
                                                          "(position %zu of its segment: a chunk's %s) is %g, expected "
                                                          "%g: chunk k covers elements k*chunk to min((k+1)*chunk, "
                                                          "segment) - 1",
                                P, n, chunk, bad, in_seg, in_seg % chunk == 0 ? "first" : "last", got[bad], sum[bad]);
                    GR_FAIL(GR_DIAG("buffer-in-flight") "ring-chunked, %d ranks, n = %zu: element %zu is %g, expected "
                                                        "%g, while the unchunked ring is right: a buffer was read or "
                                                        "changed while a transfer using it was in flight. Wait for a "
                                                        "chunk before adding it, and do not change what is still being "
                                                        "sent",
                            P, n, bad, got[bad], sum[bad]);
                }
                // messages: every step's segment in ceil(count / chunk) pieces
                double msgs = 0, bytes = 0;
                for (int k = 0; k < P - 1; k++) {
                    size_t a = gr_seg_count(n, P, gr_seg_mod(r - k - 1, P)),
                           b = gr_seg_count(n, P, gr_seg_mod(r - k, P));
                    size_t ca = chunk < (n + P - 1) / P ? chunk : (n + P - 1) / P;
                    ca = ca ? ca : 1;
                    msgs += (double)((a + ca - 1) / ca + (b + ca - 1) / ca);
                    bytes += 4.0 * (double)(a + b);
                }
                const dl_jv *c = gr_call_of(&d, r, "ring-chunked", n);
                if (gr_counter(c, "messages") != msgs || gr_counter(c, "sendrecv_bytes") != bytes)
                    GR_FAIL("ring-chunked, %d ranks, n = %zu, chunks of %zu elements: rank %d sent %.0f messages and "
                            "%.0f bytes; expected %.0f messages (each of the 2 (P - 1) segments in ceil(count / chunk) "
                            "chunks) and %.0f bytes",
                            P, n, chunk, r, gr_counter(c, "messages"), gr_counter(c, "sendrecv_bytes"), msgs, bytes);
                check_pipeline(&d, r, n, chunk);
                free(got);
            }
            free(sum);
        }
        gr_free_dump(&d);
    }
}
END_TEST

// ---- the benchmark ----

START_TEST(test_bench)
{
    // the algorithms of the item's parent (allreduce): the naive and the
    // pipelined ring are their own items' to judge
    int rc = gr_run_driver(2, "bench", "-b 8 -e 256K -f 8 --algo ring,library --iters 3 --warmup 1");
    if (rc != 0)
        gr_fail_dump_run("bench", rc, "ring,library", 0);
    char path[1300];
    snprintf(path, sizeof path, "%s/metrics.csv", gr_path("bench"));
    const char *algos[] = {"ring", "library"};
    for (int k = 0; k < 2; k++) {
        char col[64];
        double v[64];
        snprintf(col, sizeof col, "%s_wrong", algos[k]);
        size_t n = gr_csv_column(path, col, v, 64);
        if (n < 3)
            GR_FAIL("the benchmark wrote %zu sizes for %s, expected 3 (8 B to 256 KiB)", n, algos[k]);
        for (size_t i = 0; i < n; i++) {
            if (v[i] != 0)
                GR_FAIL("the benchmark's correctness pass found %.0f wrong elements for %s at size %zu", v[i], algos[k],
                        i);
        }
    }
    dl_jv *s = gr_summary("bench");
    const dl_jv *res = dl_jv_get(s, "result");
    if (res == NULL || res->type != DL_JSTR || strcmp(res->str, "OK") != 0)
        GR_FAIL("the benchmark's summary.json does not end in OK");
    gr_note("2 ranks: ring %.3f GB/s, library %.3f GB/s average bus bandwidth\n",
            dl_jv_num(dl_jv_get(s, "algos.ring.avg_busbw_gbs"), 0),
            dl_jv_num(dl_jv_get(s, "algos.library.avg_busbw_gbs"), 0));
    dl_jv_free(s);
}
END_TEST

/* The GPU tiers' items (lab04_gpu.c). */
GR_TEST_DECLARE(test_gpu_one_rank);
GR_TEST_DECLARE(test_gpu4_nccl);

// ---- the table ----

static const gr_item items[] = {
    GR_ITEM(test_segments, "segments", "segments: n mod P of them one longer, contiguous, for any n", 10, GR_CPU, NULL,
            "every element in exactly one segment, in order; the first n mod P segments one longer; offset(P) = n",
            "task-2-the-ring-reduce-scatter-25-points", 30, GR_WORKER),
    GR_ITEM(test_world_of_one, "world_of_one", "every algorithm on a world of one leaves the buffer as it is", 5,
            GR_CPU, NULL, "with P = 1 there are no steps: the loops run P - 1 = 0 times", "what-you-will-do", 30,
            GR_WORKER),
    GR_ITEM(test_naive, "naive", "naive: exact on 1-4 ranks for any n; (P - 1) n on rank 0", 15, GR_CPU, NULL,
            "only rank 0 exchanges with the others; it adds in rank order; every rank ends with the same sum",
            "task-1-the-naive-allreduce-15-points", 120, GR_JUDGE),
    GR_ITEM(test_reduce_scatter, "reduce_scatter",
            "reduce-scatter: rank r holds the full sum of segment r (1-4 ranks, any n)", 15, GR_CPU, "segments",
            "P - 1 steps of one segment each way; the last segment rank r receives and adds is segment r",
            "task-2-the-ring-reduce-scatter-25-points", 120, GR_JUDGE),
    GR_ITEM(test_all_gather, "all_gather", "all-gather: the complete segments reach every rank", 10, GR_CPU, "segments",
            "P - 1 steps; each step every rank ends with one more complete segment, received whole",
            "task-3-the-ring-all-gather-10-points", 120, GR_JUDGE),
    GR_ITEM(test_allreduce, "allreduce", "ring allreduce: exact, identical on every rank, in place", 10, GR_CPU,
            "reduce_scatter", "reduce-scatter, then all-gather, on the same buffer",
            "task-4-the-ring-allreduce-20-points", 120, GR_JUDGE),
    GR_ITEM(test_bandwidth_optimal, "bandwidth_optimal",
            "counted: 2 (P - 1) segments in 2 (P - 1) messages per rank, no collectives", 10, GR_CPU, "allreduce",
            "each step moves one segment each way in one message; nothing else is sent",
            "why-the-ring-is-bandwidth-optimal", 120, GR_JUDGE),
    GR_ITEM(test_fp16, "fp16", "f16: exact on integers, within P - 1 roundings on random data; naive sums in fp32", 10,
            GR_CPU, "allreduce",
            "each dl_add rounds once; the naive sum is kept wider than fp16 and rounded once, at the end",
            "summing-in-half-precision", 120, GR_JUDGE),
    GR_ITEM(test_chunked, "chunked",
            "pipelined ring: the same sums; messages = steps x chunks; a chunk in flight at each add", 10, GR_CPU,
            "allreduce",
            "while a chunk is added the next one is travelling; no buffer touched before its transfer's wait",
            "task-5-the-pipelined-ring-10-points", 120, GR_JUDGE),
    GR_ITEM(test_bench, "bench", "your benchmark run on 2 ranks: the ring's #wrong = 0, OK", 5, GR_CPU, "allreduce",
            "common/bin/dlrun -n 2 build/labs/lab04 -b 8 -e 256K -f 8 --algo ring,library", "the-benchmark", 300,
            GR_JUDGE),
    GR_ITEM(gr_test_gpu_one_rank, "gpu_one_rank", "one rank on a GPU: every algorithm runs on device memory", 5,
            GR_GPU1, NULL, "dl_add, dl_copy and the dl_comm calls take device pointers there", "running-on-gpus", 300,
            GR_JUDGE),
    GR_ITEM(gr_test_gpu4_nccl, "gpu4_nccl", "4 GPUs over NCCL: exact, busbw at 64 MiB >= 0.8 x the reference's", 10,
            GR_GPU4, NULL, "the same code; NCCL moves the data", "running-on-gpus", 600, GR_JUDGE),
};

GR_LAB("04", "the ring AllReduce by hand", "04-ring-allreduce", items);
