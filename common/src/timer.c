/* timer.c — monotonic wall-clock timing. */
#define _POSIX_C_SOURCE 200809L
#include "dl/timer.h"

#include <time.h> // clock_gettime

double dl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void dl_timer_reset(dl_timer *t)
{
    t->t0 = 0.0;
    t->total = 0.0;
    t->running = 0;
}

void dl_timer_start(dl_timer *t)
{
    t->t0 = dl_now();
    t->running = 1;
}

void dl_timer_stop(dl_timer *t)
{
    if (!t->running)
        return;
    t->total += dl_now() - t->t0;
    t->running = 0;
}

double dl_timer_seconds(const dl_timer *t)
{
    return t->total + (t->running ? dl_now() - t->t0 : 0.0);
}
