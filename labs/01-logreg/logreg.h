/* logreg.h — lab 01: logistic regression on one GPU, with feature scaling.
 *
 * This header is the contract between your code (scaler.c, logreg_math.h,
 * logreg.c, logreg_cuda.cu), the driver (main.c) and the grader. Do not
 * change it; the handout (README.md) explains each task.
 *
 * Conventions
 * - X is (n, d) row-major float32; row i is X + i*d. y is (n,) float32 with
 *   values 0 or 1. w is (d,), b is a scalar.
 * - The objective is the mean binary cross-entropy plus an L2 penalty on w
 *   (never on b):
 *       J(w, b) = (1/n) Σ_i bce(z_i, y_i) + (λ/2)‖w‖²,  z = Xw + b,
 *       bce(z, y) = −y·log σ(z) − (1−y)·log(1 − σ(z)).
 * - Every function returns DL_OK, DL_ERR_ARG for bad arguments (n = 0, NULL),
 *   or the status of a failing library call. A skeleton returns DL_ERR_TODO.
 */
#ifndef LAB01_LOGREG_H
#define LAB01_LOGREG_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t, int32_t

#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

// ---- task 1: the standard scaler (scaler.c) ----

typedef struct logreg_scaler {
    size_t d;
    float *mean; /* (d,) mean of the non-NaN training values of each feature */
    float *scale; /* (d,) population std (ddof = 0) of the same; 1 where it is 0 */
} logreg_scaler;

/* Fits mean and scale on the n training rows of X, column by column,
 * skipping NaN entries (NaN marks a missing value; X holds no ±inf: the
 * loaders reject it), with double-precision accumulators and two passes
 * (mean first, then squared deviations), so a column like 1e6 + tiny noise
 * keeps its small variance. A column with no non-NaN value (all missing)
 * gets mean 0 and scale 1; a column whose std is 0 (constant, or a single
 * value) gets scale 1. s->mean and s->scale are allocated by
 * logreg_scaler_alloc. */
dl_status logreg_scaler_fit(const float *X, size_t n, size_t d, logreg_scaler *s);

/* out = (X − mean) / scale with the *fitted* statistics; NaN entries become 0
 * (the training mean, after centring). out may equal X (in place). */
dl_status logreg_scaler_transform(const logreg_scaler *s, const float *X, size_t n, float *out);

// ---- task 2: loss and gradient on the CPU (logreg_math.h, logreg.c) ----

/* loss = J(w, b); grad_w = (1/n) Xᵀ(σ(z) − y) + λw; grad_b = (1/n) Σ(σ(z_i) − y_i).
 * Finite and correct for |z| up to 1e4 (no inf, no NaN). work holds n floats. */
dl_status logreg_loss_grad_cpu(const float *X, const float *y, size_t n, size_t d, const float *w, float b,
                               float lambda, float *grad_w, float *grad_b, double *loss, float *work);

// ---- task 5: the same on the GPU (logreg_cuda.cu) ----

#define LOGREG_BLOCK 256
/* Floats of device workspace that logreg_loss_grad_cuda gets: n, plus d + 2
 * per group of LOGREG_BLOCK rows, plus 1. Its layout is the function's own,
 * except that r ends up in the first n floats. The size leaves room for one
 * value per row (z, then r), a group's partial sums (of the loss terms, of
 * r, even of Xᵀr) and one scalar such as ‖w‖²; none of it has to be used. */
static inline size_t logreg_cuda_work_floats(size_t n, size_t d)
{
    return n + ((n + LOGREG_BLOCK - 1) / LOGREG_BLOCK) * (d + 2) + 1;
}

/* As logreg_loss_grad_cpu on a CUDA dev, with every array in device memory:
 * the inputs dX, dy, dw, the results dgrad_w (d floats), dgrad_b (one float)
 * and dloss (one double), and dwork (logreg_cuda_work_floats(n, d) floats).
 * - The work is queued on dev's stream and the call returns without waiting
 *   for it: no copy to or from the host, no synchronisation. Whoever reads
 *   the results copies them after the call on the same stream (the engine
 *   reads grad_w, grad_b and the loss together, in one copy: the step's one
 *   wait).
 * - grad_b and the loss are finished on the device. Every sum is added in
 *   an order the code fixes (the loss in double), so the same inputs give
 *   the same bits on every run.
 * - Once the stream has run it, dwork[i] = r_i = σ(x_i·w + b) − y_i for
 *   i < n (the engine counts right predictions from it).
 * The kernels and how the work is split among them are yours to design; the
 * skeleton declares two, one workable split. */
dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy, size_t n, size_t d,
                                const float *dw, float b, float lambda, float *dgrad_w, float *dgrad_b, double *dloss,
                                float *dwork);

// ---- the engine: one gradient call for CPU and GPU (kit.c, provided) ----

/* Holds the training set resident where the model computes (and any set
 * added with logreg_engine_hold: the validation rows), so training code is
 * the same on both devices. Every call makes the same device calls on either
 * device (on the CPU they are plain copies), so dl/device.h's counters read
 * the same on a CPU as on a GPU:
 * - w goes up through pinned staging without a wait;
 * - rows the engine holds are not copied; a mini-batch is gathered where the
 *   rows live, from the indices logreg_engine_grad_rows is given (their only
 *   upload: 4 bytes a row), into staging made at init for up to n rows, so
 *   a step allocates nothing;
 * - grad_w, grad_b and the loss (an evaluation: the loss and the right
 *   predictions) come back in one copy: one host wait per call. */
#define LOGREG_ENGINE_SETS 4
typedef struct logreg_engine {
    const dl_device *dev;
    size_t d;
    const float *X, *y; /* host copy of the resident training set */
    size_t n;
    struct { /* the resident sets: [0] the training set, then those held */
        const float *X, *y; /* host rows */
        size_t n;
        const float *dX, *dy; /* where the model reads them (on the CPU: X, y) */
        float *own_X, *own_y; /* their device copy (CUDA) */
    } set[LOGREG_ENGINE_SETS];
    int n_sets;
    float *sX, *sy; /* (s_cap, d), (s_cap,) on the device: a gathered batch, or staged rows */
    int32_t *hidx, *didx; /* (s_cap,) a batch's indices: pinned host staging, device copy */
    size_t s_cap; /* rows the staging holds */
    float *hw, *dw; /* (d,) w: pinned host staging, device copy */
    void *hout, *dout; /* what a call reads back, in one block (kit.c): pinned host, device */
    dl_event staged; /* recorded after the uploads from hw and hidx */
    float *dwork; /* device workspace of logreg_loss_grad_cuda (CUDA) */
    float *work; /* host workspace of logreg_loss_grad_cpu (CPU) */
    size_t work_cap;
    size_t calls; /* gradient and evaluation calls so far */
    /* Optional: where logreg_engine_grad_rows adds what each mini-batch step
     * asked of the device (dl_run_io_steps, dl/summary.h; the driver's
     * summary.json reads it). */
    struct dl_run_io *step_io;
    /* Optional observer, called at every gradient and evaluation call with the
     * rows it computes on (the grader checks that an epoch visits every row
     * once): host rows X (n, d), y (n,) and idx NULL; or, from
     * logreg_engine_grad_rows, the resident training rows (X = e->X, y = e->y)
     * and idx, the n indices into them. */
    void (*observe)(void *ctx, const float *X, const float *y, const size_t *idx, size_t n);
    void *observe_ctx;
} logreg_engine;

/* The training rows (X, y, n), made resident (on CUDA: one upload each of X
 * and y, now). DL_ERR_ARG for an empty set or more than 2^31 − 1 rows (a
 * batch's indices are int32 on the device). */
dl_status logreg_engine_init(logreg_engine *e, const dl_device *dev, const float *X, const float *y, size_t n,
                             size_t d);
/* Makes the host rows (X, y, n) resident too (on CUDA: one upload, now), so
 * that every later call on exactly these pointers finds them on the device.
 * DL_ERR_ARG when LOGREG_ENGINE_SETS sets are held already. */
dl_status logreg_engine_hold(logreg_engine *e, const float *X, const float *y, size_t n);
/* loss, gradient of J on the rows (X, y, n): X may be a resident set (no
 * copy) or any other host rows (staged: one blocking copy of X and of y, and
 * the CPU counts them as the GPU makes them). */
dl_status logreg_engine_grad(logreg_engine *e, const float *X, const float *y, size_t n, const float *w, float b,
                             float lambda, float *grad_w, float *grad_b, double *loss);
/* The same on rows idx[0], ..., idx[n−1] of the training set, in that order
 * (a mini-batch): the indices go up (4 bytes each, through pinned staging,
 * no wait) and the rows are gathered on the device, so the values are those
 * of the same rows copied on the host, bit for bit. DL_ERR_ARG for n = 0 or
 * NULL; DL_ERR_RANGE for an index >= e->n, named with its position. */
dl_status logreg_engine_grad_rows(logreg_engine *e, const size_t *idx, size_t n, const float *w, float b, float lambda,
                                  float *grad_w, float *grad_b, double *loss);
void logreg_engine_free(logreg_engine *e);

// ---- task 3: training (logreg.c) ----

/* The defaults the driver and the grader use: on standardised breast_cancer
 * these reach the optimum in a few hundred full-batch epochs. */
#define LOGREG_DEFAULT_LR 1.0
#define LOGREG_DEFAULT_LAMBDA 0.01
#define LOGREG_DEFAULT_EPOCHS 2000
#define LOGREG_DEFAULT_TOL 1e-5

typedef struct logreg_config {
    double lr; /* step size */
    double lambda; /* L2 strength λ */
    int epochs; /* at most this many passes over the training rows */
    size_t batch_size; /* rows per step; 0 or >= n means full batch */
    double tol; /* stop once ‖∇J‖₂ on the training rows is below tol (0 = never) */
    uint64_t seed; /* the mini-batch orders: logreg_train's random stream */
} logreg_config;

typedef struct logreg_model {
    size_t d;
    float *w; /* (d,) */
    float b;
} logreg_model;

/* The engine's evaluation (kit.c): the model's mean BCE (no penalty) and
 * accuracy on the rows (X, y, n), where they live. The loss comes from your
 * loss and gradient with λ = 0 (on CUDA on the resident copy: hold the set
 * first); the accuracy on the CPU from your logreg_accuracy, on CUDA from
 * the right predictions counted on the device in the r your kernel leaves,
 * read back with the loss in one copy. */
dl_status logreg_engine_eval(logreg_engine *e, const float *X, const float *y, size_t n, const logreg_model *m,
                             double *loss, double *acc);

/* One entry per evaluation: entry 0 is the initial model (w = 0, b = 0),
 * entry e the model after epoch e. */
typedef struct logreg_curve {
    int capacity; /* entries allocated: epochs + 1 */
    int n; /* entries recorded */
    double *train_loss; /* J(w, b) on the training rows */
    double *grad_norm; /* ‖∇J‖₂ = sqrt(‖grad_w‖² + grad_b²) on the training rows */
    double *val_loss; /* mean BCE on the validation rows (no penalty) */
    double *val_acc; /* accuracy on the validation rows */
} logreg_curve;

/* Gradient descent from w = 0, b = 0. Full batch: one step per epoch with
 * the gradient of all n rows. Mini-batch: each epoch visits the rows in a
 * new seeded random order, in steps of batch_size consecutive positions of
 * that order (the last one may be smaller), each step's gradient from
 * logreg_engine_grad_rows on its slice of the order: the rows stay where
 * they are, only their indices move. The random stream, so that runs can
 * be compared with the reference's: one dl_rng seeded once per call with
 * dl_rng_seed(&rng, cfg->seed, 0x10a1); epoch k's order is the k-th
 * dl_rng_permutation(&rng, order, n), and nothing else draws from it (the
 * grader checks the orders' properties, not these draws). After every
 * epoch it records the curve (J and ‖∇J‖ on all n rows through
 * logreg_engine_grad on e->X, e->y; the validation columns through
 * logreg_engine_eval) and stops early when grad_norm < tol. Xval may be
 * NULL (nval = 0): val_* are then NaN. */
dl_status logreg_train(logreg_engine *e, const float *Xval, const float *yval, size_t nval, const logreg_config *cfg,
                       logreg_model *m, logreg_curve *curve);

// ---- task 4: prediction (logreg.c) ----

/* p[i] = σ(x_i·w + b), the probability of class 1 (host arrays). */
dl_status logreg_predict_proba(const float *X, size_t n, size_t d, const logreg_model *m, float *p);
/* Fraction of rows where (p ≥ 0.5) equals y. */
dl_status logreg_accuracy(const float *X, const float *y, size_t n, size_t d, const logreg_model *m, double *acc);

// ---- allocation helpers (kit.c, provided) ----
dl_status logreg_scaler_alloc(logreg_scaler *s, size_t d);
void logreg_scaler_free(logreg_scaler *s);
dl_status logreg_model_alloc(logreg_model *m, size_t d);
void logreg_model_free(logreg_model *m);
dl_status logreg_curve_alloc(logreg_curve *c, int epochs);
void logreg_curve_free(logreg_curve *c);

#ifdef __cplusplus
}
#endif
#endif /* LAB01_LOGREG_H */
