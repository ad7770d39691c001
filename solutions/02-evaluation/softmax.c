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
    /* BEGIN SOLUTION */
    float *Z = work; // (n, C): logits, then P − Y
    DL_TRY(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, n, (size_t)C, d, 1.0f, X, d, W, d, 0.0f, Z, (size_t)C));
    double loss_sum = 0.0;
    for (int c = 0; c < C; c++)
        gb[c] = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float *z = Z + i * (size_t)C;
        for (int c = 0; c < C; c++)
            z[c] += b[c];
        loss_sum += softmax_xent_row(z, C, y[i]); // term 1: the data term
        for (int c = 0; c < C; c++)
            gb[c] += z[c];
    }
    for (int c = 0; c < C; c++)
        gb[c] /= (float)n; // the bias is not penalised
    // gW = (1/n) (P − Y)ᵀ X + λW: start from W, let the GEMM scale it by beta = λ
    size_t wd = (size_t)C * d;
    memcpy(gW, W, wd * sizeof *gW);
    DL_TRY(dl_gemm(dl_cpu(), DL_TRANS, DL_NO_TRANS, (size_t)C, d, n, 1.0f / (float)n, Z, (size_t)C, X, d, lambda,
                   gW, d));
    double ww = 0.0;
    for (size_t k = 0; k < wd; k++)
        ww += (double)W[k] * W[k];
    *loss = loss_sum / (double)n + 0.5 * (double)lambda * ww; // term 2: the penalty
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 5: softmax cross-entropy + (lambda/2)|W|^2 and its gradient"); */
}

dl_status softmax_train(softmax_engine *e, const softmax_config *cfg, softmax_model *m,
                        double *train_loss)
{
    if (e == NULL || cfg == NULL || m == NULL || m->d != e->d || m->C != e->C)
        return dl_error_set(DL_ERR_ARG, "softmax_train: NULL argument or a model of the wrong shape");
    if (!(cfg->lr > 0) || cfg->epochs < 0)
        return dl_error_set(DL_ERR_ARG, "softmax_train: need lr > 0 and epochs >= 0");
    /* BEGIN SOLUTION */
    size_t n = e->n, d = e->d, C = (size_t)e->C, wd = C * d;
    size_t bs = (cfg->batch_size == 0 || cfg->batch_size > n) ? n : cfg->batch_size;
    float *gW = malloc(wd * sizeof *gW), *gb = malloc(C * sizeof *gb);
    size_t *order = malloc(n * sizeof *order);
    dl_status st = DL_OK;
    if (!gW || !gb || !order) {
        st = dl_error_set(DL_ERR_NOMEM, "softmax_train: out of memory");
        goto done;
    }
    memset(m->W, 0, wd * sizeof *m->W);
    memset(m->b, 0, C * sizeof *m->b);
    dl_rng r;
    dl_rng_seed(&r, cfg->seed, 0x50f7);
    for (int epoch = 0; epoch < cfg->epochs; epoch++) {
        dl_rng_permutation(&r, order, n); // a new order every epoch
        double epoch_loss = 0.0;
        for (size_t start = 0; start < n; start += bs) {
            size_t nb = n - start < bs ? n - start : bs;
            double loss = 0.0; // the batch: its rows' indices; the engine gathers them where they live
            st = softmax_engine_grad_rows(e, order + start, nb, m->W, m->b, (float)cfg->lambda, gW, gb, &loss);
            if (st != DL_OK)
                goto done;
            for (size_t k = 0; k < wd; k++)
                m->W[k] -= (float)cfg->lr * gW[k];
            for (size_t c = 0; c < C; c++)
                m->b[c] -= (float)cfg->lr * gb[c];
            epoch_loss += loss * (double)nb;
        }
        if (train_loss != NULL)
            train_loss[epoch] = epoch_loss / (double)n;
    }
done:
    free(gW), free(gb), free(order);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 5: mini-batch SGD for softmax regression"); */
}

dl_status softmax_predict(const float *X, size_t n, const softmax_model *m, int32_t *pred)
{
    if (X == NULL || m == NULL || pred == NULL || m->C < 2)
        return dl_error_set(DL_ERR_ARG, "softmax_predict: NULL argument or model without classes");
    /* BEGIN SOLUTION */
    size_t C = (size_t)m->C;
    float *Z = malloc((n ? n : 1) * C * sizeof *Z);
    if (Z == NULL)
        return dl_error_set(DL_ERR_NOMEM, "softmax_predict: out of memory");
    dl_status st = dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, n, C, m->d, 1.0f, X, m->d, m->W, m->d, 0.0f, Z, C);
    for (size_t i = 0; st == DL_OK && i < n; i++) {
        const float *z = Z + i * C;
        size_t best = 0;
        for (size_t c = 1; c < C; c++) {
            if (z[c] + m->b[c] > z[best] + m->b[best])
                best = c;
        }
        pred[i] = (int32_t)best;
    }
    free(Z);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 5: predict the class with the largest logit"); */
}
