/* dl/bandwidth.h — the kit's one bandwidth formula: algorithm bandwidth, bus
 * bandwidth, and the α–β time of a ring collective built on them. Lab 04's
 * benchmark, its grader and the speedup projection (dl/project.h) all call
 * these functions; none repeats the arithmetic.
 *
 * Contract (nccl-tests' definitions: NVIDIA/nccl-tests, doc/PERFORMANCE.md,
 * "Algorithm bandwidth", "Bus bandwidth" and its "Summary")
 * - bytes is nccl-tests' S, the size of the whole vector, the same on every
 *   rank: allreduce and broadcast — the buffer (count x element size);
 *   reduce-scatter — the input, P x the count each rank receives; all-gather —
 *   the output, P x the count each rank sends.
 * - algbw = S / t (bytes per second).
 * - busbw = algbw x factor, where factor is the share of S that must cross
 *   each rank's link in an optimal algorithm, so that busbw can be compared
 *   with the hardware's link bandwidth whatever P is:
 *       allreduce        2(P-1)/P   (P-1 additions and P-1 copies per element)
 *       reduce-scatter   (P-1)/P
 *       all-gather       (P-1)/P
 *       broadcast        1          (all of S leaves the root)
 * - P = 1: the closed forms give 0 for allreduce, reduce-scatter and
 *   all-gather — nothing crosses a link, so their busbw is 0 (nccl-tests print
 *   0.00 too) — and 1 for broadcast, whose formula has no P. dl_bw_seconds of
 *   a world of one is 0 for every collective: it communicates nothing.
 * - Invalid input gives NaN, which shows in whatever is computed from it:
 *   ranks < 1, an unknown collective, seconds <= 0 or negative bytes.
 *   (dl_bw_ring_steps gives -1.) None of these can fail otherwise.
 */
#ifndef DL_BANDWIDTH_H
#define DL_BANDWIDTH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_bw_coll {
    DL_BW_ALLREDUCE = 0,
    DL_BW_REDUCE_SCATTER,
    DL_BW_ALLGATHER,
    DL_BW_BROADCAST,
    DL_BW_COLL_COUNT
} dl_bw_coll;

/* "allreduce", "reduce_scatter", "allgather", "broadcast"; "?" when unknown. */
const char *dl_bw_coll_name(dl_bw_coll c);
/* busbw / algbw for c on ranks ranks (the table above). */
double dl_bw_factor(dl_bw_coll c, int ranks);
/* bytes / seconds. */
double dl_bw_algbw(double bytes, double seconds);
/* dl_bw_algbw(bytes, seconds) x dl_bw_factor(c, ranks). */
double dl_bw_busbw(dl_bw_coll c, int ranks, double bytes, double seconds);
/* Sequential transfers of one call of c on a ring of ranks ranks, each paying
 * one hop's latency: allreduce 2(P-1) (reduce-scatter, then all-gather);
 * reduce-scatter and all-gather P-1; broadcast P-1 (a pipelined chain from
 * the root). 0 for P = 1. */
int dl_bw_ring_steps(dl_bw_coll c, int ranks);
/* The α–β time of `calls` calls of c on ranks ranks that move `bytes` in all
 * (the calls' S summed), with `latency` seconds per hop and a bus bandwidth
 * of busbw bytes/s:
 *     calls x dl_bw_ring_steps(c, P) x latency + dl_bw_factor(c, P) x bytes / busbw
 * 0 when ranks = 1. */
double dl_bw_seconds(dl_bw_coll c, int ranks, double calls, double bytes, double latency, double busbw);

#ifdef __cplusplus
}
#endif
#endif /* DL_BANDWIDTH_H */
