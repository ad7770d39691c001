/* lab04_dump.c — lab 04's driver runs and their dumps, read (see lab04_dump.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf, sscanf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // strcmp, strstr, strcspn, memcpy
#include <unistd.h> // access

#include "dl/comm.h" // dl_comm_op, dl_comm_op_name
#include "dl/fs.h" // dl_read_file
#include "dl/half.h" // dl_h2f
#include "dl/p2plog.h" // DL_P2P_START: the record's kinds
#include "drivers.h" // gr_run_driver, gr_path, gr_fail_run
#include "grader.h" // GR_FAIL, GR_DIAG
#include "lab04_dump.h"
#include "ring.h" // ring_data, ring_data_parse

// ---- the segments, as the grader knows them ----

int gr_seg_mod(int a, int P)
{
    return ((a % P) + P) % P;
}

/* The reference's segment bounds (never the student's). */
size_t gr_seg_lo(size_t n, int P, int s)
{
    size_t q = n / (size_t)P, rem = n % (size_t)P, k = (size_t)s;
    return k * q + (k < rem ? k : rem);
}

size_t gr_seg_count(size_t n, int P, int s)
{
    return gr_seg_lo(n, P, s + 1) - gr_seg_lo(n, P, s);
}

// ---- the driver's dumps ----

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
 *   segment is empty (right_without_empty: gr_get_dump's probe), a rank
 *   skipped the call of an empty segment or chunk, and its next call met
 *   one of its neighbour's from another step; otherwise sender and receiver
 *   disagree on which segment moves.
 * - The watchdog's "timed out": in dl_comm_send or dl_comm_recv, the ranks
 *   all sent first and waited for each other (the deadlock of the eager
 *   limit); in a sendrecv, a call whose partner never came. */
void gr_fail_dump_run(const char *name, int rc, const char *algos, int right_without_empty)
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
        if (colon != NULL && colon < timed) // the call's name, then its peer: "send to rank 2"
            snprintf(call, sizeof call, "%.*s", (int)strcspn(colon + 2, " "), colon + 2);
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
    // a few small buffers a run: ranks that wait for each other 10 s are deadlocked (a send that waits for its
    // receive above the eager limit), caught in 10 s instead of the item's 20
    gr_set_watchdog(10);
    int rc = gr_run_driver(P, d->name, args);
    gr_set_watchdog(0);
    return rc;
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

void gr_free_dump(dump *d)
{
    for (int r = 0; r < d->P; r++)
        dl_jv_free(d->rank[r]);
}

/* The record of one call in rank r's dump. */
const dl_jv *gr_call_of(const dump *d, int r, const char *algo, size_t n)
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

double gr_counter(const dl_jv *c, const char *key)
{
    return dl_jv_num(dl_jv_get(c, key), -1);
}

// ---- the kit's record of a call (dl/p2plog.h, dumped by the driver) ----

/* The call's events (free them); fails the test on a record that is missing,
 * malformed or overflowed. */
rec_ev *gr_record_of(const dump *d, int r, const char *algo, size_t n, const dl_jv *c, size_t *count)
{
    const dl_jv *log = dl_jv_get(c, "log");
    if (log == NULL || log->type != DL_JARR)
        GR_FAIL("%s, %d ranks, n = %zu: rank %d's dump has no record of what the call sent and added", algo, d->P, n,
                r);
    if (gr_counter(c, "log_dropped") != 0)
        GR_FAIL("%s, %d ranks, n = %zu: rank %d made so many dl_comm and dl_add calls that the kit's record of them "
                "overflowed (%.0f dropped)",
                algo, d->P, n, r, gr_counter(c, "log_dropped"));
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
void gr_check_own_work(const dump *d, int r, const char *algo, size_t n, const dl_jv *c)
{
    static const dl_comm_op library[] = {DL_OP_ALLREDUCE, DL_OP_BROADCAST, DL_OP_ALLGATHER, DL_OP_ALLREDUCE_ASYNC};
    double seen[DL_OP_COUNT] = {0};
    int down = gr_counter(c, "messages") < 0;
    for (int op = 0; op < DL_OP_COUNT; op++) {
        char key[64];
        snprintf(key, sizeof key, "%s_calls", dl_comm_op_name((dl_comm_op)op));
        seen[op] = gr_counter(c, key);
        down |= seen[op] < 0;
    }
    size_t ne = 0;
    rec_ev *ev = gr_record_of(d, r, algo, n, c, &ne);
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
double *gr_result_of(const dump *d, int r, const char *algo, size_t n)
{
    const dl_jv *c = gr_call_of(d, r, algo, n);
    const dl_jv *st = dl_jv_get(c, "status"), *err = dl_jv_get(c, "error");
    if (st != NULL && st->type == DL_JSTR && strcmp(st->str, "DL_OK") != 0)
        GR_FAIL("%s with n = %zu on %d ranks returned %s on rank %d: %s", algo, n, d->P, st->str, r,
                err != NULL && err->type == DL_JSTR ? err->str : "");
    gr_check_own_work(d, r, algo, n, c);
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
double *gr_input_of(const dump *d, int r, size_t n)
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

double *gr_sum_of(const dump *d, size_t n)
{
    double *s = calloc(n + 1, sizeof *s);
    for (int r = 0; r < d->P; r++) {
        double *x = gr_input_of(d, r, n);
        for (size_t i = 0; i < n; i++)
            s[i] += x[i];
        free(x);
    }
    return s;
}

/* First index in [lo, hi) where got differs from want, or hi. */
size_t gr_first_diff(const double *got, const double *want, size_t lo, size_t hi)
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
    double *sum = gr_sum_of(d, n);
    int ok = 1;
    for (int r = 0; r < d->P && ok; r++) {
        double *got = gr_result_of(d, r, algo, n);
        int rs = strcmp(algo, "reduce-scatter") == 0;
        size_t lo = rs ? gr_seg_lo(n, d->P, r) : 0, hi = rs ? gr_seg_lo(n, d->P, r + 1) : n;
        ok = gr_first_diff(got, sum, lo, hi) == hi;
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
 * (gr_fail_dump_run), knowing that only empty segments make it fail. */
/* Whether a shared run that stopped without naming its algorithm (the
 * watchdog's) stopped in algo, its first: the run does each algorithm for
 * every count before the next, and writes a call's result after it returns,
 * so a result of algo missing means it was algo's call that hung. A run of
 * algo alone would do the same calls again, up to the same hang. */
static int stopped_in_first(const dump *d, const char *shared, const char *algo)
{
    size_t len = strlen(algo);
    if (strncmp(shared, algo, len) != 0 || shared[len] != ',')
        return 0;
    for (int q = 0; q < d->nc; q++)
        for (int r = 0; r < d->P; r++) {
            char bin[1400];
            snprintf(bin, sizeof bin, "%s/dump/%s-n%zu-r%d.bin", gr_path(d->name), algo, d->counts[q], r);
            if (access(bin, F_OK) != 0)
                return 1;
        }
    return 0;
}

void gr_get_dump(dump *d, int P, const char *dtype, const char *data, const char *shared, const char *algo)
{
    int rc = run_dump(d, P, dtype, data, shared, 0, 0);
    if (rc != 0) {
        char culprit[64];
        failed_algo(d->name, culprit, sizeof culprit);
        if (strcmp(shared, algo) != 0 && strcmp(culprit, algo) != 0 &&
            !(rc > 0 && culprit[0] == '\0' && stopped_in_first(d, shared, algo)))
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
        gr_free_dump(d);
    }
    gr_fail_dump_run(failed, rc, algo, right);
}

/* The shift (1 to P - 1) by which every rank q holds the complete sum of
 * segment q + shift instead of its own (empty segments aside), or 0. */
int gr_shifted_sums(const dump *d, size_t n, const double *sum, const char *algo)
{
    int P = d->P, found = 0;
    double *got[4];
    for (int q = 0; q < P; q++)
        got[q] = gr_result_of(d, q, algo, n);
    for (int shift = 1; shift < P && !found; shift++) {
        int all = 1, any = 0;
        for (int q = 0; q < P; q++) {
            int s = gr_seg_mod(q + shift, P);
            size_t l2 = gr_seg_lo(n, P, s), h2 = gr_seg_lo(n, P, s + 1);
            any |= h2 > l2;
            all &= h2 == l2 || gr_first_diff(got[q], sum, l2, h2) == h2;
        }
        found = all && any ? shift : 0;
    }
    for (int q = 0; q < P; q++)
        free(got[q]);
    return found;
}
