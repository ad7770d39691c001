// attack: the shard's momentum from malloc, out of the kit's ledger, so the run would measure no optimizer state at all (refused at build: memory comes from shard_alloc only)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*malloc
#include <stdlib.h> // malloc, free

#include "shard.h"

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    z->velocity = calloc(z->count > 0 ? z->count : 1, sizeof(float));
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    return z->velocity != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "no momentum");
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
    free(z->velocity);
    if (z->mem != NULL)
        shard_free(z->mem, z->scratch);
    z->velocity = z->scratch = NULL;
}
