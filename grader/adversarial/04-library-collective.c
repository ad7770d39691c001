// attack: the ring's reduce-scatter, all-gather and allreduce let the library's allreduce do the work; right results
// lab: 04
// base: reference
// file: ring.c
// replace: yes
// paths: grade
// lose: reduce_scatter all_gather allreduce bandwidth_optimal fp16 chunked bench
// expect: library-collective
#include "ring.h"

size_t ring_segment_offset(size_t n, int P, int s)
{
    size_t q = n / (size_t)P, rem = n % (size_t)P, k = (size_t)s;
    return k * q + (k < rem ? k : rem);
}

size_t ring_segment_count(size_t n, int P, int s)
{
    return ring_segment_offset(n, P, s + 1) - ring_segment_offset(n, P, s);
}

dl_status ring_reduce_scatter(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    (void)dev;
    (void)scratch;
    return dl_comm_allreduce(c, buf, n, t, DL_RED_SUM); // segment r holds the sum, and so does the rest
}

dl_status ring_all_gather(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t)
{
    // every segment but its own zeroed, then summed: each complete segment once
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t esz = dl_dtype_size(t), lo = ring_segment_offset(n, P, r), hi = ring_segment_offset(n, P, r + 1);
    DL_TRY(dl_memset0(dev, buf, lo * esz));
    DL_TRY(dl_memset0(dev, (char *)buf + hi * esz, (n - hi) * esz));
    return dl_comm_allreduce(c, buf, n, t, DL_RED_SUM);
}

dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    (void)dev;
    (void)scratch;
    return dl_comm_allreduce(c, buf, n, t, DL_RED_SUM);
}
