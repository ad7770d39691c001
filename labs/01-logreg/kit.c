/* kit.c — lab 01's provided code: allocation helpers and the gradient engine
 * that lets one training loop run on the CPU or the GPU. Not a student file. */
#include <math.h> // NAN
#include <stdlib.h> // calloc, free
#include <string.h> // memset

#include "dl/device.h" // dl_malloc, dl_memcpy_*
#include "logreg.h"

// ---- allocation helpers ----

dl_status logreg_scaler_alloc(logreg_scaler *s, size_t d)
{
    s->d = d;
    s->mean = calloc(d ? d : 1, sizeof *s->mean);
    s->scale = calloc(d ? d : 1, sizeof *s->scale);
    if (s->mean == NULL || s->scale == NULL) {
        logreg_scaler_free(s);
        return dl_error_set(DL_ERR_NOMEM, "scaler: out of memory for d=%zu", d);
    }
    return DL_OK;
}

void logreg_scaler_free(logreg_scaler *s)
{
    free(s->mean);
    free(s->scale);
    memset(s, 0, sizeof *s);
}

dl_status logreg_model_alloc(logreg_model *m, size_t d)
{
    m->d = d;
    m->b = 0.0f;
    m->w = calloc(d ? d : 1, sizeof *m->w);
    if (m->w == NULL)
        return dl_error_set(DL_ERR_NOMEM, "model: out of memory for d=%zu", d);
    return DL_OK;
}

void logreg_model_free(logreg_model *m)
{
    free(m->w);
    memset(m, 0, sizeof *m);
}

dl_status logreg_curve_alloc(logreg_curve *c, int epochs)
{
    memset(c, 0, sizeof *c);
    size_t cap = (size_t)(epochs > 0 ? epochs : 0) + 1;
    c->train_loss = malloc(cap * sizeof(double));
    c->grad_norm = malloc(cap * sizeof(double));
    c->val_loss = malloc(cap * sizeof(double));
    c->val_acc = malloc(cap * sizeof(double));
    if (!c->train_loss || !c->grad_norm || !c->val_loss || !c->val_acc) {
        logreg_curve_free(c);
        return dl_error_set(DL_ERR_NOMEM, "curve: out of memory for %d epochs", epochs);
    }
    for (size_t i = 0; i < cap; i++)
        c->train_loss[i] = c->grad_norm[i] = c->val_loss[i] = c->val_acc[i] = NAN;
    c->capacity = (int)cap;
    return DL_OK;
}

void logreg_curve_free(logreg_curve *c)
{
    free(c->train_loss);
    free(c->grad_norm);
    free(c->val_loss);
    free(c->val_acc);
    memset(c, 0, sizeof *c);
}

// ---- the engine ----

#ifndef DL_HAVE_CUDA
/* Without nvcc the student's logreg_cuda.cu is not compiled; this stands in. */
dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy, size_t n, size_t d,
                                const float *dw, float b, float lambda, float *dgrad_w, float *grad_b, double *loss,
                                float *dwork)
{
    (void)dev, (void)dX, (void)dy, (void)n, (void)d, (void)dw, (void)b, (void)lambda;
    (void)dgrad_w, (void)grad_b, (void)loss, (void)dwork;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_loss_grad_cuda: this build has no CUDA");
}
#endif

static dl_status ensure_staging(logreg_engine *e, size_t n)
{
    if (n <= e->s_cap)
        return DL_OK;
    dl_free(e->dev, e->sX);
    dl_free(e->dev, e->sy);
    dl_free(e->dev, e->dwork);
    e->sX = e->sy = e->dwork = NULL;
    e->s_cap = 0;
    size_t cap = n > e->n ? n : e->n;
    DL_TRY(dl_malloc(e->dev, (void **)&e->sX, cap * e->d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->sy, cap * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->dwork, logreg_cuda_work_floats(cap) * sizeof(float)));
    e->s_cap = cap;
    return DL_OK;
}

dl_status logreg_engine_init(logreg_engine *e, const dl_device *dev, const float *X, const float *y, size_t n, size_t d)
{
    memset(e, 0, sizeof *e);
    if (X == NULL || y == NULL || n == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "engine: need a non-empty training set (n=%zu, d=%zu)", n, d);
    e->dev = dev;
    e->X = X;
    e->y = y;
    e->n = n;
    e->d = d;
    if (dev->kind == DL_DEVICE_CPU) {
        e->work = malloc(n * sizeof(float));
        e->work_cap = n;
        if (e->work == NULL)
            return dl_error_set(DL_ERR_NOMEM, "engine: out of memory");
        return DL_OK;
    }
    dl_status st = dl_malloc(dev, (void **)&e->dX, n * d * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dy, n * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dw, d * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dgrad, d * sizeof(float));
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, e->dX, X, n * d * sizeof(float));
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, e->dy, y, n * sizeof(float));
    if (st == DL_OK)
        st = ensure_staging(e, n);
    if (st != DL_OK)
        logreg_engine_free(e);
    return st;
}

dl_status logreg_engine_grad(logreg_engine *e, const float *X, const float *y, size_t n, const float *w, float b,
                             float lambda, float *grad_w, float *grad_b, double *loss)
{
    e->calls++;
    if (e->observe != NULL)
        e->observe(e->observe_ctx, X, y, n);
    if (e->dev->kind == DL_DEVICE_CPU) {
        if (n > e->work_cap) {
            float *nw = realloc(e->work, n * sizeof(float));
            if (nw == NULL)
                return dl_error_set(DL_ERR_NOMEM, "engine: out of memory for %zu rows", n);
            e->work = nw;
            e->work_cap = n;
        }
        return logreg_loss_grad_cpu(X, y, n, e->d, w, b, lambda, grad_w, grad_b, loss, e->work);
    }
    const float *dX = e->dX, *dy = e->dy;
    if (X != e->X || y != e->y || n != e->n) { // not the resident set: stage it
        DL_TRY(ensure_staging(e, n));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sy, y, n * sizeof(float)));
        dX = e->sX;
        dy = e->sy;
    }
    DL_TRY(dl_memcpy_h2d(e->dev, e->dw, w, e->d * sizeof(float)));
    DL_TRY(logreg_loss_grad_cuda(e->dev, dX, dy, n, e->d, e->dw, b, lambda, e->dgrad, grad_b, loss, e->dwork));
    return dl_memcpy_d2h(e->dev, grad_w, e->dgrad, e->d * sizeof(float));
}

void logreg_engine_free(logreg_engine *e)
{
    if (e->dev != NULL && e->dev->kind == DL_DEVICE_CUDA) {
        dl_free(e->dev, e->dX);
        dl_free(e->dev, e->dy);
        dl_free(e->dev, e->sX);
        dl_free(e->dev, e->sy);
        dl_free(e->dev, e->dw);
        dl_free(e->dev, e->dgrad);
        dl_free(e->dev, e->dwork);
    }
    free(e->work);
    memset(e, 0, sizeof *e);
}
