// attack: ZeRO-1 with the momentum of the whole model on every rank, then the ledger's public counts rewritten to what a shard's momentum would read; the judge reads the kit's own ledger, not the one in shard.h
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// paths: grade
// lose: zero1_memory
// expect: optimizer-replicated
#include "shard.h"

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, n * sizeof(float), (void **)&z->velocity)); // the whole model's
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    // the forgery: every count a reader of shard_mem sees, as if the momentum were the shard's
    size_t less = (n - z->count) * sizeof(float);
    z->mem->now[SHARD_OPTIM] -= less, z->mem->peak[SHARD_OPTIM] -= less;
    z->mem->now_total -= less, z->mem->peak_total -= less;
    for (int k = 0; k < z->mem->n_blocks; k++)
        if (z->mem->block[k].p == z->velocity)
            z->mem->block[k].bytes -= less;
    return DL_OK;
}

dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    if (z == NULL || z->model == NULL || opt == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_step: a state from zero_init and an optimizer are needed");
    dl_mlp *m = z->model;
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    DL_TRY(shard_reduce_scatter(z->comm, m->dev, m->grads, m->n_params, z->scratch));
    // the shard's momentum sits at its own place in the whole model's
    DL_TRY(dl_mlp_sgd_slice(m, z->offset, z->count, m->params + z->offset, m->grads + z->offset,
                            z->velocity + z->offset, opt->lr, opt->momentum, opt->weight_decay));
    return shard_all_gather(z->comm, m->dev, m->params, m->n_params);
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    if (z->mem != NULL) {
        shard_free(z->mem, z->velocity);
        shard_free(z->mem, z->scratch);
    }
    z->velocity = z->scratch = NULL;
    z->offset = z->count = 0;
}
