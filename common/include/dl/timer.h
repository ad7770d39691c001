/* dl/timer.h — wall-clock timing on the host.
 *
 * Contract
 * - dl_now() is a monotonic clock in seconds (CLOCK_MONOTONIC); differences of
 *   two readings are elapsed wall time. Cannot fail.
 * - A dl_timer accumulates the time between start/stop pairs; stopping a timer
 *   that is not running does nothing. GPU work is timed with dl_event (device.h).
 */
#ifndef DL_TIMER_H
#define DL_TIMER_H

#ifdef __cplusplus
extern "C" {
#endif

double dl_now(void);

typedef struct dl_timer {
    double t0; /* start of the running interval */
    double total; /* seconds accumulated over finished intervals */
    int running;
} dl_timer;

void dl_timer_reset(dl_timer *t);
void dl_timer_start(dl_timer *t);
void dl_timer_stop(dl_timer *t);
/* Accumulated seconds, including the running interval. */
double dl_timer_seconds(const dl_timer *t);

#ifdef __cplusplus
}
#endif
#endif /* DL_TIMER_H */
