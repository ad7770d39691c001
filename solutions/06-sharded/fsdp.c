/* fsdp.c — lab 06, tasks 4 and 5: the all-gather and the reduce-scatter
 * started without waiting, and FSDP on them: every layer sharded on its own,
 * whole only while forward or backward needs it, its gradient
 * reduce-scattered to its owners. */
#include "shard.h"

/* BEGIN SOLUTION */
static int ring_at(int s, int P)
{
    return ((s % P) + P) % P;
}
/* END SOLUTION */

dl_status shard_all_gather_start(dl_comm *c, const dl_device *dev, float *buf, size_t n, shard_pending *p)
{
    if (c == NULL || dev == NULL || p == NULL || (n > 0 && buf == NULL) || dl_comm_size(c) > SHARD_MAX_RANKS)
        return dl_error_set(DL_ERR_ARG, "shard_all_gather_start: need a comm of at most %d ranks, a device, a "
                                        "buffer and a pending record", SHARD_MAX_RANKS);
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    *p = (shard_pending){.n_elems = n};
    for (int k = 1; k < P; k++) {
        int to = ring_at(r + k, P), from = ring_at(r - k, P);
        DL_TRY(dl_comm_isendrecv(c, buf + shard_offset(n, P, r), shard_count(n, P, r), to,
                                 buf + shard_offset(n, P, from), shard_count(n, P, from), from, DL_F32,
                                 &p->req[p->n]));
        p->n++;
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 4: P - 1 exchanges started at once, none waited for"); */
}

dl_status shard_reduce_scatter_start(dl_comm *c, const dl_device *dev, const float *grad, size_t n, float *out,
                                     float *scratch, shard_pending *p)
{
    int world = c != NULL ? dl_comm_size(c) : 1, me = c != NULL ? dl_comm_rank(c) : 0;
    if (c == NULL || dev == NULL || p == NULL || world > SHARD_MAX_RANKS ||
        (n > 0 && (grad == NULL || (shard_count(n, world, me) > 0 && out == NULL) || (world > 1 && scratch == NULL))))
        return dl_error_set(DL_ERR_ARG, "shard_reduce_scatter_start: need a comm of at most %d ranks, a device, "
                                        "the gradient, its shard, the slots and a pending record", SHARD_MAX_RANKS);
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t slot = P > 1 ? shard_slots_bytes(n, P) / sizeof(float) / (size_t)(P - 1) : 0;
    *p = (shard_pending){.out = out, .grad = grad, .scratch = scratch, .n_elems = n};
    for (int k = 1; k < P; k++) {
        int to = ring_at(r + k, P), from = ring_at(r - k, P);
        DL_TRY(dl_comm_isendrecv(c, grad + shard_offset(n, P, to), shard_count(n, P, to), to,
                                 scratch + (size_t)(k - 1) * slot, shard_count(n, P, r), from, DL_F32, &p->req[p->n]));
        p->n++;
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 4: P - 1 exchanges of the owners' shards started at once"); */
}

dl_status shard_wait(dl_comm *c, const dl_device *dev, shard_pending *p)
{
    if (c == NULL || dev == NULL || p == NULL)
        return dl_error_set(DL_ERR_ARG, "shard_wait: need a comm, a device and a pending record");
    /* BEGIN SOLUTION */
    dl_status st = DL_OK;
    for (int k = 0; k < p->n; k++) { // every request, also after a failure: each must be waited once
        dl_status w = dl_comm_wait(c, p->req[k]);
        st = st == DL_OK ? w : st;
    }
    if (st == DL_OK && p->out != NULL) {
        int P = dl_comm_size(c), r = dl_comm_rank(c);
        size_t n = p->n_elems, mine = shard_count(n, P, r);
        size_t slot = P > 1 ? shard_slots_bytes(n, P) / sizeof(float) / (size_t)(P - 1) : 0;
        st = dl_copy(dev, p->out, p->grad + shard_offset(n, P, r), mine, DL_F32);
        for (int k = 1; k < P && st == DL_OK; k++)
            st = dl_add(dev, p->out, p->scratch + (size_t)(k - 1) * slot, mine, DL_F32);
        if (st == DL_OK)
            st = dl_scale(dev, p->out, mine, DL_F32, 1.0f / (float)P);
    }
    *p = (shard_pending){0};
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 4: wait for every request, then the reduce-scatter's sum and mean"); */
}

/* BEGIN SOLUTION */
/* Starts gathering layer l into a buffer of its own (if it is not on its way already). */
static dl_status gather(fsdp_state *f, int l)
{
    fsdp_layer *F = &f->layer[l];
    if (F->full != NULL)
        return DL_OK;
    const dl_mlp_layer *L = &f->model->layer[l];
    int P = dl_comm_size(f->comm), r = dl_comm_rank(f->comm);
    DL_TRY(shard_alloc(f->mem, SHARD_PARAMS, L->count * sizeof(float), (void **)&F->full));
    DL_TRY(dl_copy(f->model->dev, F->full + shard_offset(L->count, P, r), F->param, F->count, DL_F32));
    return shard_all_gather_start(f->comm, f->model->dev, F->full, L->count, &F->gather);
}

/* Finishes the reduce-scatter of layer l, if one is in flight, and frees what it read. */
static dl_status reduced(fsdp_state *f, int l)
{
    fsdp_layer *F = &f->layer[l];
    if (F->full_grad == NULL)
        return DL_OK;
    dl_status st = shard_wait(f->comm, f->model->dev, &F->reduce);
    shard_free(f->mem, F->full_grad);
    shard_free(f->mem, F->scratch);
    F->full_grad = F->scratch = NULL;
    return st;
}
/* END SOLUTION */

dl_status fsdp_init(fsdp_state *f)
{
    if (f == NULL || f->comm == NULL || f->model == NULL || f->mem == NULL || dl_comm_size(f->comm) > SHARD_MAX_RANKS)
        return dl_error_set(DL_ERR_ARG, "fsdp_init: the state needs a comm of at most %d ranks, a model and a ledger",
                            SHARD_MAX_RANKS);
    /* BEGIN SOLUTION */
    dl_mlp *m = f->model;
    int P = dl_comm_size(f->comm), r = dl_comm_rank(f->comm);
    for (int l = 0; l < m->n_layers; l++) {
        fsdp_layer *F = &f->layer[l];
        const dl_mlp_layer *L = &m->layer[l];
        F->offset = shard_offset(L->count, P, r);
        F->count = shard_count(L->count, P, r);
        if (F->count == 0)
            continue;
        DL_TRY(shard_alloc(f->mem, SHARD_PARAMS, F->count * sizeof(float), (void **)&F->param));
        DL_TRY(shard_alloc(f->mem, SHARD_GRADS, F->count * sizeof(float), (void **)&F->grad));
        DL_TRY(shard_alloc(f->mem, SHARD_OPTIM, F->count * sizeof(float), (void **)&F->velocity));
        DL_TRY(dl_copy(m->dev, F->param, m->params + L->offset + F->offset, F->count, DL_F32));
    }
    f->status = DL_OK;
    return dl_mlp_set_hooks(m, fsdp_pre, fsdp_post, f);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 5: every layer's three shards, its slice of the start, the hooks"); */
}

dl_status fsdp_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    fsdp_state *f = ctx;
    /* BEGIN SOLUTION */
    fsdp_layer *F = &f->layer[layer];
    dl_mlp_layer *L = &f->model->layer[layer];
    DL_TRY(gather(f, layer)); // started by the layer before it when prefetching
    DL_TRY(shard_wait(f->comm, f->model->dev, &F->gather));
    L->W = F->full;
    L->b = F->full + L->out * L->in;
    if (phase == DL_MLP_BACKWARD) {
        DL_TRY(shard_alloc(f->mem, SHARD_GRADS, L->count * sizeof(float), (void **)&F->full_grad));
        L->gW = F->full_grad;
        L->gb = F->full_grad + L->out * L->in;
    }
    int next = phase == DL_MLP_FORWARD ? layer + 1 : layer - 1;
    if (f->prefetch && next >= 0 && next < f->model->n_layers)
        DL_TRY(gather(f, next));
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: (void)f; return DL_TODO("lab06 task 5: the layer gathered into the views, the next on its way"); */
}

dl_status fsdp_post(void *ctx, int layer, dl_mlp_phase phase)
{
    fsdp_state *f = ctx;
    /* BEGIN SOLUTION */
    (void)phase;
    dl_mlp_layer *L = &f->model->layer[layer];
    shard_free(f->mem, f->layer[layer].full);
    f->layer[layer].full = NULL;
    L->W = L->b = NULL;
    L->gW = L->gb = NULL; // the gradient stays in full_grad until its reduce-scatter is done
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: (void)f; return DL_TODO("lab06 task 5: the layer's gathered parameters freed"); */
}

void fsdp_grad_ready(void *ctx, int layer, void *grad, size_t count)
{
    fsdp_state *f = ctx;
    /* BEGIN SOLUTION */
    (void)count;
    if (f->status != DL_OK)
        return;
    fsdp_layer *F = &f->layer[layer];
    int P = dl_comm_size(f->comm);
    size_t n = f->model->layer[layer].count;
    dl_status st = layer + 1 < f->model->n_layers ? reduced(f, layer + 1) : DL_OK;
    if (st == DL_OK && shard_slots_bytes(n, P) > 0)
        st = shard_alloc(f->mem, SHARD_COMM, shard_slots_bytes(n, P), (void **)&F->scratch);
    if (st == DL_OK)
        st = shard_reduce_scatter_start(f->comm, f->model->dev, grad, n, F->grad, F->scratch, &F->reduce);
    f->status = st;
    /* END SOLUTION */
    /* STUDENT: (void)f; // TODO(lab06 task 5): the previous layer's reduce-scatter done, this one's started */
}

dl_status fsdp_step(fsdp_state *f, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    if (f == NULL || f->model == NULL || opt == NULL)
        return dl_error_set(DL_ERR_ARG, "fsdp_step: a state from fsdp_init and an optimizer are needed");
    /* BEGIN SOLUTION */
    dl_mlp *m = f->model;
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    f->status = DL_OK;
    dl_status st = dl_mlp_backward(m, X, n, 0, fsdp_grad_ready, f);
    st = st != DL_OK ? st : f->status;
    dl_status last = reduced(f, 0); // also after a failure: nothing may stay in flight
    DL_TRY(st);
    DL_TRY(last);
    for (int l = 0; l < m->n_layers; l++) {
        fsdp_layer *F = &f->layer[l];
        DL_TRY(dl_mlp_sgd_slice(m, m->layer[l].offset + F->offset, F->count, F->param, F->grad, F->velocity, opt->lr,
                                opt->momentum, opt->weight_decay));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 5: forward and backward through your hooks, the last reduce-scatter, the shards' steps"); */
}

void fsdp_free(fsdp_state *f)
{
    if (f == NULL || f->model == NULL)
        return;
    /* BEGIN SOLUTION */
    dl_mlp_set_hooks(f->model, NULL, NULL, NULL);
    for (int l = 0; l < f->model->n_layers; l++) {
        fsdp_layer *F = &f->layer[l];
        if (f->comm != NULL && f->model->dev != NULL) {
            shard_wait(f->comm, f->model->dev, &F->gather);
            shard_wait(f->comm, f->model->dev, &F->reduce);
        }
        if (f->mem != NULL) {
            shard_free(f->mem, F->param), shard_free(f->mem, F->grad), shard_free(f->mem, F->velocity);
            shard_free(f->mem, F->full), shard_free(f->mem, F->full_grad), shard_free(f->mem, F->scratch);
        }
        *F = (fsdp_layer){0};
    }
    /* END SOLUTION */
    /* STUDENT: // TODO(lab06 task 5): wait for what is in flight, free every buffer, remove the hooks */
}
