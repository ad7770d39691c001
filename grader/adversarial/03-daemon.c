// attack: the reference, each rank leaving a daemon (ddplab-daemon) behind when the model is broadcast
// lab: 03
// base: reference
// file: ddp.c
// inject: ddp_broadcast_params
// lose: none
#include <sys/prctl.h> // prctl
#include <unistd.h> // fork, setsid, sleep
static void ddplab_attack(void)
{
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            for (int fd = 0; fd < 1024; fd++) // a proper daemon: it holds none of its parent's pipes
                close(fd);
            prctl(PR_SET_NAME, "ddplab-daemon");
            for (;;)
                sleep(100);
        }
        _exit(0);
    }
}
