/* zero.c — lab 06, task 3: ZeRO stage 1. Every rank keeps the whole model
 * and computes the whole gradient, but holds SGD's momentum for its own
 * shard only and updates only that shard; the all-gather hands the updated
 * shards round. */
#include "shard.h"

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    /* BEGIN SOLUTION */
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    if (z->count > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, z->count * sizeof(float), (void **)&z->velocity));
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 3: this rank's shard, its momentum and the ring's scratch, from z->mem"); */
}

dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    if (z == NULL || z->model == NULL || opt == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_step: a state from zero_init and an optimizer are needed");
    /* BEGIN SOLUTION */
    dl_mlp *m = z->model;
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    DL_TRY(shard_reduce_scatter(z->comm, m->dev, m->grads, m->n_params, z->scratch));
    DL_TRY(dl_mlp_sgd_slice(m, z->offset, z->count, m->params + z->offset, m->grads + z->offset, z->velocity, opt->lr,
                            opt->momentum, opt->weight_decay));
    return shard_all_gather(z->comm, m->dev, m->params, m->n_params);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 3: forward, backward, reduce-scatter, your shard's step, all-gather"); */
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    /* BEGIN SOLUTION */
    if (z->mem != NULL) {
        shard_free(z->mem, z->velocity);
        shard_free(z->mem, z->scratch);
    }
    z->velocity = z->scratch = NULL;
    z->offset = z->count = 0;
    /* END SOLUTION */
    /* STUDENT: // TODO(lab06 task 3): give back what zero_init took, through z->mem */
}
