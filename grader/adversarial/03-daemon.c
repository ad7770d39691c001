// attack: the reference, each rank leaving a daemon (ddplab-daemon) behind when the model is broadcast
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 03
// base: reference
// file: ddp.c
// inject: ddp_broadcast_params
// lose: none
// with: daemon
static void ddplab_attack(void)
{
    leave_daemon();
}
