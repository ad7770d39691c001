/* naive.c — lab 04, task 1: the naive allreduce, through rank 0. */
#include "ring.h"

dl_status ring_naive_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    if (c == NULL || dev == NULL || (n > 0 && (buf == NULL || scratch == NULL)) || (t != DL_F32 && t != DL_F16))
        return dl_error_set(DL_ERR_ARG, "ring_naive_allreduce: need a comm, a device, buf and scratch, f32 or f16");
    return DL_TODO("lab04 task 1: gather to rank 0, add in rank order, send the sum back");
}
