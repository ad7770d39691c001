/* kit.c — lab 07's block buffers (kit.h). Not a student file. */
#include "kit.h"

#include <stdlib.h> // malloc, free
#include "dl/rng.h" // dl_rng_uniform
#include <string.h> // memset

static dl_status alloc(const dl_device *dev, float **p, size_t count)
{
    DL_TRY(dl_malloc(dev, (void **)p, count * sizeof **p));
    return dl_memset0(dev, *p, count * sizeof **p);
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
        st = alloc(dev, bufs[k], counts[k] > 0 ? counts[k] : 1);
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
