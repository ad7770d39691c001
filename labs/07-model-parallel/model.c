/* model.c — lab 07's tensor-parallel model, trained from your blocks
 * (kit.h), and the grader's check of them. Not a student file. */
#include <stdio.h> // snprintf
#include <string.h> // memset

#include "dl/fs.h" // dl_mkdir_p
#include "kit.h"

/* Layer l of ref: the whole layer (its W and b), as tp_shard reads it. */
static const dl_mlp_layer *layer(const dl_mlp *ref, int l)
{
    return &ref->layer[l];
}

dl_status tp_model_init(tp_model *M, dl_comm *c, const dl_device *dev, const dl_mlp *ref, size_t max_batch)
{
    memset(M, 0, sizeof *M);
    if (ref->n_layers % 2 != 0 || ref->n_layers / 2 > TP_MAX_BLOCKS)
        return dl_error_set(DL_ERR_ARG,
                            "a tensor-parallel model is blocks of two layers: %d layers (--hidden "
                            "takes an odd number of widths: 1, 3, 5 or 7)",
                            ref->n_layers);
    M->K = ref->n_layers / 2;
    M->max_batch = max_batch;
    M->classes = ref->layer[ref->n_layers - 1].out;
    dl_status st = DL_OK;
    for (int k = 0; k < M->K && st == DL_OK; k++) {
        const dl_mlp_layer *a = layer(ref, 2 * k), *z = layer(ref, 2 * k + 1);
        tp_block *b = &M->blk[k];
        st = tp_block_init(b, c, dev, a->in, a->out, z->out, max_batch);
        size_t counts[4] = {b->h * b->in, b->h, b->out * b->h, b->out};
        for (int j = 0; j < 4 && st == DL_OK; j++)
            st = kit_alloc(dev, &M->vel[k][j], counts[j]);
        if (st == DL_OK)
            st = tp_shard(b, a, z); // yours
        if (st == DL_OK)
            st = kit_alloc(dev, &M->x[k + 1], max_batch * b->out);
        if (st == DL_OK)
            st = kit_alloc(dev, &M->dx[k + 1], max_batch * b->out);
    }
    if (st == DL_OK)
        st = dl_layer_loss_init(&M->loss, dev, max_batch);
    if (st != DL_OK)
        tp_model_free(M);
    return st;
}

void tp_model_free(tp_model *M)
{
    for (int k = 0; k < M->K; k++) {
        const dl_device *dev = M->blk[k].dev;
        if (dev != NULL) {
            for (int j = 0; j < 4; j++)
                dl_free(dev, M->vel[k][j]);
            dl_free(dev, M->x[k + 1]);
            dl_free(dev, M->dx[k + 1]);
        }
        tp_block_free(&M->blk[k]);
    }
    dl_layer_loss_free(&M->loss);
    memset(M, 0, sizeof *M);
}

/* The logits of X (n rows) in M->x[K]: your forward, block by block, the ReLU between blocks. */
static dl_status forward(tp_model *M, const float *X, size_t n)
{
    M->x[0] = (float *)X;
    for (int k = 0; k < M->K; k++) {
        tp_block *b = &M->blk[k];
        DL_TRY(tp_forward(b, M->x[k], n, M->x[k + 1])); // yours
        if (k + 1 < M->K)
            DL_TRY(dl_layer_relu_mask(b->dev, M->x[k + 1], M->x[k + 1], n * b->out)); // ReLU in place: max(y, 0)
    }
    return DL_OK;
}

dl_status tp_model_step(tp_model *M, const float *X, const int32_t *y, size_t n, float lr, float mu, float wd,
                        double *loss)
{
    DL_TRY(forward(M, X, n));
    const dl_device *dev = M->blk[0].dev;
    size_t C = M->classes;
    // the loss's gradient at the logits, beside them on the device, as dl_mlp_loss leaves it
    DL_TRY(dl_memcpy_d2d(dev, M->dx[M->K], M->x[M->K], n * C * sizeof *M->x[M->K]));
    DL_TRY(dl_layer_xent(&M->loss, M->dx[M->K], y, n, C, 1.0f / (float)n, loss));
    for (int k = M->K - 1; k >= 0; k--) {
        tp_block *b = &M->blk[k];
        DL_TRY(tp_backward(b, M->x[k], n, M->dx[k + 1], k > 0 ? M->dx[k] : NULL)); // yours
        if (k > 0) // the ReLU between blocks: its output is block k's input
            DL_TRY(dl_layer_relu_mask(dev, M->dx[k], M->x[k], n * b->in));
    }
    for (int k = 0; k < M->K; k++) {
        tp_block *b = &M->blk[k];
        DL_TRY(dl_layer_sgd(dev, b->col.W, b->col.gW, M->vel[k][0], b->h * b->in, lr, mu, wd));
        DL_TRY(dl_layer_sgd(dev, b->col.b, b->col.gb, M->vel[k][1], b->h, lr, mu, 0));
        DL_TRY(dl_layer_sgd(dev, b->row.W, b->row.gW, M->vel[k][2], b->out * b->h, lr, mu, wd));
        DL_TRY(dl_layer_sgd(dev, b->row.b, b->row.gb, M->vel[k][3], b->out, lr, mu, 0));
    }
    return DL_OK;
}

dl_status tp_model_right(tp_model *M, const float *X, const int32_t *y, size_t n, double *right)
{
    DL_TRY(forward(M, X, n));
    return dl_layer_right(&M->loss, M->x[M->K], y, n, M->classes, right);
}

dl_status tp_model_diff(tp_model *M, const dl_mlp *ref, double *diff)
{
    double d = 0;
    dl_status st = DL_OK;
    for (int k = 0; k < M->K && st == DL_OK; k++) {
        tp_block *b = &M->blk[k], s;
        st = tp_block_init(&s, b->comm, b->dev, b->in, b->hidden, b->out, 1);
        if (st == DL_OK)
            st = tp_shard(&s, layer(ref, 2 * k), layer(ref, 2 * k + 1)); // yours, on the one-rank model
        if (st == DL_OK)
            st = kit_max_diff(b->dev, s.col.W, b->col.W, b->h * b->in, &d);
        if (st == DL_OK)
            st = kit_max_diff(b->dev, s.col.b, b->col.b, b->h, &d);
        if (st == DL_OK)
            st = kit_max_diff(b->dev, s.row.W, b->row.W, b->out * b->h, &d);
        if (st == DL_OK)
            st = kit_max_diff(b->dev, s.row.b, b->row.b, b->out, &d);
        tp_block_free(&s);
    }
    DL_TRY(st);
    DL_TRY(dl_comm_allreduce(M->blk[0].comm, &d, 1, DL_F64, DL_RED_MAX));
    *diff = d;
    return DL_OK;
}

int tp_model_allreduces(const tp_model *M)
{
    return 2 * M->K - 1;
}

uint64_t tp_model_bytes(const tp_model *M, size_t n)
{
    uint64_t bytes = 0;
    for (int k = 0; k < M->K; k++) {
        const tp_block *b = &M->blk[k];
        bytes += dl_ring_bytes(n * b->out, b->P, b->r, sizeof(float));
        if (k > 0)
            bytes += dl_ring_bytes(n * b->in, b->P, b->r, sizeof(float));
    }
    return bytes;
}

dl_status tp_selftest(dl_comm *c, const dl_device *dev, uint64_t seed, const char *dir)
{
    const size_t I = TP_CHECK_IN, O = TP_CHECK_OUT, n = TP_CHECK_ROWS;
    dl_mlp whole;
    tp_block b;
    memset(&b, 0, sizeof b);
    float host[TP_CHECK_ROWS * (TP_CHECK_IN + TP_CHECK_OUT)], *X = NULL, *dY = NULL, *Y = NULL, *dX = NULL;
    DL_TRY(tp_check_inputs(dev, seed, &whole, host, host + n * I));
    dl_status st = tp_block_init(&b, c, dev, I, TP_CHECK_HIDDEN, O, n);
    float **bufs[] = {&X, &dY, &Y, &dX};
    size_t counts[] = {n * I, n * O, n * O, n * I};
    for (int k = 0; k < 4 && st == DL_OK; k++)
        st = kit_alloc(dev, bufs[k], counts[k]);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, X, host, n * I * sizeof *X);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, dY, host + n * I, n * O * sizeof *dY);
    if (st == DL_OK)
        st = dl_mkdir_p(dir);
    if (st == DL_OK)
        st = tp_shard(&b, &whole.layer[0], &whole.layer[1]); // yours
    if (st == DL_OK)
        st = tp_forward(&b, X, n, Y); // yours
    if (st == DL_OK)
        st = tp_backward(&b, X, n, dY, dX); // yours
    const char *names[] = {"W1", "b1", "W2", "b2", "Y", "dX", "gW1", "gb1", "gW2", "gb2"};
    const float *arrays[] = {b.col.W, b.col.b, b.row.W, b.row.b, Y, dX, b.col.gW, b.col.gb, b.row.gW, b.row.gb};
    size_t rows[] = {b.h, 1, O, 1, n, n, b.h, 1, O, 1}, cols[] = {I, b.h, b.h, O, O, I, I, b.h, b.h, O};
    for (int k = 0; k < 10 && st == DL_OK; k++)
        st = kit_dump(dir, b.r, names[k], dev, arrays[k], rows[k], cols[k]);
    for (int k = 0; k < 4; k++)
        dl_free(dev, *bufs[k]);
    tp_block_free(&b);
    dl_mlp_free(&whole);
    return st;
}

dl_status tp_model_dump(const tp_model *M, const char *dir)
{
    DL_TRY(dl_mkdir_p(dir));
    for (int k = 0; k < M->K; k++) {
        const tp_block *b = &M->blk[k];
        char name[4][16];
        const char *what[4] = {"W1", "b1", "W2", "b2"};
        for (int j = 0; j < 4; j++)
            snprintf(name[j], sizeof name[j], "b%d_%s", k, what[j]);
        DL_TRY(kit_dump(dir, b->r, name[0], b->dev, b->col.W, b->h, b->in));
        DL_TRY(kit_dump(dir, b->r, name[1], b->dev, b->col.b, 1, b->h));
        DL_TRY(kit_dump(dir, b->r, name[2], b->dev, b->row.W, b->out, b->h));
        DL_TRY(kit_dump(dir, b->r, name[3], b->dev, b->row.b, 1, b->out));
    }
    return DL_OK;
}
