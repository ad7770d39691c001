// attack: the reference, leaving a daemon behind (its own session, named ddplab-daemon) that outlives the call
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: reference
// file: scaler.c
// inject: logreg_scaler_transform
// lose: none
// with: daemon
static void ddplab_attack(void)
{
    leave_daemon();
}
