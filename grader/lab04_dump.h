/* lab04_dump.h — lab 04's driver runs, as its items (lab04.c) read them, in lab04_dump.c.
 *
 * Contract
 * - The segments are the grader's own arithmetic (never the student's).
 * - gr_get_dump runs the lab's driver under test in its --dump mode on P
 *   ranks (once per grading run, shared by the items of one run) and reads
 *   every rank's dump; when the run stopped, it judges the stop from the
 *   run's log and fails the test with the classic mistake the log shows (see
 *   gr_get_dump and fail_dump_run in lab04_dump.c).
 * - The readers (gr_call_of, gr_result_of, gr_record_of) fail the running
 *   test, naming the file, rank and count, on a record that is missing or
 *   malformed; gr_result_of also fails a call that was not the call's own
 *   work (a library collective: gr_check_own_work).
 * - The inputs and their sums are recomputed from the same kit function that
 *   made them (ring_data), in double.
 */
#ifndef GRADER_LAB04_DUMP_H
#define GRADER_LAB04_DUMP_H

#include <stddef.h> // size_t

#include "dl/dtype.h" // dl_dtype
#include "dl/json.h" // dl_jv

/* The dumps' inputs (ring_data's seed), their largest count and the chunk of ring-chunked. */
#define SEED 7
#define PRIME 100003
#define CHUNK_BYTES 4096
/* The ring's algorithms, dumped in one run that their items share. */
#define RING_ALGOS "reduce-scatter,all-gather,ring,ring-chunked"

int gr_seg_mod(int a, int P);

/* The reference's segment bounds (never the student's). */
size_t gr_seg_lo(size_t n, int P, int s);

size_t gr_seg_count(size_t n, int P, int s);

typedef struct dump {
    char name[64];
    int P;
    dl_dtype t;
    int kind;
    size_t counts[8];
    int nc;
    dl_jv *rank[4];
} dump;

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
void gr_fail_dump_run(const char *name, int rc, const char *algos, int right_without_empty);

void gr_free_dump(dump *d);

/* The record of one call in rank r's dump. */
const dl_jv *gr_call_of(const dump *d, int r, const char *algo, size_t n);

double gr_counter(const dl_jv *c, const char *key);

/* One event: what the kit started (op, id, send range a, receive range b),
 * finished (id) or added (dst a, src b), ranges as byte offsets from buf. */
typedef struct rec_ev {
    int kind, op;
    long id;
    double a, a_bytes, b, b_bytes;
} rec_ev;

/* The call's events (free them); fails the test on a record that is missing,
 * malformed or overflowed. */
rec_ev *gr_record_of(const dump *d, int r, const char *algo, size_t n, const dl_jv *c, size_t *count);

/* The call's own work: the collective it must build is not a library's.
 * Refused from two sources: the call's counters and the kit's record of
 * every operation the call started. */
void gr_check_own_work(const dump *d, int r, const char *algo, size_t n, const dl_jv *c);

/* What the call left in rank r's buffer, as doubles (n of them), once it is
 * known to be the call's own work. */
double *gr_result_of(const dump *d, int r, const char *algo, size_t n);

/* The inputs of every rank and their exact sum (in double). */
double *gr_input_of(const dump *d, int r, size_t n);

double *gr_sum_of(const dump *d, size_t n);

/* First index in [lo, hi) where got differs from want, or hi. */
size_t gr_first_diff(const double *got, const double *want, size_t lo, size_t hi);

/* The dump that holds algo's calls on P ranks, read. Items share one run of
 * the algorithms in shared; when that run stopped on another algorithm
 * than algo, algo runs alone, so that one algorithm's mistake is judged by
 * its own item only. When algo's own run stopped, a crash can hide what
 * the values would show: algo runs once more on n = P alone (no segment
 * empty, every segment one element), and where its values are wrong there
 * this returns that probe's dump for the item to judge, as it judges any;
 * where they are right, the stop is judged from the run's log
 * (gr_fail_dump_run), knowing that only empty segments make it fail. */
void gr_get_dump(dump *d, int P, const char *dtype, const char *data, const char *shared, const char *algo);

/* The shift (1 to P - 1) by which every rank q holds the complete sum of
 * segment q + shift instead of its own (empty segments aside), or 0. */
int gr_shifted_sums(const dump *d, size_t n, const double *sum, const char *algo);

#endif /* GRADER_LAB04_DUMP_H */
