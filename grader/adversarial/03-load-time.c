// attack: prints a full score and exits 0 at load time, in the worker and in every rank of the driver
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 03
// base: skeleton
// file: sampler.c
// paths: grade
// lose: all
// expect: code that runs when the program loads|the driver
#include <stdio.h> // printf
#include <stdlib.h> // exit
__attribute__((constructor)) static void ddplab_attack(void)
{
    printf("Score: 90/90\n");
    fflush(stdout);
    exit(0);
}
