// attack: ZeRO-1 with the momentum in a static array sized for the whole model, as an honest student might write it: state the ledger never sees (refused at build: a student object's static storage is capped, 1024 bytes in lab 06)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: static-over-cap
// expect: refused \[static-over-cap\].*ddplab_m 
#include <string.h> // memset
static float ddplab_m[1 << 15]; // the graded model has 25,861 parameters
static float *ddplab_momentum(size_t count)
{
    return count <= sizeof ddplab_m / sizeof ddplab_m[0] ? memset(ddplab_m, 0, count * sizeof(float)) : NULL;
}
static void ddplab_release(float *p, size_t count)
{
    (void)p, (void)count;
}
