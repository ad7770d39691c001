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
 *   name (kit.h's schemas); each fails the running test on what is missing
 *   or malformed (lab06_runs.c).
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
#define G6_VAL_ROWS 2000 /* the driver's validation rows (main.c: --val-rows, by default) */
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

/* ---- the runs ----
 * Every driver run of a grading is made once, whatever item asks first, by
 * gr6_run: it empties the run's folder in the jobs' scratch (nothing an
 * earlier job left there is read), runs the driver under test in the
 * sandbox (gr_run_driver, the item's limits) from a child of the judge
 * that reaps the whole job, and takes from the kernel (getrusage of the
 * reaped children) the largest resident set any process of the run had:
 * the operating system's count, read outside the student's processes. The
 * run's folder and log are then moved (renamed: one file system, every
 * process of the job gone) into a folder of the judge's that no job can
 * write (gr6_path), what is left in the scratch removed, and the outcome
 * kept beside them: later items read the judge's folder, never the scratch. */
typedef struct gr6_result {
    int rc; /* the driver's exit status (drivers.h) */
    double rss; /* the largest resident set of any process of the run, bytes; 0: unknown */
    double judge_rss; /* the judge's own resident set when it started the run, bytes (the floor of rss) */
} gr6_result;
/* Runs (once per grading) the driver on P ranks (0: no launcher) with args; "%D" in args stands for the run's
 * dump folder. */
gr6_result gr6_run(const char *name, int P, const char *args);
/* The judge's folder of the run (its --out), or of FILE in it ("name/dump/memory.0.csv"). */
const char *gr6_path(const char *file);
/* Fails the test with what stopped run `name`: the "not implemented yet" line of its log, or its tail. */
void gr6_fail_run(const char *name, const gr6_result *r);
/* The run's log (malloc'ed text, "" when none). */
char *gr6_log(const char *name);
/* The graded ZeRO-1 runs (the G6_* workload, name "z2", "z3"), failing the test when they fail. */
void gr6_run_zero1(const char *name, int P);
/* The driver's flags for the graded workload (the G6_* settings) in mode
 * ("zero1", "fsdp"), with --device device unless it is NULL, dumping into
 * the run's folder: written into buf (len bytes). */
void gr6_workload_args(char *buf, size_t len, const char *mode, const char *device);

/* ---- memory, measured from outside ----
 * The memory workload: G6M_HIDDEN's seven layers, six of about a million
 * parameters (n = 5,012,490: 20 MB in fp32), on G6M_P ranks, so that the
 * optimizer state and the gradients are most of a rank's memory and every
 * shard is larger than SHARD_CHUNK. gr6_mem_run runs it in mode ("ddp",
 * "zero1", "fsdp") with --dump, once, and fails the test when it fails. The
 * DDP run calls no student code (main.c): it is the judge's yardstick. */
#define G6M_DATA "fashion_mnist:train=2048,test=16"
#define G6M_VAL 16
#define G6M_HIDDEN "1024,1024,1024,1024,1024"
#define G6M_BATCH 16
#define G6M_STEPS 1
#define G6M_P 2
gr6_result gr6_mem_run(const char *mode);
/* The memory workload's layer sizes {784, G6M_HIDDEN, 10} into sizes (room for 8); returns how many. */
int gr6_mem_sizes(size_t *sizes);
/* Whether this kernel lets a process restart its peak resident set (kit_rss_restart), tried on the judge's own. */
int gr6_rss_restartable(void);

/* ---- the shards the student's task 1 cut (the dump's layout.RANK.csv) ----
 * Later items judge the student's collectives and states on the student's
 * own shards when they partition n (contiguous, in rank order, covering n:
 * a slip of task 1, such as the remainder put in the last shard, is the
 * shards item's alone); a cut that does not fails the test, naming task 1.
 * Every rank's layout must agree. */
#define GR6_MAX_P 8
typedef struct gr6_layout {
    size_t n;
    int P;
    size_t off[GR6_MAX_P + 1];
    int own; /* 1: the student's shards, which are not the contract's */
} gr6_layout;
void gr6_layout_get(const char *name, int P, const char *of, size_t n, gr6_layout *L);
/* Shard s: [*lo, *lo + count). */
size_t gr6_layout_shard(const gr6_layout *L, int s, size_t *lo);
/* Whether a collective can be judged on L: the contract's shards, or the student's when they keep what the
 * contract lets the collectives assume (shard 0 the largest, none above ⌈n/P⌉: the ring's calls per step, the
 * slots' size). Elsewhere the case is task 1's. */
int gr6_layout_usable(const gr6_layout *L);

/* run/dump/file (malloc'ed, *n floats). */
float *gr6_dumped(const char *name, const char *file, size_t *n);
/* The student's shards of every case of self-test `name` on P ranks (kit.h: "caseK"), noting how many are cut
 * otherwise than the contract says; returns how many cases with elements can be judged (gr6_layout_usable).
 * gr6_judged_some fails the test, naming task 1, when none could on any P. */
int gr6_case_layouts(const char *name, int P, gr6_layout *L);
void gr6_judged_some(int usable);
/* --selftest half (reduce_scatter, all_gather or start) on P ranks, once per grading run; fails the test when it
 * fails (a self-test of task 4 that hangs: start-waits). */
void gr6_run_selftest(const char *name, int P, const char *half);

/* max |got − ref| / (G6_ATOL + G6_RTOL·|ref|) over n: at most 1 is within the tolerance. */
double gr6_excess(const float *got, const float *ref, size_t n);
/* Rank 0's parameters p0 (n of them) after G6_STEPS steps on P ranks,
 * against the reference (G6_MEAN): returns, noting how close, when within
 * the tolerance; otherwise fails, naming summed-not-averaged when a step on
 * the summed gradient explains them (the failure ends with fix), with stale
 * also stale-shard when the stale all-gather does, else plainly. */
void gr6_check_mean(const char *what, const float *p0, size_t n, int P, int stale, const char *fix);

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

/* The messages rank r sends in shard_reduce_scatter on layout L (shard.h):
 * in ring step k it sends shard (r − 1 − k) mod P in pieces of at most
 * SHARD_CHUNK elements, an empty piece being no message; the all-gather
 * sends P − 1 (one per step, when every shard holds an element). */
long gr6_reduce_scatter_messages(const gr6_layout *L, int r);

/* Task 3's items (lab06_zero.c), for lab06.c's table. */
GR_TEST_DECLARE(test_zero1_equivalence);
GR_TEST_DECLARE(test_zero1_memory);
GR_TEST_DECLARE(test_zero1_traffic);

/* Part 2's items (lab06_fsdp.c): task 4's self-test, task 5's FSDP runs. */
GR_TEST_DECLARE(test_async_collectives);
GR_TEST_DECLARE(test_fsdp_equivalence);
GR_TEST_DECLARE(test_fsdp_memory);
GR_TEST_DECLARE(test_fsdp_traffic);
GR_TEST_DECLARE(test_fsdp_overlap);

/* The memory items' own checks (lab06_mem.c): rank r's ledger peaks of run name (by kind name, from
 * memory.RANK.csv), and the operating system's count of a run against DDP's in the same grading. */
double gr6_peak(const char *name, int r, const char *kind);
/* The operating system's count: fails the test when the memory workload's run in mode ("zero1", "fsdp") held
 * more, by more than an allowance, than DDP's run beside it less the difference of their closed forms
 * (kit_mem_bytes: exact for ZeRO-1, the invariants' budget for FSDP) — memory held outside the ledger, or the
 * ledger's counts changed. `excused`: bytes of a mistake another item names (not counted here). Where the
 * kernel cannot restart a process's peak (gr6_rss_restartable), it says so and judges nothing. */
void gr6_check_os(const char *mode, double excused);

/* The GPU tiers' items (lab06_gpu.c). */
GR_TEST_DECLARE(test_gpu_one_rank);
GR_TEST_DECLARE(test_gpu4_ranks);

#endif /* GRADER_LAB06_REF_H */
