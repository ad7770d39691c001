/* dl/ring.h — the kit's ring allreduce: lab 04's algorithm, for the labs
 * after it that move activations with it (lab 07's tensor parallelism), and
 * its traffic in closed form.
 *
 * Contract
 * - Segments: n elements cut into P contiguous segments, segment s starting
 *   at dl_ring_offset(n, P, s); the first n mod P segments hold one element
 *   more than the others (n = 10, P = 3: 4, 3, 3); dl_ring_offset(n, P, P) = n.
 *   The labs that split a dimension over ranks split it the same way.
 * - dl_ring_allreduce(c, dev, buf, n, t, scratch): every rank of c calls it
 *   with the same n and t (DL_F32 or DL_F16); afterwards buf holds the sum
 *   over the ranks, the same bits on every rank. P − 1 reduce-scatter steps
 *   then P − 1 all-gather steps, each a dl_comm_sendrecv to the right
 *   neighbour and from the left one; adds with dl_add (so on any device).
 *   scratch holds at least dl_ring_offset(n, P, 1) elements of t on dev
 *   (the largest segment). P = 1 returns at once. DL_ERR_ARG for bad
 *   arguments; otherwise a failing call's status.
 * - dl_ring_bytes(n, P, r, esize): the bytes rank r hands to its sends in
 *   one dl_ring_allreduce of n elements of esize bytes, as dl_comm_stats
 *   counts them (DL_OP_SENDRECV's bytes): every segment but the one rank r
 *   completes, once in each phase, so about 2(P − 1)/P · n · esize. 0 for
 *   P = 1. Cannot fail.
 * - dl_ring_messages(n, P, r): the messages (sends with a count > 0) rank r
 *   sends in it: 2(P − 1) when n >= P. Cannot fail.
 */
#ifndef DL_RING_H
#define DL_RING_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/comm.h" // dl_comm
#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

size_t dl_ring_offset(size_t n, int P, int s);
dl_status dl_ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch);
uint64_t dl_ring_bytes(size_t n, int P, int r, size_t esize);
uint64_t dl_ring_messages(size_t n, int P, int r);

#ifdef __cplusplus
}
#endif
#endif /* DL_RING_H */
