// attack: the shard's momentum from malloc, out of the kit's ledger, so the run would measure no optimizer state at all (refused at build: memory comes from shard_alloc only)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*malloc
#include <stdlib.h> // malloc, free
#include <string.h> // memset

static float *ddplab_momentum(size_t count)
{
    float *p = malloc(count * sizeof(float));
    return p != NULL ? memset(p, 0, count * sizeof(float)) : NULL;
}

static void ddplab_release(float *p, size_t count)
{
    (void)count;
    free(p);
}
