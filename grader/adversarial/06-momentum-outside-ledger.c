// attack: ZeRO-1 with the whole model's momentum on every rank, kept in memory from a kit call the ledger does not count (dl_dataset_alloc), a shard-sized decoy from shard_alloc: the ledger reads right, the OS's count of each rank does not
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// lose: zero1_memory
// expect: optimizer-replicated.*operating system
#include <string.h> // memset

#include "dl/data.h" // dl_dataset_alloc: memory that is no buffer of the ledger
#include "shard.h"

static dl_dataset hidden; // its X: the whole model's momentum

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    size_t n = z->model->n_params;
    z->offset = shard_offset(n, P, r);
    z->count = shard_count(n, P, r);
    if (z->count > 0) // the decoy: what the ledger expects
        DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, z->count * sizeof(float), (void **)&z->velocity));
    if (shard_scratch_bytes(n, P) > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_COMM, shard_scratch_bytes(n, P), (void **)&z->scratch));
    DL_TRY(dl_dataset_alloc(&hidden, 1, n, 2));
    memset(hidden.X, 0, n * sizeof *hidden.X);
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
    // the mean gradient everywhere (a reduce-scatter and an all-gather: an allreduce), every rank updating all
    DL_TRY(shard_reduce_scatter(z->comm, m->dev, m->grads, m->n_params, z->scratch));
    DL_TRY(shard_all_gather(z->comm, m->dev, m->grads, m->n_params));
    return dl_mlp_sgd_slice(m, 0, m->n_params, m->params, m->grads, hidden.X, opt->lr, opt->momentum,
                            opt->weight_decay);
}

void zero_free(zero_state *z)
{
    if (z == NULL)
        return;
    if (z->mem != NULL) {
        shard_free(z->mem, z->velocity);
        shard_free(z->mem, z->scratch);
    }
    dl_dataset_free(&hidden);
    z->velocity = z->scratch = NULL;
    z->offset = z->count = 0;
}
