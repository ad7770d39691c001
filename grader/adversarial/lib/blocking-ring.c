/* blocking-ring.c — blocking_ring(): lab 04's chunked ring without the
 * pipeline: each chunk is a blocking sendrecv, and in the reduce-scatter
 * add_chunk(c, dev, into, in, n, t) adds it (n may be 0) once it is in. Right
 * sums, right messages; nothing in flight while a chunk is added. */
#include "ring.h"

static int mod(int a, int P)
{
    return ((a % P) + P) % P;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

typedef dl_status (*chunk_adder)(dl_comm *c, const dl_device *dev, void *into, void *in, size_t n, dl_dtype t);

static dl_status blocking_ring(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                               void *scratch, chunk_adder add_chunk)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t esz = dl_dtype_size(t), seg_max = (n + (size_t)P - 1) / (size_t)P;
    char *b = buf;
    chunk = min_size(chunk, seg_max);
    chunk = chunk ? chunk : 1;
    for (int phase = 0; phase < 2; phase++) { // reduce-scatter (add), then all-gather
        for (int k = 0; k < P - 1; k++) {
            int s_send = mod(r - k - 1 + phase, P), s_recv = mod(r - k - 2 + phase, P);
            size_t cs = ring_segment_count(n, P, s_send), cr = ring_segment_count(n, P, s_recv);
            char *send = b + ring_segment_offset(n, P, s_send) * esz, *recv = b + ring_segment_offset(n, P, s_recv) * esz;
            for (size_t at = 0; at < seg_max; at += chunk) {
                size_t ns = at < cs ? min_size(chunk, cs - at) : 0, nr = at < cr ? min_size(chunk, cr - at) : 0;
                DL_TRY(dl_comm_sendrecv(c, send + at * esz, ns, mod(r + 1, P), phase ? recv + at * esz : scratch, nr,
                                        mod(r - 1, P), t));
                if (!phase)
                    DL_TRY(add_chunk(c, dev, recv + at * esz, scratch, nr, t));
            }
        }
    }
    return DL_OK;
}
