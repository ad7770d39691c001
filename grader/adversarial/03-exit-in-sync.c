// attack: the reference, but exit(0) inside ddp_sync_grads on every rank
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 03
// base: reference
// file: ddp.c
// inject: ddp_sync_grads
// paths: grade
// lose: scaler_distributed equivalence accuracy accounting speedup_projected
// expect: the driver run
#include <stdlib.h> // exit
static void ddplab_attack(void)
{
    exit(0);
}
