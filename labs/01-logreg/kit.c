/* kit.c — lab 01's provided code: allocation helpers and the gradient engine
 * that lets one training loop run on the CPU or the GPU. Not a student file. */
#include <math.h> // NAN
#include <stddef.h> // offsetof
#include <stdint.h> // int32_t, INT32_MAX
#include <stdlib.h> // calloc, free
#include <string.h> // memset, memcpy

#include "dl/device.h" // dl_malloc, dl_memcpy_*, dl_dev_stats_get
#include "dl/summary.h" // dl_run_io_steps
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

/* kit_cuda.cu: rows idx[0..n) of (X (·, d), y) into (bX (n, d), by (n,)),
 * gathered on the device (one launch on dev's stream, no wait). */
dl_status logreg_gather_rows_cuda(const dl_device *dev, const float *X, const float *y, size_t d, const int32_t *idx,
                                  size_t n, float *bX, float *by);
/* kit_cuda.cu: *dright = the rows i < n whose residual r_i = p_i − y_i puts
 * p_i = r_i + y_i on the label's side of 0.5 (class 1 when p >= 0.5),
 * counted on the device (launches on dev's stream, no wait). */
dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n,
                                  unsigned long long *dright);

#ifndef DL_HAVE_CUDA
/* Without nvcc the student's logreg_cuda.cu and kit_cuda.cu are not compiled; these stand in. */
dl_status logreg_loss_grad_cuda(const dl_device *dev, const float *dX, const float *dy, size_t n, size_t d,
                                const float *dw, float b, float lambda, float *dgrad_w, float *dgrad_b, double *dloss,
                                float *dwork)
{
    (void)dev, (void)dX, (void)dy, (void)n, (void)d, (void)dw, (void)b, (void)lambda;
    (void)dgrad_w, (void)dgrad_b, (void)dloss, (void)dwork;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_loss_grad_cuda: this build has no CUDA");
}

dl_status logreg_gather_rows_cuda(const dl_device *dev, const float *X, const float *y, size_t d, const int32_t *idx,
                                  size_t n, float *bX, float *by)
{
    (void)dev, (void)X, (void)y, (void)d, (void)idx, (void)n, (void)bX, (void)by;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_gather_rows_cuda: this build has no CUDA");
}

dl_status logreg_count_right_cuda(const dl_device *dev, const float *r, const float *y, size_t n,
                                  unsigned long long *dright)
{
    (void)dev, (void)r, (void)y, (void)n, (void)dright;
    return dl_error_set(DL_ERR_NO_CUDA, "logreg_count_right_cuda: this build has no CUDA");
}
#endif

static int on_gpu(const logreg_engine *e)
{
    return e->dev->kind == DL_DEVICE_CUDA;
}

/* What a call reads back, in one block (e->dout on the device, e->hout its
 * pinned host copy): an evaluation the loss and the right predictions (16
 * bytes), a gradient all of it. grad_w starts 32 bytes in, aligned for
 * vector loads as a device allocation is. */
typedef struct readback {
    double loss;
    unsigned long long right; /* an evaluation's right predictions (counted on CUDA) */
    float grad_b;
    float pad[3];
    float grad_w[]; /* (d,) */
} readback;

static size_t readback_bytes(size_t d)
{
    return offsetof(readback, grad_w) + d * sizeof(float);
}

/* The pinned staging may be refilled: the device has run the uploads from
 * it. A call's read back waits for everything queued before it, so this
 * waits only after a call that failed before its read back. */
static dl_status staging_free(logreg_engine *e)
{
    if (!dl_event_done(e->dev, &e->staged))
        DL_TRY(dl_event_sync(e->dev, &e->staged));
    return DL_OK;
}

/* Room for n rows in the staging (a gathered batch, or rows the engine does
 * not hold) and in the workspace; kept when there is. */
static dl_status ensure_staging(logreg_engine *e, size_t n)
{
    if (n <= e->s_cap)
        return DL_OK;
    DL_TRY(staging_free(e)); // nothing may still read what is freed
    dl_free(e->dev, e->sX);
    dl_free(e->dev, e->sy);
    dl_free(e->dev, e->didx);
    dl_host_free(e->dev, e->hidx);
    dl_free(e->dev, e->dwork);
    free(e->work);
    e->sX = e->sy = e->dwork = e->work = NULL;
    e->hidx = e->didx = NULL;
    e->s_cap = e->work_cap = 0;
    size_t cap = n > e->n ? n : e->n;
    DL_TRY(dl_malloc(e->dev, (void **)&e->sX, cap * e->d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->sy, cap * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->didx, cap * sizeof(int32_t)));
    DL_TRY(dl_host_alloc(e->dev, (void **)&e->hidx, cap * sizeof(int32_t)));
    if (on_gpu(e)) {
        DL_TRY(dl_malloc(e->dev, (void **)&e->dwork, logreg_cuda_work_floats(cap, e->d) * sizeof(float)));
    } else {
        e->work = malloc(cap * sizeof(float));
        if (e->work == NULL)
            return dl_error_set(DL_ERR_NOMEM, "engine: out of memory for %zu rows", cap);
        e->work_cap = cap;
    }
    e->s_cap = cap;
    return DL_OK;
}

/* Set k's rows where the model reads them: one upload each of X and y on
 * CUDA; on the CPU they already are there, and are counted as uploaded. */
static dl_status upload(logreg_engine *e, int k)
{
    size_t n = e->set[k].n, d = e->d;
    if (!on_gpu(e)) {
        dl_dev_count_upload(n * d * sizeof(float));
        dl_dev_count_upload(n * sizeof(float));
        e->set[k].dX = e->set[k].X;
        e->set[k].dy = e->set[k].y;
        return DL_OK;
    }
    DL_TRY(dl_malloc(e->dev, (void **)&e->set[k].own_X, n * d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->set[k].own_y, n * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->set[k].own_X, e->set[k].X, n * d * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->set[k].own_y, e->set[k].y, n * sizeof(float)));
    e->set[k].dX = e->set[k].own_X;
    e->set[k].dy = e->set[k].own_y;
    return DL_OK;
}

/* The engine's own buffers: w and the read-back block, each on the device
 * with its pinned host staging, the event that guards the staging, and the
 * staging and workspace for n rows. */
static dl_status buffers(logreg_engine *e)
{
    DL_TRY(dl_malloc(e->dev, (void **)&e->dw, e->d * sizeof(float)));
    DL_TRY(dl_host_alloc(e->dev, (void **)&e->hw, e->d * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, &e->dout, readback_bytes(e->d)));
    DL_TRY(dl_host_alloc(e->dev, &e->hout, readback_bytes(e->d)));
    DL_TRY(dl_memset0(e->dev, e->dout, readback_bytes(e->d))); // the padding is read back too
    DL_TRY(dl_event_create(e->dev, &e->staged));
    return ensure_staging(e, e->n);
}

dl_status logreg_engine_init(logreg_engine *e, const dl_device *dev, const float *X, const float *y, size_t n, size_t d)
{
    memset(e, 0, sizeof *e);
    if (X == NULL || y == NULL || n == 0 || d == 0 || n > (size_t)INT32_MAX)
        return dl_error_set(DL_ERR_ARG,
                            "engine: need a non-empty training set of at most 2^31 - 1 rows (n=%zu, d=%zu; a "
                            "batch's indices are int32 on the device)",
                            n, d);
    e->dev = dev;
    e->X = X;
    e->y = y;
    e->n = n;
    e->d = d;
    dl_status st = buffers(e);
    if (st == DL_OK)
        st = logreg_engine_hold(e, X, y, n);
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
    return ensure_staging(e, n); // the workspace covers the largest set
}

/* w up through the pinned staging (no wait), then the event that says when
 * the device has read the staging. */
static dl_status stage_w(logreg_engine *e, const float *w)
{
    memcpy(e->hw, w, e->d * sizeof *w);
    DL_TRY(dl_memcpy_h2d_async(e->dev, e->dw, e->hw, e->d * sizeof(float)));
    return dl_event_record(e->dev, &e->staged, NULL);
}

/* The device rows of (X, y, n): a resident set's, else staged (one blocking
 * copy each on CUDA; on the CPU the host rows are used where they are and
 * counted as the same two uploads). */
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
    DL_TRY(ensure_staging(e, n));
    if (!on_gpu(e)) {
        dl_dev_count_upload(n * e->d * sizeof(float));
        dl_dev_count_upload(n * sizeof(float));
        *dX = X;
        *dy = y;
        return DL_OK;
    }
    DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
    DL_TRY(dl_memcpy_h2d(e->dev, e->sy, y, n * sizeof(float)));
    *dX = e->sX;
    *dy = e->sy;
    return DL_OK;
}

/* The loss and gradient on device rows (dX, dy, n) with the staged w, into
 * the read-back block on the device; on CUDA queued, not waited for. */
static dl_status compute(logreg_engine *e, const float *dX, const float *dy, size_t n, float b, float lambda)
{
    readback *out = e->dout;
    if (on_gpu(e))
        return logreg_loss_grad_cuda(e->dev, dX, dy, n, e->d, e->dw, b, lambda, out->grad_w, &out->grad_b, &out->loss,
                                     e->dwork);
    return logreg_loss_grad_cpu(dX, dy, n, e->d, e->dw, b, lambda, out->grad_w, &out->grad_b, &out->loss, e->work);
}

/* grad_w, grad_b and the loss back in one copy: the call's one wait. */
static dl_status read_grad(logreg_engine *e, float *grad_w, float *grad_b, double *loss)
{
    const readback *out = e->hout;
    DL_TRY(dl_memcpy_d2h(e->dev, e->hout, e->dout, readback_bytes(e->d)));
    memcpy(grad_w, out->grad_w, e->d * sizeof *grad_w);
    *grad_b = out->grad_b;
    *loss = out->loss;
    return DL_OK;
}

dl_status logreg_engine_grad(logreg_engine *e, const float *X, const float *y, size_t n, const float *w, float b,
                             float lambda, float *grad_w, float *grad_b, double *loss)
{
    e->calls++;
    if (X == NULL || y == NULL || n == 0 || w == NULL || grad_w == NULL || grad_b == NULL || loss == NULL)
        return dl_error_set(DL_ERR_ARG, "engine: a gradient needs rows (n=%zu), w and its outputs", n);
    if (e->observe != NULL)
        e->observe(e->observe_ctx, X, y, NULL, n);
    const float *dX = NULL, *dy = NULL;
    DL_TRY(staging_free(e));
    DL_TRY(device_rows(e, X, y, n, &dX, &dy));
    DL_TRY(stage_w(e, w));
    DL_TRY(compute(e, dX, dy, n, b, lambda));
    return read_grad(e, grad_w, grad_b, loss);
}

/* Rows idx[0..n) of the training set into the staging, where they live:
 * the indices up through the pinned staging (no wait), then one gather. */
static dl_status gather(logreg_engine *e, const size_t *idx, size_t n)
{
    size_t d = e->d;
    for (size_t k = 0; k < n; k++)
        e->hidx[k] = (int32_t)idx[k];
    DL_TRY(dl_memcpy_h2d_async(e->dev, e->didx, e->hidx, n * sizeof(int32_t)));
    DL_TRY(dl_event_record(e->dev, &e->staged, NULL)); // guards hidx even if the step stops before w goes up
    dl_dev_count_launch((double)n * (2.0 * 4.0 * (double)d + 4.0 + 4.0 + 4.0)); // rows read and written, y, idx
    if (on_gpu(e))
        return logreg_gather_rows_cuda(e->dev, e->set[0].dX, e->set[0].dy, d, e->didx, n, e->sX, e->sy);
    for (size_t k = 0; k < n; k++) { // the CPU's device copy of the indices is host memory
        memcpy(e->sX + k * d, e->X + (size_t)e->didx[k] * d, d * sizeof *e->sX);
        e->sy[k] = e->y[e->didx[k]];
    }
    return DL_OK;
}

/* The mini-batch step's body: check and gather the rows, w up, compute, read back. */
static dl_status grad_rows(logreg_engine *e, const size_t *idx, size_t n, const float *w, float b, float lambda,
                           float *grad_w, float *grad_b, double *loss)
{
    if (idx == NULL || n == 0 || w == NULL || grad_w == NULL || grad_b == NULL || loss == NULL)
        return dl_error_set(DL_ERR_ARG, "engine: a mini-batch needs indices (n=%zu), w and its outputs", n);
    for (size_t k = 0; k < n; k++) {
        if (idx[k] >= e->n)
            return dl_error_set(DL_ERR_RANGE, "engine: index %zu at position %zu is outside the %zu training rows",
                                idx[k], k, e->n);
    }
    if (e->observe != NULL)
        e->observe(e->observe_ctx, e->X, e->y, idx, n);
    DL_TRY(staging_free(e));
    DL_TRY(ensure_staging(e, n)); // room for n: only more indices than rows (repeats) need more
    DL_TRY(gather(e, idx, n));
    DL_TRY(stage_w(e, w));
    DL_TRY(compute(e, e->sX, e->sy, n, b, lambda));
    return read_grad(e, grad_w, grad_b, loss);
}

dl_status logreg_engine_grad_rows(logreg_engine *e, const size_t *idx, size_t n, const float *w, float b, float lambda,
                                  float *grad_w, float *grad_b, double *loss)
{
    dl_dev_stats before, after;
    e->calls++;
    dl_dev_stats_get(&before);
    dl_status st = grad_rows(e, idx, n, w, b, lambda, grad_w, grad_b, loss);
    dl_dev_stats_get(&after);
    if (e->step_io != NULL)
        dl_run_io_steps(e->step_io, &before, &after, 1); // what one step asks of the device
    return st;
}

dl_status logreg_engine_eval(logreg_engine *e, const float *X, const float *y, size_t n, const logreg_model *m,
                             double *loss, double *acc)
{
    if (m == NULL || m->d != e->d || X == NULL || y == NULL || n == 0 || loss == NULL || acc == NULL)
        return dl_error_set(DL_ERR_ARG, "engine: eval needs a model of %zu weights and rows", e->d);
    e->calls++;
    if (e->observe != NULL)
        e->observe(e->observe_ctx, X, y, NULL, n);
    const float *dX = NULL, *dy = NULL;
    DL_TRY(staging_free(e));
    DL_TRY(device_rows(e, X, y, n, &dX, &dy));
    DL_TRY(stage_w(e, m->w));
    DL_TRY(compute(e, dX, dy, n, m->b, 0.0f));
    readback *dout = e->dout;
    const readback *hout = e->hout;
    if (on_gpu(e)) // from the r the gradient left, into the block the loss comes back in
        DL_TRY(logreg_count_right_cuda(e->dev, e->dwork, dy, n, &dout->right));
    DL_TRY(dl_memcpy_d2h(e->dev, e->hout, e->dout, offsetof(readback, grad_b))); // the loss and the count: one wait
    *loss = hout->loss;
    if (!on_gpu(e))
        return logreg_accuracy(X, y, n, e->d, m, acc);
    *acc = (double)hout->right / (double)n;
    return DL_OK;
}

void logreg_engine_free(logreg_engine *e)
{
    if (e->dev != NULL) {
        for (int k = 0; k < e->n_sets; k++) {
            dl_free(e->dev, e->set[k].own_X);
            dl_free(e->dev, e->set[k].own_y);
        }
        dl_free(e->dev, e->sX);
        dl_free(e->dev, e->sy);
        dl_free(e->dev, e->didx);
        dl_host_free(e->dev, e->hidx);
        dl_free(e->dev, e->dw);
        dl_host_free(e->dev, e->hw);
        dl_free(e->dev, e->dout);
        dl_host_free(e->dev, e->hout);
        dl_free(e->dev, e->dwork);
        dl_event_destroy(e->dev, &e->staged);
    }
    free(e->work);
    memset(e, 0, sizeof *e);
}
