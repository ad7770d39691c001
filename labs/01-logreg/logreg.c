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
    return DL_TODO("lab01 task 2: mean BCE + (lambda/2)|w|^2 and its gradient");
}

// ---- task 3: training ----


dl_status logreg_train(logreg_engine *e, const float *Xval, const float *yval, size_t nval,
                       const logreg_config *cfg, logreg_model *m, logreg_curve *curve)
{
    if (e == NULL || cfg == NULL || m == NULL || curve == NULL || m->d != e->d)
        return dl_error_set(DL_ERR_ARG, "logreg_train: NULL argument or model of the wrong size");
    if (!(cfg->lr > 0) || cfg->epochs < 0 || curve->capacity < cfg->epochs + 1)
        return dl_error_set(DL_ERR_ARG, "logreg_train: need lr > 0, epochs >= 0 and a curve for epochs + 1 entries");
    return DL_TODO("lab01 task 3: gradient descent with a learning curve and a tolerance stop");
}

// ---- task 4: prediction ----

dl_status logreg_predict_proba(const float *X, size_t n, size_t d, const logreg_model *m, float *p)
{
    if (X == NULL || m == NULL || p == NULL || m->d != d)
        return dl_error_set(DL_ERR_ARG, "logreg_predict_proba: NULL argument or model of the wrong size");
    return DL_TODO("lab01 task 4: probability of class 1 for each row");
}

dl_status logreg_accuracy(const float *X, const float *y, size_t n, size_t d, const logreg_model *m,
                          double *acc)
{
    if (X == NULL || y == NULL || m == NULL || acc == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_accuracy: NULL argument or no rows");
    return DL_TODO("lab01 task 4: fraction of rows predicted right at threshold 0.5");
}
