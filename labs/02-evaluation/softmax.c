/* softmax.c — lab 02, task 5: softmax regression on the CPU and its training. */
#include <math.h>   // NAN
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "dl/blas.h" // dl_gemm
#include "dl/rng.h"  // dl_rng
#include "eval.h"
#include "softmax_math.h" // softmax_xent_row

dl_status softmax_loss_grad_cpu(const float *X, const int32_t *y, size_t n, size_t d, int C,
                                const float *W, const float *b, float lambda, float *gW, float *gb,
                                double *loss, float *work)
{
    if (X == NULL || y == NULL || W == NULL || b == NULL || gW == NULL || gb == NULL || loss == NULL ||
        work == NULL || n == 0 || d == 0 || C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_loss_grad_cpu: NULL argument or empty problem (n=%zu d=%zu C=%d)",
                            n, d, C);
    for (size_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= C)
            return dl_error_set(DL_ERR_RANGE, "softmax_loss_grad_cpu: label %d of row %zu is outside [0, %d)",
                                y[i], i, C);
    }
    return DL_TODO("lab02 task 5: softmax cross-entropy + (lambda/2)|W|^2 and its gradient");
}

dl_status softmax_train(softmax_engine *e, const softmax_config *cfg, softmax_model *m,
                        double *train_loss)
{
    if (e == NULL || cfg == NULL || m == NULL || m->d != e->d || m->C != e->C)
        return dl_error_set(DL_ERR_ARG, "softmax_train: NULL argument or a model of the wrong shape");
    if (!(cfg->lr > 0) || cfg->epochs < 0)
        return dl_error_set(DL_ERR_ARG, "softmax_train: need lr > 0 and epochs >= 0");
    return DL_TODO("lab02 task 5: mini-batch SGD for softmax regression");
}

dl_status softmax_predict(const float *X, size_t n, const softmax_model *m, int32_t *pred)
{
    if (X == NULL || m == NULL || pred == NULL || m->C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_predict: NULL argument or model without classes");
    return DL_TODO("lab02 task 5: predict the class with the largest logit");
}
