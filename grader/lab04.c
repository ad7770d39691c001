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
 * bound of P - 1 roundings (see check_f16). */
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
#include "drivers.h" // gr_run_driver
#include "grader.h"
#include "items.h" // gr_code_dir
#include "ring.h"

#define SEED 7
#define PRIME 100003
#define CHUNK_BYTES 4096

// ---- the driver's dumps ----

typedef struct dump {
    char name[64];
    int P;
    dl_dtype t;
    int kind;
    size_t counts[8];
    int nc;
    dl_jv *rank[4];
} dump;

static void counts_for(int P, dump *d)
{
    // n = P first: one element per segment, whatever the segment arithmetic
    const size_t c[6] = {(size_t)P, 0, 1, (size_t)P - 1, (size_t)P + 1, PRIME};
    d->nc = 0;
    for (int k = 0; k < 6; k++) {
        int seen = 0;
        for (int q = 0; q < d->nc; q++)
            seen |= d->counts[q] == c[k];
        if (!seen)
            d->counts[d->nc++] = c[k];
    }
}

/* The watchdog's message in a failed run's log means the ranks waited for
 * each other until DL_COMM_TIMEOUT: a deadlock. */
static void fail_dump_run(const char *name, int rc)
{
    char path[1300], *text = NULL;
    snprintf(path, sizeof path, "%s.log", gr_path(name));
    if (dl_read_file(path, &text, NULL) == DL_OK &&
        (strstr(text, "truncat") != NULL || strstr(text, "send_count must equal") != NULL)) {
        const char *line = strstr(text, "fatal");
        line = line ? line : strstr(text, "send_count");
        GR_FAIL(GR_DIAG("wrong-neighbour-direction") "the driver run '%s' stopped: %.*s. A message arrived longer "
                                                     "than the receive posted for it: sender and receiver disagree "
                                                     "on which segment moves at this step. Send to r + 1, receive "
                                                     "from r - 1, and follow the segment indices step by step",
                name, (int)strcspn(line, "\n"), line);
    }
    free(text);
    text = NULL;
    if (dl_read_file(path, &text, NULL) == DL_OK && strstr(text, "timed out") != NULL) {
        const char *line = strstr(text, "timed out");
        while (line > text && line[-1] != '\n')
            line--;
        GR_FAIL(GR_DIAG("send-then-receive-deadlock") "the driver run '%s' hung until the watchdog stopped it: "
                                                      "%.*s. Every rank waited for the others: a ring where each rank "
                                                      "first sends and then receives hangs once a message is too big "
                                                      "to be buffered. Send and receive in one call (sendrecv)",
                name, (int)strcspn(line, "\n"), line);
    }
    free(text);
    gr_fail_run(name, rc);
}

/* Runs (once per grading run) the dump of algos on P ranks. */
static void get_dump(dump *d, int P, const char *dtype, const char *data, const char *algos)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "dump-%s-%s-%d-%.20s", dtype, data, P, algos);
    for (char *p = d->name; *p; p++)
        *p = *p == ',' ? '+' : *p;
    d->P = P;
    d->t = strcmp(dtype, "half") == 0 ? DL_F16 : DL_F32;
    d->kind = ring_data_parse(data);
    counts_for(P, d);
    char counts[200] = "";
    for (int q = 0; q < d->nc; q++)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%zu", q ? "," : "", d->counts[q]);
    char first[1400];
    snprintf(first, sizeof first, "%s/dump/rank%d.json", gr_path(d->name), P - 1);
    if (access(first, R_OK) != 0) {
        char args[2000];
        snprintf(args, sizeof args,
                 "--dump '%s/dump' --algo %s --dtype %s --data %s --counts %s --chunk-bytes %d --seed %d",
                 gr_path(d->name), algos, dtype, data, counts, CHUNK_BYTES, SEED);
        int rc = gr_run_driver(P, d->name, args);
        if (rc != 0)
            fail_dump_run(d->name, rc);
    }
    for (int r = 0; r < P; r++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/dump/rank%d.json", gr_path(d->name), r);
        if (dl_json_parse_file(path, &d->rank[r]) != DL_OK)
            GR_FAIL("the driver run '%s' wrote no readable %s (%s)", d->name, path, dl_last_error());
    }
}

static void free_dump(dump *d)
{
    for (int r = 0; r < d->P; r++)
        dl_jv_free(d->rank[r]);
}

/* The record of one call in rank r's dump. */
static const dl_jv *call_of(const dump *d, int r, const char *algo, size_t n)
{
    const dl_jv *calls = dl_jv_get(d->rank[r], "calls");
    for (size_t k = 0; calls != NULL && k < calls->n; k++) {
        const dl_jv *c = &calls->items[k];
        const dl_jv *a = dl_jv_get(c, "algo");
        if (a != NULL && a->type == DL_JSTR && strcmp(a->str, algo) == 0 &&
            (size_t)dl_jv_num(dl_jv_get(c, "n"), -1) == n)
            return c;
    }
    const dl_jv *last = calls != NULL && calls->n > 0 ? &calls->items[calls->n - 1] : NULL;
    for (size_t k = 0; calls != NULL && k < calls->n; k++) { // an earlier n of the same algorithm that failed
        const dl_jv *a = dl_jv_get(&calls->items[k], "algo"), *e = dl_jv_get(&calls->items[k], "error");
        if (a != NULL && a->type == DL_JSTR && strcmp(a->str, algo) == 0 && e != NULL && e->type == DL_JSTR &&
            e->str[0] != '\0')
            GR_FAIL("%s on %d ranks: %s", algo, d->P, e->str);
    }
    (void)last;
    GR_FAIL("the dump of '%s' has no record of %s with n = %zu on rank %d", d->name, algo, n, r);
    return NULL;
}

/* What the call left in rank r's buffer, as doubles (n of them). */
static double *result_of(const dump *d, int r, const char *algo, size_t n)
{
    const dl_jv *c = call_of(d, r, algo, n);
    const dl_jv *st = dl_jv_get(c, "status"), *err = dl_jv_get(c, "error");
    if (st != NULL && st->type == DL_JSTR && strcmp(st->str, "DL_OK") != 0)
        GR_FAIL("%s with n = %zu on %d ranks returned %s on rank %d: %s", algo, n, d->P, st->str, r,
                err != NULL && err->type == DL_JSTR ? err->str : "");
    char path[1400], *bytes = NULL;
    size_t len = 0, esz = dl_dtype_size(d->t);
    snprintf(path, sizeof path, "%s/dump/%s-n%zu-r%d.bin", gr_path(d->name), algo, n, r);
    if (dl_read_file(path, &bytes, &len) != DL_OK || len != n * esz)
        GR_FAIL("%s: expected %zu bytes of results, found %zu", path, n * esz, len);
    double *v = malloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        if (d->t == DL_F32) {
            float f;
            memcpy(&f, bytes + i * 4, 4);
            v[i] = f;
        } else {
            dl_half h;
            memcpy(&h, bytes + i * 2, 2);
            v[i] = dl_h2f(h);
        }
    }
    free(bytes);
    return v;
}

/* The inputs of every rank and their exact sum (in double). */
static double *input_of(const dump *d, int r, size_t n)
{
    size_t esz = dl_dtype_size(d->t);
    void *raw = malloc((n + 1) * esz);
    const float *f = raw;
    const dl_half *h = raw;
    double *v = malloc((n + 1) * sizeof *v);
    ring_data(raw, n, d->t, r, d->kind, SEED);
    for (size_t i = 0; i < n; i++)
        v[i] = d->t == DL_F32 ? f[i] : dl_h2f(h[i]);
    free(raw);
    return v;
}

static double *sum_of(const dump *d, size_t n)
{
    double *s = calloc(n + 1, sizeof *s);
    for (int r = 0; r < d->P; r++) {
        double *x = input_of(d, r, n);
        for (size_t i = 0; i < n; i++)
            s[i] += x[i];
        free(x);
    }
    return s;
}

/* First index in [lo, hi) where got differs from want, or hi. */
static size_t first_diff(const double *got, const double *want, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) {
        if (got[i] != want[i])
            return i;
    }
    return hi;
}

static int seg_mod(int a, int P)
{
    return ((a % P) + P) % P;
}

/* The reference's segment bounds (never the student's). */
static size_t seg_lo(size_t n, int P, int s)
{
    size_t q = n / (size_t)P, rem = n % (size_t)P, k = (size_t)s;
    return k * q + (k < rem ? k : rem);
}

static size_t seg_count(size_t n, int P, int s)
{
    return seg_lo(n, P, s + 1) - seg_lo(n, P, s);
}

/* A failing reduce-scatter result on rank r, with the classic mistake it looks like. */
static int two_ranks_ok; /* the algorithm under test was right on 2 ranks */

static void diagnose_rs(const dump *d, int r, size_t n, const double *got, const double *sum, const char *algo)
{
    int P = d->P;
    size_t lo = seg_lo(n, P, r), hi = seg_lo(n, P, r + 1), bad = first_diff(got, sum, lo, hi);
    double *mine = input_of(d, r, n);
    int twice = hi > lo;
    for (size_t i = lo; i < hi && twice; i++)
        twice &= got[i] == sum[i] + mine[i];
    free(mine);
    if (twice && first_diff(got, sum, lo, hi) < hi)
        GR_FAIL(GR_DIAG("one-step-too-many") "%s, %d ranks, n = %zu: rank %d's segment %d holds the sum plus its own "
                                             "share once more: a segment was added twice. The ring takes P - 1 "
                                             "steps, not P",
                algo, P, n, r, r);
    for (int dir = -1; dir <= 1; dir += 2) { // the full sum landed in a neighbour's segment
        int s = seg_mod(r + dir, P);
        size_t l2 = seg_lo(n, P, s), h2 = seg_lo(n, P, s + 1);
        if (P > 2 && h2 > l2 && first_diff(got, sum, l2, h2) == h2)
            GR_FAIL(GR_DIAG("wrong-neighbour-direction") "%s, %d ranks, n = %zu: rank %d holds the full sum of "
                                                         "segment %d, not of its own segment %d: the data went round "
                                                         "the ring the other way. Send to rank r + 1, receive from "
                                                         "r - 1, and follow the segment indices step by step",
                    algo, P, n, r, s, r);
    }
    if (P > 2 && two_ranks_ok && n % (size_t)P == 0)
        GR_FAIL(GR_DIAG("wrong-neighbour-direction") "%s: right on 2 ranks, wrong on %d (n = %zu, rank %d, element %zu "
                                                     "is %g, expected %g). With 2 ranks both neighbours are the same "
                                                     "rank; with 3 they differ: each step must send to r + 1 and "
                                                     "receive from r - 1 the segment the left neighbour is sending",
                algo, P, n, r, bad < hi ? bad : lo, got[bad < hi ? bad : lo], sum[bad < hi ? bad : lo]);
    size_t tail = n % (size_t)P;
    if (tail > 0 && bad < hi) {
        // the remainder: with floor(n/P) everywhere the last n mod P elements are never summed
        double *none = input_of(d, r, n);
        int only_tail = 1;
        for (size_t i = 0; i < n && only_tail; i++)
            only_tail &= (i >= n - tail) || i < lo || i >= hi || got[i] == sum[i];
        free(none);
        if (only_tail)
            GR_FAIL(GR_DIAG("remainder-dropped") "%s, %d ranks, n = %zu (n mod P = %zu): element %zu is %g, expected "
                                                 "%g; only the last n mod P elements are wrong: the first n mod P "
                                                 "segments must be one element longer, so that every element "
                                                 "belongs to a segment",
                    algo, P, n, tail, bad, got[bad], sum[bad]);
    }
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
            size_t off = ring_segment_offset(n, P, s), want = seg_lo(n, P, s);
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
            if (cnt != seg_count(n, P, s) && cnt == n / (size_t)P && n % (size_t)P != 0)
                GR_FAIL(
                    GR_DIAG("remainder-dropped") "ring_segment_count(n = %zu, P = %d, s = %d) = %zu = floor(n/P), "
                                                 "expected %zu: with n mod P = %zu the first %zu segments are one "
                                                 "element longer, or the last n mod P elements belong to no segment",
                    n, P, s, cnt, seg_count(n, P, s), n % (size_t)P, n % (size_t)P);
            if (cnt != seg_count(n, P, s))
                GR_FAIL("ring_segment_count(n = %zu, P = %d, s = %d) = %zu, expected %zu", n, P, s, cnt,
                        seg_count(n, P, s));
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
        double *sum = sum_of(d, n), *first = NULL;
        for (int r = 0; r < d->P; r++) {
            double *got = result_of(d, r, algo, n);
            size_t bad = first_diff(got, sum, 0, n);
            if (bad < n) {
                size_t lo = seg_lo(n, d->P, r), hi = seg_lo(n, d->P, r + 1);
                if (strcmp(algo, "ring") == 0 && hi > lo && first_diff(got, sum, lo, hi) == hi)
                    GR_FAIL(GR_DIAG("all-gather-missing") "ring, %d ranks, n = %zu: rank %d holds the full sum of its "
                                                          "own segment %d only (element %zu is %g, expected %g): "
                                                          "after the reduce-scatter the complete segments must go "
                                                          "round the ring once more (all-gather)",
                            d->P, n, r, r, bad, got[bad], sum[bad]);
                if (strcmp(algo, "ring") == 0)
                    diagnose_rs(d, r, n, got, sum, algo);
                GR_FAIL("%s, %d ranks, n = %zu: rank %d's element %zu is %g, expected the sum over all ranks %g", algo,
                        d->P, n, r, bad, got[bad], sum[bad]);
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

static double counter(const dl_jv *c, const char *key)
{
    return dl_jv_num(dl_jv_get(c, key), -1);
}

START_TEST(test_naive)
{
    for (int P = 1; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "naive");
        check_allreduce(&d, "naive", 1);
        // its cost lands on rank 0: (P - 1) n elements in and (P - 1) n out
        size_t n = PRIME;
        for (int r = 0; r < P && P > 1; r++) {
            const dl_jv *c = call_of(&d, r, "naive", n);
            double sent = counter(c, "sendrecv_bytes"), want = (r == 0 ? (double)(P - 1) : 1.0) * (double)n * 4;
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
        free_dump(&d);
    }
}
END_TEST

// ---- tasks 2-4: the ring ----

START_TEST(test_reduce_scatter)
{
    two_ranks_ok = 0;
    for (int P = 1; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "reduce-scatter,all-gather,ring,ring-chunked");
        for (int q = 0; q < d.nc; q++) {
            size_t n = d.counts[q];
            double *sum = sum_of(&d, n);
            for (int r = 0; r < P; r++) {
                double *got = result_of(&d, r, "reduce-scatter", n);
                size_t lo = seg_lo(n, P, r), hi = seg_lo(n, P, r + 1);
                if (first_diff(got, sum, lo, hi) < hi)
                    diagnose_rs(&d, r, n, got, sum, "reduce-scatter");
                free(got);
            }
            free(sum);
        }
        two_ranks_ok = P == 2;
        free_dump(&d);
    }
}
END_TEST

START_TEST(test_all_gather)
{
    for (int P = 1; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "reduce-scatter,all-gather,ring,ring-chunked");
        check_allreduce(&d, "all-gather", 1);
        free_dump(&d);
    }
}
END_TEST

START_TEST(test_allreduce)
{
    two_ranks_ok = 0;
    for (int P = 1; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "reduce-scatter,all-gather,ring,ring-chunked");
        check_allreduce(&d, "ring", 1);
        two_ranks_ok = P == 2;
        free_dump(&d);
    }
}
END_TEST

START_TEST(test_bandwidth_optimal)
{
    // counted, not timed: each rank sends 2 (P - 1) segments in 2 (P - 1) messages
    for (int P = 2; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "reduce-scatter,all-gather,ring,ring-chunked");
        for (int q = 0; q < d.nc; q++) {
            size_t n = d.counts[q];
            for (int r = 0; r < P; r++) {
                double bytes = 0, msgs = 0;
                for (int k = 0; k < P - 1; k++) { // what the ring sends: reduce-scatter, then all-gather
                    size_t a = seg_count(n, P, seg_mod(r - k - 1, P)), b = seg_count(n, P, seg_mod(r - k, P));
                    bytes += 4.0 * (double)(a + b);
                    msgs += (a > 0) + (b > 0);
                }
                const dl_jv *c = call_of(&d, r, "ring", n);
                double got = counter(c, "sendrecv_bytes"), got_msgs = counter(c, "messages");
                double other = counter(c, "allreduce_calls") + counter(c, "broadcast_calls") +
                               counter(c, "allgather_calls") + counter(c, "allreduce_async_calls");
                if (other > 0)
                    GR_FAIL("ring, %d ranks, n = %zu: rank %d called %.0f dl_comm collective(s): the ring is built "
                            "from point-to-point sendrecv only",
                            P, n, r, other);
                if (got != bytes || got_msgs != msgs)
                    GR_FAIL("ring, %d ranks, n = %zu: rank %d sent %.0f bytes in %.0f messages; the ring sends %.0f "
                            "bytes in %.0f messages: 2 (P - 1) segment transfers, one segment each (%s)",
                            P, n, r, got, got_msgs, bytes, msgs,
                            got > bytes ? "more data than needed: a segment sent twice, or whole buffers"
                                        : "fewer: did every segment travel?");
            }
        }
        free_dump(&d);
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
    double *sum = sum_of(d, n), *abs_sum = calloc(n, sizeof *abs_sum);
    for (int r = 0; r < d->P; r++) {
        double *x = input_of(d, r, n);
        for (size_t i = 0; i < n; i++)
            abs_sum[i] += fabs(x[i]);
        free(x);
    }
    double u = ldexp(1.0, -11);
    for (int r = 0; r < d->P; r++) {
        double *got = result_of(d, r, algo, n);
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
    get_dump(&d, 4, "half", "int", "naive,ring,ring-chunked");
    check_allreduce(&d, "ring", 1); // small integers: exact
    check_allreduce(&d, "naive", 1);
    free_dump(&d);
    get_dump(&d, 4, "half", "random", "naive,ring,ring-chunked");
    check_f16(&d, "ring");
    check_f16(&d, "naive");
    free_dump(&d);
    // 2048 + 1 + 1 + 1: fp32 accumulation gives 2051, rounded once: 2052; fp16 accumulation keeps 2048
    get_dump(&d, 4, "half", "crafted", "naive");
    double *got = result_of(&d, 0, "naive", 1);
    double want = dl_h2f(dl_f2h(2051.0f));
    if (got[0] == 2048.0)
        GR_FAIL(GR_DIAG("fp16-accumulation") "naive in f16 on 4 ranks: 2048 + 1 + 1 + 1 gave 2048: the sum was "
                                             "accumulated in fp16, where the spacing at 2048 is 2 and each 2049 "
                                             "rounds back to 2048. Accumulate in fp32 (dl_accumulate) and round to "
                                             "fp16 once (dl_cast), at the end: %g",
                want);
    if (got[0] != want)
        GR_FAIL("naive in f16 on 4 ranks: 2048 + 1 + 1 + 1 gave %g, expected %g (2051 rounded once)", got[0], want);
    free(got);
    free_dump(&d);
}
END_TEST

// ---- task 5: chunks ----

START_TEST(test_chunked)
{
    for (int P = 2; P <= 4; P++) {
        dump d;
        get_dump(&d, P, "float", "int", "reduce-scatter,all-gather,ring,ring-chunked");
        size_t chunk = CHUNK_BYTES / 4;
        for (int q = d.nc - 1; q >= 0; q--) { // the prime first: its chunks are long enough to tell races from ends
            size_t n = d.counts[q];
            double *sum = sum_of(&d, n);
            for (int r = 0; r < P; r++) {
                double *got = result_of(&d, r, "ring-chunked", n);
                size_t bad = first_diff(got, sum, 0, n);
                if (bad < n) {
                    size_t s = 0;
                    while (s + 1 < (size_t)P && seg_lo(n, P, (int)s + 1) <= bad)
                        s++;
                    size_t in_seg = bad - seg_lo(n, P, (int)s);
                    // a boundary mistake spoils single elements at a chunk's ends; a race, whole chunks
                    size_t c0 = bad - in_seg % chunk, c1 = c0 + chunk, wrong_inside = 0;
                    c1 = c1 < seg_lo(n, P, (int)s + 1) ? c1 : seg_lo(n, P, (int)s + 1);
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
                    size_t a = seg_count(n, P, seg_mod(r - k - 1, P)), b = seg_count(n, P, seg_mod(r - k, P));
                    size_t ca = chunk < (n + P - 1) / P ? chunk : (n + P - 1) / P;
                    ca = ca ? ca : 1;
                    msgs += (double)((a + ca - 1) / ca + (b + ca - 1) / ca);
                    bytes += 4.0 * (double)(a + b);
                }
                const dl_jv *c = call_of(&d, r, "ring-chunked", n);
                if (counter(c, "messages") != msgs || counter(c, "sendrecv_bytes") != bytes)
                    GR_FAIL("ring-chunked, %d ranks, n = %zu, chunks of %zu elements: rank %d sent %.0f messages and "
                            "%.0f bytes; expected %.0f messages (each of the 2 (P - 1) segments in ceil(count / chunk) "
                            "chunks) and %.0f bytes",
                            P, n, chunk, r, counter(c, "messages"), counter(c, "sendrecv_bytes"), msgs, bytes);
                free(got);
            }
            free(sum);
        }
        free_dump(&d);
    }
}
END_TEST

// ---- the benchmark ----

START_TEST(test_bench)
{
    int rc = gr_run_driver(2, "bench", "-b 8 -e 256K -f 8 --algo naive,ring,ring-chunked,library --iters 3 --warmup 1");
    if (rc != 0)
        fail_dump_run("bench", rc);
    char path[1300];
    snprintf(path, sizeof path, "%s/metrics.csv", gr_path("bench"));
    const char *algos[] = {"naive", "ring", "ring-chunked", "library"};
    for (int k = 0; k < 4; k++) {
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

// ---- GPU tiers ----

START_TEST(test_gpu_one_rank)
{
    int rc = gr_run_driver(1, "gpu1",
                           "--device cuda --dump dump-gpu1 --algo naive,ring,ring-chunked --dtype half "
                           "--data random --counts 1,100003");
    if (rc != 0)
        fail_dump_run("gpu1", rc);
    gr_note("one rank on the GPU: the ring is a no-op, and every algorithm ran on device memory\n");
}
END_TEST

START_TEST(test_gpu4_nccl)
{
    dump d;
    char args[2000];
    snprintf(args, sizeof args,
             "--device cuda --dump '%s/dump' --algo ring --dtype float --data int --counts 0,1,3,4,5,%d",
             gr_path("gpu4"), PRIME);
    memset(&d, 0, sizeof d);
    int rc = gr_run_driver(4, "gpu4", args);
    if (rc != 0)
        fail_dump_run("gpu4", rc);
    // the speed: yours against the reference's, at 64 MiB, in this run
    const char *bench = "--device cuda -b 64M -e 64M --algo ring,library --iters 10";
    rc = gr_run_driver(4, "gpu4-bench", bench);
    if (rc != 0)
        fail_dump_run("gpu4-bench", rc);
    dl_jv *s = gr_summary("gpu4-bench");
    double yours = dl_jv_num(dl_jv_get(s, "algos.ring.busbw_largest_gbs"), 0), want;
    dl_jv_free(s);
    char ref[1200];
    snprintf(ref, sizeof ref, "%s/build/solutions/lab04", dl_home());
    if (access(ref, X_OK) == 0) {
        char a2[1500];
        snprintf(a2, sizeof a2, "%s --out '%s' --plot none --quiet", bench, gr_path("gpu4-ref"));
        rc = gr_run_program(ref, 4, "gpu4-ref", a2);
        if (rc != 0)
            gr_fail_run("gpu4-ref", rc);
        dl_jv *r = gr_summary("gpu4-ref");
        want = 0.8 * dl_jv_num(dl_jv_get(r, "algos.ring.busbw_largest_gbs"), 0);
        dl_jv_free(r);
    } else {
        s = gr_summary("gpu4-bench");
        want = 0.8 * 0.8 * dl_jv_num(dl_jv_get(s, "algos.library.busbw_largest_gbs"), 0);
        dl_jv_free(s);
    }
    gr_note("busbw at 64 MiB on 4 GPUs: yours %.2f GB/s (needs >= %.2f)\n", yours, want);
    if (!(yours >= want))
        GR_FAIL("your ring's bus bandwidth at 64 MiB on 4 GPUs is %.2f GB/s, below %.2f GB/s", yours, want);
}
END_TEST

// ---- the table ----

#define H "README.md#"
#define ITEM(test, name, title, pts, tier, parent, hint, section, timeout, where) \
    {                                                                             \
        name, title, pts, tier, parent, hint, H section, timeout, where, &test    \
    }
static const gr_item items[] = {
    ITEM(test_segments, "segments", "segments: n mod P of them one longer, contiguous, for any n", 10, GR_CPU, NULL,
         "offset(s) = s * floor(n/P) + min(s, n mod P); count(s) = offset(s+1) - offset(s)",
         "task-2-the-ring-reduce-scatter-25-points", 30, GR_WORKER),
    ITEM(test_world_of_one, "world_of_one", "every algorithm on a world of one leaves the buffer as it is", 5, GR_CPU,
         NULL, "with P = 1 there are no steps: the loops run P - 1 = 0 times", "what-you-will-do", 30, GR_WORKER),
    ITEM(test_naive, "naive", "naive: exact on 1-4 ranks for any n; (P - 1) n on rank 0", 15, GR_CPU, NULL,
         "others send to 0 and receive the sum; rank 0 receives from 1, 2, ... in order, adds, sends back",
         "task-1-the-naive-allreduce-15-points", 120, GR_JUDGE),
    ITEM(test_reduce_scatter, "reduce_scatter",
         "reduce-scatter: rank r holds the full sum of segment r (1-4 ranks, any n)", 15, GR_CPU, "segments",
         "P - 1 steps: send to r + 1 the segment you last added to, receive from r - 1 and add",
         "task-2-the-ring-reduce-scatter-25-points", 120, GR_JUDGE),
    ITEM(test_all_gather, "all_gather", "all-gather: the complete segments reach every rank", 10, GR_CPU, "segments",
         "P - 1 steps: pass on the complete segment you received last (first: your own)",
         "task-3-the-ring-all-gather-10-points", 120, GR_JUDGE),
    ITEM(test_allreduce, "allreduce", "ring allreduce: exact, identical on every rank, in place", 10, GR_CPU,
         "reduce_scatter", "reduce-scatter, then all-gather, on the same buffer", "task-4-the-ring-allreduce-20-points",
         120, GR_JUDGE),
    ITEM(test_bandwidth_optimal, "bandwidth_optimal",
         "counted: 2 (P - 1) segments in 2 (P - 1) messages per rank, no collectives", 10, GR_CPU, "allreduce",
         "one dl_comm_sendrecv per step, one segment each way", "why-the-ring-is-bandwidth-optimal", 120, GR_JUDGE),
    ITEM(test_fp16, "fp16", "f16: exact on integers, within P - 1 roundings on random data; naive sums in fp32", 10,
         GR_CPU, "allreduce",
         "dl_add rounds each sum once; the naive rank 0 keeps an fp32 sum (dl_accumulate, dl_cast)",
         "summing-in-half-precision", 120, GR_JUDGE),
    ITEM(test_chunked, "chunked", "pipelined ring: the same sums; messages = steps x chunks", 10, GR_CPU, "allreduce",
         "start chunk k + 1 (isendrecv) before you add chunk k; wait before you touch a buffer",
         "task-5-the-pipelined-ring-10-points", 120, GR_JUDGE),
    ITEM(test_bench, "bench", "your benchmark run on 2 ranks: #wrong = 0, OK", 5, GR_CPU, "allreduce",
         "common/bin/dlrun -n 2 build/labs/lab04 -b 8 -e 256K -f 8", "the-benchmark", 300, GR_JUDGE),
    ITEM(test_gpu_one_rank, "gpu_one_rank", "one rank on a GPU: every algorithm runs on device memory", 5, GR_GPU1,
         NULL, "dl_add, dl_copy and the dl_comm calls take device pointers there", "running-on-gpus", 300, GR_JUDGE),
    ITEM(test_gpu4_nccl, "gpu4_nccl", "4 GPUs over NCCL: exact, busbw at 64 MiB >= 0.8 x the reference's", 10, GR_GPU4,
         NULL, "the same code; NCCL moves the data", "running-on-gpus", 600, GR_JUDGE),
};

static const gr_lab lab = {"04", "the ring AllReduce by hand", "04-ring-allreduce", items,
                           (int)(sizeof items / sizeof items[0])};

const gr_lab *gr_lab_get(void)
{
    return &lab;
}
