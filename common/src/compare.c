/* compare.c — |got − ref| ≤ atol + rtol·|ref| with a report of the worst element. */
#include "dl/compare.h"

#include <math.h> // fabs, isfinite
#include <stdio.h> // snprintf
#include <string.h> // memset

static int compare(const float *gf, const double *gd, const double *ref, size_t n, double atol, double rtol,
                   dl_cmp *out)
{
    dl_cmp r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.atol = atol;
    r.rtol = rtol;
    r.worst_pct = -1.0;
    for (size_t i = 0; i < n; i++) {
        double want = ref[i];
        // cppcheck-suppress nullPointer ; exactly one of gf and gd is given
        double got = gd != NULL ? gd[i] : (double)gf[i];
        if (!isfinite(want)) {
            r.n_masked++;
            continue;
        }
        double thr = atol + rtol * fabs(want);
        double err = fabs(got - want);
        double pct = isfinite(got) ? (thr > 0 ? 100.0 * err / thr : (err > 0 ? INFINITY : 0.0)) : INFINITY;
        int bad = !(isfinite(got) && err <= thr);
        if (pct > r.worst_pct) {
            r.worst_pct = pct;
            r.worst = i;
            r.worst_got = got;
            r.worst_ref = want;
        }
        if (bad) {
            if (r.n_show < DL_CMP_SHOW) {
                r.show_idx[r.n_show] = i;
                r.show_got[r.n_show] = got;
                r.show_ref[r.n_show] = want;
                r.n_show++;
            }
            r.n_bad++;
        }
    }
    if (r.worst_pct < 0)
        r.worst_pct = 0;
    if (out != NULL)
        *out = r;
    return r.n_bad == 0;
}

int dl_allclose_f32(const float *got, const double *ref, size_t n, double atol, double rtol, dl_cmp *r)
{
    return compare(got, NULL, ref, n, atol, rtol, r);
}

int dl_allclose_f64(const double *got, const double *ref, size_t n, double atol, double rtol, dl_cmp *r)
{
    return compare(NULL, got, ref, n, atol, rtol, r);
}

void dl_cmp_format(const dl_cmp *r, const char *what, char *buf, size_t len)
{
    int k = snprintf(buf, len,
                     "%s: %zu of %zu elements outside atol=%.3g + rtol=%.3g*|ref|; worst [%zu] got "
                     "%.9g want %.9g (%.0f%% of the tolerance)",
                     what, r->n_bad, r->n - r->n_masked, r->atol, r->rtol, r->worst, r->worst_got, r->worst_ref,
                     r->worst_pct);
    for (int i = 0; i < r->n_show && k > 0 && (size_t)k < len; i++)
        k += snprintf(buf + k, len - (size_t)k, "%s[%zu] got %.9g want %.9g", i ? ", " : "; first: ", r->show_idx[i],
                      r->show_got[i], r->show_ref[i]);
}
