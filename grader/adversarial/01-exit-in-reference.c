// attack: the reference, but _exit(0) inside logreg_scaler_transform: only the items that call it fail
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: reference
// file: scaler.c
// inject: logreg_scaler_transform
// paths: grade
// lose: scaler_transform
// expect: exited \(status 0\) inside logreg_scaler_transform \(lab01 task 1\)
#include <unistd.h> // _exit
static void ddplab_attack(void)
{
    _exit(0);
}
