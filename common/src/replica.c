/* replica.c — the cross-rank copy check. See dl/replica.h. */
#include "dl/replica.h"

#include <math.h> // fabs, isnan, INFINITY, NAN
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy

/* |a − b| where two NaNs are equal and a NaN against a number is +inf. */
static double gap(float a, float b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0.0 : INFINITY;
    return fabs((double)a - (double)b);
}

dl_status dl_replica_diff(dl_comm *c, const float *x, size_t n, double *diff)
{
    *diff = 0;
    if (dl_comm_size(c) == 1 || n == 0)
        return DL_OK;
    *diff = NAN;
    float *x0 = malloc(n * sizeof *x0);
    if (x0 == NULL)
        return dl_error_set(DL_ERR_NOMEM, "replica: out of memory for %zu values", n);
    memcpy(x0, x, n * sizeof *x0);
    dl_status st = dl_comm_broadcast(c, x0, n, DL_F32, 0);
    double mx = 0;
    for (size_t k = 0; st == DL_OK && k < n; k++) {
        double g = gap(x[k], x0[k]);
        mx = g > mx ? g : mx;
    }
    free(x0);
    if (st == DL_OK)
        st = dl_comm_allreduce(c, &mx, 1, DL_F64, DL_RED_MAX);
    if (st == DL_OK)
        *diff = mx;
    return st;
}

dl_status dl_replica_mlp_diff(dl_comm *c, const dl_mlp *m, double *diff)
{
    *diff = 0;
    if (dl_comm_size(c) == 1)
        return DL_OK;
    *diff = NAN;
    float *p = malloc((m->n_params ? m->n_params : 1) * sizeof *p);
    if (p == NULL)
        return dl_error_set(DL_ERR_NOMEM, "replica: out of memory for %zu parameters", m->n_params);
    dl_status st = dl_mlp_get_params(m, p);
    if (st == DL_OK)
        st = dl_replica_diff(c, p, m->n_params, diff);
    free(p);
    return st;
}
