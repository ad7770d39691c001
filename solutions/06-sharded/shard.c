/* shard.c — lab 06, tasks 1 and 2: where the shards lie, and the two halves
 * of the ring on them: a reduce-scatter to the mean and an all-gather. */
#include "shard.h"

size_t shard_offset(size_t n, int P, int s)
{
    /* BEGIN SOLUTION */
    size_t base = n / (size_t)P, longer = n % (size_t)P, k = (size_t)s;
    return k * base + (k < longer ? k : longer);
    /* END SOLUTION */
    /* STUDENT: return 0; // TODO(lab06 task 1): where shard s starts: the first n mod P shards are one longer */
}

size_t shard_count(size_t n, int P, int s)
{
    /* BEGIN SOLUTION */
    return shard_offset(n, P, s + 1) - shard_offset(n, P, s);
    /* END SOLUTION */
    /* STUDENT: return 0; // TODO(lab06 task 1): how many elements shard s holds */
}

static dl_status check(const char *what, dl_comm *c, const dl_device *dev, const float *buf, size_t n)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL))
        return dl_error_set(DL_ERR_ARG, "%s: need a comm, a device and a buffer", what);
    return DL_OK;
}

/* BEGIN SOLUTION */
/* The shard that is k places to the left of s on a ring of P. */
static int left_of(int s, int k, int P)
{
    return ((s - k) % P + P) % P;
}
/* END SOLUTION */

dl_status shard_reduce_scatter(dl_comm *c, const dl_device *dev, float *buf, size_t n, float *scratch)
{
    DL_TRY(check("shard_reduce_scatter", c, dev, buf, n));
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    if (P > 1 && n > 0 && scratch == NULL)
        return dl_error_set(DL_ERR_ARG, "shard_reduce_scatter: no scratch for %zu elements over %d ranks", n, P);
    for (int k = 0; k < P - 1; k++) {
        // step k: pass on shard r − 1 − k, whose partial sum grew last step; take in
        // shard r − 2 − k and add it; after P − 1 steps the last one taken in is shard r
        // in the same number of pieces on every rank (those of the largest shard), so that every call pairs
        int out = left_of(r, 1 + k, P), in = left_of(r, 2 + k, P);
        size_t n_out = shard_count(n, P, out), n_in = shard_count(n, P, in);
        float *from = buf + shard_offset(n, P, out), *into = buf + shard_offset(n, P, in);
        for (size_t at = 0; at < shard_count(n, P, 0); at += SHARD_CHUNK) {
            size_t o = at < n_out ? n_out - at : 0, i = at < n_in ? n_in - at : 0;
            o = o < SHARD_CHUNK ? o : SHARD_CHUNK;
            i = i < SHARD_CHUNK ? i : SHARD_CHUNK;
            DL_TRY(dl_comm_sendrecv(c, from + at, o, (r + 1) % P, scratch, i, left_of(r, 1, P), DL_F32));
            DL_TRY(dl_add(dev, into + at, scratch, i, DL_F32));
        }
    }
    return dl_scale(dev, buf + shard_offset(n, P, r), shard_count(n, P, r), DL_F32, 1.0f / (float)P);
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 2: your lab 04 reduce-scatter on these shards, then the mean"); */
}

dl_status shard_all_gather(dl_comm *c, const dl_device *dev, float *buf, size_t n)
{
    DL_TRY(check("shard_all_gather", c, dev, buf, n));
    /* BEGIN SOLUTION */
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    for (int k = 0; k < P - 1; k++) {
        // step k: pass on shard r − k (complete here), take in shard r − 1 − k in its place
        int out = left_of(r, k, P), in = left_of(r, 1 + k, P);
        DL_TRY(dl_comm_sendrecv(c, buf + shard_offset(n, P, out), shard_count(n, P, out), (r + 1) % P,
                                buf + shard_offset(n, P, in), shard_count(n, P, in), left_of(r, 1, P), DL_F32));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab06 task 2: your lab 04 all-gather on these shards"); */
}
