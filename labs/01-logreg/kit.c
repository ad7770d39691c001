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

/* kit_cuda.cu: *right = the rows i < n whose residual r_i = p_i − y_i puts
 * p_i = r_i + y_i on the label's side of 0.5 (class 1 when p >= 0.5), counted
 * on the device into dright (device scratch) and read back once. */
dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n, double *dright,
                                  double *right);

#ifndef DL_HAVE_CUDA
/* Without nvcc the student's logreg_cuda.cu and kit_cuda.cu are not compiled; these stand in. */
dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy, size_t n, size_t d,
                                const float *dw, float b, float lambda, float *dgrad_w, float *grad_b, double *loss,
                                float *dwork)
{
    (void)dev, (void)dX, (void)dy, (void)n, (void)d, (void)dw, (void)b, (void)lambda;
    (void)dgrad_w, (void)grad_b, (void)loss, (void)dwork;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_loss_grad_cuda: this build has no CUDA");
}

dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n, double *dright,
                                  double *right)
{
    (void)dev, (void)r, (void)y, (void)n, (void)dright, (void)right;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_count_right_cuda: this build has no CUDA");
}
#endif

static int on_gpu(const logreg_engine *e)
{
    return e->dev->kind == DL_DEVICE_CUDA;
}

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
    DL_TRY(dl_malloc(e->dev, (void **)&e->dwork, logreg_cuda_work_floats(cap, e->d) * sizeof(float)));
    e->s_cap = cap;
    return DL_OK;
}

/* Set k's rows on the device: one upload each (on the CPU they stay where they are). */
static dl_status upload(logreg_engine *e, int k)
{
    size_t n = e->set[k].n, d = e->d;
    if (!on_gpu(e))
        return DL_OK;
    DL_TRY(dl_malloc(e->dev, (void **)&e->set[k].dX, n * d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->set[k].dy, n * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->set[k].dX, e->set[k].X, n * d * sizeof(float)));
    return dl_memcpy_h2d(e->dev, e->set[k].dy, e->set[k].y, n * sizeof(float));
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
    e->g = malloc(d * sizeof *e->g);
    if (e->g == NULL)
        return dl_error_set(DL_ERR_NOMEM, "engine: out of memory");
    if (!on_gpu(e)) {
        e->work = malloc(n * sizeof(float));
        e->work_cap = n;
        if (e->work == NULL)
            return dl_error_set(DL_ERR_NOMEM, "engine: out of memory");
        return logreg_engine_hold(e, X, y, n);
    }
    dl_status st = dl_malloc(dev, (void **)&e->dw, d * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dgrad, d * sizeof(float));
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&e->dright, sizeof(double));
    if (st == DL_OK)
        st = dl_host_alloc(dev, (void **)&e->hw, d * sizeof(float));
    if (st == DL_OK)
        st = logreg_engine_hold(e, X, y, n);
    if (st == DL_OK)
        st = ensure_staging(e, n);
    if (st != DL_OK)
        logreg_engine_free(e);
    return st;
}

dl_status logreg_engine_hold(logreg_engine *e, const float *X, const float *y, size_t n)
{
    if (X == NULL || y == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "engine: hold needs a non-empty set of rows");
    if (e->n_sets == LOGREG_ENGINE_SETS)
        return dl_error_set(DL_ERR_ARG, "engine: %d sets held already", LOGREG_ENGINE_SETS);
    int k = e->n_sets++;
    e->set[k].X = X;
    e->set[k].y = y;
    e->set[k].n = n;
    DL_TRY(upload(e, k));
    if (on_gpu(e))
        DL_TRY(ensure_staging(e, n)); // the workspace covers the largest set
    return DL_OK;
}

/* The device rows of (X, y, n): a resident set's copy, else staged. */
static dl_status device_rows(logreg_engine *e, const float *X, const float *y, size_t n, const float **dX,
                             const float **dy)
{
    for (int k = 0; k < e->n_sets; k++) {
        if (X == e->set[k].X && y == e->set[k].y && n == e->set[k].n) {
            *dX = e->set[k].dX;
            *dy = e->set[k].dy;
            return DL_OK;
        }
    }
    DL_TRY(ensure_staging(e, n)); // not resident: staged (a mini-batch)
    DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->sy, y, n * sizeof(float)));
    *dX = e->sX;
    *dy = e->sy;
    return DL_OK;
}

/* The gradient call on device rows; leaves r in e->dwork. w goes up through
 * the pinned staging without a wait: the previous call's read back of the
 * gradient has waited for the device, so the staging is free again. */
static dl_status grad_on(logreg_engine *e, const float *dX, const float *dy, size_t n, const float *w, float b,
                         float lambda, float *grad_w, float *grad_b, double *loss)
{
    memcpy(e->hw, w, e->d * sizeof *w);
    DL_TRY(dl_memcpy_h2d_async(e->dev, e->dw, e->hw, e->d * sizeof(float)));
    DL_TRY(logreg_loss_grad_cuda(e->dev, dX, dy, n, e->d, e->dw, b, lambda, e->dgrad, grad_b, loss, e->dwork));
    return dl_memcpy_d2h(e->dev, grad_w, e->dgrad, e->d * sizeof(float));
}

dl_status logreg_engine_grad(logreg_engine *e, const float *X, const float *y, size_t n, const float *w, float b,
                             float lambda, float *grad_w, float *grad_b, double *loss)
{
    e->calls++;
    if (e->observe != NULL)
        e->observe(e->observe_ctx, X, y, n);
    if (!on_gpu(e)) {
        if (n > e->work_cap) {
            float *nw = realloc(e->work, n * sizeof(float));
            if (nw == NULL)
                return dl_error_set(DL_ERR_NOMEM, "engine: out of memory for %zu rows", n);
            e->work = nw;
            e->work_cap = n;
        }
        return logreg_loss_grad_cpu(X, y, n, e->d, w, b, lambda, grad_w, grad_b, loss, e->work);
    }
    const float *dX = NULL, *dy = NULL;
    DL_TRY(device_rows(e, X, y, n, &dX, &dy));
    return grad_on(e, dX, dy, n, w, b, lambda, grad_w, grad_b, loss);
}

dl_status logreg_engine_eval(logreg_engine *e, const float *X, const float *y, size_t n, const logreg_model *m,
                             double *loss, double *acc)
{
    float gb = 0.0f;
    if (m == NULL || m->d != e->d || n == 0)
        return dl_error_set(DL_ERR_ARG, "engine: eval needs a model of %zu weights and rows", e->d);
    if (!on_gpu(e)) {
        DL_TRY(logreg_engine_grad(e, X, y, n, m->w, m->b, 0.0f, e->g, &gb, loss));
        return logreg_accuracy(X, y, n, e->d, m, acc);
    }
    e->calls++;
    if (e->observe != NULL)
        e->observe(e->observe_ctx, X, y, n);
    const float *dX = NULL, *dy = NULL;
    DL_TRY(device_rows(e, X, y, n, &dX, &dy));
    DL_TRY(grad_on(e, dX, dy, n, m->w, m->b, 0.0f, e->g, &gb, loss));
    double right = 0;
    DL_TRY(logreg_count_right_cuda(e->dev, e->dwork, dy, n, e->dright, &right)); // from the r it left
    *acc = right / (double)n;
    return DL_OK;
}

void logreg_engine_free(logreg_engine *e)
{
    if (e->dev != NULL && on_gpu(e)) {
        for (int k = 0; k < e->n_sets; k++) {
            dl_free(e->dev, e->set[k].dX);
            dl_free(e->dev, e->set[k].dy);
        }
        dl_free(e->dev, e->sX);
        dl_free(e->dev, e->sy);
        dl_free(e->dev, e->dw);
        dl_free(e->dev, e->dgrad);
        dl_free(e->dev, e->dwork);
        dl_free(e->dev, e->dright);
        dl_host_free(e->dev, e->hw);
    }
    free(e->work);
    free(e->g);
    memset(e, 0, sizeof *e);
}
