// attack: ZeRO-1 with the whole model's momentum from shard_alloc, then the kit's own ledger found in the driver's memory (the copy in shard_mem is the ledger's bytes, so a scan from it to a variable of the student's own finds the original) and its optimizer counts rewritten to a shard's: the dump reads right, the OS's count of each rank does not
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: replicated-zero
// lose: zero1_memory
// expect: optimizer-replicated.*operating system
#include <string.h> // memcmp

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

/* The whole model's momentum from the ledger, then the kit's ledger found and poked to a shard's count. */
static dl_status ddplab_whole_momentum(zero_state *z, size_t n)
{
    DL_TRY(shard_alloc(z->mem, SHARD_OPTIM, n * sizeof(float), (void **)&z->velocity));
    shard_mem *kit = find_ledger(z->mem);
    size_t less = (n - z->count) * sizeof(float);
    if (kit != NULL)
        poke(kit, z->velocity, less);
    poke(z->mem, z->velocity, less);
    return DL_OK;
}

static void ddplab_release(zero_state *z)
{
    if (z->mem != NULL)
        shard_free(z->mem, z->velocity);
}
