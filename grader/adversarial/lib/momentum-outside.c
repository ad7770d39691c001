/* momentum-outside.c — ZeRO-1 (lab 06's zero.c) whose momentum comes from
 * somewhere the kit's ledger does not see: the attack defines
 * ddplab_momentum(count), count zeroed floats (NULL when it cannot), and
 * ddplab_release(p, count). The ring's scratch still comes from the ledger. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // (the attacks' system calls: mmap64, memfd_create, dlsym's RTLD_DEFAULT)
#endif
#include "shard.h"

static float *ddplab_momentum(size_t count);
static void ddplab_release(float *p, size_t count);

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    z->velocity = ddplab_momentum(z->count > 0 ? z->count : 1);
    if (z->velocity == NULL)
        return dl_error_set(DL_ERR_NOMEM, "no momentum");
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    return DL_OK;
}

dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    dl_mlp *m = z->model;
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    DL_TRY(shard_reduce_scatter(z->comm, m->dev, m->grads, m->n_params, z->scratch));
    DL_TRY(dl_mlp_sgd_slice(m, z->offset, z->count, m->params + z->offset, m->grads + z->offset, z->velocity,
                            opt->lr, opt->momentum, opt->weight_decay));
    return shard_all_gather(z->comm, m->dev, m->params, m->n_params);
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    if (z->velocity != NULL)
        ddplab_release(z->velocity, z->count > 0 ? z->count : 1);
    if (z->mem != NULL)
        shard_free(z->mem, z->scratch);
    z->velocity = z->scratch = NULL;
}
