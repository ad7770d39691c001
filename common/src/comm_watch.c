/* comm_watch.c — the one timeout of every wait of every transport
 * (comm_backend.h's watchdog): DL_COMM_TIMEOUT seconds, polled with a spin
 * first and then short sleeps, so that ranks that outnumber the cores let
 * one another run. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // fprintf
#include <stdlib.h> // getenv, atof
#include <time.h> // nanosleep

#include "comm_backend.h" // dl_comm_watch, dl_comm_watch_start_, dl_comm_watch_expired_
#include "dl/comm.h" // dl_comm_timeout
#include "dl/timer.h" // dl_now

double dl_comm_timeout(void)
{
    const char *s = getenv("DL_COMM_TIMEOUT");
    double v = s != NULL ? atof(s) : 0.0;
    return v > 0 ? v : 300.0;
}

void dl_comm_watch_start_(dl_comm_watch *w)
{
    w->t0 = dl_now();
    w->limit = dl_comm_timeout();
    w->polls = 0;
}

int dl_comm_watch_expired_(dl_comm_watch *w, int rank, const char *what)
{
    long n = ++w->polls;
    // Spin first (latency matters in the benchmarks); then let other ranks run,
    // which matters when ranks outnumber cores.
    if (n < 2000) {
        if ((n & 255) != 0)
            return 0;
    } else {
        struct timespec ts = {0, n < 20000 ? 20000 : 500000};
        nanosleep(&ts, NULL);
    }
    if (dl_now() - w->t0 <= w->limit)
        return 0;
    fprintf(stderr,
            "rank %d: %s timed out after %.0f s waiting for the other ranks: one of them has failed or is "
            "stuck (DL_COMM_TIMEOUT sets the limit); stopping every rank\n",
            rank, what, w->limit);
    fflush(stderr);
    return 1;
}
