/* chunked.c — lab 04, task 5: the pipelined ring. */
#include "ring.h"


dl_status ring_allreduce_chunked(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                                 void *scratch)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL) || (t != DL_F32 && t != DL_F16) || chunk == 0)
        return dl_error_set(DL_ERR_ARG, "ring_allreduce_chunked: need a comm, a device, f32 or f16, chunk >= 1");
    return DL_TODO("lab04 task 5: the ring with each segment in chunks, the next one in flight");
}
