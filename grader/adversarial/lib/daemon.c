/* daemon.c — leave_daemon(): leaves a daemon behind (its own session, named
 * ddplab-daemon, holding none of its parent's pipes) that outlives the call. */
#include <sys/prctl.h> // prctl
#include <unistd.h> // fork, setsid, sleep, close, _exit
static void leave_daemon(void)
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
