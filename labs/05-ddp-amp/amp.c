/* amp.c — lab 05, task 5: one mixed-precision step — fp16 forward and
 * backward, fp32 master weights, the loss scaled, every rank deciding alike. */
#include <stdint.h> // int32_t

#include "amp.h"
#include "dl/ops.h" // dl_cast, dl_unscale

dl_status amp_step(ddp_reducer *r, amp_scaler *s, const ddp_micro *mb, const ddp_sgd *opt, double *loss, int *skipped)
{
    if (r == NULL || r->model == NULL || s == NULL || mb == NULL || opt == NULL || skipped == NULL || r->accum < 1)
        return dl_error_set(DL_ERR_ARG, "amp_step: NULL argument or accum < 1");
    return DL_TODO("lab05 task 5: the fp16 step with fp32 master weights and the loss scaler");
}
