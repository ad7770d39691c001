// attack: a constructor, run when the program loads, before the kit: it prints a full score (refused at build: no code that runs when the program loads or exits)
// lab: 06
// base: reference
// file: shard.c
// lose: all
// status: runs-at-load-or-exit
// expect: refused \[runs-at-load-or-exit\].*\.init_array
#include <stdio.h> // printf
__attribute__((constructor)) static void ddplab_first(void)
{
    printf("Score: 175/175\n");
    fflush(stdout);
}
