// attack: the reference, but kill(-1, SIGKILL) when the model is broadcast: mpirun, the ranks, whatever it reaches
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 03
// base: reference
// file: ddp.c
// inject: ddp_broadcast_params
// lose: scaler_distributed equivalence accuracy accounting speedup_projected
// expect: the driver
#include <signal.h> // kill
static void ddplab_attack(void)
{
    kill(-1, SIGKILL);
}
