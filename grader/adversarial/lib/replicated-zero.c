/* replicated-zero.c — ZeRO-1 (lab 06's zero.c) that keeps the whole model's
 * momentum on every rank, the mistake zero1_memory names: the gradient is
 * averaged (a reduce-scatter and an all-gather: an allreduce) and every rank
 * updates every parameter. The attack decides where that momentum lives and
 * what it hides of it: it defines ddplab_whole_momentum(z, n), which sets
 * z->velocity to n zeroed floats (from the ledger or not, then whatever the
 * forgery is), and ddplab_release(z), which gives them back. The ring's
 * scratch comes from the ledger. */
#include "shard.h"

static dl_status ddplab_whole_momentum(zero_state *z, size_t n);
static void ddplab_release(zero_state *z);

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    return ddplab_whole_momentum(z, n);
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
    DL_TRY(shard_all_gather(z->comm, m->dev, m->grads, m->n_params));
    return dl_mlp_sgd_slice(m, 0, m->n_params, m->params, m->grads, z->velocity, opt->lr, opt->momentum,
                            opt->weight_decay);
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    ddplab_release(z);
    if (z->mem != NULL)
        shard_free(z->mem, z->scratch);
    z->velocity = z->scratch = NULL;
    z->offset = z->count = 0;
}
