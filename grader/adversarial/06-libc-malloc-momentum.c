// attack: ZeRO-1 with the momentum from glibc's __libc_malloc, the alias the old deny-list of malloc did not name, out of the ledger's sight (refused at build: the build check allows C library functions by exact name)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*__libc_malloc
#include <string.h> // memset
void *__libc_malloc(size_t n);
void __libc_free(void *p);
static float *ddplab_momentum(size_t count)
{
    float *p = __libc_malloc(count * sizeof(float));
    return p != NULL ? memset(p, 0, count * sizeof(float)) : NULL;
}
static void ddplab_release(float *p, size_t count)
{
    (void)count;
    __libc_free(p);
}
