/* eval.h — lab 02: honest evaluation. Stratified splits, confusion matrices,
 * per-class metrics, softmax regression on Fashion-MNIST, a validation curve
 * and a drift check.
 *
 * This header is the contract between your code (split.c, metrics.c,
 * softmax_math.h, softmax.c, softmax_cuda.cu, select.c), the driver (main.c)
 * and the grader. Do not change it; the handout (README.md) explains each task.
 *
 * Conventions
 * - Labels are int32 in [0, C). X is (n, d) row-major float32.
 * - The softmax model has W (C, d) row-major — one row of weights per class —
 *   and b (C,); logits Z = X Wᵀ + b are (n, C).
 * - Every function returns DL_OK, DL_ERR_ARG for bad arguments (with a
 *   message naming the value and what was expected), DL_ERR_RANGE for a label
 *   out of range, or a failing library call's status. A skeleton returns
 *   DL_ERR_TODO.
 */
#ifndef LAB02_EVAL_H
#define LAB02_EVAL_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, int64_t, uint64_t

#include "dl/batch.h" // dl_devset, dl_batch (the engine)
#include "dl/device.h" // dl_device
#include "dl/rng.h" // dl_rng
#include "dl/split.h" // dl_split (the result type of the splits below)
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

enum { EVAL_TRAIN = 0, EVAL_VAL = 1, EVAL_TEST = 2 };

// ---- task 1: the stratified split (split.c) ----

/* Part sizes for n rows and fractions frac[3] (train, val, test), each in
 * [0, 1], summing to at most 1 (+1e-9): n_val = ceil(frac[1]·n),
 * n_test = ceil(frac[2]·n), and n_train = n − n_val − n_test when the
 * fractions sum to 1, else floor(frac[0]·n). Fails with DL_ERR_ARG on a bad
 * fraction, a sum over 1, or a part that would be empty although its fraction
 * is > 0 (or a negative train size). Provided (kit.c). */
dl_status eval_part_sizes(size_t n, const double frac[3], size_t sizes[3]);

/* scikit-learn's _approximate_mode: how many of n_draws rows to take from
 * each class, given counts[C] rows available. Each class gets the floor of
 * counts[c]·n_draws/Σcounts; the draws left over go one each to the classes
 * with the largest fractional parts, ties broken at random with r. out[C].
 * n_draws must not exceed Σcounts (DL_ERR_ARG). */
dl_status eval_approximate_mode(const size_t *counts, int C, size_t n_draws, dl_rng *r, size_t *out);

/* The stratified train/val/test split. Part sizes from eval_part_sizes;
 * per-class counts: train = approximate_mode(class counts, n_train), then
 * val = approximate_mode(what is left, n_val), then test likewise; the rows of
 * each class are permuted (seeded) and dealt out train, val, test; each part
 * is finally shuffled. Disjoint; complete when the fractions sum to 1; the
 * same (y, frac, seed) gives the same split. out->idx has n entries (malloc'd,
 * freed with dl_split_free) and part p is idx[offset[p] .. offset[p+1]); when
 * the fractions sum to less than 1 the rows left over are in no part and
 * idx[offset[3] .. n) holds nothing anyone reads (its contents are
 * unspecified). Which rows land where depends on how you draw from the
 * generator; the per-class counts of each part do not, except where a tie
 * is broken at random. DL_ERR_RANGE for a label outside [0, C). DL_ERR_ARG
 * when a class with at least one row has fewer rows than there are non-empty
 * parts, or a non-empty part has fewer rows than C, the class count as
 * passed (classes without rows included). On any error *out is zeroed. */
dl_status eval_split_stratified(const int32_t *y, size_t n, int C, const double frac[3], uint64_t seed, dl_split *out);

// ---- task 2: stratified k-fold (split.c) ----

/* fold[i] in [0, k) for every row: each class's rows (seeded order) are
 * spread over the folds so that per class the fold counts differ by at most
 * one. DL_ERR_ARG when k < 2 or k exceeds the smallest class's size. */
dl_status eval_kfold_stratified(const int32_t *y, size_t n, int C, int k, uint64_t seed, int32_t *fold);

// ---- task 3: the confusion matrix (metrics.c) ----

/* cm (C, C) row-major: cm[t·C + p] = number of rows with true class t
 * predicted as p (rows are the truth). DL_ERR_RANGE naming the row and value
 * when a label is outside [0, C); cm is then left unchanged. */
dl_status eval_confusion(const int32_t *y_true, const int32_t *y_pred, size_t n, int C, int64_t *cm);

// ---- task 4: per-class and averaged metrics (metrics.c) ----

typedef struct eval_report {
    int C;
    double *precision, *recall, *f1; /* (C,) */
    int64_t *support; /* (C,) true rows per class */
    double accuracy;
    double macro_p, macro_r, macro_f1; /* unweighted means over the C classes */
    double micro_p, micro_r, micro_f1; /* from the summed TP, FP, FN */
    double weighted_p, weighted_r, weighted_f1; /* means weighted by support */
    int zero_division; /* classes whose precision or recall was 0/0 (reported as 0) */
} eval_report;

/* Fills r from a confusion matrix (allocated by eval_report_alloc).
 * precision_c = TP/(TP+FP), recall_c = TP/(TP+FN), f1_c = 2PR/(P+R); any 0/0
 * is 0 and counts in zero_division — never NaN, never a crash. */
dl_status eval_report_from_confusion(const int64_t *cm, int C, eval_report *r);

// ---- task 5: softmax regression (softmax_math.h, softmax.c, softmax_cuda.cu) ----

/* Mean softmax cross-entropy plus (λ/2)‖W‖² (b not penalised), and its
 * gradient: gW = (1/n) (P − Y)ᵀ X + λW, gb = (1/n) Σ_i (P − Y)_i, P = softmax(Z),
 * Y one-hot. Z = X Wᵀ + b through dl_gemm; stable for logits of ±1e4.
 * work holds n·C floats. */
dl_status softmax_loss_grad_cpu(const float *X, const int32_t *y, size_t n, size_t d, int C, const float *W,
                                const float *b, float lambda, float *gW, float *gb, double *loss, float *work);

#define SOFTMAX_BLOCK 256
/* The device workspace softmax_loss_grad_cuda gets, in floats: room for the
 * (n, C) logits, one float per row, one per block of SOFTMAX_BLOCK rows, and
 * one more. How you use it is yours; you may not use more. */
static inline size_t softmax_cuda_work_floats(size_t n, int C)
{
    return n * (size_t)C + n + (n + SOFTMAX_BLOCK - 1) / SOFTMAX_BLOCK + 1;
}

/* The same on a CUDA dev, with nothing read back: dX, dy, dW, db, dgW, dgb
 * and dloss are device pointers (dwork: softmax_cuda_work_floats(n, C)
 * floats, scratch of yours; dX, dy, dW and db are not modified).
 * - Results on the device: gW and gb as on the CPU, and the loss, finished,
 *   in the double *dloss (the mean row loss, summed in double, plus
 *   (λ/2)‖W‖²).
 * - Deterministic: the same inputs give the same bits of *dloss on every
 *   call, so the loss is summed in an order fixed by n alone (not with
 *   atomics, whose order is the order blocks happen to finish).
 * - No wait: all work is queued on dev's stream ((cudaStream_t)dev->stream,
 *   the one dl_gemm and dl_gemv use), and the call returns without waiting
 *   for it: no copy to or from the host, no synchronisation.
 * The caller then reads gW, gb and the loss together, in one copy on that
 * stream that waits (the engine: one per step). The matrix products can go
 * through dl_gemm / dl_gemv on dev (dl/blas.h: row-major, cuBLAS). */
dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy, size_t n, size_t d, int C,
                                 const float *dW, const float *db, float lambda, float *dgW, float *dgb, double *dloss,
                                 float *dwork);

/* The engine (kit.c): one gradient call for CPU and GPU. It holds the
 * training set where the model computes (uploaded once to a GPU), gathers a
 * mini-batch there from its row indices, and stages any other rows. A step
 * sends W and b up and reads gW, gb and the loss back in one copy: the
 * host waits for the device once per step. It also predicts where the
 * model computes: the sets it holds (softmax_engine_hold: validation, test)
 * were uploaded once, and only the model goes up and n labels come back.
 * On the CPU the copies are memcpys, counted as a GPU makes them (dl/device.h). */
#define SOFTMAX_ENGINE_HELD 4
typedef struct softmax_engine {
    const dl_device *dev;
    size_t d;
    int C;
    const float *X; /* host copy of the resident set */
    const int32_t *y;
    size_t n;
    dl_devset set; /* the resident set (dl/batch.h): on a GPU its one upload */
    dl_batch batch; /* a mini-batch gathered from set by its indices */
    struct { /* sets held for predictions (softmax_engine_hold) */
        const float *X; /* their host rows */
        size_t n;
        dl_devset rows; /* where the model computes */
    } held[SOFTMAX_ENGINE_HELD];
    int n_held;
    float *sX, *dwork; /* staging of other host rows (GPU), the gradient's workspace (GPU) */
    int32_t *sy;
    size_t s_cap;
    float *dW; /* W then b, where the model computes */
    float *dg; /* gW, gb, then (8-byte aligned, at g_loss) the loss: one copy back */
    double *dloss; /* the loss's slot in dg */
    size_t g_loss, g_floats; /* the loss's offset in dg and dg's size, in floats */
    float *hW, *hg; /* host staging of dW and dg (pinned on a GPU) */
    dl_event W_sent; /* recorded after the last copy from hW */
    float *dZ; /* predictions: logits (p_cap, C) (GPU) */
    int32_t *dpred; /* predictions: labels (p_cap,) */
    size_t p_cap;
    float *work; /* host workspace (CPU) */
    size_t work_cap;
    size_t calls;
} softmax_engine;

dl_status softmax_engine_init(softmax_engine *e, const dl_device *dev, const float *X, const int32_t *y, size_t n,
                              size_t d, int C);
/* loss and gradient of J on the rows (X, y, n): the resident set itself (no
 * copy), or any other host rows (staged: one copy). */
dl_status softmax_engine_grad(softmax_engine *e, const float *X, const int32_t *y, size_t n, const float *W,
                              const float *b, float lambda, float *gW, float *gb, double *loss);
/* The same on the resident set's rows idx[0..n) (a mini-batch, n <= e->n):
 * gathered where the rows live — on a GPU from the indices, with no copy of
 * rows from the host — in the order of idx. */
dl_status softmax_engine_grad_rows(softmax_engine *e, const size_t *idx, size_t n, const float *W, const float *b,
                                   float lambda, float *gW, float *gb, double *loss);
/* Makes the host rows (X, y, n) resident too (on a GPU: one upload, now), so
 * that softmax_engine_predict on exactly these X and n finds them there. The
 * rows must outlive the engine, unchanged. DL_ERR_ARG for no rows or when
 * SOFTMAX_ENGINE_HELD sets are held already. */
dl_status softmax_engine_hold(softmax_engine *e, const float *X, const int32_t *y, size_t n);
void softmax_engine_free(softmax_engine *e);

typedef struct softmax_model {
    size_t d;
    int C;
    float *W; /* (C, d) */
    float *b; /* (C,) */
} softmax_model;

typedef struct softmax_config {
    double lr;
    double lambda;
    int epochs;
    size_t batch_size; /* rows per step; 0 or >= the engine's n means one full batch of all n rows */
    uint64_t seed; /* mini-batch order */
} softmax_config;

/* Mini-batch SGD from W = 0, b = 0 on the engine's n rows: each epoch a new
 * seeded permutation of the rows, steps of B rows (B = batch_size, or n for
 * a full batch; the last step may be smaller), each exactly one
 * softmax_engine_grad_rows call with that slice of the permutation and no
 * other engine call: ceil(n / B) calls per epoch. train_loss, when not NULL,
 * has cfg->epochs entries, indexed from 0: train_loss[k] is the mean loss of
 * the steps of epoch k (k = 0 for the first epoch), weighted by their rows.
 * There is no entry for the untrained model (lab 01's curve has one, at 0,
 * and epochs + 1 entries; this one does not). */
dl_status softmax_train(softmax_engine *e, const softmax_config *cfg, softmax_model *m, double *train_loss);

/* pred[i] = argmax_c of x_i·W_c + b_c (the first on ties); host arrays. */
dl_status softmax_predict(const float *X, size_t n, const softmax_model *m, int32_t *pred);

/* The engine's predictions (kit.c): pred (host, n) for the host rows (X, n),
 * made where the model computes — a held set or the resident one (no copy
 * of rows), other rows staged (one copy). m goes up, n labels come back:
 * one wait. On the CPU through your softmax_predict; on a GPU the logits
 * through dl_gemm and the same argmax (the first of equal maxima). */
dl_status softmax_engine_predict(softmax_engine *e, const float *X, size_t n, const softmax_model *m, int32_t *pred);

// ---- task 6: the validation curve (select.c) ----

/* What the validation curve asks of the caller: train a model for one λ,
 * and score a trained model on the validation or the test split.
 * - train: on DL_OK, *model is a model that must be released once. On an
 *   error it has freed whatever it made itself: there is no model for that
 *   λ to score or release, whatever *model holds.
 * - score: fills the report it is given (its arrays sized for the report's C).
 * - release may be NULL: the models then need no releasing. When it is not
 *   NULL, every model a successful train returned is released exactly once. */
typedef struct eval_trainer {
    void *ctx;
    dl_status (*train)(void *ctx, double lambda, void **model);
    dl_status (*score)(void *ctx, void *model, int split, eval_report *r);
    void (*release)(void *ctx, void *model);
} eval_trainer;

typedef struct eval_curve {
    int n;
    const double *lambdas; /* the grid, (n,) */
    double *val_macro_f1; /* (n,) */
    double *val_accuracy; /* (n,) */
    int chosen; /* index of the chosen λ */
    eval_report test; /* the chosen model on the test split (allocated by the caller) */
} eval_curve;

/* For each λ in the grid: train, score on validation. Choose the λ with the
 * best validation macro-F1 (the first on ties), then score that model — and
 * only that model — on the test split, once, after every validation score
 * is in. Every model is released, on error paths too. A failing callback
 * stops the curve: its status is returned. */
dl_status eval_validation_curve(const eval_trainer *t, eval_curve *curve);

// ---- task 7: drift between two splits (select.c) ----

/* Population stability index per feature between a reference split (ref,
 * n_ref rows) and another (cur, n_cur rows), both (·, d): `bins` equal-width
 * bins over the reference's [min, max] of that feature (values beyond go to
 * the end bins; a constant feature has one bin and PSI 0), proportions
 * floored at 1e-4, PSI_j = Σ_b (q_b − p_b)·ln(q_b / p_b) with p from ref and
 * q from cur. NaN entries are skipped. psi has d entries. */
dl_status eval_psi(const float *ref, size_t n_ref, const float *cur, size_t n_cur, size_t d, int bins, double *psi);

// ---- allocation helpers (kit.c, provided) ----
dl_status eval_report_alloc(eval_report *r, int C);
void eval_report_free(eval_report *r);
dl_status softmax_model_alloc(softmax_model *m, size_t d, int C);
void softmax_model_free(softmax_model *m);
/* A plain seeded random split with the same part sizes (for comparison). */
dl_status eval_split_random(size_t n, const double frac[3], uint64_t seed, dl_split *out);

#ifdef __cplusplus
}
#endif
#endif /* LAB02_EVAL_H */
