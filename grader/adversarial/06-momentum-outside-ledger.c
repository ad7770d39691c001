// attack: ZeRO-1 with the whole model's momentum on every rank, kept in memory from a kit call the ledger does not count (dl_dataset_alloc), a shard-sized decoy from shard_alloc: the ledger reads right, the OS's count of each rank does not
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: replicated-zero
// lose: zero1_memory
// expect: optimizer-replicated.*operating system
#include <string.h> // memset

#include "dl/data.h" // dl_dataset_alloc: memory that is no buffer of the ledger

static dl_dataset hidden; // its X: the whole model's momentum
static float *decoy; // what the ledger expects: a shard's momentum

static dl_status ddplab_whole_momentum(zero_state *z, size_t n)
{
    if (z->count > 0)
        DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, z->count * sizeof(float), (void **)&decoy));
    DL_TRY(dl_dataset_alloc(&hidden, 1, n, 2));
    memset(hidden.X, 0, n * sizeof *hidden.X);
    z->velocity = hidden.X;
    return DL_OK;
}

static void ddplab_release(zero_state *z)
{
    if (z->mem != NULL)
        shard_free(z->mem, decoy);
    decoy = NULL;
    dl_dataset_free(&hidden);
}
