/* kit.c — lab 02's provided code: part sizes, a plain random split for
 * comparison, allocation helpers, and the softmax gradient engine (one call
 * for CPU and GPU). Not a student file. */
#include <math.h> // ceil, floor, fabs
#include <stdlib.h> // calloc, free
#include <string.h> // memset

#include "dl/device.h" // dl_malloc, dl_memcpy_*
#include "dl/rng.h" // dl_rng
#include "eval.h"

// ---- part sizes and the random split ----

dl_status eval_part_sizes(size_t n, const double frac[3], size_t sizes[3])
{
    static const char *const names[3] = {"train", "val", "test"};
    double sum = 0;
    for (int p = 0; p < 3; p++) {
        if (!(frac[p] >= 0.0 && frac[p] <= 1.0))
            return dl_error_set(DL_ERR_ARG, "split: %s fraction %g is not in [0, 1]", names[p], frac[p]);
        sum += frac[p];
    }
    if (sum > 1.0 + 1e-9)
        return dl_error_set(DL_ERR_ARG, "split: fractions %g + %g + %g = %g sum to more than 1", frac[0], frac[1],
                            frac[2], sum);
    sizes[1] = (size_t)ceil(frac[1] * (double)n - 1e-9);
    sizes[2] = (size_t)ceil(frac[2] * (double)n - 1e-9);
    if (fabs(sum - 1.0) <= 1e-9) {
        if (sizes[1] + sizes[2] >= n)
            return dl_error_set(DL_ERR_ARG, "split: %zu rows leave no training rows after %zu val and %zu test", n,
                                sizes[1], sizes[2]);
        sizes[0] = n - sizes[1] - sizes[2];
    } else {
        sizes[0] = (size_t)floor(frac[0] * (double)n + 1e-9);
    }
    for (int p = 0; p < 3; p++) {
        if (frac[p] > 0 && sizes[p] == 0)
            return dl_error_set(DL_ERR_ARG, "split: the %s part of %zu rows at fraction %g is empty", names[p], n,
                                frac[p]);
    }
    if (sizes[0] + sizes[1] + sizes[2] > n)
        return dl_error_set(DL_ERR_ARG, "split: parts of %zu + %zu + %zu rows exceed the %zu rows", sizes[0], sizes[1],
                            sizes[2], n);
    return DL_OK;
}

dl_status eval_split_random(size_t n, const double frac[3], uint64_t seed, dl_split *out)
{
    size_t sizes[3];
    memset(out, 0, sizeof *out);
    DL_TRY(eval_part_sizes(n, frac, sizes));
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (idx == NULL)
        return dl_error_set(DL_ERR_NOMEM, "split: out of memory");
    dl_rng r;
    dl_rng_seed(&r, seed, 0x7a4d);
    dl_rng_permutation(&r, idx, n);
    out->n_parts = 3;
    out->idx = idx;
    out->offset[0] = 0;
    for (int p = 0; p < 3; p++)
        out->offset[p + 1] = out->offset[p] + sizes[p];
    return DL_OK;
}

// ---- allocation helpers ----

dl_status eval_report_alloc(eval_report *r, int C)
{
    memset(r, 0, sizeof *r);
    size_t c = C > 0 ? (size_t)C : 1;
    r->C = C;
    r->precision = calloc(c, sizeof(double));
    r->recall = calloc(c, sizeof(double));
    r->f1 = calloc(c, sizeof(double));
    r->support = calloc(c, sizeof(int64_t));
    if (!r->precision || !r->recall || !r->f1 || !r->support) {
        eval_report_free(r);
        return dl_error_set(DL_ERR_NOMEM, "report: out of memory");
    }
    return DL_OK;
}

void eval_report_free(eval_report *r)
{
    free(r->precision);
    free(r->recall);
    free(r->f1);
    free(r->support);
    memset(r, 0, sizeof *r);
}

dl_status softmax_model_alloc(softmax_model *m, size_t d, int C)
{
    m->d = d;
    m->C = C;
    m->W = calloc(d * (size_t)C > 0 ? d * (size_t)C : 1, sizeof(float));
    m->b = calloc(C > 0 ? (size_t)C : 1, sizeof(float));
    if (m->W == NULL || m->b == NULL) {
        softmax_model_free(m);
        return dl_error_set(DL_ERR_NOMEM, "model: out of memory for %d x %zu", C, d);
    }
    return DL_OK;
}

void softmax_model_free(softmax_model *m)
{
    free(m->W);
    free(m->b);
    memset(m, 0, sizeof *m);
}

// ---- the engine ----

#ifndef DL_HAVE_CUDA
/* Without nvcc the student's softmax_cuda.cu is not compiled; this stands in. */
dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy, size_t n, size_t d, int C,
                                 const float *dW, const float *db, float lambda, float *dgW, float *dgb, double *loss,
                                 float *dwork)
{
    (void)dev, (void)dX, (void)dy, (void)n, (void)d, (void)C, (void)dW, (void)db, (void)lambda;
    (void)dgW, (void)dgb, (void)loss, (void)dwork;
    return dl_error_set(DL_ERR_NO_CUDA, "softmax_loss_grad_cuda: this build has no CUDA");
}
#endif

static dl_status ensure_staging(softmax_engine *e, size_t n)
{
    if (n <= e->s_cap)
        return DL_OK;
    dl_free(e->dev, e->sX);
    dl_free(e->dev, e->sy);
    dl_free(e->dev, e->dwork);
    e->sX = NULL;
    e->sy = NULL;
    e->dwork = NULL;
    e->s_cap = 0;
    size_t cap = n > e->n ? n : e->n;
    DL_TRY(dl_malloc(e->dev, (void **)&e->sX, cap * e->d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->sy, cap * sizeof(int32_t)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->dwork, softmax_cuda_work_floats(cap, e->C) * sizeof(float)));
    e->s_cap = cap;
    return DL_OK;
}

dl_status softmax_engine_init(softmax_engine *e, const dl_device *dev, const float *X, const int32_t *y, size_t n,
                              size_t d, int C)
{
    memset(e, 0, sizeof *e);
    if (X == NULL || y == NULL || n == 0 || d == 0 || C < 2)
        return dl_error_set(DL_ERR_ARG, "engine: need rows, features and at least 2 classes (n=%zu d=%zu C=%d)", n, d,
                            C);
    e->dev = dev;
    e->X = X;
    e->y = y;
    e->n = n;
    e->d = d;
    e->C = C;
    if (dev->kind == DL_DEVICE_CPU)
        return DL_OK;
    size_t wd = d * (size_t)C;
    dl_status st = dl_malloc(dev, (void **)&e->dX, n * d * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dy, n * sizeof(int32_t));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dW, wd * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->db, (size_t)C * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dgW, wd * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dgb, (size_t)C * sizeof(float));
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, e->dX, X, n * d * sizeof(float));
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, e->dy, y, n * sizeof(int32_t));
    if (st == DL_OK)
        st = ensure_staging(e, n);
    if (st != DL_OK)
        softmax_engine_free(e);
    return st;
}

dl_status softmax_engine_grad(softmax_engine *e, const float *X, const int32_t *y, size_t n, const float *W,
                              const float *b, float lambda, float *gW, float *gb, double *loss)
{
    e->calls++;
    size_t wd = e->d * (size_t)e->C;
    if (e->dev->kind == DL_DEVICE_CPU) {
        size_t need = n * (size_t)e->C;
        if (need > e->work_cap) {
            float *nw = realloc(e->work, need * sizeof(float));
            if (nw == NULL)
                return dl_error_set(DL_ERR_NOMEM, "engine: out of memory for %zu rows", n);
            e->work = nw;
            e->work_cap = need;
        }
        return softmax_loss_grad_cpu(X, y, n, e->d, e->C, W, b, lambda, gW, gb, loss, e->work);
    }
    const float *dX = e->dX;
    const int32_t *dy = e->dy;
    if (X != e->X || y != e->y || n != e->n) { // not the resident set: stage it
        DL_TRY(ensure_staging(e, n));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sy, y, n * sizeof(int32_t)));
        dX = e->sX;
        dy = e->sy;
    }
    DL_TRY(dl_memcpy_h2d(e->dev, e->dW, W, wd * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->db, b, (size_t)e->C * sizeof(float)));
    DL_TRY(softmax_loss_grad_cuda(e->dev, dX, dy, n, e->d, e->C, e->dW, e->db, lambda, e->dgW, e->dgb, loss, e->dwork));
    DL_TRY(dl_memcpy_d2h(e->dev, gW, e->dgW, wd * sizeof(float)));
    return dl_memcpy_d2h(e->dev, gb, e->dgb, (size_t)e->C * sizeof(float));
}

void softmax_engine_free(softmax_engine *e)
{
    if (e->dev != NULL && e->dev->kind == DL_DEVICE_CUDA) {
        dl_free(e->dev, e->dX);
        dl_free(e->dev, e->dy);
        dl_free(e->dev, e->sX);
        dl_free(e->dev, e->sy);
        dl_free(e->dev, e->dW);
        dl_free(e->dev, e->db);
        dl_free(e->dev, e->dgW);
        dl_free(e->dev, e->dgb);
        dl_free(e->dev, e->dwork);
    }
    free(e->work);
    memset(e, 0, sizeof *e);
}
