/* scaler.c — lab 01, task 1: a NaN-aware standard scaler. */
#include <math.h>   // isnan, sqrt
#include <stdlib.h> // calloc, free

#include "logreg.h"

dl_status logreg_scaler_fit(const float *X, size_t n, size_t d, logreg_scaler *s)
{
    if (X == NULL || s == NULL || s->mean == NULL || s->scale == NULL || n == 0 || d == 0 || s->d != d)
        return dl_error_set(DL_ERR_ARG, "logreg_scaler_fit: need n > 0 rows and a scaler allocated for d=%zu", d);
    return DL_TODO("lab01 task 1: fit the per-feature mean and std on the training rows");
}

dl_status logreg_scaler_transform(const logreg_scaler *s, const float *X, size_t n, float *out)
{
    if (s == NULL || X == NULL || out == NULL || s->d == 0)
        return dl_error_set(DL_ERR_ARG, "logreg_scaler_transform: NULL argument or unfitted scaler");
    return DL_TODO("lab01 task 1: standardise with the fitted mean and std, NaN -> 0");
}
