// attack: ZeRO-1 with the momentum of the whole model on every rank, then the ledger's public counts rewritten to what a shard's momentum would read; the judge reads the kit's own ledger, not the one in shard.h
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: replicated-zero
// paths: grade
// lose: zero1_memory
// expect: optimizer-replicated
/* The whole model's momentum from the ledger, then every count a reader of shard_mem sees rewritten, as if the
 * momentum were the shard's. */
static dl_status ddplab_whole_momentum(zero_state *z, size_t n)
{
    DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, n * sizeof(float), (void **)&z->velocity));
    size_t less = (n - z->count) * sizeof(float);
    z->mem->now[SHARD_OPTIM] -= less, z->mem->peak[SHARD_OPTIM] -= less;
    z->mem->now_total -= less, z->mem->peak_total -= less;
    for (int k = 0; k < z->mem->n_blocks; k++)
        if (z->mem->block[k].p == z->velocity)
            z->mem->block[k].bytes -= less;
    return DL_OK;
}

static void ddplab_release(zero_state *z)
{
    if (z->mem != NULL)
        shard_free(z->mem, z->velocity);
}
