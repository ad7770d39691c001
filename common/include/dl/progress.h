/* dl/progress.h — training progress for humans.
 *
 * Contract
 * - On a terminal (stderr is a TTY) a one-line bar is redrawn at most ten
 *   times a second: epoch/epochs, step/steps, loss, samples/s, ETA.
 *   Otherwise (CI, pipes, files) nothing is printed per step, only the lines
 *   passed to dl_progress_line, so logs stay readable.
 * - quiet suppresses everything but dl_progress_line calls with force=1.
 *   Only rank 0 should own a visible progress (pass quiet=1 elsewhere).
 * - Cannot fail; output errors are ignored.
 */
#ifndef DL_PROGRESS_H
#define DL_PROGRESS_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_progress {
    int tty, quiet;
    int epochs;
    size_t steps_per_epoch;
    double t_start, t_last_draw;
    size_t samples_done;
    size_t steps_done;
    int drawn; /* a bar is on screen and must be cleared before a line */
} dl_progress;

void dl_progress_begin(dl_progress *p, int epochs, size_t steps_per_epoch, int quiet);
/* loss: NAN when the step did not read it back (drawn as "-"). */
void dl_progress_step(dl_progress *p, int epoch, size_t step, size_t samples, double loss);
void dl_progress_line(dl_progress *p, int force, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void dl_progress_end(dl_progress *p);

#ifdef __cplusplus
}
#endif
#endif /* DL_PROGRESS_H */
