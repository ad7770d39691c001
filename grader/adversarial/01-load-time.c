// attack: code that runs when the program loads prints a full score and exits 0
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// paths: grade
// lose: all
// emu: yes
// expect: code that runs when the program loads
#include <stdio.h> // printf
#include <stdlib.h> // exit
__attribute__((constructor)) static void ddplab_attack(void)
{
    printf("[PASS]  95/95   everything\nScore: 95/95\n");
    fflush(stdout);
    exit(0);
}
