/* ring.c — lab 04, tasks 2-4: segments, the ring reduce-scatter, the ring
 * all-gather, and the ring allreduce. */
#include "ring.h"

size_t ring_segment_offset(size_t n, int P, int s)
{
    /* BEGIN SOLUTION */
    size_t q = n / (size_t)P, rem = n % (size_t)P, k = (size_t)s;
    return k * q + (k < rem ? k : rem); // the first n mod P segments are one longer
    /* END SOLUTION */
    /* STUDENT: return 0; // TODO(lab04 task 2): where segment s starts: n mod P segments are one longer */
}

size_t ring_segment_count(size_t n, int P, int s)
{
    /* BEGIN SOLUTION */
    return ring_segment_offset(n, P, s + 1) - ring_segment_offset(n, P, s);
    /* END SOLUTION */
    /* STUDENT: return 0; // TODO(lab04 task 2): how many elements segment s holds */
}

/* BEGIN SOLUTION */
static int ring_mod(int a, int P)
{
    return ((a % P) + P) % P;
}

static void *segment(void *buf, size_t n, int P, int s, dl_dtype t)
{
    return (char *)buf + ring_segment_offset(n, P, s) * dl_dtype_size(t);
}
/* END SOLUTION */

static dl_status check(const char *what, dl_comm *c, const dl_device *dev, const void *buf, size_t n, dl_dtype t)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL) || (t != DL_F32 && t != DL_F16))
        return dl_error_set(DL_ERR_ARG, "%s: need a comm, a device and a buffer of f32 or f16", what);
    return DL_OK;
}

dl_status ring_reduce_scatter(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_reduce_scatter", c, dev, buf, n, t));
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    int right = ring_mod(r + 1, P), left = ring_mod(r - 1, P);
    for (int k = 0; k < P - 1; k++) {
        // step k: pass on the segment whose partial sum grew last step, take in
        // the one the left neighbour passes; the last one taken in is segment r
        int s_send = ring_mod(r - k - 1, P), s_recv = ring_mod(r - k - 2, P);
        size_t n_recv = ring_segment_count(n, P, s_recv);
        DL_TRY(dl_comm_sendrecv(c, segment(buf, n, P, s_send, t), ring_segment_count(n, P, s_send), right, scratch,
                                n_recv, left, t));
        DL_TRY(dl_add(dev, segment(buf, n, P, s_recv, t), scratch, n_recv, t));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab04 task 2: P - 1 steps, a segment right, a segment in from the left, added"); */
}

dl_status ring_all_gather(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t)
{
    DL_TRY(check("ring_all_gather", c, dev, buf, n, t));
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    int right = ring_mod(r + 1, P), left = ring_mod(r - 1, P);
    for (int k = 0; k < P - 1; k++) {
        int s_send = ring_mod(r - k, P), s_recv = ring_mod(r - k - 1, P);
        DL_TRY(dl_comm_sendrecv(c, segment(buf, n, P, s_send, t), ring_segment_count(n, P, s_send), right,
                                segment(buf, n, P, s_recv, t), ring_segment_count(n, P, s_recv), left, t));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab04 task 3: P - 1 steps that pass the complete segments around"); */
}

dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_allreduce", c, dev, buf, n, t));
    /* BEGIN SOLUTION */
    DL_TRY(ring_reduce_scatter(c, dev, buf, n, t, scratch));
    return ring_all_gather(c, dev, buf, n, t);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab04 task 4: the allreduce from tasks 2 and 3"); */
}
