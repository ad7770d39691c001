/* lab02_ref.c — lab 02's references and fixtures (see lab02_ref.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // exp, log, fmax, fmin, isnan, floor
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/rng.h" // dl_rng
#include "lab02_ref.h"

int32_t *gr_labels_from_counts(const size_t *counts, int C, size_t *n_out, uint64_t seed)
{
    size_t n = 0;
    for (int c = 0; c < C; c++)
        n += counts[c];
    int32_t *y = malloc((n ? n : 1) * sizeof *y);
    size_t k = 0;
    for (int c = 0; c < C; c++) {
        for (size_t i = 0; i < counts[c]; i++)
            y[k++] = c;
    }
    dl_rng r;
    dl_rng_seed(&r, seed, 1);
    for (size_t i = n; i > 1; i--) { // shuffled, so a split cannot rely on sorted labels
        size_t j = (size_t)dl_rng_below(&r, i);
        int32_t t = y[i - 1];
        y[i - 1] = y[j];
        y[j] = t;
    }
    *n_out = n;
    return y;
}

/* 1 when got[] is a valid approximate mode of counts[] for n_draws: floors or
 * floors + 1, summing to n_draws, the +1s on the largest remainders. */
int gr_is_approx_mode(const size_t *counts, int C, size_t n_draws, const size_t *got, char *why, size_t len)
{
    size_t total = 0, sum = 0;
    for (int c = 0; c < C; c++)
        total += counts[c];
    double min_plus = 2.0, max_plain = -1.0;
    for (int c = 0; c < C; c++) {
        double exact = total ? (double)counts[c] * (double)n_draws / (double)total : 0.0;
        double fl = floor(exact + 1e-12);
        sum += got[c];
        if ((double)got[c] == fl + 1) {
            min_plus = fmin(min_plus, exact - fl);
        } else if ((double)got[c] == fl) {
            if (exact - fl > 1e-12)
                max_plain = fmax(max_plain, exact - fl);
        } else {
            snprintf(why, len, "class %d: %zu rows, but %zu of %zu rows at %zu/%zu gives %.4g (floor %.0f)", c, got[c],
                     counts[c], total, n_draws, total, exact, fl);
            return 0;
        }
    }
    if (sum != n_draws) {
        snprintf(why, len, "the class counts sum to %zu, not the part's %zu rows", sum, n_draws);
        return 0;
    }
    if (min_plus < max_plain - 1e-12) {
        snprintf(why, len, "a class with remainder %.4g got an extra row while one with remainder %.4g did not",
                 min_plus, max_plain);
        return 0;
    }
    return 1;
}

void gr_reference_report(const int64_t *cm, int C, ref_report *o)
{
    memset(o, 0, sizeof *o);
    double tot = 0, tp_s = 0, fp_s = 0, fn_s = 0;
    for (int c = 0; c < C; c++) {
        double tp = (double)cm[c * C + c], row = 0, col = 0;
        for (int k = 0; k < C; k++) {
            row += (double)cm[c * C + k];
            col += (double)cm[k * C + c];
        }
        int z = 0;
        o->p[c] = col > 0 ? tp / col : (z = 1, 0.0);
        o->r[c] = row > 0 ? tp / row : (z = 1, 0.0);
        o->f1[c] = o->p[c] + o->r[c] > 0 ? 2 * o->p[c] * o->r[c] / (o->p[c] + o->r[c]) : 0.0;
        o->zero += z;
        o->macro[0] += o->p[c] / C, o->macro[1] += o->r[c] / C, o->macro[2] += o->f1[c] / C;
        o->weighted[0] += o->p[c] * row, o->weighted[1] += o->r[c] * row, o->weighted[2] += o->f1[c] * row;
        tot += row, tp_s += tp, fp_s += col - tp, fn_s += row - tp;
    }
    for (int k = 0; k < 3; k++)
        o->weighted[k] = tot > 0 ? o->weighted[k] / tot : 0.0;
    o->acc = tot > 0 ? tp_s / tot : 0.0;
    o->micro[0] = tp_s + fp_s > 0 ? tp_s / (tp_s + fp_s) : 0.0;
    o->micro[1] = tp_s + fn_s > 0 ? tp_s / (tp_s + fn_s) : 0.0;
    o->micro[2] = o->micro[0] + o->micro[1] > 0 ? 2 * o->micro[0] * o->micro[1] / (o->micro[0] + o->micro[1]) : 0.0;
}

double gr_ref_softmax(const float *X, const int32_t *y, size_t n, size_t d, int C, const float *W, const float *b,
                      double lambda, double *gW, double *gb)
{
    double loss = 0;
    double *z = malloc((size_t)C * sizeof *z);
    memset(gW, 0, (size_t)C * d * sizeof *gW);
    memset(gb, 0, (size_t)C * sizeof *gb);
    for (size_t i = 0; i < n; i++) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c < C; c++) {
            z[c] = b[c];
            for (size_t j = 0; j < d; j++)
                z[c] += (double)X[i * d + j] * W[(size_t)c * d + j];
            m = fmax(m, z[c]);
        }
        for (int c = 0; c < C; c++)
            s += exp(z[c] - m);
        // cppcheck-suppress invalidFunctionArg ; s >= 1: the max term is exp(0)
        double lse = m + log(s);
        loss += lse - z[y[i]];
        for (int c = 0; c < C; c++) {
            double g = exp(z[c] - lse) - (c == y[i]);
            gb[c] += g / (double)n;
            for (size_t j = 0; j < d; j++)
                gW[(size_t)c * d + j] += g * X[i * d + j] / (double)n;
        }
    }
    double ww = 0;
    for (size_t k = 0; k < (size_t)C * d; k++) {
        gW[k] += lambda * W[k];
        ww += (double)W[k] * W[k];
    }
    free(z);
    return loss / (double)n + 0.5 * lambda * ww;
}

sproblem gr_make_sproblem(uint64_t seed, size_t n, size_t d, int C, float lambda, double wscale)
{
    dl_rng r;
    dl_rng_seed(&r, seed, 4);
    sproblem p = {n,
                  d,
                  C,
                  malloc(n * d * sizeof(float)),
                  malloc((size_t)C * d * sizeof(float)),
                  malloc((size_t)C * sizeof(float)),
                  lambda,
                  malloc(n * sizeof(int32_t))};
    for (size_t i = 0; i < n * d; i++)
        p.X[i] = (float)dl_rng_normal(&r);
    for (size_t i = 0; i < (size_t)C * d; i++)
        p.W[i] = (float)(wscale * dl_rng_normal(&r));
    for (int c = 0; c < C; c++)
        p.b[c] = (float)(0.2 * dl_rng_normal(&r));
    for (size_t i = 0; i < n; i++)
        p.y[i] = (int32_t)dl_rng_below(&r, (uint64_t)C);
    return p;
}

void gr_free_sproblem(sproblem *p)
{
    free(p->X), free(p->W), free(p->b), free(p->y);
}

static int index_of(const planted *pl, double lambda)
{
    for (int k = 0; k < pl->n; k++) {
        if (pl->lambdas[k] == lambda)
            return k;
    }
    return -1;
}

dl_status gr_planted_train(void *ctx, double lambda, void **model)
{
    planted *pl = ctx;
    int k = index_of(pl, lambda);
    if (k < 0)
        return dl_error_set(DL_ERR_ARG, "grader: trained an unknown lambda %g", lambda);
    pl->trained++;
    pl->live++;
    pl->models[k] = k;
    *model = &pl->models[k];
    return DL_OK;
}

dl_status gr_planted_score(void *ctx, void *model, int split, eval_report *r)
{
    planted *pl = ctx;
    int k = *(int *)model;
    double v = split == EVAL_TEST ? pl->test[k] : pl->val[k];
    if (split == EVAL_TEST) {
        pl->test_scored++;
        pl->test_model = k;
        if (pl->val_scored < pl->n)
            pl->test_before_all_val = 1;
    } else {
        pl->val_scored++;
    }
    memset(r->precision, 0, (size_t)r->C * sizeof *r->precision);
    r->macro_f1 = v;
    r->accuracy = v + 0.01;
    r->micro_f1 = v + 0.01;
    return DL_OK;
}

void gr_planted_release(void *ctx, void *model)
{
    (void)model;
    planted *pl = ctx;
    pl->released++;
    pl->live--;
}

double gr_ref_psi(const float *a, size_t na, const float *b, size_t nb, size_t d, size_t j, int bins)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < na; i++) {
        if (!isnan(a[i * d + j])) {
            lo = fmin(lo, a[i * d + j]);
            hi = fmax(hi, a[i * d + j]);
        }
    }
    if (!(hi > lo))
        return 0.0;
    double p[64] = {0}, q[64] = {0}, np = 0, nq = 0, w = (hi - lo) / bins, s = 0;
    for (size_t i = 0; i < na; i++) {
        if (isnan(a[i * d + j]))
            continue;
        long k = (long)floor((a[i * d + j] - lo) / w);
        p[k < 0 ? 0 : k >= bins ? bins - 1 : k]++, np++;
    }
    for (size_t i = 0; i < nb; i++) {
        if (isnan(b[i * d + j]))
            continue;
        long k = (long)floor((b[i * d + j] - lo) / w);
        q[k < 0 ? 0 : k >= bins ? bins - 1 : k]++, nq++;
    }
    for (int k = 0; k < bins; k++) {
        double pk = fmax(p[k] / np, 1e-4), qk = fmax(q[k] / nq, 1e-4);
        s += (qk - pk) * log(qk / pk);
    }
    return s;
}
