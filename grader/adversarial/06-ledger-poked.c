// attack: ZeRO-1 with the whole model's momentum from shard_alloc, then the kit's own ledger found in the driver's memory (the copy in shard_mem is the ledger's bytes, so a scan from it to a variable of the student's own finds the original) and its optimizer counts rewritten to a shard's: the dump reads right, the OS's count of each rank does not
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// lose: zero1_memory
// expect: optimizer-replicated.*operating system
#include <string.h> // memcmp

#include "shard.h"

static char anchor; // the student's own object: its .bss lies after the kit's in the driver

/* Finds the kit's ledger: the shard_mem (but its dev) whose counts and blocks are the copy's. */
static shard_mem *find_ledger(const shard_mem *copy)
{
    const char *from = (const char *)copy, *to = &anchor;
    size_t skip = (size_t)((const char *)&copy->now - (const char *)copy), len = sizeof *copy - skip;
    if (to < from) {
        const char *t = from;
        from = to, to = t;
    }
    for (const char *p = from; p + sizeof *copy <= to; p += sizeof(void *)) {
        if (p == (const char *)copy)
            continue;
        if (memcmp(p + skip, (const char *)copy + skip, len) == 0)
            return (shard_mem *)(void *)p;
    }
    return NULL;
}

/* Takes `less` bytes of the block p off the ledger's optimizer counts (and the copy's). */
static void poke(shard_mem *m, const void *p, size_t less)
{
    m->now[SHARD_OPTIM] -= less, m->peak[SHARD_OPTIM] -= less;
    m->now_total -= less, m->peak_total -= less;
    for (int k = 0; k < m->n_blocks; k++)
        if (m->block[k].p == p)
            m->block[k].bytes -= less;
}

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
    DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, n * sizeof(float), (void **)&z->velocity)); // the whole model's
    shard_mem *kit = find_ledger(z->mem);
    size_t less = (n - z->count) * sizeof(float);
    if (kit != NULL)
        poke(kit, z->velocity, less);
    poke(z->mem, z->velocity, less);
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
    DL_TRY(shard_all_gather(z->comm, m->dev, m->grads, m->n_params));
    return dl_mlp_sgd_slice(m, 0, m->n_params, m->params, m->grads, z->velocity, opt->lr, opt->momentum,
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
    z->velocity = z->scratch = NULL;
    z->offset = z->count = 0;
}
