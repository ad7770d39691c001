/* logreg.c — lab 01, tasks 2–4: loss and gradient on the CPU, training, prediction. */
#include <math.h>   // sqrt, isfinite, NAN
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/blas.h" // dl_gemv
#include "dl/rng.h"  // dl_rng
#include "logreg.h"
#include "logreg_math.h" // logreg_sigmoid, logreg_bce

/* glibc's libmvec has vector versions of expf and log1pf, but <math.h>
 * declares them only under -ffast-math. Declared here, they let GCC's
 * vectoriser turn a branch-free loop over rows into calls that take 4 floats
 * at a time (_ZGVbN4v_expf, the SSE2 version: the kit builds for baseline
 * x86-64, no -march), without fast-math's reordering of sums. lab.mk adds the
 * flags it needs: -O3 -fno-math-errno -fno-trapping-math. */
#if defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__) && defined(__x86_64__) && \
    defined(__GLIBC__) && !defined(__FAST_MATH__)
#if __GLIBC_PREREQ(2, 35) // log1pf's vector version is in glibc 2.35 and later
__attribute__((simd("notinbranch"))) float expf(float);
__attribute__((simd("notinbranch"))) float log1pf(float);
#endif
#endif

// ---- task 2: loss and gradient ----

dl_status logreg_loss_grad_cpu(const float *X, const float *y, size_t n, size_t d, const float *w,
                               float b, float lambda, float *grad_w, float *grad_b, double *loss,
                               float *work)
{
    if (X == NULL || y == NULL || w == NULL || grad_w == NULL || grad_b == NULL || loss == NULL ||
        work == NULL || n == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_loss_grad_cpu: NULL argument or empty X (n=%zu, d=%zu)", n, d);
    /* BEGIN SOLUTION */
    float *z = work; // (n,): z = Xw, then overwritten by the residual r = σ(z + b) − y
    DL_TRY(dl_gemv(dl_cpu(), DL_NO_TRANS, n, d, 1.0f, X, d, w, 0.0f, z));
    // Rows in blocks: the first loop has no running sum, so it is vectorised
    // (exp and log1p of 4 rows per call); the second adds in row order, in double.
    enum { LOSS_BLOCK = 256 };
    double loss_sum = 0.0, r_sum = 0.0;
    float term[LOSS_BLOCK]; // the block's loss terms
    for (size_t i0 = 0; i0 < n; i0 += LOSS_BLOCK) {
        size_t m = n - i0 < LOSS_BLOCK ? n - i0 : LOSS_BLOCK;
        float *zb = z + i0;
        const float *yb = y + i0;
        for (size_t k = 0; k < m; k++) {
            float zi = zb[k] + b;
            term[k] = logreg_bce(zi, yb[k]); // term 1: the data term
            zb[k] = logreg_sigmoid(zi) - yb[k];
        }
        for (size_t k = 0; k < m; k++) {
            loss_sum += term[k];
            r_sum += zb[k];
        }
    }
    // grad_w = (1/n) Xᵀr + λw: start from w, let gemv scale it by beta = λ
    memcpy(grad_w, w, d * sizeof *grad_w);
    DL_TRY(dl_gemv(dl_cpu(), DL_TRANS, n, d, 1.0f / (float)n, X, d, z, lambda, grad_w));
    double ww = 0.0;
    for (size_t j = 0; j < d; j++)
        ww += (double)w[j] * w[j];
    *grad_b = (float)(r_sum / (double)n); // the bias is not penalised
    *loss = loss_sum / (double)n + 0.5 * (double)lambda * ww; // term 2: the penalty
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 2: mean BCE + (lambda/2)|w|^2 and its gradient"); */
}

// ---- task 3: training ----

/* BEGIN SOLUTION */
/* Appends one curve entry for the current model; leaves the full-batch
 * gradient in g, gb (the next full-batch step reuses it). */
static dl_status record(logreg_engine *e, const float *Xval, const float *yval, size_t nval,
                        const logreg_config *cfg, const logreg_model *m, logreg_curve *c, float *g,
                        float *gb)
{
    double loss = 0.0;
    DL_TRY(logreg_engine_grad(e, e->X, e->y, e->n, m->w, m->b, (float)cfg->lambda, g, gb, &loss));
    double gn = (double)*gb * *gb;
    for (size_t j = 0; j < e->d; j++)
        gn += (double)g[j] * g[j];
    int k = c->n++;
    c->train_loss[k] = loss;
    c->grad_norm[k] = sqrt(gn);
    c->val_loss[k] = NAN;
    c->val_acc[k] = NAN;
    if (nval > 0) // where the validation rows live: on a GPU, no copy and no CPU pass
        DL_TRY(logreg_engine_eval(e, Xval, yval, nval, m, &c->val_loss[k], &c->val_acc[k]));
    return DL_OK;
}

static void step(logreg_model *m, const float *g, float gb, double lr)
{
    for (size_t j = 0; j < m->d; j++)
        m->w[j] -= (float)lr * g[j];
    m->b -= (float)lr * gb;
}

static dl_status train(logreg_engine *e, const float *Xval, const float *yval, size_t nval,
                       const logreg_config *cfg, logreg_model *m, logreg_curve *c, float *g, size_t *order,
                       size_t bs)
{
    size_t n = e->n;
    float gb = 0.0f;
    dl_rng rng;
    dl_rng_seed(&rng, cfg->seed, 0x10a1);
    DL_TRY(record(e, Xval, yval, nval, cfg, m, c, g, &gb));
    for (int epoch = 1; epoch <= cfg->epochs; epoch++) {
        if (cfg->tol > 0 && c->grad_norm[c->n - 1] < cfg->tol)
            break; // converged
        if (bs == n) {
            step(m, g, gb, cfg->lr); // g, gb: the full gradient at the current model
        } else {
            dl_rng_permutation(&rng, order, n); // a new order every epoch
            for (size_t start = 0; start < n; start += bs) {
                size_t nb = n - start < bs ? n - start : bs;
                double loss; // the rows stay where they live: the engine gathers them by index
                DL_TRY(logreg_engine_grad_rows(e, order + start, nb, m->w, m->b, (float)cfg->lambda, g, &gb,
                                               &loss));
                step(m, g, gb, cfg->lr);
            }
        }
        DL_TRY(record(e, Xval, yval, nval, cfg, m, c, g, &gb));
    }
    return DL_OK;
}
/* END SOLUTION */

dl_status logreg_train(logreg_engine *e, const float *Xval, const float *yval, size_t nval,
                       const logreg_config *cfg, logreg_model *m, logreg_curve *curve)
{
    if (e == NULL || cfg == NULL || m == NULL || curve == NULL || m->d != e->d)
        return dl_error_set(DL_ERR_ARG, "logreg_train: NULL argument or model of the wrong size");
    if (!(cfg->lr > 0) || cfg->epochs < 0 || curve->capacity < cfg->epochs + 1)
        return dl_error_set(DL_ERR_ARG, "logreg_train: need lr > 0, epochs >= 0 and a curve for epochs + 1 entries");
    /* BEGIN SOLUTION */
    size_t n = e->n, d = e->d;
    size_t bs = (cfg->batch_size == 0 || cfg->batch_size >= n) ? n : cfg->batch_size;
    float *g = malloc(d * sizeof *g);
    size_t *order = bs < n ? malloc(n * sizeof *order) : NULL;
    dl_status st = DL_OK;
    if (g == NULL || (bs < n && order == NULL))
        st = dl_error_set(DL_ERR_NOMEM, "logreg_train: out of memory");
    memset(m->w, 0, d * sizeof *m->w);
    m->b = 0.0f;
    curve->n = 0;
    if (st == DL_OK)
        st = train(e, Xval, yval, nval, cfg, m, curve, g, order, bs);
    free(g), free(order);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 3: gradient descent with a learning curve and a tolerance stop"); */
}

// ---- task 4: prediction ----

dl_status logreg_predict_proba(const float *X, size_t n, size_t d, const logreg_model *m, float *p)
{
    if (X == NULL || m == NULL || p == NULL || m->d != d)
        return dl_error_set(DL_ERR_ARG, "logreg_predict_proba: NULL argument or model of the wrong size");
    /* BEGIN SOLUTION */
    DL_TRY(dl_gemv(dl_cpu(), DL_NO_TRANS, n, d, 1.0f, X, d, m->w, 0.0f, p));
    for (size_t i = 0; i < n; i++)
        p[i] = logreg_sigmoid(p[i] + m->b);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 4: probability of class 1 for each row"); */
}

dl_status logreg_accuracy(const float *X, const float *y, size_t n, size_t d, const logreg_model *m,
                          double *acc)
{
    if (X == NULL || y == NULL || m == NULL || acc == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_accuracy: NULL argument or no rows");
    /* BEGIN SOLUTION */
    float *p = malloc(n * sizeof *p);
    if (p == NULL)
        return dl_error_set(DL_ERR_NOMEM, "logreg_accuracy: out of memory");
    dl_status st = logreg_predict_proba(X, n, d, m, p);
    size_t right = 0;
    for (size_t i = 0; st == DL_OK && i < n; i++)
        right += (p[i] >= 0.5f) == (y[i] >= 0.5f);
    free(p);
    if (st == DL_OK)
        *acc = (double)right / (double)n;
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 4: fraction of rows predicted right at threshold 0.5"); */
}
