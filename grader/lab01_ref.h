/* lab01_ref.h — what lab 01's items (lab01.c) compare against and run on, in lab01_ref.c.
 *
 * Contract
 * - The references are the grader's own, in double precision, and call no
 *   student function: the scaler by two passes, the objective and gradient by
 *   the stable formula, the optimum by Newton's method (IRLS) with a line
 *   search.
 * - Nothing here states how a task is solved: the references' code is in
 *   lab01_ref.c, which no student release holds as source (lab.mk's
 *   LAB_01_JUDGE_ANSWERS; a release links grader/prebuilt/lab01_ref.o).
 * - The fixtures (breast_cancer split and scaled by the reference scaler,
 *   seeded random problems) fail the running test when the data cannot be
 *   loaded; gr_train_on calls the student's engine and training, and fails
 *   the test as GR_OK does.
 */
#ifndef GRADER_LAB01_REF_H
#define GRADER_LAB01_REF_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/device.h" // dl_device
#include "dl/rng.h" // dl_rng
#include "logreg.h" // logreg_config, logreg_model, logreg_curve, logreg_engine

/* Mean and population std of the non-NaN values of each column. */
void gr_ref_scaler(const float *X, size_t n, size_t d, double *mean, double *sd);

/* The loss of one row from its logit z and label y in {0, 1}, as logreg.h
 * defines bce(z, y), in double: finite and accurate to double precision for
 * any finite z (no overflow, no log of a rounded probability). */
double gr_ref_bce(double z, double y);

/* σ(z) in double, in [0, 1], accurate to double precision for any finite z. */
double gr_ref_sigmoid(double z);

/* J(w, b) and, when gw != NULL, its gradient, in double. */
double gr_ref_objective(const float *X, const float *y, size_t n, size_t d, const double *w, double b, double lambda,
                        double *gw, double *gb);

/* The same for float parameters, without the gradient. */
double gr_ref_objective_f(const float *X, const float *y, size_t n, size_t d, const float *w, float b, double lambda);

/* The optimum of J by Newton's method with backtracking; returns J*. */
double gr_ref_optimum(const float *X, const float *y, size_t n, size_t d, double lambda, double *w, double *b);

/* The judge's stand-ins for the student's functions that a graded item
 * needs but does not grade: each keeps the contract of its namesake in
 * logreg.h (arguments, outputs, DL_ERR_ARG for NULL or n = 0), computed in
 * double from the float inputs and rounded once to float. While the
 * student's logreg_train runs for the grader, the engine's calls to
 * logreg_loss_grad_cpu (task 2) and logreg_accuracy (task 4) reach these
 * (lab01_calls.c), so Task 3's items grade the training loop alone. work is
 * unused. */
dl_status gr_ref_loss_grad_f32(const float *X, const float *y, size_t n, size_t d, const float *w, float b,
                               float lambda, float *grad_w, float *grad_b, double *loss, float *work);
dl_status gr_ref_accuracy_f32(const float *X, const float *y, size_t n, size_t d, const logreg_model *m, double *acc);

typedef struct bc_data {
    size_t d, n[3]; /* train, val, test */
    float *raw[3]; /* rows as loaded */
    float *scaled[3]; /* standardised with the grader's reference scaler (train stats) */
    float *y[3]; /* 0/1 */
} bc_data;

/* breast_cancer split 60/20/20 stratified (seed 1), scaled with the train statistics. */
void gr_bc_load(bc_data *bc);

void gr_bc_free(bc_data *bc);

/* The driver's defaults (logreg.h), full batch, seed 1. */
logreg_config gr_default_config(void);

/* Trains on (X, y) with cfg on dev; the caller frees m and c. */
void gr_train_on(const dl_device *dev, const float *X, const float *y, size_t n, size_t d, const float *Xv,
                 const float *yv, size_t nv, const logreg_config *cfg, logreg_model *m, logreg_curve *c,
                 logreg_engine *e_out);

/* (n, d) values mean + spread * N(0, 1) from r; free with free(). */
float *gr_rand_matrix(dl_rng *r, size_t n, size_t d, double mean, double spread);

typedef struct problem {
    size_t n, d;
    float *X, *y, *w;
    float b, lambda;
} problem;

/* A seeded random problem: X ~ N(0, 1), y ~ Bernoulli(0.4), w ~ N(0, wscale^2). */
problem gr_make_problem(uint64_t seed, size_t n, size_t d, float lambda, double wscale);

void gr_free_problem(problem *p);

/* Records which rows each mini-batch gradient call saw: column 0 of the
 * synthetic rows of test_train_minibatch is the row id / 1024, read from the
 * rows passed (a caller's own batch) or from the grader's rows at the indices
 * passed (logreg_engine_grad_rows). */
typedef struct visits {
    size_t d, n, bs;
    const float *resident; /* the training rows, the grader's copy */
    size_t *seen; /* per epoch block of n counters */
    size_t *first; /* first row id of each batch, in order */
    size_t batches, cap, epochs_cap;
    size_t rows_seen;
    int bad_size;
    size_t host_batches; /* mini-batches passed as rows (gathered by the caller), not as indices */
} visits;

/* A logreg_engine observe hook (ctx: a visits) counting the rows of each mini-batch. */
void gr_visits_observe(void *ctx, const float *X, const float *y, const size_t *idx, size_t n);

/* The host waits (dl/device.h's syncs) inside the last logreg_loss_grad_cuda
 * the test made, as the worker counted them (its wrapper, lab01_calls.c). */
extern uint64_t gr_logreg_cuda_waits;

#endif /* GRADER_LAB01_REF_H */
