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

/* kit_cuda.cu: dpred[i] = the argmax of x_i·W_c + b_c over c (the first of
 * equal maxima) for the n device rows dX, the logits through dl_gemm into dZ
 * (n, C); queued on dev's stream, no wait. */
dl_status softmax_predict_cuda(const dl_device *dev, const float *dX, size_t n, size_t d, int C, const float *dW,
                               const float *db, float *dZ, int32_t *dpred);

#ifndef DL_HAVE_CUDA
/* Without nvcc the student's softmax_cuda.cu and kit_cuda.cu are not compiled; these stand in. */
dl_status softmax_loss_grad_cuda(const dl_device *dev, const float *dX, const int32_t *dy, size_t n, size_t d, int C,
                                 const float *dW, const float *db, float lambda, float *dgW, float *dgb, double *dloss,
                                 float *dwork)
{
    (void)dev, (void)dX, (void)dy, (void)n, (void)d, (void)C, (void)dW, (void)db, (void)lambda;
    (void)dgW, (void)dgb, (void)dloss, (void)dwork;
    return dl_error_set(DL_ERR_NO_CUDA, "softmax_loss_grad_cuda: this build has no CUDA");
}

dl_status softmax_predict_cuda(const dl_device *dev, const float *dX, size_t n, size_t d, int C, const float *dW,
                               const float *db, float *dZ, int32_t *dpred)
{
    (void)dev, (void)dX, (void)n, (void)d, (void)C, (void)dW, (void)db, (void)dZ, (void)dpred;
    return dl_error_set(DL_ERR_NO_CUDA, "softmax_predict_cuda: this build has no CUDA");
}
#endif

static int on_gpu(const softmax_engine *e)
{
    return e->dev->kind == DL_DEVICE_CUDA;
}

/* Device room for n rows from the host (sX, sy) and for the gradient's
 * workspace of n rows (dwork), at least the resident set's (GPU only). */
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

/* Room for the predictions of n rows: their labels (and on a GPU their logits). */
static dl_status ensure_predictions(softmax_engine *e, size_t n)
{
    if (n <= e->p_cap)
        return DL_OK;
    dl_free(e->dev, e->dZ);
    dl_free(e->dev, e->dpred);
    e->dZ = NULL;
    e->dpred = NULL;
    e->p_cap = 0;
    if (on_gpu(e))
        DL_TRY(dl_malloc(e->dev, (void **)&e->dZ, n * (size_t)e->C * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->dpred, n * sizeof(int32_t)));
    e->p_cap = n;
    return DL_OK;
}

/* The model where it computes (dW: W then b) and what a step reads back (dg:
 * gW, gb, then the loss, a double at an even float offset, so 8-byte aligned
 * in an allocation that is), with their host staging. */
static dl_status model_buffers(softmax_engine *e)
{
    size_t wb = e->d * (size_t)e->C + (size_t)e->C; // W then b
    e->g_loss = (wb + 1) / 2 * 2;
    e->g_floats = e->g_loss + sizeof(double) / sizeof(float);
    DL_TRY(dl_malloc(e->dev, (void **)&e->dW, wb * sizeof(float)));
    DL_TRY(dl_malloc(e->dev, (void **)&e->dg, e->g_floats * sizeof(float)));
    DL_TRY(dl_host_alloc(e->dev, (void **)&e->hW, wb * sizeof(float)));
    DL_TRY(dl_host_alloc(e->dev, (void **)&e->hg, e->g_floats * sizeof(float)));
    DL_TRY(dl_event_create(e->dev, &e->W_sent));
    e->dloss = (double *)(void *)(e->dg + e->g_loss);
    return on_gpu(e) ? ensure_staging(e, e->n) : DL_OK;
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
    const dl_dataset rows = {.n = n, .d = d, .X = (float *)X, .y = (int32_t *)y, .n_classes = C};
    dl_status st = dl_devset_make(&e->set, dev, &rows, 0, n); // on a GPU: the set's one upload
    if (st == DL_OK)
        st = model_buffers(e);
    if (st != DL_OK)
        softmax_engine_free(e);
    return st;
}

dl_status softmax_engine_hold(softmax_engine *e, const float *X, const int32_t *y, size_t n)
{
    if (X == NULL || y == NULL || n == 0)
        return dl_error_set(DL_ERR_ARG, "engine: hold needs rows (n=%zu)", n);
    if (e->n_held == SOFTMAX_ENGINE_HELD)
        return dl_error_set(DL_ERR_ARG, "engine: %d sets are held already", SOFTMAX_ENGINE_HELD);
    const dl_dataset rows = {.n = n, .d = e->d, .X = (float *)X, .y = (int32_t *)y, .n_classes = e->C};
    DL_TRY(dl_devset_make(&e->held[e->n_held].rows, e->dev, &rows, 0, n)); // on a GPU: their one upload
    e->held[e->n_held].X = X;
    e->held[e->n_held].n = n;
    e->n_held++;
    return ensure_predictions(e, n); // made now, not while the model is scored
}

/* W and b up to dW through the staging hW, without a wait. The last copy
 * from hW has run in practice (every call ends in a copy back that waits for
 * the device); W_sent makes sure of it after a call that stopped early. */
static dl_status model_down(softmax_engine *e, const float *W, const float *b)
{
    size_t wd = e->d * (size_t)e->C, C = (size_t)e->C;
    if (!dl_event_done(e->dev, &e->W_sent))
        DL_TRY(dl_event_sync(e->dev, &e->W_sent));
    memcpy(e->hW, W, wd * sizeof *W);
    memcpy(e->hW + wd, b, C * sizeof *b);
    DL_TRY(dl_memcpy_h2d_async(e->dev, e->dW, e->hW, (wd + C) * sizeof *W));
    return dl_event_record(e->dev, &e->W_sent, NULL);
}

/* The CPU's loss and gradient on host rows, with the engine's workspace. */
static dl_status grad_on_cpu(softmax_engine *e, const float *X, const int32_t *y, size_t n, const float *W,
                             const float *b, float lambda, float *gW, float *gb, double *loss)
{
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

/* One gradient call on rows (dX, dy, n) where the model computes: W and b
 * up, your loss and gradient into dg, and gW, gb and the loss back in one
 * copy — the call's only wait for the device. */
static dl_status grad_where_computed(softmax_engine *e, const float *dX, const int32_t *dy, size_t n, const float *W,
                                     const float *b, float lambda, float *gW, float *gb, double *loss)
{
    size_t wd = e->d * (size_t)e->C, C = (size_t)e->C;
    DL_TRY(model_down(e, W, b));
    if (on_gpu(e))
        DL_TRY(softmax_loss_grad_cuda(e->dev, dX, dy, n, e->d, e->C, e->dW, e->dW + wd, lambda, e->dg, e->dg + wd,
                                      e->dloss, e->dwork));
    else
        DL_TRY(grad_on_cpu(e, dX, dy, n, e->dW, e->dW + wd, lambda, e->dg, e->dg + wd, e->dloss));
    DL_TRY(dl_memcpy_d2h(e->dev, e->hg, e->dg, e->g_floats * sizeof(float))); // waits for the device
    memcpy(gW, e->hg, wd * sizeof *gW);
    memcpy(gb, e->hg + wd, C * sizeof *gb);
    memcpy(loss, e->hg + e->g_loss, sizeof *loss);
    return DL_OK;
}

dl_status softmax_engine_grad(softmax_engine *e, const float *X, const int32_t *y, size_t n, const float *W,
                              const float *b, float lambda, float *gW, float *gb, double *loss)
{
    e->calls++;
    const float *dX = X;
    const int32_t *dy = y;
    if (X == e->X && y == e->y && n == e->n) { // the resident set: no copy
        dX = e->set.X;
        dy = e->set.y;
    } else if (on_gpu(e)) { // other rows: staged
        DL_TRY(ensure_staging(e, n));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
        DL_TRY(dl_memcpy_h2d(e->dev, e->sy, y, n * sizeof(int32_t)));
        dX = e->sX;
        dy = e->sy;
    } else { // on the CPU the rows are where the model reads them: counted as the GPU's two copies
        dl_dev_count_upload(n * e->d * sizeof(float));
        dl_dev_count_upload(n * sizeof(int32_t));
    }
    return grad_where_computed(e, dX, dy, n, W, b, lambda, gW, gb, loss);
}

dl_status softmax_engine_grad_rows(softmax_engine *e, const size_t *idx, size_t n, const float *W, const float *b,
                                   float lambda, float *gW, float *gb, double *loss)
{
    e->calls++;
    if (on_gpu(e)) // the workspace: only more indices than rows (repeats) need more than the set's
        DL_TRY(ensure_staging(e, n));
    if (n > e->batch.cap) { // room for the largest batch asked for (the first, in practice)
        dl_batch_free(&e->batch);
        DL_TRY(dl_batch_create(&e->batch, e->dev, n, e->d));
    }
    DL_TRY(dl_batch_take_idx(&e->batch, &e->set, idx, n)); // gathered where the rows live
    return grad_where_computed(e, e->batch.X, e->batch.y, n, W, b, lambda, gW, gb, loss);
}

/* Where the host rows (X, n) are for the model: a held set, the resident
 * set (on the CPU both point at the host rows), or a staged copy (on the
 * CPU the rows themselves, counted as the GPU's copy). */
static dl_status rows_for_model(softmax_engine *e, const float *X, size_t n, const float **dX)
{
    for (int k = 0; k < e->n_held; k++) {
        if (X == e->held[k].X && n == e->held[k].n) {
            *dX = e->held[k].rows.X;
            return DL_OK;
        }
    }
    if (X == e->X && n == e->n) {
        *dX = e->set.X;
        return DL_OK;
    }
    *dX = X;
    if (!on_gpu(e)) {
        dl_dev_count_upload(n * e->d * sizeof(float));
        return DL_OK;
    }
    DL_TRY(ensure_staging(e, n));
    DL_TRY(dl_memcpy_h2d(e->dev, e->sX, X, n * e->d * sizeof(float)));
    *dX = e->sX;
    return DL_OK;
}

dl_status softmax_engine_predict(softmax_engine *e, const float *X, size_t n, const softmax_model *m, int32_t *pred)
{
    if (e == NULL || X == NULL || m == NULL || pred == NULL || m->d != e->d || m->C != e->C)
        return dl_error_set(DL_ERR_ARG, "engine: predict needs rows, a model of the engine's shape and room");
    if (n == 0)
        return DL_OK;
    size_t wd = e->d * (size_t)e->C;
    const float *dX;
    DL_TRY(rows_for_model(e, X, n, &dX));
    DL_TRY(ensure_predictions(e, n));
    DL_TRY(model_down(e, m->W, m->b));
    dl_dev_count_launch(4.0 * (double)n * (2.0 * (double)e->C + 1.0)); // the argmax pass: logits read, labels written
    if (on_gpu(e)) {
        DL_TRY(softmax_predict_cuda(e->dev, dX, n, e->d, e->C, e->dW, e->dW + wd, e->dZ, e->dpred));
    } else {
        const softmax_model here = {e->d, e->C, e->dW, e->dW + wd}; // the model's copy beside the rows
        DL_TRY(softmax_predict(dX, n, &here, e->dpred));
    }
    return dl_memcpy_d2h(e->dev, pred, e->dpred, n * sizeof *pred); // the labels: one copy, one wait
}

void softmax_engine_free(softmax_engine *e)
{
    if (e->dev != NULL) {
        dl_devset_free(&e->set);
        dl_batch_free(&e->batch);
        for (int k = 0; k < e->n_held; k++)
            dl_devset_free(&e->held[k].rows);
        dl_free(e->dev, e->sX);
        dl_free(e->dev, e->sy);
        dl_free(e->dev, e->dW);
        dl_free(e->dev, e->dg);
        dl_free(e->dev, e->dwork);
        dl_free(e->dev, e->dZ);
        dl_free(e->dev, e->dpred);
        dl_host_free(e->dev, e->hW);
        dl_host_free(e->dev, e->hg);
        dl_event_destroy(e->dev, &e->W_sent);
    }
    free(e->work);
    memset(e, 0, sizeof *e);
}
