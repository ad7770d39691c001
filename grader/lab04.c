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
 * collective in its counters or in the kit's record of it, check_own_work),
 * and the pipelined ring must have had a chunk in flight while it added one
 * (check_pipeline, from the same record). The items of the ring share one
 * driver run; when it stops, each item reruns its own algorithm alone, so
 * that one algorithm's mistake fails its own item only (get_dump). */
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
#include "ring.h"

#define SEED 7
#define PRIME 100003
#define CHUNK_BYTES 4096
/* The ring's algorithms, dumped in one run that their items share. */
#define RING_ALGOS "reduce-scatter,all-gather,ring,ring-chunked"

// ---- the segments, as the grader knows them ----

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

/* A line of text (the one holding at), as "%.*s" wants it. */
static int line_len(const char *at)
{
    return (int)strcspn(at, "\n");
}

static const char *line_start(const char *text, const char *at)
{
    while (at > text && at[-1] != '\n')
        at--;
    return at;
}

/* A driver run of algos that stopped: the classic mistake its log shows.
 * - A count mismatch (the MPI transport names it: "received more than K
 *   element(s)", or "received G element(s) ... but expected K"): when one
 *   side of the pair is empty and the algorithm is right wherever no
 *   segment is empty (right_without_empty: get_dump's probe), a rank
 *   skipped the call of an empty segment or chunk, and its next call met
 *   one of its neighbour's from another step; otherwise sender and receiver
 *   disagree on which segment moves.
 * - The watchdog's "timed out": in dl_comm_send or dl_comm_recv, the ranks
 *   all sent first and waited for each other (the deadlock of the eager
 *   limit); in a sendrecv, a call whose partner never came. */
static void fail_dump_run(const char *name, int rc, const char *algos, int right_without_empty)
{
    char path[1300], *text = NULL;
    snprintf(path, sizeof path, "%s.log", gr_path(name));
    if (dl_read_file(path, &text, NULL) != DL_OK)
        gr_fail_run(name, rc);
    int chunked = strstr(algos, "chunked") != NULL;
    const char *mismatch = strstr(text, "send_count must equal");
    if (mismatch != NULL) {
        const char *line = line_start(text, mismatch), *more = strstr(line, "received more than ");
        const char *got_at = strstr(line, " received ");
        long got = -1, want = -1;
        if (more != NULL && more < mismatch)
            sscanf(more, "received more than %ld", &want); // got > want
        else if (got_at != NULL && got_at < mismatch)
            sscanf(got_at, " received %ld element(s) from rank %*d but expected %ld", &got, &want);
        const char *how = got >= 0 && got < want ? "shorter" : "longer";
        if (right_without_empty && (got == 0 || want == 0))
            GR_FAIL(GR_DIAG("empty-call-skipped") "%s stopped in the driver run '%s': %.*s. A message arrived %s than "
                                                  "the receive "
                                                  "posted for it, and one side of the pair was empty, while with "
                                                  "no segment empty (n = P) every result is right: a rank left out "
                                                  "its call for an empty %s, so that its next call met a call of "
                                                  "its neighbour's from another step. Calls pair up in order, an "
                                                  "empty send or receive included: every rank makes the same calls "
                                                  "with each neighbour, step by step, even where its own part is "
                                                  "empty",
                    algos, name, line_len(line), line, how, chunked ? "chunk (or segment)" : "segment");
        if (chunked)
            GR_FAIL("%s stopped in the driver run '%s': %.*s. A message arrived %s than the receive posted for it: the "
                    "chunk a rank "
                    "sent and the one its neighbour received differ in length. Both sides must agree on the segment "
                    "and on the chunk of it: chunk k covers elements k*chunk to min((k+1)*chunk, count) - 1",
                    algos, name, line_len(line), line, how);
        GR_FAIL(
            GR_DIAG(
                "wrong-neighbour-direction") "%s stopped in the driver run '%s': %.*s. A message arrived %s than the "
                                             "receive posted for it: sender and receiver disagree on which "
                                             "segment moves at this step. Send to r + 1, receive from "
                                             "r - 1, and follow the segment indices step by step",
            algos, name, line_len(line), line, how);
    }
    const char *timed = strstr(text, " timed out");
    if (timed != NULL) {
        const char *line = line_start(text, timed), *colon = strstr(line, ": ");
        char call[32] = "";
        if (colon != NULL && colon < timed)
            snprintf(call, sizeof call, "%.*s", (int)(timed - colon - 2), colon + 2);
        if (strcmp(call, "send") == 0 || strcmp(call, "recv") == 0)
            GR_FAIL(
                GR_DIAG(
                    "send-then-receive-deadlock") "%s hung in the driver run '%s' until the watchdog stopped it: %.*s. "
                                                  "Every rank waited for the others: a ring where each "
                                                  "rank first sends and then receives hangs once a message "
                                                  "is too big to be buffered. Send and receive in one call",
                algos, name, line_len(line), line);
        GR_FAIL("%s hung in the driver run '%s' until the watchdog stopped it: %.*s. A call waited for its partner, "
                "which never "
                "came: calls pair up in order (a rank's k-th call with a neighbour meets the neighbour's k-th call "
                "with it, an empty one included), so every rank must make the same calls with each neighbour, and "
                "receive from the rank that sends to it",
                algos, name, line_len(line), line);
    }
    free(text);
    gr_fail_run(name, rc);
}

/* Runs the driver's dump of algos on P ranks, once per grading run, for
 * every count of counts_for (probe = 1: n = P alone): 0 when its files are
 * there (from this item or an earlier one), its exit status when it ran and
 * failed, -1 when it failed in an earlier item (then only again = 1 runs it
 * once more). */
static int run_dump(dump *d, int P, const char *dtype, const char *data, const char *algos, int probe, int again)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s-%s-%s-%d-%.20s", probe ? "probe" : "dump", dtype, data, P, algos);
    for (char *p = d->name; *p; p++)
        *p = *p == ',' ? '+' : *p;
    d->P = P;
    d->t = strcmp(dtype, "half") == 0 ? DL_F16 : DL_F32;
    d->kind = ring_data_parse(data);
    counts_for(P, d);
    d->nc = probe ? 1 : d->nc; // n = P alone: one element per segment, none empty
    char counts[200] = "";
    for (int q = 0; q < d->nc; q++)
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%zu", q ? "," : "", d->counts[q]);
    char first[1400], log[1300];
    snprintf(first, sizeof first, "%s/dump/rank%d.json", gr_path(d->name), P - 1);
    snprintf(log, sizeof log, "%s.log", gr_path(d->name));
    if (access(first, R_OK) == 0)
        return 0;
    if (access(log, R_OK) == 0 && !again)
        return -1;
    char args[2000];
    snprintf(args, sizeof args,
             "--dump '%s/dump' --algo %s --dtype %s --data %s --counts %s --chunk-bytes %d --seed %d", gr_path(d->name),
             algos, dtype, data, counts, CHUNK_BYTES, SEED);
    return gr_run_driver(P, d->name, args);
}

/* The algorithm a failed run's log says stopped it ("fatal: ALGO with n ="), or "". */
static void failed_algo(const char *name, char *out, size_t len)
{
    char path[1300], *text = NULL;
    out[0] = '\0';
    snprintf(path, sizeof path, "%s.log", gr_path(name));
    if (dl_read_file(path, &text, NULL) != DL_OK)
        return;
    const char *f = strstr(text, "fatal: ");
    if (f != NULL && strstr(f, " with n = ") != NULL)
        snprintf(out, len, "%.*s", (int)strcspn(f + 7, " \n"), f + 7);
    free(text);
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

static double counter(const dl_jv *c, const char *key)
{
    return dl_jv_num(dl_jv_get(c, key), -1);
}

// ---- the kit's record of a call (dl/p2plog.h, dumped by the driver) ----

/* One event: what the kit started (op, id, send range a, receive range b),
 * finished (id) or added (dst a, src b), ranges as byte offsets from buf. */
typedef struct rec_ev {
    int kind, op;
    long id;
    double a, a_bytes, b, b_bytes;
} rec_ev;

/* The call's events (free them); fails the test on a record that is missing,
 * malformed or overflowed. */
static rec_ev *record_of(const dump *d, int r, const char *algo, size_t n, const dl_jv *c, size_t *count)
{
    const dl_jv *log = dl_jv_get(c, "log");
    if (log == NULL || log->type != DL_JARR)
        GR_FAIL("%s, %d ranks, n = %zu: rank %d's dump has no record of what the call sent and added", algo, d->P, n,
                r);
    if (counter(c, "log_dropped") != 0)
        GR_FAIL("%s, %d ranks, n = %zu: rank %d made so many dl_comm and dl_add calls that the kit's record of them "
                "overflowed (%.0f dropped)",
                algo, d->P, n, r, counter(c, "log_dropped"));
    rec_ev *ev = calloc(log->n + 1, sizeof *ev);
    for (size_t k = 0; k < log->n; k++) {
        const dl_jv *row = &log->items[k];
        if (row->type != DL_JARR || row->n != 7)
            GR_FAIL("%s: rank %d's record of n = %zu is malformed at event %zu", algo, r, n, k);
        double v[7];
        for (int i = 0; i < 7; i++)
            v[i] = dl_jv_num(&row->items[i], 0);
        ev[k] = (rec_ev){(int)v[0], (int)v[1], (long)v[2], v[3], v[4], v[5], v[6]};
    }
    *count = log->n;
    return ev;
}

/* The call's own work: the collective it must build is not a library's.
 * Refused from two sources: the call's counters and the kit's record of
 * every operation the call started. */
static void check_own_work(const dump *d, int r, const char *algo, size_t n, const dl_jv *c)
{
    static const dl_comm_op library[] = {DL_OP_ALLREDUCE, DL_OP_BROADCAST, DL_OP_ALLGATHER, DL_OP_ALLREDUCE_ASYNC};
    double seen[DL_OP_COUNT] = {0};
    int down = counter(c, "messages") < 0;
    for (int op = 0; op < DL_OP_COUNT; op++) {
        char key[64];
        snprintf(key, sizeof key, "%s_calls", dl_comm_op_name((dl_comm_op)op));
        seen[op] = counter(c, key);
        down |= seen[op] < 0;
    }
    size_t ne = 0;
    rec_ev *ev = record_of(d, r, algo, n, c, &ne);
    for (size_t k = 0; k < ne; k++) {
        if (ev[k].kind == DL_P2P_START && ev[k].op >= 0 && ev[k].op < DL_OP_COUNT && seen[ev[k].op] <= 0)
            seen[ev[k].op] = 1;
    }
    free(ev);
    for (size_t k = 0; k < sizeof library / sizeof library[0]; k++) {
        if (seen[library[k]] > 0)
            GR_FAIL(GR_DIAG("library-collective") "%s, %d ranks, n = %zu: rank %d called dl_comm_%s (%.0f time(s)): "
                                                  "the library's collective did the work this task asks you to do. "
                                                  "Build it from point-to-point messages (dl_comm_sendrecv, "
                                                  "dl_comm_isendrecv) and dl_add, as the handout's contract says",
                    algo, d->P, n, r, dl_comm_op_name(library[k]), seen[library[k]]);
    }
    if (down)
        GR_FAIL("%s, %d ranks, n = %zu: rank %d's communication counters went down during the call: the grader "
                "counts what your code sends; leave the counters alone",
                algo, d->P, n, r);
}

/* What the call left in rank r's buffer, as doubles (n of them), once it is
 * known to be the call's own work. */
static double *result_of(const dump *d, int r, const char *algo, size_t n)
{
    const dl_jv *c = call_of(d, r, algo, n);
    const dl_jv *st = dl_jv_get(c, "status"), *err = dl_jv_get(c, "error");
    if (st != NULL && st->type == DL_JSTR && strcmp(st->str, "DL_OK") != 0)
        GR_FAIL("%s with n = %zu on %d ranks returned %s on rank %d: %s", algo, n, d->P, st->str, r,
                err != NULL && err->type == DL_JSTR ? err->str : "");
    check_own_work(d, r, algo, n, c);
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

static void read_dump(dump *d)
{
    for (int r = 0; r < d->P; r++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/dump/rank%d.json", gr_path(d->name), r);
        if (dl_json_parse_file(path, &d->rank[r]) != DL_OK)
            GR_FAIL("the driver run '%s' wrote no readable %s (%s)", d->name, path, dl_last_error());
    }
}

/* 1 when algo left the exact sum on every rank of d, for its one count
 * (the reduce-scatter: in segment r of rank r). */
static int right_on(const dump *d, const char *algo)
{
    size_t n = d->counts[0];
    double *sum = sum_of(d, n);
    int ok = 1;
    for (int r = 0; r < d->P && ok; r++) {
        double *got = result_of(d, r, algo, n);
        int rs = strcmp(algo, "reduce-scatter") == 0;
        size_t lo = rs ? seg_lo(n, d->P, r) : 0, hi = rs ? seg_lo(n, d->P, r + 1) : n;
        ok = first_diff(got, sum, lo, hi) == hi;
        free(got);
    }
    free(sum);
    return ok;
}

/* The dump that holds algo's calls on P ranks, read. Items share one run of
 * the algorithms in shared; when that run stopped on another algorithm
 * than algo, algo runs alone, so that one algorithm's mistake is judged by
 * its own item only. When algo's own run stopped, a crash can hide what
 * the values would show: algo runs once more on n = P alone (no segment
 * empty, every segment one element), and where its values are wrong there
 * this returns that probe's dump for the item to judge, as it judges any;
 * where they are right, the stop is judged from the run's log
 * (fail_dump_run), knowing that only empty segments make it fail. */
static void get_dump(dump *d, int P, const char *dtype, const char *data, const char *shared, const char *algo)
{
    int rc = run_dump(d, P, dtype, data, shared, 0, 0);
    if (rc != 0) {
        char culprit[64];
        failed_algo(d->name, culprit, sizeof culprit);
        if (strcmp(shared, algo) != 0 && strcmp(culprit, algo) != 0)
            rc = run_dump(d, P, dtype, data, algo, 0, 1);
        else if (rc < 0) // it stopped in an earlier item: again, for this item's view of it
            rc = run_dump(d, P, dtype, data, shared, 0, 1);
    }
    if (rc == 0) {
        read_dump(d);
        return;
    }
    char failed[64];
    snprintf(failed, sizeof failed, "%s", d->name);
    int right = 0;
    if (d->kind == RING_DATA_INT && run_dump(d, P, dtype, data, algo, 1, 1) == 0) {
        read_dump(d);
        if (!right_on(d, algo))
            return;
        right = 1;
        free_dump(d);
    }
    fail_dump_run(failed, rc, algo, right);
}

/* The shift (1 to P - 1) by which every rank q holds the complete sum of
 * segment q + shift instead of its own (empty segments aside), or 0. */
static int shifted_sums(const dump *d, size_t n, const double *sum, const char *algo)
{
    int P = d->P, found = 0;
    double *got[4];
    for (int q = 0; q < P; q++)
        got[q] = result_of(d, q, algo, n);
    for (int shift = 1; shift < P && !found; shift++) {
        int all = 1, any = 0;
        for (int q = 0; q < P; q++) {
            int s = seg_mod(q + shift, P);
            size_t l2 = seg_lo(n, P, s), h2 = seg_lo(n, P, s + 1);
            any |= h2 > l2;
            all &= h2 == l2 || first_diff(got[q], sum, l2, h2) == h2;
        }
        found = all && any ? shift : 0;
    }
    for (int q = 0; q < P; q++)
        free(got[q]);
    return found;
}

/* A failing reduce-scatter result on rank r, with the classic mistake it
 * looks like; only where the evidence is that mistake's own. */
static int two_ranks_ok; /* the algorithm under test was right on 2 ranks */

static void diagnose_rs(const dump *d, int r, size_t n, const double *got, const double *sum, const char *algo)
{
    int P = d->P;
    size_t lo = seg_lo(n, P, r), hi = seg_lo(n, P, r + 1), bad = first_diff(got, sum, lo, hi);
    double *mine = input_of(d, r, n);
    int twice = hi > lo;
    for (size_t i = lo; i < hi && twice; i++)
        twice &= got[i] == sum[i] + mine[i];
    if (twice && first_diff(got, sum, lo, hi) < hi)
        GR_FAIL(GR_DIAG("one-step-too-many") "%s, %d ranks, n = %zu: rank %d's segment %d holds the sum plus its own "
                                             "share once more: a segment was added twice. The ring takes P - 1 "
                                             "steps, not P",
                algo, P, n, r, r);
    int shift = shifted_sums(d, n, sum, algo);
    if (shift > 0)
        GR_FAIL(GR_DIAG("wrong-first-segment") "%s, %d ranks, n = %zu: rank %d holds the complete sum of segment %d, "
                                               "not of its own segment %d (every rank q holds segment q + %d's): "
                                               "every share was added, but each complete sum ended on the wrong "
                                               "rank. Which segment a rank completes last follows from which "
                                               "one it sends first: choose the first so that the last segment rank "
                                               "r receives and adds is segment r (write the table for P = 4)",
                algo, P, n, r, seg_mod(r + shift, P), r, shift);
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
            if (cnt != seg_count(n, P, s) && cnt == n / (size_t)P && n % (size_t)P != 0) {
                // where the remainder went missing: in the offsets (the last n mod P
                // elements in no segment), or in the counts alone (beside right offsets)
                size_t next = ring_segment_offset(n, P, s + 1);
                if (next == seg_lo(n, P, s + 1))
                    GR_FAIL(GR_DIAG("remainder-dropped") "ring_segment_count(n = %zu, P = %d, s = %d) = %zu = "
                                                         "floor(n/P), expected %zu: your offsets are right (segment "
                                                         "%d runs from %zu to %zu), but the count leaves the "
                                                         "remainder out, so the last element of each of the first "
                                                         "%zu segments would be in no segment. A segment's count is "
                                                         "its length, up to where the next one starts",
                            n, P, s, cnt, seg_count(n, P, s), s, seg_lo(n, P, s), seg_lo(n, P, s + 1), n % (size_t)P);
                GR_FAIL(GR_DIAG("remainder-dropped") "ring_segment_count(n = %zu, P = %d, s = %d) = %zu = "
                                                     "floor(n/P), expected %zu, and segment %d would start at %zu, "
                                                     "not %zu: segments of floor(n/P) leave the last n mod P = %zu "
                                                     "elements in no segment. The first n mod P segments are one "
                                                     "element longer (n = 10, P = 3: 4, 3, 3)",
                        n, P, s, cnt, seg_count(n, P, s), s + 1, next, seg_lo(n, P, s + 1), n % (size_t)P);
            }
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
        get_dump(&d, P, "float", "int", "naive", "naive");
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
        get_dump(&d, P, "float", "int", RING_ALGOS, "reduce-scatter");
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
        get_dump(&d, P, "float", "int", RING_ALGOS, "all-gather");
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
        get_dump(&d, P, "float", "int", RING_ALGOS, "ring");
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
        get_dump(&d, P, "float", "int", RING_ALGOS, "ring");
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
                check_own_work(&d, r, "ring", n, c);
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
    const char *algos[] = {"ring", "naive"};
    for (int k = 0; k < 2; k++) { // small integers: exact
        get_dump(&d, 4, "half", "int", "naive,ring", algos[k]);
        check_allreduce(&d, algos[k], 1);
        free_dump(&d);
    }
    for (int k = 0; k < 2; k++) {
        get_dump(&d, 4, "half", "random", "naive,ring", algos[k]);
        check_f16(&d, algos[k]);
        free_dump(&d);
    }
    // 2048 + 1 + 1 + 1: fp32 accumulation gives 2051, rounded once: 2052; fp16 accumulation keeps 2048
    get_dump(&d, 4, "half", "crafted", "naive", "naive");
    double *got = result_of(&d, 0, "naive", 1);
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
    free_dump(&d);
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
    const dl_jv *c = call_of(d, r, "ring-chunked", n);
    size_t ne = 0, n_open = 0, adds = 0, bare = 0;
    rec_ev *ev = record_of(d, r, "ring-chunked", n, c, &ne);
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
    double want = esz * (double)(n - seg_count(n, P, seg_mod(r - 1, P))); // every segment but the one it starts
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
        get_dump(&d, P, "float", "int", RING_ALGOS, "ring-chunked");
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
                check_pipeline(&d, r, n, chunk);
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
    // the algorithms of the item's parent (allreduce): the naive and the
    // pipelined ring are their own items' to judge
    int rc = gr_run_driver(2, "bench", "-b 8 -e 256K -f 8 --algo ring,library --iters 3 --warmup 1");
    if (rc != 0)
        fail_dump_run("bench", rc, "ring,library", 0);
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

// ---- GPU tiers ----

START_TEST(test_gpu_one_rank)
{
    int rc = gr_run_driver(1, "gpu1",
                           "--device cuda --dump dump-gpu1 --algo naive,ring,ring-chunked --dtype half "
                           "--data random --counts 1,100003");
    if (rc != 0)
        fail_dump_run("gpu1", rc, "naive,ring,ring-chunked", 0);
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
        fail_dump_run("gpu4", rc, "ring", 0);
    // the speed: yours against the reference's, at 64 MiB, in this run
    const char *bench = "--device cuda -b 64M -e 64M --algo ring,library --iters 10";
    rc = gr_run_driver(4, "gpu4-bench", bench);
    if (rc != 0)
        fail_dump_run("gpu4-bench", rc, "ring,library", 0);
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
         "every element in exactly one segment, in order; the first n mod P segments one longer; offset(P) = n",
         "task-2-the-ring-reduce-scatter-25-points", 30, GR_WORKER),
    ITEM(test_world_of_one, "world_of_one", "every algorithm on a world of one leaves the buffer as it is", 5, GR_CPU,
         NULL, "with P = 1 there are no steps: the loops run P - 1 = 0 times", "what-you-will-do", 30, GR_WORKER),
    ITEM(test_naive, "naive", "naive: exact on 1-4 ranks for any n; (P - 1) n on rank 0", 15, GR_CPU, NULL,
         "only rank 0 exchanges with the others; it adds in rank order; every rank ends with the same sum",
         "task-1-the-naive-allreduce-15-points", 120, GR_JUDGE),
    ITEM(test_reduce_scatter, "reduce_scatter",
         "reduce-scatter: rank r holds the full sum of segment r (1-4 ranks, any n)", 15, GR_CPU, "segments",
         "P - 1 steps of one segment each way; the last segment rank r receives and adds is segment r",
         "task-2-the-ring-reduce-scatter-25-points", 120, GR_JUDGE),
    ITEM(test_all_gather, "all_gather", "all-gather: the complete segments reach every rank", 10, GR_CPU, "segments",
         "P - 1 steps; each step every rank ends with one more complete segment, received whole",
         "task-3-the-ring-all-gather-10-points", 120, GR_JUDGE),
    ITEM(test_allreduce, "allreduce", "ring allreduce: exact, identical on every rank, in place", 10, GR_CPU,
         "reduce_scatter", "reduce-scatter, then all-gather, on the same buffer", "task-4-the-ring-allreduce-20-points",
         120, GR_JUDGE),
    ITEM(test_bandwidth_optimal, "bandwidth_optimal",
         "counted: 2 (P - 1) segments in 2 (P - 1) messages per rank, no collectives", 10, GR_CPU, "allreduce",
         "each step moves one segment each way in one message; nothing else is sent",
         "why-the-ring-is-bandwidth-optimal", 120, GR_JUDGE),
    ITEM(test_fp16, "fp16", "f16: exact on integers, within P - 1 roundings on random data; naive sums in fp32", 10,
         GR_CPU, "allreduce",
         "each dl_add rounds once; the naive sum is kept wider than fp16 and rounded once, at the end",
         "summing-in-half-precision", 120, GR_JUDGE),
    ITEM(test_chunked, "chunked",
         "pipelined ring: the same sums; messages = steps x chunks; a chunk in flight at each add", 10, GR_CPU,
         "allreduce", "while a chunk is added the next one is travelling; no buffer touched before its transfer's wait",
         "task-5-the-pipelined-ring-10-points", 120, GR_JUDGE),
    ITEM(test_bench, "bench", "your benchmark run on 2 ranks: the ring's #wrong = 0, OK", 5, GR_CPU, "allreduce",
         "common/bin/dlrun -n 2 build/labs/lab04 -b 8 -e 256K -f 8 --algo ring,library", "the-benchmark", 300,
         GR_JUDGE),
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
