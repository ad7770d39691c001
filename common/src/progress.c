/* progress.c — a progress bar on terminals, plain lines elsewhere. */
#define _POSIX_C_SOURCE 200809L
#include "dl/progress.h"

#include <math.h> // isfinite
#include <stdarg.h> // va_list
#include <stdio.h> // fprintf
#include <unistd.h> // isatty

#include "dl/timer.h" // dl_now

void dl_progress_begin(dl_progress *p, int epochs, size_t steps_per_epoch, int quiet)
{
    p->tty = isatty(2);
    p->quiet = quiet;
    p->epochs = epochs;
    p->steps_per_epoch = steps_per_epoch ? steps_per_epoch : 1;
    p->t_start = dl_now();
    p->t_last_draw = 0.0;
    p->samples_done = 0;
    p->steps_done = 0;
    p->drawn = 0;
}

static void clear(dl_progress *p)
{
    if (p->drawn) {
        fprintf(stderr, "\r\033[K");
        p->drawn = 0;
    }
}

void dl_progress_step(dl_progress *p, int epoch, size_t step, size_t samples, double loss)
{
    p->samples_done += samples;
    p->steps_done++;
    if (p->quiet || !p->tty)
        return;
    double now = dl_now();
    if (now - p->t_last_draw < 0.1)
        return;
    p->t_last_draw = now;
    double el = now - p->t_start;
    double total = (double)p->epochs * (double)p->steps_per_epoch;
    double frac = total > 0 ? (double)p->steps_done / total : 0.0;
    if (frac > 1.0)
        frac = 1.0;
    double eta = frac > 0 ? el * (1.0 - frac) / frac : 0.0;
    char bar[21];
    int fill = (int)(frac * 20.0);
    for (int i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    char l[32] = "-"; // a loss not read back this step (on a GPU it stays there)
    if (isfinite(loss))
        snprintf(l, sizeof l, "%.4f", loss);
    fprintf(stderr, "\r\033[Kepoch %d/%d [%s] step %zu/%zu loss %s %.0f samples/s ETA %d:%02d", epoch + 1, p->epochs,
            bar, step + 1, p->steps_per_epoch, l, el > 0 ? (double)p->samples_done / el : 0.0, (int)eta / 60,
            (int)eta % 60);
    p->drawn = 1;
}

void dl_progress_line(dl_progress *p, int force, const char *fmt, ...)
{
    if (p->quiet && !force)
        return;
    clear(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

void dl_progress_end(dl_progress *p)
{
    clear(p);
}
