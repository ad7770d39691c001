/* lab05_calls.c — lab 05's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). Only the
 * bucket assignment is called in-process; the reducer is judged from the
 * driver's runs (its dumps and the kit's trace). */
#define _POSIX_C_SOURCE 200809L
#include "ddp.h"
#include "replay.h"

#define T1 "lab05 task 1"

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
