/* lab01_ref.c — lab 01's references and fixtures (see lab01_ref.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // exp, log1p, fabs, sqrt, isnan, lroundf
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memcpy, memset

#include "dl/data.h" // dl_data_load
#include "dl/split.h" // dl_split_stratified
#include "grader.h" // GR_OK, GR_FAIL
#include "lab01_ref.h"

// ---- references (double precision, independent of the student's code) ----

/* Mean and population std of the non-NaN values of each column. */
void gr_ref_scaler(const float *X, size_t n, size_t d, double *mean, double *sd)
{
    for (size_t j = 0; j < d; j++) {
        double s = 0.0;
        size_t c = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isnan(X[i * d + j])) {
                s += X[i * d + j];
                c++;
            }
        }
        mean[j] = c ? s / (double)c : 0.0;
        double ss = 0.0;
        for (size_t i = 0; i < n; i++) {
            if (!isnan(X[i * d + j]))
                ss += (X[i * d + j] - mean[j]) * (X[i * d + j] - mean[j]);
        }
        sd[j] = c ? sqrt(ss / (double)c) : 0.0;
    }
}

double gr_ref_bce(double z, double y)
{
    return fmax(z, 0.0) - y * z + log1p(exp(-fabs(z)));
}

double gr_ref_sigmoid(double z)
{
    return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
}

/* J(w, b) and, when gw != NULL, its gradient, in double. */
double gr_ref_objective(const float *X, const float *y, size_t n, size_t d, const double *w, double b, double lambda,
                        double *gw, double *gb)
{
    double loss = 0.0, rb = 0.0, ww = 0.0;
    if (gw != NULL)
        memset(gw, 0, d * sizeof *gw);
    for (size_t i = 0; i < n; i++) {
        double z = b;
        for (size_t j = 0; j < d; j++)
            z += (double)X[i * d + j] * w[j];
        loss += gr_ref_bce(z, y[i]);
        double r = gr_ref_sigmoid(z) - y[i];
        rb += r;
        if (gw != NULL) {
            for (size_t j = 0; j < d; j++)
                gw[j] += r * X[i * d + j];
        }
    }
    for (size_t j = 0; j < d; j++)
        ww += w[j] * w[j];
    if (gw != NULL) {
        for (size_t j = 0; j < d; j++)
            gw[j] = gw[j] / (double)n + lambda * w[j];
        *gb = rb / (double)n;
    }
    return loss / (double)n + 0.5 * lambda * ww;
}

double gr_ref_objective_f(const float *X, const float *y, size_t n, size_t d, const float *w, float b, double lambda)
{
    double *wd = malloc(d * sizeof *wd);
    for (size_t j = 0; j < d; j++)
        wd[j] = w[j];
    double f = gr_ref_objective(X, y, n, d, wd, b, lambda, NULL, NULL);
    free(wd);
    return f;
}

/* Solves the (m, m) SPD system H x = g by Cholesky; H is overwritten. */
static int cholesky_solve(double *H, const double *g, double *x, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        double s = H[j * m + j];
        for (size_t k = 0; k < j; k++)
            s -= H[j * m + k] * H[j * m + k];
        if (s <= 0)
            return 0;
        H[j * m + j] = sqrt(s);
        for (size_t i = j + 1; i < m; i++) {
            double t = H[i * m + j];
            for (size_t k = 0; k < j; k++)
                t -= H[i * m + k] * H[j * m + k];
            H[i * m + j] = t / H[j * m + j];
        }
    }
    for (size_t i = 0; i < m; i++) { // L y = g
        double t = g[i];
        for (size_t k = 0; k < i; k++)
            t -= H[i * m + k] * x[k];
        x[i] = t / H[i * m + i];
    }
    for (size_t i = m; i-- > 0;) { // Lᵀ x = y
        double t = x[i];
        for (size_t k = i + 1; k < m; k++)
            t -= H[k * m + i] * x[k];
        x[i] = t / H[i * m + i];
    }
    return 1;
}

/* The optimum of J by Newton's method with backtracking; returns J*. */
double gr_ref_optimum(const float *X, const float *y, size_t n, size_t d, double lambda, double *w, double *b)
{
    size_t m = d + 1;
    double *H = calloc(m * m, sizeof *H), *g = malloc(m * sizeof *g), *step = malloc(m * sizeof *step);
    double *wt = malloc(d * sizeof *wt);
    memset(w, 0, d * sizeof *w);
    *b = 0.0;
    double f = gr_ref_objective(X, y, n, d, w, *b, lambda, g, &g[d]);
    for (int it = 0; it < 100; it++) {
        memset(H, 0, m * m * sizeof *H);
        for (size_t i = 0; i < n; i++) {
            double z = *b;
            for (size_t j = 0; j < d; j++)
                z += (double)X[i * d + j] * w[j];
            double p = gr_ref_sigmoid(z), s = p * (1 - p) / (double)n;
            for (size_t a = 0; a < m; a++) {
                double xa = a < d ? X[i * d + a] : 1.0;
                for (size_t c = 0; c <= a; c++) {
                    double xc = c < d ? X[i * d + c] : 1.0;
                    H[a * m + c] += s * xa * xc;
                }
            }
        }
        for (size_t a = 0; a < m; a++) {
            for (size_t c = 0; c < a; c++)
                H[c * m + a] = H[a * m + c];
            if (a < d)
                H[a * m + a] += lambda;
            else
                H[a * m + a] += 1e-12; // the bias is unpenalised; keep H definite
        }
        if (!cholesky_solve(H, g, step, m))
            break;
        double t = 1.0, fn = f;
        for (int ls = 0; ls < 40; ls++) {
            for (size_t j = 0; j < d; j++)
                wt[j] = w[j] - t * step[j];
            fn = gr_ref_objective(X, y, n, d, wt, *b - t * step[d], lambda, NULL, NULL);
            if (fn <= f)
                break;
            t *= 0.5;
        }
        memcpy(w, wt, d * sizeof *w);
        *b -= t * step[d];
        double prev = f;
        f = gr_ref_objective(X, y, n, d, w, *b, lambda, g, &g[d]);
        if (prev - f < 1e-16 * fabs(f))
            break;
    }
    free(H), free(g), free(step), free(wt);
    return f;
}

// ---- stand-ins: the judge's own versions of student functions an item needs but does not grade ----

dl_status gr_ref_loss_grad_f32(const float *X, const float *y, size_t n, size_t d, const float *w, float b,
                               float lambda, float *grad_w, float *grad_b, double *loss, float *work)
{
    (void)work;
    if (X == NULL || y == NULL || w == NULL || grad_w == NULL || grad_b == NULL || loss == NULL || n == 0 || d == 0)
        return dl_error_set(DL_ERR_ARG, "the grader's stand-in loss: NULL argument or empty X (n=%zu, d=%zu)", n, d);
    double *wd = malloc(d * sizeof *wd), *gw = malloc(d * sizeof *gw), gb = 0.0;
    if (wd == NULL || gw == NULL) {
        free(wd), free(gw);
        return dl_error_set(DL_ERR_NOMEM, "the grader's stand-in loss: out of memory for d=%zu", d);
    }
    for (size_t j = 0; j < d; j++)
        wd[j] = w[j];
    *loss = gr_ref_objective(X, y, n, d, wd, b, lambda, gw, &gb);
    for (size_t j = 0; j < d; j++)
        grad_w[j] = (float)gw[j];
    *grad_b = (float)gb;
    free(wd), free(gw);
    return DL_OK;
}

dl_status gr_ref_accuracy_f32(const float *X, const float *y, size_t n, size_t d, const logreg_model *m, double *acc)
{
    if (X == NULL || y == NULL || m == NULL || acc == NULL || n == 0 || m->d != d)
        return dl_error_set(DL_ERR_ARG, "the grader's stand-in accuracy: NULL argument, no rows or a model of the "
                                        "wrong size");
    size_t right = 0;
    for (size_t i = 0; i < n; i++) {
        double z = m->b;
        for (size_t j = 0; j < d; j++)
            z += (double)X[i * d + j] * m->w[j];
        right += (gr_ref_sigmoid(z) >= 0.5) == (y[i] >= 0.5f);
    }
    *acc = (double)right / (double)n;
    return DL_OK;
}

// ---- fixtures: breast_cancer split and scaled by the grader itself ----

void gr_bc_load(bc_data *bc)
{
    dl_data data;
    GR_OK(dl_data_load("breast_cancer", &data));
    const double fr[3] = {0.6, 0.2, 0.2};
    dl_split sp;
    GR_OK(dl_split_stratified(data.train.y, data.train.n, 2, fr, 3, 1, &sp));
    size_t d = data.train.d;
    bc->d = d;
    for (int p = 0; p < 3; p++) {
        size_t m = dl_split_size(&sp, p);
        bc->n[p] = m;
        bc->raw[p] = malloc(m * d * sizeof(float));
        bc->scaled[p] = malloc(m * d * sizeof(float));
        bc->y[p] = malloc(m * sizeof(float));
        for (size_t i = 0; i < m; i++) {
            size_t r = sp.idx[sp.offset[p] + i];
            memcpy(bc->raw[p] + i * d, data.train.X + r * d, d * sizeof(float));
            bc->y[p][i] = (float)data.train.y[r];
        }
    }
    double *mean = malloc(d * sizeof *mean), *sd = malloc(d * sizeof *sd);
    gr_ref_scaler(bc->raw[0], bc->n[0], d, mean, sd);
    for (int p = 0; p < 3; p++) {
        for (size_t k = 0; k < bc->n[p] * d; k++) {
            size_t j = k % d;
            bc->scaled[p][k] = (float)((bc->raw[p][k] - mean[j]) / (sd[j] > 0 ? sd[j] : 1.0));
        }
    }
    free(mean), free(sd);
    dl_split_free(&sp);
    dl_data_free(&data);
}

void gr_bc_free(bc_data *bc)
{
    for (int p = 0; p < 3; p++) {
        free(bc->raw[p]);
        free(bc->scaled[p]);
        free(bc->y[p]);
    }
}

logreg_config gr_default_config(void)
{
    logreg_config c = {LOGREG_DEFAULT_LR, LOGREG_DEFAULT_LAMBDA, LOGREG_DEFAULT_EPOCHS, 0, LOGREG_DEFAULT_TOL, 1};
    return c;
}

/* Trains on (X, y) with cfg on dev; the caller frees m and c. */
void gr_train_on(const dl_device *dev, const float *X, const float *y, size_t n, size_t d, const float *Xv,
                 const float *yv, size_t nv, const logreg_config *cfg, logreg_model *m, logreg_curve *c,
                 logreg_engine *e_out)
{
    logreg_engine e;
    GR_OK(logreg_engine_init(&e, dev, X, y, n, d));
    GR_OK(logreg_model_alloc(m, d));
    GR_OK(logreg_curve_alloc(c, cfg->epochs));
    dl_status st = logreg_train(&e, Xv, yv, nv, cfg, m, c);
    if (e_out != NULL)
        *e_out = e;
    else
        logreg_engine_free(&e);
    if (st != DL_OK)
        GR_FAIL("logreg_train returned %s: %s", dl_status_name(st), dl_last_error());
    if (c->n < 1 || c->n > c->capacity)
        GR_FAIL("logreg_train recorded %d curve entries, expected 1 to %d (epochs + 1)", c->n, c->capacity);
}

float *gr_rand_matrix(dl_rng *r, size_t n, size_t d, double mean, double spread)
{
    float *X = malloc((n * d > 0 ? n * d : 1) * sizeof *X);
    for (size_t i = 0; i < n * d; i++)
        X[i] = (float)(mean + spread * dl_rng_normal(r));
    return X;
}

problem gr_make_problem(uint64_t seed, size_t n, size_t d, float lambda, double wscale)
{
    dl_rng r;
    dl_rng_seed(&r, seed, 3);
    problem p = {n,
                 d,
                 gr_rand_matrix(&r, n, d, 0.0, 1.0),
                 malloc(n * sizeof(float)),
                 gr_rand_matrix(&r, d, 1, 0.0, wscale),
                 (float)(0.3 * dl_rng_normal(&r)),
                 lambda};
    for (size_t i = 0; i < n; i++)
        p.y[i] = (float)(dl_rng_uniform(&r) < 0.4);
    return p;
}

void gr_free_problem(problem *p)
{
    free(p->X), free(p->y), free(p->w);
}

/* Row i of a batch: its id, from column 0 of the grader's own rows at the
 * index passed, or of the rows passed; v->n when it names no row. */
static size_t row_id(const visits *v, const float *X, const size_t *idx, size_t i)
{
    if (idx != NULL && idx[i] >= v->n)
        return v->n;
    float x0 = idx != NULL ? v->resident[idx[i] * v->d] : X[i * v->d];
    long id = lroundf(x0 * 1024.0f);
    return id >= 0 && (size_t)id < v->n ? (size_t)id : v->n;
}

void gr_visits_observe(void *ctx, const float *X, const float *y, const size_t *idx, size_t n)
{
    (void)y;
    visits *v = ctx;
    if (idx == NULL && X == v->resident && n == v->n)
        return; // a full-batch evaluation
    if (idx == NULL)
        v->host_batches++;
    if (n > v->bs)
        v->bad_size = 1;
    size_t epoch = v->rows_seen / v->n;
    for (size_t i = 0; i < n; i++) {
        size_t id = row_id(v, X, idx, i);
        if (id < v->n && epoch < v->epochs_cap)
            v->seen[epoch * v->n + id]++;
    }
    if (v->batches < v->cap && n > 0)
        v->first[v->batches++] = row_id(v, X, idx, 0);
    v->rows_seen += n;
}
