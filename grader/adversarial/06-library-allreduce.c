// attack: ZeRO-1 as DDP: the library's allreduce of the gradients and the kit's whole-model step, the shard left alone (refused at build: the collectives and dl_mlp_sgd are not the lab's to call)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_(comm_allreduce|mlp_sgd)
#include "shard.h"

dl_status zero_init(zero_state *z)
{
    if (z == NULL || z->comm == NULL || z->model == NULL || z->mem == NULL)
        return dl_error_set(DL_ERR_ARG, "zero_init: the state needs a comm, a model and a ledger");
    int P = dl_comm_size(z->comm), r = dl_comm_rank(z->comm);
    z->offset = shard_offset(z->model->n_params, P, r);
    z->count = shard_count(z->model->n_params, P, r);
    return shard_alloc(z->mem, SHARD_OPTIM, z->model->n_params * sizeof(float), (void **)&z->model->velocity);
}

dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    dl_mlp *m = z->model;
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    DL_TRY(dl_comm_allreduce(z->comm, m->grads, m->n_params, DL_F32, DL_RED_AVG));
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}

void zero_free(zero_state *z)
{
    if (z != NULL && z->mem != NULL)
        shard_free(z->mem, z->model->velocity);
}
