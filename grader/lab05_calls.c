/* lab05_calls.c — lab 05's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). The bucket
 * assignment and the loss scaler are called in-process; the reducer and the
 * AMP step are judged from the driver's runs (its dumps and the kit's
 * trace). */
#define _POSIX_C_SOURCE 200809L
#include "amp.h"
#include "replay.h"

#define T1 "lab05 task 1"
#define T4 "lab05 task 4"

GR_DECLARE(ddp_assign_buckets);
dl_status GR_FN(ddp_assign_buckets)(const size_t *counts, int n, size_t elem_size, size_t first_cap, size_t cap,
                                    ddp_bucket *out, int *n_buckets)
{
    gr_call c;
    gr_call_begin(&c, "ddp_assign_buckets", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_assign_buckets)(counts, n, elem_size, first_cap, cap, out, n_buckets);
    gr_out(&c, n_buckets, sizeof *n_buckets);
    gr_out(&c, out, (n > 0 && n <= DDP_MAX_PARAMS ? (size_t)n : 0) * sizeof *out);
    return gr_call_end(&c, st);
}

GR_DECLARE(amp_scaler_update);
dl_status GR_FN(amp_scaler_update)(amp_scaler *s, int found_inf, int *skip)
{
    gr_call c;
    gr_call_begin(&c, "amp_scaler_update", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(amp_scaler_update)(s, found_inf, skip);
    if (s != NULL)
        gr_out(&c, s, sizeof *s);
    if (skip != NULL)
        gr_out(&c, skip, sizeof *skip);
    return gr_call_end(&c, st);
}

#define LAB05_CKPT_CALLS
#include "lab05_ckpt.c"
