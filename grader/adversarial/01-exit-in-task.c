// attack: exits with status 0 from inside task 1's function (Check alone counted that as a pass)
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// inject: logreg_scaler_fit
// paths: grade
// lose: all
// expect: exited \(status 0\) inside logreg_scaler_fit \(lab01 task 1\) before the check finished
#include <stdlib.h> // exit
static void ddplab_attack(void)
{
    exit(0);
}
