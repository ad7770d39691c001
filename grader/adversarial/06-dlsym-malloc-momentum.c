// attack: ZeRO-1 with the momentum from malloc looked up at run time, dlsym(RTLD_DEFAULT, "mal" + "loc"), so that no object names malloc (refused at build: dlsym is not a student file's to call)
// lab: 06
// base: reference
// file: zero.c
// replace: yes
// with: momentum-outside
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dlsym
#include <dlfcn.h> // dlsym
#include <string.h> // memset
static void *ddplab_sym(const char *a, const char *b)
{
    char name[16];
    size_t k = strlen(a);
    memcpy(name, a, k);
    memcpy(name + k, b, strlen(b) + 1);
    return dlsym(RTLD_DEFAULT, name);
}
static float *ddplab_momentum(size_t count)
{
    void *(*get)(size_t) = (void *(*)(size_t))ddplab_sym("mal", "loc");
    float *p = get != NULL ? get(count * sizeof(float)) : NULL;
    return p != NULL ? memset(p, 0, count * sizeof(float)) : NULL;
}
static void ddplab_release(float *p, size_t count)
{
    (void)count;
    void (*put)(void *) = (void (*)(void *))ddplab_sym("fr", "ee");
    if (put != NULL)
        put(p);
}
