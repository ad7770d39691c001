/* bandwidth.c — dl/bandwidth.h: nccl-tests' algbw and busbw, and the α–β time
 * of a ring collective. */
#include "dl/bandwidth.h"

#include <math.h> // NAN

static const char *const names[DL_BW_COLL_COUNT] = {"allreduce", "reduce_scatter", "allgather", "broadcast"};

const char *dl_bw_coll_name(dl_bw_coll c)
{
    return (unsigned)c < DL_BW_COLL_COUNT ? names[c] : "?";
}

double dl_bw_factor(dl_bw_coll c, int ranks)
{
    if (ranks < 1)
        return NAN;
    switch (c) {
    case DL_BW_ALLREDUCE:
        return 2.0 * (ranks - 1) / ranks;
    case DL_BW_REDUCE_SCATTER:
    case DL_BW_ALLGATHER:
        return (double)(ranks - 1) / ranks;
    case DL_BW_BROADCAST:
        return 1.0;
    default:
        return NAN;
    }
}

double dl_bw_algbw(double bytes, double seconds)
{
    if (!(seconds > 0) || !(bytes >= 0))
        return NAN;
    return bytes / seconds;
}

double dl_bw_busbw(dl_bw_coll c, int ranks, double bytes, double seconds)
{
    return dl_bw_algbw(bytes, seconds) * dl_bw_factor(c, ranks);
}

int dl_bw_ring_steps(dl_bw_coll c, int ranks)
{
    if (ranks < 1 || (unsigned)c >= DL_BW_COLL_COUNT)
        return -1;
    return c == DL_BW_ALLREDUCE ? 2 * (ranks - 1) : ranks - 1;
}

double dl_bw_seconds(dl_bw_coll c, int ranks, double calls, double bytes, double latency, double busbw)
{
    if (ranks < 1 || (unsigned)c >= DL_BW_COLL_COUNT || !(bytes >= 0))
        return NAN;
    if (ranks == 1)
        return 0.0; // a world of one communicates nothing
    // one latency per sequential hop of each call; each byte of S crosses the
    // busiest link factor times, at the bus bandwidth
    return calls * dl_bw_ring_steps(c, ranks) * latency + dl_bw_factor(c, ranks) * bytes / busbw;
}
