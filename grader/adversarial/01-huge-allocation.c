// attack: allocates 64 GiB and writes every page of it
// lab: 01
// base: skeleton
// file: scaler.c
// inject: logreg_scaler_fit
// paths: grade
// lose: all
// expect: crashed: SIGSEGV.*memory limit is 8 GiB
#include <stdlib.h> // malloc
static void ddplab_attack(void)
{
    size_t n = (size_t)64 << 30;
    volatile char *p = malloc(n); // NULL past the limit: the first write crashes
    for (size_t k = 0; k < n; k += 4096)
        p[k] = 1;
}
