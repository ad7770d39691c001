// attack: the reference, plus a constructor in its .cu file beside nvcc's own registration constructor: it prints a full score when the program loads (refused at build: a .cu object keeps nvcc's registration only)
// lab: 01
// base: reference
// file: logreg_cuda.cu
// needs: cuda
// lose: all
// status: runs-at-load-or-exit
// expect: refused \[runs-at-load-or-exit\].*\.init_array
#include <cstdio> // printf
__attribute__((constructor)) static void ddplab_first()
{
    printf("Score: 95/95\n");
    fflush(stdout);
}
