/* lab05_ref.h — what lab 05's items (lab05.c, lab05_amp.c, lab05_ckpt.c) compare against and read, in lab05_ref.c.
 *
 * Contract
 * - The references call no student function: the grader's own bucket
 *   assignment, its one-rank training on the union of the ranks'
 *   micro-batches (the kit's sampler, the same seed, learning rate and
 *   steps), in fp32 or in a 16-bit type with fp32 masters, and GradScaler's
 *   update written from its definition.
 * - The readers run the lab's driver under test (once per grading run) and
 *   read what it dumped, by column name: its parameters, the kit's trace and
 *   the transport's log (gr_read_recorded), its per-step AMP rows. Each fails
 *   the running test, naming the run, rank and file, on what is missing,
 *   malformed or tampered with.
 * - The items of part 2 (lab05_amp.c) and task 6 (lab05_ckpt.c) are declared
 *   here for the table in lab05.c (GR_TEST).
 */
#ifndef GRADER_LAB05_REF_H
#define GRADER_LAB05_REF_H

#include <stddef.h> // size_t

#include "amp.h" // amp_scaler, ddp_bucket
#include "dl/data.h" // dl_dataset
#include "dl/dtype.h" // dl_dtype
#include "drivers.h" // gr_csv
#include "grader.h" // GR_TEST_DECLARE

/* The graded runs' workload (labs/05-ddp-amp/main.c's flags). */
#define VAL_ROWS 6000 /* the driver's validation rows (labs/05-ddp-amp/main.c) */
#define DATA_ROWS 10000 /* DATA's training rows: the driver trains on the first DATA_ROWS - VAL_ROWS */
#define GR05_STR_(x) #x
#define GR05_STR(x) GR05_STR_(x)
/* 4 test rows, one for each rank of a 4-rank run: no item reads the test
 * accuracy the driver ends with, so it costs them only the reading */
#define DATA "fashion_mnist:train=" GR05_STR(DATA_ROWS) ",test=4"
#define HIDDEN "48,40,32"
#define SEED 1
#define EPOCHS 50 /* the driver's --epochs in every run: --max-steps stops it first */
#define LR 0.05
#define MOMENTUM 0.9
#define WD 5e-4
#define WARMUP 3
#define BASE 64
/* caps that give this model three buckets: 2 KiB first, 4 KiB after */
#define FIRST_CAP 2048
#define CAP 4096
/* The workload's flags for the driver's command line: data, model, schedule,
 * seed and bucket caps (not the batch, the steps or the run's own). */
const char *gr_workload_flags(void);

/* The AMP runs' scaler and tolerances. */
#define AMP_INIT 1024.0 /* the grader's runs: no overflow at this scale... */
#define AMP_GROWTH 3 /* ...and two growths in 8 steps */
#define AMP_STEPS 8
/* fp16 rounds every activation and gradient (2^-11 relative), and sums over
 * other row groupings round differently: one step's fp16 gradient is within
 * about 1% of the fp32 one on this model, and P ranks at B rows differ from
 * one rank at P·B rows by up to about 7e-4 (P = 2) and 4.2e-3 (P = 4) in a
 * parameter after 8 steps (measured). Tolerance: 5e-3 + 5e-2·|ref| — a
 * gradient summed instead of averaged moves the parameters several times
 * further, and the master weights and the scale are checked on their own. */
#define AMP_ATOL 5e-3
#define AMP_RTOL 5e-2
/* bf16 keeps 8 significant bits: P ranks round each rank's partial sum, the
 * division by P and the sum over ranks to bf16, one rank its 64-row sum
 * once. Measured after 8 steps on 2 ranks: 446 of 41282 parameters differ
 * by more than 2e-3, 20 by more than 5e-3, the largest by 1.0e-2.
 * Tolerance 2.5e-2 + 1e-1·|ref|: the check is that the step runs in the
 * model's type at all (fp16 bits read as bf16 are off by orders of
 * magnitude); fp16's runs above hold the numerics tight. */
#define AMP_BF16_ATOL 2.5e-2
#define AMP_BF16_RTOL 1e-1

/* The end of every trace-tampered message. */
#define TAMPERED_WHY                                                                                             \
    ". The trace and the transport's log are the kit's own records (dl/trace.h, dl/comm.h): your code must not " \
    "start, stop or write the trace"

int gr_ref_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out);

/* The same rule walking the parameters from the first: the classic mistake. */
int gr_forward_buckets(const size_t *counts, int n, size_t esz, size_t first_cap, size_t cap, ddp_bucket *out);

int gr_same_buckets(const ddp_bucket *a, int na, const ddp_bucket *b, int nb);

void gr_describe(const ddp_bucket *b, int nb, char *buf, size_t len);

/* The parameters after `steps` steps of P ranks x accum micro-batches of B
 * rows, computed as one rank at accum·P·B; init gets the starting point. */
float *gr_reference(int P, size_t B, int accum, long steps, float **init, size_t *n_params);

/* Runs the driver on P ranks (once per grading run) with --dump; device is
 * "" (the driver's default) or "--device cuda ". */
void gr_run_dumped_on(const char *device, const char *name, int P, size_t B, int accum, long steps);

void gr_run_dumped(const char *name, int P, size_t B, int accum, long steps);

float *gr_dumped_params(const char *name, int r, size_t *n);

/* One span of the kit's trace (dl/trace.h) as --dump wrote it. */
typedef struct rec {
    int kind, id;
    long step;
    double bytes;
    int async;
    double syncs; /* host waits for the device while the span was open (-1: never ended) */
    long xport; /* the transport's record of the allreduce that opened it; -1 until matched */
} rec;

/* One operation as the transport logged it (dl_comm_log) and --dump wrote it. */
typedef struct xrec {
    char op[24], dtype[8], red[8];
    long trace; /* the span it opened, -1: none */
    long offset; /* where its buffer starts in the gradient buffer (elements); -1: outside it */
    size_t count;
} xrec;

/* One rank's run as the kit recorded it: the trace and the transport's log,
 * each allreduce span matched to the record of the transport that made it. */
typedef struct recorded {
    rec *ev;
    size_t n;
    xrec *x;
    size_t nx;
    long steps; /* steps 0 .. steps - 1 are in the trace */
} recorded;

/* Reads run `name`'s trace and transport log of rank r and holds them
 * against each other: every allreduce the transport ran is a span of the
 * trace with its bytes and kind, every allreduce span is one the transport
 * ran, and each step holds the driver's step span and `accum` forwards,
 * each followed by the backward of every one of n_layers layers, last
 * layer first (what dl_mlp records). Fails, naming the first mismatch. */
void gr_read_recorded(const char *name, int r, int n_layers, int accum, recorded *w);

void gr_recorded_free(recorded *w);

/* The layers of the model the driver runs are graded on: HIDDEN's, then the output. */
int gr_graded_layers(void);

void gr_model_buckets(ddp_bucket *want, int *nw, size_t *n_params);

/* "[a, b)" of a view of count elements at offset, or "a buffer outside the gradients". */
const char *gr_range(long offset, size_t count, char *buf, size_t len);

/* GradScaler.update(), written here from its definition. */
int gr_ref_scaler(amp_scaler *s, int found_inf);

/* The scaler of a graded run in type t: fp16 GradScaler's (scale AMP_INIT,
 * doubled every AMP_GROWTH good steps), bf16 the scale fixed at 1. */
amp_scaler gr_amp_scaler_for(dl_dtype t);

/* One rank at P·B in 16-bit type t (fp16 or bf16) with fp32 master weights,
 * scaled as the run's scaler would (the judge's own step; the kit's 16-bit
 * MLP). At step poison (from 0; -1 for none) an inf goes where the driver's
 * --poison-step puts it: the first input of the last rank's rows. */
float *gr_reference_amp(int P, size_t B, long steps, long poison, dl_dtype t, size_t *n_params);

/* The driver with --amp fp16 (t = DL_F16) or --amp bf16 on P ranks, once
 * per grading run; gpu: one process (P = 1) on the CUDA device instead. The
 * inf of poison_step goes into the last rank's input. */
void gr_run_amp(const char *name, int P, size_t B, long steps, long poison_step, int gpu, dl_dtype t);

typedef struct amp_row {
    double step, loss, scale, skipped, underflow, unchanged, model_scale;
} amp_row;

/* Rank r's per-step rows of an --amp run (step, loss, scale, skipped, ...). */
amp_row *gr_read_amp(const char *name, int r, long *n);

/* Every rank's parameters bitwise equal and finite. */
float *gr_amp_same_params(const char *name, int P, size_t *n0);

/* v is exactly a value of the 16-bit type t (what a 16-bit master would hold). */
int gr_representable(float v, dl_dtype t);

/* Part 2 (lab05_amp.c) and task 6 (lab05_ckpt.c): items for lab05.c's table. */
GR_TEST_DECLARE(test_scaler);
GR_TEST_DECLARE(test_amp_training);
GR_TEST_DECLARE(test_amp_skip);
GR_TEST_DECLARE(test_amp_gpu);
GR_TEST_DECLARE(test_ckpt_roundtrip);
GR_TEST_DECLARE(test_ckpt_rejects);
GR_TEST_DECLARE(test_ckpt_atomic);
GR_TEST_DECLARE(test_ckpt_resume);

#endif /* GRADER_LAB05_REF_H */
