/* batch.c — rows of a host dataset staged for the model. See dl/batch.h. */
#include "dl/batch.h"

#include <stdint.h> // INT32_MAX
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

#include "backend.h" // dl_cuda_gather_rows_

static int on_gpu(const dl_batch *b)
{
    return b->dev->kind == DL_DEVICE_CUDA;
}

dl_status dl_batch_create(dl_batch *b, const dl_device *dev, size_t cap, size_t d)
{
    memset(b, 0, sizeof *b);
    if (dev == NULL || cap == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "batch: room for %zu rows of %zu features; expected both > 0 and a device", cap,
                            d);
    b->dev = dev;
    b->cap = cap;
    b->d = d;
    b->hX = malloc(cap * d * sizeof *b->hX);
    b->hy = malloc(cap * sizeof *b->hy);
    dl_status st = b->hX && b->hy ? DL_OK : dl_error_set(DL_ERR_NOMEM, "batch: out of memory for %zu rows", cap);
    if (st == DL_OK && on_gpu(b))
        st = dl_malloc(dev, (void **)&b->dX, cap * d * sizeof *b->dX);
    if (st == DL_OK && on_gpu(b))
        st = dl_malloc(dev, (void **)&b->dy, cap * sizeof *b->dy);
    if (st != DL_OK)
        dl_batch_free(b);
    return st;
}

void dl_batch_free(dl_batch *b)
{
    if (b->dev != NULL) {
        dl_free(b->dev, b->dX);
        dl_free(b->dev, b->dy);
        if (b->hidx != NULL)
            dl_event_destroy(b->dev, &b->idx_copied);
        dl_host_free(b->dev, b->hidx);
        dl_free(b->dev, b->didx);
    }
    free(b->hX);
    free(b->hy);
    memset(b, 0, sizeof *b);
}

static dl_status check(dl_batch *b, const dl_dataset *src, size_t n)
{
    b->n = 0;
    b->X = NULL;
    b->y = NULL;
    if (n == 0 || n > b->cap)
        return dl_error_set(DL_ERR_ARG, "batch: %zu rows; expected 1 to %zu", n, b->cap);
    if (src->d != b->d)
        return dl_error_set(DL_ERR_ARG, "batch: rows of %zu features into a batch of %zu", src->d, b->d);
    return DL_OK;
}

/* X (n, d) and y (n,) on the host: copied onto the device on CUDA, else used as they are. */
static dl_status stage(dl_batch *b, const float *X, const int32_t *y, size_t n)
{
    if (on_gpu(b)) {
        DL_TRY(dl_memcpy_h2d(b->dev, b->dX, X, n * b->d * sizeof *X));
        DL_TRY(dl_memcpy_h2d(b->dev, b->dy, y, n * sizeof *y));
        X = b->dX;
        y = b->dy;
    }
    b->X = X;
    b->y = y;
    b->n = n;
    return DL_OK;
}

dl_status dl_batch_gather(dl_batch *b, const dl_dataset *src, const size_t *idx, size_t n)
{
    DL_TRY(check(b, src, n));
    size_t d = b->d;
    for (size_t k = 0; k < n; k++) {
        if (idx[k] >= src->n)
            return dl_error_set(DL_ERR_RANGE, "batch: index %zu at position %zu is outside the %zu rows", idx[k], k,
                                src->n);
        memcpy(b->hX + k * d, src->X + idx[k] * d, d * sizeof *b->hX);
        b->hy[k] = src->y[idx[k]];
    }
    return stage(b, b->hX, b->hy, n);
}

dl_status dl_batch_range(dl_batch *b, const dl_dataset *src, size_t first, size_t n)
{
    DL_TRY(check(b, src, n));
    if (first > src->n || n > src->n - first)
        return dl_error_set(DL_ERR_ARG, "batch: rows %zu to %zu of a set of %zu", first, first + n - 1, src->n);
    return stage(b, src->X + first * b->d, src->y + first, n);
}

// ---- rows resident on the device ----

void dl_devset_free(dl_devset *s)
{
    if (s->dev != NULL) {
        dl_free(s->dev, s->own_X);
        dl_free(s->dev, s->own_y);
        dl_free(s->dev, s->order);
    }
    free(s->horder);
    memset(s, 0, sizeof *s);
}

/* Room for an order of n rows (kept when there is). */
static dl_status grow_order(dl_devset *s, size_t n)
{
    if (n <= s->order_cap)
        return DL_OK;
    int32_t *h = malloc(n * sizeof *h), *d = NULL;
    if (h == NULL)
        return dl_error_set(DL_ERR_NOMEM, "devset: out of memory for an order of %zu rows", n);
    dl_status st = dl_malloc(s->dev, (void **)&d, n * sizeof *d);
    if (st != DL_OK) {
        free(h);
        return st;
    }
    dl_free(s->dev, s->order);
    free(s->horder);
    s->order = d;
    s->horder = h;
    s->order_cap = n;
    s->order_n = 0;
    return DL_OK;
}

dl_status dl_devset_make(dl_devset *s, const dl_device *dev, const dl_dataset *src, size_t first, size_t n)
{
    memset(s, 0, sizeof *s);
    if (dev == NULL || src == NULL || n == 0 || first > src->n || n > src->n - first)
        return dl_error_set(DL_ERR_ARG, "devset: rows %zu to %zu of a set of %zu rows", first, first + n - 1,
                            src != NULL ? src->n : 0);
    if (n > (size_t)INT32_MAX)
        return dl_error_set(DL_ERR_ARG, "devset: %zu rows; at most 2^31 - 1 (indices are int32 on the device)", n);
    s->dev = dev;
    s->n = n;
    s->d = src->d;
    // room for an order of every row (a sampler's epoch on one rank): made now, not regrown
    // by the epochs, so a copy of the struct keeps a valid order buffer
    dl_status ost = grow_order(s, n);
    if (ost != DL_OK) {
        dl_devset_free(s);
        return ost;
    }
    const float *X = src->X + first * src->d;
    const int32_t *y = src->y + first;
    size_t xb = n * src->d * sizeof *X, yb = n * sizeof *y;
    if (dev->kind != DL_DEVICE_CUDA) { // the rows already are where the model reads them
        dl_dev_count_upload(xb);
        dl_dev_count_upload(yb);
        s->X = X;
        s->y = y;
        return DL_OK;
    }
    dl_status st = dl_malloc(dev, (void **)&s->own_X, xb);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&s->own_y, yb);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, s->own_X, X, xb);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, s->own_y, y, yb);
    if (st != DL_OK) {
        dl_devset_free(s);
        return st;
    }
    s->X = s->own_X;
    s->y = s->own_y;
    return DL_OK;
}

dl_status dl_devset_order(dl_devset *s, const size_t *idx, size_t n)
{
    if (s->dev == NULL || n == 0 || idx == NULL)
        return dl_error_set(DL_ERR_ARG, "devset: an order of %zu rows for %s", n,
                            s->dev == NULL ? "a devset never made" : "it");
    for (size_t k = 0; k < n; k++)
        if (idx[k] >= s->n)
            return dl_error_set(DL_ERR_RANGE, "devset: index %zu at position %zu of the order is outside the %zu rows",
                                idx[k], k, s->n);
    DL_TRY(grow_order(s, n));
    for (size_t k = 0; k < n; k++)
        s->horder[k] = (int32_t)idx[k];
    s->order_n = 0;
    DL_TRY(dl_memcpy_h2d(s->dev, s->order, s->horder, n * sizeof *s->horder));
    s->order_n = n;
    return DL_OK;
}

/* The checks take and rows share. */
static dl_status check_set(dl_batch *b, const dl_devset *s, size_t first, size_t n, size_t len, const char *what)
{
    b->n = 0;
    b->X = NULL;
    b->y = NULL;
    if (n == 0 || n > b->cap)
        return dl_error_set(DL_ERR_ARG, "batch: %zu rows; expected 1 to %zu", n, b->cap);
    if (s->dev == NULL || s->d != b->d || s->dev->kind != b->dev->kind)
        return dl_error_set(DL_ERR_ARG, "batch: a devset of %zu features on %s for a batch of %zu on %s", s->d,
                            s->dev != NULL ? dl_device_describe(s->dev) : "no device", b->d,
                            dl_device_describe(b->dev));
    if (first > len || n > len - first)
        return dl_error_set(DL_ERR_ARG, "batch: %s %zu to %zu of %zu", what, first, first + n - 1, len);
    return DL_OK;
}

dl_status dl_batch_take(dl_batch *b, const dl_devset *s, size_t at, size_t n)
{
    DL_TRY(check_set(b, s, at, n, s->order_n, "positions of the order"));
    size_t d = b->d;
    dl_dev_count_launch((double)n * (2.0 * 4.0 * (double)d + 4.0 + 4.0 + 4.0)); // rows read and written, labels, order
    if (on_gpu(b)) {
        DL_TRY(dl_cuda_gather_rows_(b->dev, b->dX, b->dy, s->X, s->y, d, s->order + at, n));
        b->X = b->dX;
        b->y = b->dy;
    } else {
        const int32_t *idx = s->horder + at; // the CPU's order is the host's copy
        for (size_t k = 0; k < n; k++) {
            memcpy(b->hX + k * d, s->X + (size_t)idx[k] * d, d * sizeof *b->hX);
            b->hy[k] = s->y[idx[k]];
        }
        b->X = b->hX;
        b->y = b->hy;
    }
    b->n = n;
    return DL_OK;
}

dl_status dl_batch_rows(dl_batch *b, const dl_devset *s, size_t first, size_t n)
{
    DL_TRY(check_set(b, s, first, n, s->n, "rows"));
    b->X = s->X + first * b->d;
    b->y = s->y + first;
    b->n = n;
    return DL_OK;
}

dl_status dl_batch_take_idx(dl_batch *b, const dl_devset *s, const size_t *idx, size_t n)
{
    DL_TRY(check_set(b, s, 0, n, n, "indices"));
    if (idx == NULL)
        return dl_error_set(DL_ERR_ARG, "batch: %zu rows from NULL indices", n);
    for (size_t k = 0; k < n; k++)
        if (idx[k] >= s->n)
            return dl_error_set(DL_ERR_RANGE, "batch: index %zu at position %zu is outside the %zu rows", idx[k], k,
                                s->n);
    if (b->hidx == NULL) { // made once, at the first call
        DL_TRY(dl_host_alloc(b->dev, (void **)&b->hidx, b->cap * sizeof *b->hidx));
        dl_status st = dl_malloc(b->dev, (void **)&b->didx, b->cap * sizeof *b->didx);
        if (st == DL_OK)
            st = dl_event_create(b->dev, &b->idx_copied);
        if (st != DL_OK) {
            dl_host_free(b->dev, b->hidx), dl_free(b->dev, b->didx);
            b->hidx = b->didx = NULL;
            return st;
        }
    } else if (!dl_event_done(b->dev, &b->idx_copied)) { // the last upload still reads the staging
        DL_TRY(dl_event_sync(b->dev, &b->idx_copied));
    }
    for (size_t k = 0; k < n; k++)
        b->hidx[k] = (int32_t)idx[k];
    DL_TRY(dl_memcpy_h2d_async(b->dev, b->didx, b->hidx, n * sizeof *b->hidx));
    DL_TRY(dl_event_record(b->dev, &b->idx_copied, NULL));
    size_t d = b->d;
    dl_dev_count_launch((double)n *
                        (2.0 * 4.0 * (double)d + 4.0 + 4.0 + 4.0)); // rows read and written, labels, indices
    if (on_gpu(b)) {
        DL_TRY(dl_cuda_gather_rows_(b->dev, b->dX, b->dy, s->X, s->y, d, b->didx, n));
        b->X = b->dX;
        b->y = b->dy;
    } else {
        for (size_t k = 0; k < n; k++) {
            memcpy(b->hX + k * d, s->X + idx[k] * d, d * sizeof *b->hX);
            b->hy[k] = s->y[idx[k]];
        }
        b->X = b->hX;
        b->y = b->hy;
    }
    b->n = n;
    return DL_OK;
}
