// attack: ZeRO-1 with the momentum from malloc spelled as a versioned name, malloc@GLIBC_2.2.5 (.symver), which the lab's deny of malloc did not match (refused at build: names are allowed exactly, a version is another name)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*malloc@GLIBC
#include <string.h> // memset
void *ddplab_vmalloc(size_t n);
void ddplab_vfree(void *p);
__asm__(".symver ddplab_vmalloc, malloc@GLIBC_2.2.5\n.symver ddplab_vfree, free@GLIBC_2.2.5");
static float *ddplab_momentum(size_t count)
{
    float *p = ddplab_vmalloc(count * sizeof(float));
    return p != NULL ? memset(p, 0, count * sizeof(float)) : NULL;
}
static void ddplab_release(float *p, size_t count)
{
    (void)count;
    ddplab_vfree(p);
}
