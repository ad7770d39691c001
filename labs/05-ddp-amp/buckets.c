/* buckets.c — lab 05, task 1: gradient buckets, PyTorch's way. */
#include "ddp.h"

dl_status ddp_assign_buckets(const size_t *counts, int n, size_t elem_size, size_t first_cap, size_t cap,
                             ddp_bucket *out, int *n_buckets)
{
    if (n_buckets == NULL || n < 0 || n > DDP_MAX_PARAMS || (n > 0 && (counts == NULL || out == NULL)))
        return dl_error_set(DL_ERR_ARG, "ddp_assign_buckets: %d parameters (expected 0..%d) or a NULL pointer", n,
                            DDP_MAX_PARAMS);
    if (elem_size == 0 || first_cap == 0 || cap == 0)
        return dl_error_set(DL_ERR_ARG, "ddp_assign_buckets: elem_size %zu, first_cap %zu, cap %zu: none may be 0",
                            elem_size, first_cap, cap);
    for (int p = 0; p < n; p++)
        if (counts[p] == 0)
            return dl_error_set(DL_ERR_ARG, "ddp_assign_buckets: parameter %d has no elements", p);
    *n_buckets = 0;
    return DL_TODO("lab05 task 1: assign the parameters to buckets");
}
