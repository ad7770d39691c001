/* ring.h — lab 04: the AllReduce by hand. A naive allreduce through rank 0,
 * then the ring: reduce-scatter, all-gather, and both together, whole
 * segments or pipelined in chunks.
 *
 * This header is the contract between your code (naive.c, ring.c,
 * chunked.c), the benchmark driver (main.c) and the grader. Do not change it;
 * the handout (README.md) explains each task.
 *
 * Conventions
 * - Every function is called by every rank of c, with the same n, dtype and
 *   arguments, like a collective. P = dl_comm_size(c), r = dl_comm_rank(c).
 * - buf holds n elements of dtype t (DL_F32 or DL_F16) on dev: host memory on
 *   the CPU, device memory of dev on CUDA. Work in place: the result replaces
 *   buf. Move data only with dl_comm_sendrecv / dl_comm_isendrecv / dl_comm_wait
 *   (point-to-point: no dl_comm collective, which the grader refuses), add
 *   with dl_add, copy with dl_copy; the naive fp16 sum is kept wider than
 *   fp16 and rounded to fp16 once (dl/ops.h has what that takes); never touch
 *   device memory from the host.
 * - scratch holds ring_scratch_bytes(algo, n, P, t, chunk) bytes on dev; its
 *   contents on entry and on return are yours.
 * - Segments: the n elements are cut into P contiguous segments, segment s
 *   starting at ring_segment_offset(n, P, s); the first n mod P segments hold
 *   one element more than the others (n = 10, P = 3: 4, 3, 3). n may be 0,
 *   1, smaller than P, or anything else; a segment may be empty.
 * - Every function returns DL_OK, the status of a failing dl_comm or dl_add
 *   call, or DL_ERR_ARG for bad arguments. A skeleton returns DL_ERR_TODO.
 *   P = 1 is a world of one: nothing to send, the sum is buf itself.
 */
#ifndef LAB04_RING_H
#define LAB04_RING_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/bandwidth.h" // dl_bw_coll
#include "dl/comm.h" // dl_comm, dl_comm_sendrecv, dl_comm_isendrecv
#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/ops.h" // dl_add, dl_copy and the other element-wise calls
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

// ---- task 2 (part): where the segments lie (ring.c) ----

/* First element of segment s (0 <= s <= P; s = P gives n). */
size_t ring_segment_offset(size_t n, int P, int s);
/* Elements of segment s (0 <= s < P). */
size_t ring_segment_count(size_t n, int P, int s);

// ---- task 1: the naive allreduce (naive.c) ----

/* Every rank sends its buf to rank 0; rank 0 adds them up, in rank order
 * (0, 1, ..., P-1), and sends the sum back to every rank. fp16: rank 0
 * accumulates in fp32 and rounds to fp16 once, at the end. */
dl_status ring_naive_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch);

// ---- tasks 2-4: the ring (ring.c) ----

/* P - 1 steps: in each, every rank sends one segment to its right neighbour
 * (r + 1) mod P and receives one from its left neighbour (r - 1 + P) mod P,
 * adding what arrives into its own copy of that segment. Afterwards segment r
 * of rank r's buf holds the sum over all ranks of segment r (the others hold
 * partial sums). */
dl_status ring_reduce_scatter(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch);
/* P - 1 steps that start from segment r complete on rank r (as the
 * reduce-scatter leaves it) and circulate the complete segments until every
 * rank holds all P of them. */
dl_status ring_all_gather(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t);
/* The sum over all ranks of buf, in place, on every rank: reduce-scatter,
 * then all-gather. Identical on every rank. */
dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch);

// ---- task 5: the pipelined ring (chunked.c) ----

/* The same result as ring_allreduce, but each segment travels in chunks of
 * at most chunk elements (chunk >= 1), and while chunk k is being added the
 * next one is already on its way (dl_comm_isendrecv). */
dl_status ring_allreduce_chunked(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                                 void *scratch);

// ---- provided (kit.c) ----

typedef enum ring_algo {
    RING_NAIVE = 0,
    RING_RING, /* ring_allreduce */
    RING_CHUNKED, /* ring_allreduce_chunked */
    RING_LIBRARY, /* dl_comm_allreduce: MPI_Allreduce on the CPU, ncclAllReduce on GPUs */
    RING_REDUCE_SCATTER, /* ring_reduce_scatter alone */
    RING_ALL_GATHER, /* ring_all_gather alone */
    RING_SEND_FIRST, /* the kit's deliberate deadlock: every rank sends, then receives (whole buffers) */
    RING_N_ALGOS
} ring_algo;

/* Bytes of scratch the algorithm needs on dev: naive n elements to receive
 * into (and, for fp16, n floats to accumulate in); ring and reduce-scatter one
 * segment; chunked two chunks (one arriving while the other is added);
 * send-first two whole buffers. */
size_t ring_scratch_bytes(ring_algo a, size_t n, int P, dl_dtype t, size_t chunk);
/* "naive", "ring", ... (the names --algo takes); NULL for a bad value. */
const char *ring_algo_name(ring_algo a);
/* The algorithm called name, or -1. */
int ring_algo_parse(const char *name);
/* The collective a performs, which sets its bus bandwidth (dl_bw_factor):
 * DL_BW_REDUCE_SCATTER and DL_BW_ALLGATHER for those two, DL_BW_ALLREDUCE for
 * every other one; DL_BW_COLL_COUNT for a bad value. */
dl_bw_coll ring_algo_coll(ring_algo a);
/* The benchmark's and the grader's inputs: rank's n elements of kind
 *   RING_DATA_INT     small integers (-8..8): every sum of up to 256 ranks is
 *                     exact in f32 and in f16, whatever the order
 *   RING_DATA_RANDOM  uniform in [-1, 1) from seed (a stream per rank), then
 *                     rounded to t
 *   RING_DATA_CRAFTED 2048 on rank 0 and 1 elsewhere: in f16 the spacing at
 *                     2048 is 2, so adding the ones one at a time in f16 keeps
 *                     2048 (each 2049 rounds to even), while an fp32 sum
 *                     rounded once gives 2048 + (P - 1), rounded
 * into host memory (f32 or f16). */
enum { RING_DATA_INT = 0, RING_DATA_RANDOM = 1, RING_DATA_CRAFTED = 2 };
void ring_data(void *host, size_t n, dl_dtype t, int rank, int kind, uint64_t seed);
/* "int", "random", "crafted" -> the kind, or -1. */
int ring_data_parse(const char *name);
/* Runs algorithm a on buf (the same call on every rank). */
dl_status ring_run(ring_algo a, dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                   void *scratch);

#ifdef __cplusplus
}
#endif
#endif /* LAB04_RING_H */
