// attack: the ring allreduce calls the library, resets the traffic counters, and sends to itself until they read what a ring sends (refused at build: the counters are the kit's; were it built, the judge would say library-collective from the transport's log)
// lab: 04
// base: reference
// file: ring.c
// replace: yes
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_comm_stats_(get|reset)
/* ring.c — lab 04, tasks 2-4: segments, the ring reduce-scatter, the ring
 * all-gather, and the ring allreduce. */
#include "ring.h"

size_t ring_segment_offset(size_t n, int P, int s)
{
    size_t q = n / (size_t)P, rem = n % (size_t)P, k = (size_t)s;
    return k * q + (k < rem ? k : rem); // the first n mod P segments are one longer
}

size_t ring_segment_count(size_t n, int P, int s)
{
    return ring_segment_offset(n, P, s + 1) - ring_segment_offset(n, P, s);
}

static int ring_mod(int a, int P)
{
    return ((a % P) + P) % P;
}

static void *segment(void *buf, size_t n, int P, int s, dl_dtype t)
{
    return (char *)buf + ring_segment_offset(n, P, s) * dl_dtype_size(t);
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
}

dl_status ring_all_gather(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t)
{
    DL_TRY(check("ring_all_gather", c, dev, buf, n, t));
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    int right = ring_mod(r + 1, P), left = ring_mod(r - 1, P);
    for (int k = 0; k < P - 1; k++) {
        int s_send = ring_mod(r - k, P), s_recv = ring_mod(r - k - 1, P);
        DL_TRY(dl_comm_sendrecv(c, segment(buf, n, P, s_send, t), ring_segment_count(n, P, s_send), right,
                                segment(buf, n, P, s_recv, t), ring_segment_count(n, P, s_recv), left, t));
    }
    return DL_OK;
}

/* The attack: the library sums; the counters are reset and refilled with
 * messages to itself (from buf into buf: nothing is copied) until the call
 * reads as a ring's 2 (P - 1) segments in 2 (P - 1) messages. */
dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_allreduce", c, dev, buf, n, t));
    (void)scratch;
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t esz = dl_dtype_size(t);
    dl_comm_stats before;
    dl_comm_stats_get(c, &before);
    DL_TRY(dl_comm_allreduce(c, buf, n, t, DL_RED_SUM));
    dl_comm_stats_reset(c);
    uint64_t bytes = before.bytes[DL_OP_SENDRECV], msgs = before.messages;
    for (int k = 0; k < P - 1; k++) {
        size_t a = ring_segment_count(n, P, ring_mod(r - k - 1, P)), b = ring_segment_count(n, P, ring_mod(r - k, P));
        bytes += (a + b) * esz;
        msgs += (a > 0) + (b > 0);
    }
    for (uint64_t k = 0; msgs > 0 && k + 1 < msgs; k++)
        DL_TRY(dl_comm_sendrecv(c, buf, 1, r, buf, 1, r, t));
    if (msgs > 0) {
        size_t rest = (size_t)(bytes / esz - (msgs - 1));
        DL_TRY(dl_comm_sendrecv(c, buf, rest, r, buf, rest, r, t));
    }
    // empty calls, so that no counter reads less than before
    dl_comm_stats now;
    dl_comm_stats_get(c, &now);
    for (uint64_t k = now.calls[DL_OP_SENDRECV]; k < before.calls[DL_OP_SENDRECV]; k++)
        DL_TRY(dl_comm_sendrecv(c, buf, 0, r, buf, 0, r, t));
    return DL_OK;
}
