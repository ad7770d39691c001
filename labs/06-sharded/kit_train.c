/* kit_train.c — lab 06's training glue (kit.h): DDP's step, FSDP's
 * evaluation on every rank, and FSDP's final parameters put together by the
 * kit from every rank's shards. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // NAN
#include <stdlib.h> // malloc, free

#include "kit.h"

dl_status kit_ddp_step(dl_comm *c, dl_mlp *m, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    for (size_t at = 0; at < m->n_params; at += KIT_DDP_BUCKET) // in buckets: the library's scratch is one's
        DL_TRY(dl_comm_allreduce(c, m->grads + at,
                                 m->n_params - at < KIT_DDP_BUCKET ? m->n_params - at : KIT_DDP_BUCKET, DL_F32,
                                 DL_RED_AVG));
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}

dl_status kit_eval_every_rank(dl_mlp *m, const dl_devset *set, size_t chunk, double *acc)
{
    for (size_t at = 0; at < set->n; at += chunk) {
        size_t k = set->n - at < chunk ? set->n - at : chunk;
        DL_TRY(dl_mlp_count_right(m, set->X + at * set->d, set->y + at, k));
    }
    double right = 0;
    DL_TRY(dl_mlp_take_right(m, &right));
    *acc = set->n > 0 ? right / (double)set->n : 0;
    return DL_OK;
}

dl_status kit_fsdp_keep(const dl_mlp *m, const fsdp_state *f, kit_shards *k)
{
    size_t total = 0;
    for (int l = 0; l < m->n_layers; l++) {
        const fsdp_layer *F = &f->layer[l];
        if (F->count > m->layer[l].count || F->offset > m->layer[l].count - F->count || (F->count > 0 && !F->param))
            return dl_error_set(DL_ERR_ARG, "fsdp_state: layer %d's shard [%zu, +%zu) does not lie in its %zu elements",
                                l, F->offset, F->count, m->layer[l].count);
        k->offset[l] = F->offset, k->count[l] = F->count;
        total += F->count;
    }
    k->v = malloc((total ? total : 1) * sizeof *k->v);
    if (k->v == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu parameters", total);
    size_t at = 0;
    for (int l = 0; l < m->n_layers; at += k->count[l], l++)
        if (k->count[l] > 0)
            DL_TRY(dl_memcpy_d2h(m->dev, k->v + at, f->layer[l].param, k->count[l] * sizeof *k->v));
    return DL_OK;
}

void kit_shards_free(kit_shards *k)
{
    free(k->v);
    *k = (kit_shards){{0}, {0}, NULL};
}

dl_status kit_layer_whole(dl_comm *c, const dl_device *dev, size_t n, size_t offset, size_t count, const float *shard,
                          float *whole)
{
    int P = dl_comm_size(c);
    double where[2] = {(double)offset, (double)count}, *all = malloc(2 * (size_t)P * sizeof *all), *wd = NULL;
    float *pad_buf = NULL, *recv = NULL;
    dl_status st = all != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory for the shards' places");
    // every rank's (offset, count), on the device where the transport reads (NCCL on GPUs)
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&wd, 2 * ((size_t)P + 1) * sizeof *wd);
    if (st == DL_OK)
        st = dl_memcpy_h2d(dev, wd, where, sizeof where);
    if (st == DL_OK)
        st = dl_comm_allgather(c, wd, wd + 2, 2, DL_F64);
    if (st == DL_OK)
        st = dl_memcpy_d2h(dev, all, wd + 2, 2 * (size_t)P * sizeof *all);
    size_t pad = 1;
    for (int s = 0; s < P && st == DL_OK; s++)
        pad = all[2 * s + 1] > (double)pad ? (size_t)all[2 * s + 1] : pad;
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&pad_buf, pad * sizeof *pad_buf);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&recv, pad * (size_t)P * sizeof *recv);
    if (st == DL_OK)
        st = dl_memset0(dev, pad_buf, pad * sizeof *pad_buf);
    if (st == DL_OK && count > 0)
        st = dl_memcpy_d2d(dev, pad_buf, shard, count * sizeof *pad_buf);
    if (st == DL_OK)
        st = dl_comm_allgather(c, pad_buf, recv, pad, DL_F32);
    for (int s = 0; s < P && st == DL_OK; s++) { // each shard where its owner said it lies
        size_t off = (size_t)all[2 * s], cnt = (size_t)all[2 * s + 1];
        if (cnt > 0 && off <= n && cnt <= n - off)
            st = dl_memcpy_d2d(dev, whole + off, recv + (size_t)s * pad, cnt * sizeof *whole);
    }
    dl_free(dev, wd), dl_free(dev, pad_buf), dl_free(dev, recv), free(all);
    return st;
}

dl_status kit_fsdp_params(dl_comm *c, const dl_mlp *m, const kit_shards *k, float *host)
{
    for (size_t i = 0; i < m->n_params; i++)
        host[i] = NAN; // what no shard covers
    size_t widest = 1, at = 0;
    for (int l = 0; l < m->n_layers; l++)
        widest = m->layer[l].count > widest ? m->layer[l].count : widest;
    float *shard = NULL, *whole = NULL;
    dl_status st = dl_malloc(m->dev, (void **)&shard, widest * sizeof *shard);
    if (st == DL_OK)
        st = dl_malloc(m->dev, (void **)&whole, widest * sizeof *whole);
    for (int l = 0; l < m->n_layers && st == DL_OK; at += k->count[l], l++) {
        size_t n = m->layer[l].count;
        if (k->count[l] > 0)
            st = dl_memcpy_h2d(m->dev, shard, k->v + at, k->count[l] * sizeof *shard);
        if (st == DL_OK)
            st = dl_memcpy_h2d(m->dev, whole, host + m->layer[l].offset, n * sizeof *whole); // NaN where none lies
        if (st == DL_OK)
            st = kit_layer_whole(c, m->dev, n, k->offset[l], k->count[l], shard, whole);
        if (st == DL_OK)
            st = dl_memcpy_d2h(m->dev, host + m->layer[l].offset, whole, n * sizeof *host);
    }
    dl_free(m->dev, shard), dl_free(m->dev, whole);
    return st;
}
