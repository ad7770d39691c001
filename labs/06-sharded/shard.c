/* shard.c — lab 06, tasks 1 and 2: where the shards lie, and the two halves
 * of the ring on them: a reduce-scatter to the mean and an all-gather. */
#include "shard.h"

size_t shard_offset(size_t n, int P, int s)
{
    return 0; // TODO(lab06 task 1): where shard s starts: the first n mod P shards are one longer
}

size_t shard_count(size_t n, int P, int s)
{
    return 0; // TODO(lab06 task 1): how many elements shard s holds
}

static dl_status check(const char *what, dl_comm *c, const dl_device *dev, const float *buf, size_t n)
{
    if (c == NULL || dev == NULL || (n > 0 && buf == NULL))
        return dl_error_set(DL_ERR_ARG, "%s: need a comm, a device and a buffer", what);
    return DL_OK;
}


dl_status shard_reduce_scatter(dl_comm *c, const dl_device *dev, float *buf, size_t n, float *scratch)
{
    DL_TRY(check("shard_reduce_scatter", c, dev, buf, n));
    return DL_TODO("lab06 task 2: your lab 04 reduce-scatter on these shards, then the mean");
}

dl_status shard_all_gather(dl_comm *c, const dl_device *dev, float *buf, size_t n)
{
    DL_TRY(check("shard_all_gather", c, dev, buf, n));
    return DL_TODO("lab06 task 2: your lab 04 all-gather on these shards");
}
