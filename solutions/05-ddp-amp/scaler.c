/* scaler.c — lab 05, task 4: the dynamic loss scaler, GradScaler's state machine. */
#include <math.h> // isfinite

#include "amp.h"

dl_status amp_scaler_update(amp_scaler *s, int found_inf, int *skip)
{
    if (s == NULL || skip == NULL)
        return dl_error_set(DL_ERR_ARG, "amp_scaler_update: NULL scaler or skip");
    /* BEGIN SOLUTION */
    if (found_inf) {
        s->scale *= s->backoff_factor; // too large: back off, and this step is thrown away
        s->growth_tracker = 0;
        *skip = 1;
        return DL_OK;
    }
    *skip = 0;
    if (++s->growth_tracker >= s->growth_interval) {
        float grown = s->scale * s->growth_factor;
        if (isfinite(grown)) // the scale only grows to a finite value
            s->scale = grown;
        s->growth_tracker = 0;
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: (void)found_inf; */
    /* STUDENT: return DL_TODO("lab05 task 4: GradScaler's update: back off and skip on inf; grow on the growth_interval-th good step in a row"); */
}
