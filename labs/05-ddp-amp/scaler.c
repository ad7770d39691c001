/* scaler.c — lab 05, task 4: the dynamic loss scaler, GradScaler's state machine. */
#include <math.h> // isfinite

#include "amp.h"

dl_status amp_scaler_update(amp_scaler *s, int found_inf, int *skip)
{
    if (s == NULL || skip == NULL)
        return dl_error_set(DL_ERR_ARG, "amp_scaler_update: NULL scaler or skip");
    (void)found_inf;
    return DL_TODO("lab05 task 4: GradScaler's update: back off and skip on inf; grow on the growth_interval-th good step in a row");
}
