// attack: none, an honest chunked-ring mistake that must cost the chunked item alone: each rank makes as many chunk calls as its own segments need, so with n < P a rank whose segments are empty makes fewer than its neighbours
// lab: 04
// base: reference
// file: chunked.c
// replace: yes
// paths: grade
// lose: chunked
// expect: empty-call-skipped
/* chunked.c — lab 04, task 5: the pipelined ring. */
#include "ring.h"

static int ring_mod(int a, int P)
{
    return ((a % P) + P) % P;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* One ring step in chunks, with as many calls as this rank's own two
 * segments need (the mistake: its neighbours may need more). */
static dl_status step(dl_comm *c, const dl_device *dev, const char *send, size_t count_s, int right, char *recv,
                      size_t count_r, int left, dl_dtype t, size_t chunk, size_t seg_max, char *scratch, int add)
{
    size_t esz = dl_dtype_size(t);
    // as many chunk calls as this rank's own segments need: none where both are empty
    size_t longest = count_s > count_r ? count_s : count_r, chunks = (longest + chunk - 1) / chunk;
    (void)seg_max;
    dl_comm_req *req[2] = {NULL, NULL};
    for (size_t j = 0; j <= chunks; j++) {
        if (j < chunks) { // start chunk j
            size_t at = j * chunk;
            size_t ns = at < count_s ? min_size(chunk, count_s - at) : 0;
            size_t nr = at < count_r ? min_size(chunk, count_r - at) : 0;
            char *into = add ? scratch + (j % 2) * chunk * esz : recv + at * esz;
            DL_TRY(dl_comm_isendrecv(c, send + at * esz, ns, right, into, nr, left, t, &req[j % 2]));
        }
        if (j > 0) { // finish chunk j - 1 while chunk j travels
            size_t k = j - 1, at = k * chunk;
            DL_TRY(dl_comm_wait(c, req[k % 2]));
            req[k % 2] = NULL;
            size_t nr = at < count_r ? min_size(chunk, count_r - at) : 0;
            if (add && nr > 0)
                DL_TRY(dl_add(dev, recv + at * esz, scratch + (k % 2) * chunk * esz, nr, t));
        }
    }
    return DL_OK;
}

dl_status ring_allreduce_chunked(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                                 void *scratch)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL) || (t != DL_F32 && t != DL_F16) || chunk == 0)
        return dl_error_set(DL_ERR_ARG, "ring_allreduce_chunked: need a comm, a device, f32 or f16, chunk >= 1");
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    int right = ring_mod(r + 1, P), left = ring_mod(r - 1, P);
    size_t esz = dl_dtype_size(t);
    char *b = buf;
    size_t seg_max = (n + (size_t)P - 1) / (size_t)P;
    chunk = min_size(chunk, seg_max); // no chunk longer than a segment
    if (chunk == 0)
        chunk = 1;
    for (int k = 0; k < P - 1; k++) { // reduce-scatter, as in ring.c
        int s_send = ring_mod(r - k - 1, P), s_recv = ring_mod(r - k - 2, P);
        DL_TRY(step(c, dev, b + ring_segment_offset(n, P, s_send) * esz, ring_segment_count(n, P, s_send), right,
                    b + ring_segment_offset(n, P, s_recv) * esz, ring_segment_count(n, P, s_recv), left, t, chunk,
                    seg_max, scratch, 1));
    }
    for (int k = 0; k < P - 1; k++) { // all-gather
        int s_send = ring_mod(r - k, P), s_recv = ring_mod(r - k - 1, P);
        DL_TRY(step(c, dev, b + ring_segment_offset(n, P, s_send) * esz, ring_segment_count(n, P, s_send), right,
                    b + ring_segment_offset(n, P, s_recv) * esz, ring_segment_count(n, P, s_recv), left, t, chunk,
                    seg_max, scratch, 0));
    }
    return DL_OK;
}
