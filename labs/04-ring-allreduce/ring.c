/* ring.c — lab 04, tasks 2-4: segments, the ring reduce-scatter, the ring
 * all-gather, and the ring allreduce. */
#include "ring.h"

size_t ring_segment_offset(size_t n, int P, int s)
{
    return 0; // TODO(lab04 task 2): where segment s starts: n mod P segments are one longer
}

size_t ring_segment_count(size_t n, int P, int s)
{
    return 0; // TODO(lab04 task 2): how many elements segment s holds
}


static dl_status check(const char *what, dl_comm *c, const dl_device *dev, const void *buf, size_t n, dl_dtype t)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL) || (t != DL_F32 && t != DL_F16))
        return dl_error_set(DL_ERR_ARG, "%s: need a comm, a device and a buffer of f32 or f16", what);
    return DL_OK;
}

dl_status ring_reduce_scatter(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_reduce_scatter", c, dev, buf, n, t));
    return DL_TODO("lab04 task 2: P - 1 steps, a segment right, a segment in from the left, added");
}

dl_status ring_all_gather(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t)
{
    DL_TRY(check("ring_all_gather", c, dev, buf, n, t));
    return DL_TODO("lab04 task 3: P - 1 steps that pass the complete segments around");
}

dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_allreduce", c, dev, buf, n, t));
    return DL_TODO("lab04 task 4: the allreduce from tasks 2 and 3");
}
