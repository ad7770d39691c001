/* scaler.c — lab 01, task 1: a NaN-aware standard scaler. */
#include <math.h>   // isnan, sqrt
#include <stdlib.h> // calloc, free

#include "logreg.h"

dl_status logreg_scaler_fit(const float *X, size_t n, size_t d, logreg_scaler *s)
{
    if (X == NULL || s == NULL || s->mean == NULL || s->scale == NULL || n == 0 || d == 0 || s->d != d)
        return dl_error_set(DL_ERR_ARG, "logreg_scaler_fit: need n > 0 rows and a scaler allocated for d=%zu", d);
    /* BEGIN SOLUTION */
    double *sum = calloc(d, sizeof *sum);
    double *ss = calloc(d, sizeof *ss);
    size_t *count = calloc(d, sizeof *count);
    if (sum == NULL || ss == NULL || count == NULL) {
        free(sum), free(ss), free(count);
        return dl_error_set(DL_ERR_NOMEM, "logreg_scaler_fit: out of memory");
    }
    // pass 1: the mean of the non-NaN values of each column
    for (size_t i = 0; i < n; i++) {
        const float *row = X + i * d;
        for (size_t j = 0; j < d; j++) {
            if (!isnan(row[j])) {
                sum[j] += row[j];
                count[j]++;
            }
        }
    }
    for (size_t j = 0; j < d; j++)
        sum[j] = count[j] > 0 ? sum[j] / (double)count[j] : 0.0; // sum now holds the mean
    // pass 2: squared deviations from that mean (no cancellation, unlike E[x²] − E[x]²)
    for (size_t i = 0; i < n; i++) {
        const float *row = X + i * d;
        for (size_t j = 0; j < d; j++) {
            if (!isnan(row[j])) {
                double dev = (double)row[j] - sum[j];
                ss[j] += dev * dev;
            }
        }
    }
    for (size_t j = 0; j < d; j++) {
        double sd = count[j] > 0 ? sqrt(ss[j] / (double)count[j]) : 0.0; // ddof = 0
        s->mean[j] = (float)sum[j];
        s->scale[j] = sd > 0.0 ? (float)sd : 1.0f;
    }
    free(sum), free(ss), free(count);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 1: fit the per-feature mean and std on the training rows"); */
}

dl_status logreg_scaler_transform(const logreg_scaler *s, const float *X, size_t n, float *out)
{
    if (s == NULL || X == NULL || out == NULL || s->d == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_scaler_transform: NULL argument or unfitted scaler");
    /* BEGIN SOLUTION */
    size_t d = s->d;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < d; j++) {
            float x = X[i * d + j];
            out[i * d + j] = isnan(x) ? 0.0f : (float)(((double)x - s->mean[j]) / s->scale[j]);
        }
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab01 task 1: standardise with the fitted mean and std, NaN -> 0"); */
}
