/* dl/plot.h — drawing plots with gnuplot and the kit's shared style.
 *
 * Contract
 * - dl_plot runs `gnuplot` on DL_HOME/common/plot/style.gp followed by the
 *   script, with the variables fmt, out and those in vars (gnuplot syntax,
 *   "data='x.csv'; title='y'") set on the command line.
 * - fmt is png (pngcairo), svg, dumb (drawn on stdout, for terminals and
 *   logs) or none (nothing is drawn). For png/svg the file out_base.png/.svg
 *   is written via a temporary and renamed only when gnuplot succeeded.
 * - When gnuplot is not installed, dl_plot returns DL_ERR_UNSUPPORTED after
 *   saying so once on stderr (the CSV data stays, plot it later with
 *   `make plots`); a failing script returns DL_ERR_IO with gnuplot's exit status.
 */
#ifndef DL_PLOT_H
#define DL_PLOT_H

#include <stddef.h> // size_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

int dl_plot_available(void);
/* script: a path, absolute or relative to DL_HOME. */
dl_status dl_plot(const char *script, const char *fmt, const char *out_base, const char *vars);
/* Copies text into out (len bytes) with gnuplot's enhanced-text markup
 * characters (_ ^ { } @ & ~) escaped, so a name like "fashion_mnist" prints
 * as written; quotes become spaces. Cannot fail (truncates). */
void dl_plot_escape(const char *text, char *out, size_t len);

/* A driver's plot: draws dir/base with dl_plot and, when that wrote a file,
 * appends "base.ext" to the comma-separated list (len bytes, for
 * summary.json). Without gnuplot it stays quiet (dl_plot said so once);
 * other failures are reported on stderr as "who: plot: reason". Every
 * dir/base.png and dir/base.svg this call did not write (an earlier run's
 * other format; its own format when drawing failed or fmt is dumb or none)
 * is removed: a folder never shows a plot of another run beside this run's
 * data. */
void dl_plot_listed(const char *script, const char *fmt, const char *dir, const char *base, const char *vars,
                    const char *who, char *list, size_t len);

/* Removes dir/base.png and dir/base.svg: a plot an earlier run drew that this
 * run does not draw. Cannot fail (a file that is not there is fine). */
void dl_plot_forget(const char *dir, const char *base);

/* A driver's set of plots: the scripts in one folder (relative to DL_HOME),
 * drawn in format fmt into dir, failures reported as "who: plot: ...".
 * dl_plots_draw(p, base, vars_fmt, ...) draws scripts/base.gp to dir/base
 * with dl_plot_listed, the variables printf-formatted from vars_fmt (the
 * first 2000 characters), and adds the file to p->list. Cannot fail. */
typedef struct dl_plots {
    const char *scripts, *fmt, *dir, *who;
    char list[600]; /* "a.png,b.png": what was drawn, for summary.json */
} dl_plots;

void dl_plots_draw(dl_plots *p, const char *base, const char *vars_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* This run does not draw base: an earlier run's dir/base.png and .svg go
 * (dl_plot_forget). Cannot fail. */
void dl_plots_skip(const dl_plots *p, const char *base);

/* The file extension for fmt ("png", "svg"), or NULL when fmt draws no file. */
const char *dl_plot_ext(const char *fmt);

#ifdef __cplusplus
}
#endif
#endif /* DL_PLOT_H */
