/* batch.c — rows of a host dataset staged for the model. See dl/batch.h. */
#include "dl/batch.h"

#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, memset

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
