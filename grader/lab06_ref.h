/* lab06_ref.h — what lab 06's items (lab06.c, lab06_zero.c, lab06_fsdp.c) compare against and read, in lab06_ref.c.
 *
 * Contract
 * - The references call no student function. Shards are the grader's own
 *   arithmetic (gr6_shard). The one-rank reference trains the kit's MLP as P
 *   ranks of ZeRO-1 would, step by step on every rank's batch (the kit's
 *   sampler, the driver's seed, learning-rate schedule, momentum and weight
 *   decay), each rank's gradient on its own rows, their mean applied by
 *   dl_mlp_sgd_slice — and, to name a mistake, two wrong ways: the ranks'
 *   gradients summed, and each shard all-gathered before its update.
 * - The runners start the lab's driver under test (once per grading run,
 *   whatever item asks first) and the readers read what it dumped, by column
 *   name; each fails the running test on what is missing or malformed.
 * - The items of task 3 (lab06_zero.c) and of part 2 (lab06_fsdp.c) are
 *   declared here for lab06.c's table.
 */
#ifndef GRADER_LAB06_REF_H
#define GRADER_LAB06_REF_H

#include <stddef.h> // size_t

#include "grader.h" // GR_TEST_DECLARE

/* The graded ZeRO-1 runs' workload (labs/06-sharded/main.c's flags). The
 * model has n = 25861 parameters: neither 2 nor 3 divides it, so the shards
 * are uneven on both P. */
#define G6_VAL_ROWS 2000 /* the driver's validation rows (labs/06-sharded/main.c) */
#define G6_DATA "fashion_mnist:train=4000,test=200"
#define G6_HIDDEN "32,17"
#define G6_SEED 1
#define G6_LR 0.05
#define G6_MOMENTUM 0.9
#define G6_WD 5e-4
#define G6_WARMUP 3
#define G6_BASE 64
#define G6_BATCH 16 /* rows per rank per step */
#define G6_STEPS 20
/* After 20 steps the ranks' fp32 ring sums (another order than the judge's
 * double sum) leave the parameters within 1e-6 + 1e-5·|ref|, as in lab 05. */
#define G6_ATOL 1e-6
#define G6_RTOL 1e-5

/* Shard s of n elements over P ranks: [*lo, *lo + count), the first n mod P one longer. */
size_t gr6_shard(size_t n, int P, int s, size_t *lo);

/* How the reference applies the ranks' gradients. */
typedef enum gr6_way {
    G6_MEAN = 0, /* right: each shard's mean gradient, updated, then all-gathered */
    G6_SUMMED, /* the ranks' gradients summed, not averaged */
    G6_STALE /* each shard all-gathered before its owner's update: the others lag one step */
} gr6_way;

/* The parameters rank `rank` holds after `steps` ZeRO-1 steps on P ranks
 * (malloc'ed, *n of them), trained the given way; *init, when not NULL, gets
 * the starting point. */
float *gr6_reference(int P, long steps, gr6_way way, int rank, float **init, size_t *n);

/* The ZeRO-1 run on P ranks with --dump (name "z2", "z3"), once per grading run. */
void gr6_run_zero1(const char *name, int P);
/* The driver's flags for the graded workload (the G6_* settings) in mode
 * ("zero1", "fsdp"), with --device device unless it is NULL, dumping into
 * SCRATCH/name/dump: written into buf (len bytes). */
void gr6_workload_args(char *buf, size_t len, const char *mode, const char *device, const char *name);
/* max |got − ref| / (G6_ATOL + G6_RTOL·|ref|) over n: at most 1 is within the tolerance. */
double gr6_excess(const float *got, const float *ref, size_t n);
/* Rank 0's parameters p0 (n of them) after G6_STEPS steps on P ranks,
 * against the reference (G6_MEAN): returns, noting how close, when within
 * the tolerance; otherwise fails, naming summed-not-averaged when a step on
 * the summed gradient explains them (the failure ends with fix), with stale
 * also stale-shard when the stale all-gather does, else plainly. */
void gr6_check_mean(const char *what, const float *p0, size_t n, int P, int stale, const char *fix);
/* --selftest half (reduce_scatter or all_gather) on P ranks, once per grading run. */
void gr6_run_selftest(const char *name, int P, const char *half);
/* SCRATCH/name/dump/file (malloc'ed, *n floats). */
float *gr6_dumped(const char *name, const char *file, size_t *n);

/* One record of a rank's transport log (comm.RANK.csv). */
typedef struct gr6_rec {
    char op[24], dtype[8], phase[24];
    size_t count;
    long id;
} gr6_rec;
/* Rank r's log of run `name` (malloc'ed, *n records). */
gr6_rec *gr6_read_log(const char *name, int r, size_t *n);

/* Bytes, messages (sends of count > 0) and operations other than
 * point-to-point ones (the first one's name in other, "" when none) of the
 * records of phase (phase, id). Returns the records found. */
size_t gr6_phase_traffic(const gr6_rec *log, size_t n, const char *phase, long id, double *bytes, long *messages,
                         char *other, size_t other_len);

/* The messages rank r sends in shard_reduce_scatter of n elements over P
 * ranks (shard.h): in ring step k it sends shard (r − 1 − k) mod P in pieces
 * of at most SHARD_CHUNK elements, an empty piece being no message; the
 * all-gather sends P − 1 (one per step, when every shard holds an element). */
long gr6_reduce_scatter_messages(size_t n, int P, int r);

/* Task 3's items (lab06_zero.c), for lab06.c's table. */
GR_TEST_DECLARE(test_zero1_equivalence);
GR_TEST_DECLARE(test_zero1_memory);
GR_TEST_DECLARE(test_zero1_traffic);

/* Part 2's items (lab06_fsdp.c): task 4's self-test, task 5's FSDP runs. */
GR_TEST_DECLARE(test_async_collectives);
GR_TEST_DECLARE(test_fsdp_equivalence);
GR_TEST_DECLARE(test_fsdp_memory);
GR_TEST_DECLARE(test_fsdp_traffic);
GR_TEST_DECLARE(test_fsdp_prefetch);

/* The GPU tiers' items (lab06_gpu.c). */
GR_TEST_DECLARE(test_gpu_one_rank);
GR_TEST_DECLARE(test_gpu4_ranks);

#endif /* GRADER_LAB06_REF_H */
