/* kit.c — lab 07's block buffers (kit.h). Not a student file. */
#include "kit.h"

#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/data.h" // dl_npy_write_f32
#include "dl/rng.h" // dl_rng_uniform

dl_status kit_alloc(const dl_device *dev, float **p, size_t count)
{
    size_t bytes = (count > 0 ? count : 1) * sizeof **p;
    DL_TRY(dl_malloc(dev, (void **)p, bytes));
    return dl_memset0(dev, *p, bytes);
}

dl_status kit_max_diff(const dl_device *dev, const float *a, const float *b, size_t count, double *d)
{
    float *h = malloc(2 * count * sizeof *h + 1);
    if (h == NULL)
        return dl_error_set(DL_ERR_NOMEM, "a comparison of %zu values", count);
    dl_status st = dl_memcpy_d2h(dev, h, a, count * sizeof *h);
    st = st == DL_OK ? dl_memcpy_d2h(dev, h + count, b, count * sizeof *h) : st;
    for (size_t i = 0; i < count && st == DL_OK; i++) {
        double e = fabs((double)h[i] - (double)h[count + i]);
        *d = e > *d || e != e ? e : *d;
    }
    free(h);
    return st;
}

dl_status kit_dump(const char *dir, int r, const char *name, const dl_device *dev, const float *a, size_t rows,
                   size_t cols)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/r%d_%s.npy", dir, r, name);
    if (dev == NULL)
        return dl_npy_write_f32(path, a, rows, cols);
    float *h = malloc(rows * cols * sizeof *h + 1);
    if (h == NULL)
        return dl_error_set(DL_ERR_NOMEM, "%s", path);
    dl_status st = dl_memcpy_d2h(dev, h, a, rows * cols * sizeof *h);
    st = st == DL_OK ? dl_npy_write_f32(path, h, rows, cols) : st;
    free(h);
    return st;
}

dl_status tp_block_init(tp_block *b, dl_comm *c, const dl_device *dev, size_t in, size_t hidden, size_t out,
                        size_t max_batch)
{
    memset(b, 0, sizeof *b);
    int P = c != NULL ? dl_comm_size(c) : 1, r = c != NULL ? dl_comm_rank(c) : 0;
    if (in == 0 || out == 0 || max_batch == 0 || hidden < (size_t)P)
        return dl_error_set(DL_ERR_ARG,
                            "a block of %zu -> %zu -> %zu on %d ranks, %zu rows: every size >= 1 and "
                            "at least one hidden unit per rank",
                            in, hidden, out, P, max_batch);
    *b = (tp_block){.comm = c,
                    .dev = dev,
                    .P = P,
                    .r = r,
                    .in = in,
                    .hidden = hidden,
                    .out = out,
                    .h0 = dl_ring_offset(hidden, P, r),
                    .max_batch = max_batch};
    b->h = dl_ring_offset(hidden, P, r + 1) - b->h0;
    b->col.in = in, b->col.out = b->h, b->row.in = b->h, b->row.out = out;
    size_t wide = in > out ? in : out, seg = dl_ring_offset(max_batch * wide, P, 1);
    dl_status st = DL_OK;
    float **bufs[] = {&b->col.W,  &b->col.b,  &b->col.gW, &b->col.gb, &b->row.W, &b->row.b,
                      &b->row.gW, &b->row.gb, &b->act,    &b->delta,  &b->ones,  &b->scratch};
    size_t counts[] = {b->h * in,        b->h,      b->h * in, b->h, out * b->h, out, out * b->h, out, max_batch * b->h,
                       max_batch * b->h, max_batch, seg};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0] && st == DL_OK; k++)
        st = kit_alloc(dev, bufs[k], counts[k]);
    float *ones = st == DL_OK ? malloc(max_batch * sizeof *ones) : NULL;
    if (st == DL_OK && ones == NULL)
        st = dl_error_set(DL_ERR_NOMEM, "a block's ones: %zu rows", max_batch);
    for (size_t i = 0; ones != NULL && i < max_batch; i++)
        ones[i] = 1.0f;
    if (ones != NULL)
        st = dl_memcpy_h2d(dev, b->ones, ones, max_batch * sizeof *ones);
    free(ones);
    if (st != DL_OK)
        tp_block_free(b);
    return st;
}

void tp_block_free(tp_block *b)
{
    if (b->dev != NULL) {
        float *bufs[] = {b->col.W,  b->col.b,  b->col.gW, b->col.gb, b->row.W, b->row.b,
                         b->row.gW, b->row.gb, b->act,    b->delta,  b->ones,  b->scratch};
        for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
            dl_free(b->dev, bufs[k]);
    }
    memset(b, 0, sizeof *b);
}

dl_status tp_check_inputs(const dl_device *dev, uint64_t seed, dl_mlp *whole, float *X, float *dY)
{
    const size_t I = TP_CHECK_IN, H = TP_CHECK_HIDDEN, O = TP_CHECK_OUT, n = TP_CHECK_ROWS;
    size_t sizes[3] = {I, H, O};
    float bias[TP_CHECK_HIDDEN + TP_CHECK_OUT];
    dl_rng g;
    dl_rng_seed(&g, seed, 7);
    for (size_t i = 0; i < n * I; i++)
        X[i] = (float)(2 * dl_rng_uniform(&g) - 1);
    for (size_t i = 0; i < n * O; i++)
        dY[i] = (float)(2 * dl_rng_uniform(&g) - 1);
    for (size_t i = 0; i < H + O; i++) // not zero, so that where and how often a bias is added shows
        bias[i] = (float)(dl_rng_uniform(&g) - 0.5);
    DL_TRY(dl_mlp_create(whole, dev, sizes, 3, n, seed));
    dl_status st = dl_memcpy_h2d(dev, whole->layer[0].b, bias, H * sizeof *bias);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, whole->layer[1].b, bias + H, O * sizeof *bias);
    if (st != DL_OK)
        dl_mlp_free(whole);
    return st;
}
