/* kit.c — lab 04's provided code: scratch sizes, the algorithms by name, and
 * the deliberate deadlock the handout demonstrates. Shared by the driver
 * and the grader. */
#include <string.h> // strcmp

#include "dl/half.h" // dl_half, dl_f2h
#include "dl/rng.h" // dl_rng
#include "ring.h"

/* Each algorithm's facts, one row each, in ring_algo's order: its --algo
 * name and the collective it performs (which sets its busbw factor). */
static const struct {
    const char *name;
    dl_bw_coll coll;
} algos[RING_N_ALGOS] = {
    {"naive", DL_BW_ALLREDUCE},
    {"ring", DL_BW_ALLREDUCE},
    {"ring-chunked", DL_BW_ALLREDUCE},
    {"library", DL_BW_ALLREDUCE},
    {"reduce-scatter", DL_BW_REDUCE_SCATTER},
    {"all-gather", DL_BW_ALLGATHER},
    {"send-first", DL_BW_ALLREDUCE}, // whole buffers round the ring, each added on arrival
};

const char *ring_algo_name(ring_algo a)
{
    return (unsigned)a < RING_N_ALGOS ? algos[a].name : NULL;
}

dl_bw_coll ring_algo_coll(ring_algo a)
{
    return (unsigned)a < RING_N_ALGOS ? algos[a].coll : DL_BW_COLL_COUNT;
}

int ring_algo_parse(const char *name)
{
    for (int a = 0; a < RING_N_ALGOS; a++) {
        if (strcmp(algos[a].name, name) == 0)
            return a;
    }
    return -1;
}

void ring_data(void *host, size_t n, dl_dtype t, int rank, int kind, uint64_t seed)
{
    dl_rng g;
    dl_rng_seed(&g, seed, 0x4a11 + (uint64_t)rank);
    for (size_t i = 0; i < n; i++) {
        float v = kind == RING_DATA_INT       ? (float)((int)((i * 7 + (size_t)rank * 13) % 17) - 8)
                  : kind == RING_DATA_CRAFTED ? (rank == 0 ? 2048.0f : 1.0f)
                                              : (float)(2.0 * dl_rng_uniform(&g) - 1.0);
        if (t == DL_F32)
            ((float *)host)[i] = v;
        else
            ((dl_half *)host)[i] = dl_f2h(v);
    }
}

int ring_data_parse(const char *name)
{
    return strcmp(name, "int") == 0       ? RING_DATA_INT
           : strcmp(name, "random") == 0  ? RING_DATA_RANDOM
           : strcmp(name, "crafted") == 0 ? RING_DATA_CRAFTED
                                          : -1;
}

size_t ring_scratch_bytes(ring_algo a, size_t n, int P, dl_dtype t, size_t chunk)
{
    size_t esz = dl_dtype_size(t), seg = P > 0 ? (n + (size_t)P - 1) / (size_t)P : n;
    switch (a) {
    case RING_NAIVE:
        return n * esz + (t == DL_F16 ? n * sizeof(float) : 0);
    case RING_RING:
    case RING_REDUCE_SCATTER:
        return seg * esz;
    case RING_SEND_FIRST:
        return 2 * n * esz;
    case RING_CHUNKED:
        return 2 * (chunk < seg ? chunk : seg) * esz;
    default:
        return 0;
    }
}

/* The deadlock the handout demonstrates: every rank first sends, with a
 * blocking send, then receives. Below the transport's eager limit each send
 * returns at once (the message is buffered) and this works; above it a send
 * waits for the matching receive, which every rank only posts after its own
 * send: the ring deadlocks, and dl_comm's watchdog stops the job after
 * DL_COMM_TIMEOUT.
 *
 * Its layout is deliberately not the one of tasks 2 to 4, which is yours to
 * work out: nothing is cut into segments. The whole buffer goes round the
 * ring: in each of P - 1 steps every rank passes on the buffer it received
 * last (its own, first) and adds the one that arrives. That is (P - 1) n
 * elements out of every rank, where your ring sends 2 (P - 1) n / P; the
 * send-then-receive order hangs the same way at any size above the limit.
 * scratch holds two buffers: the one passed on and the one arriving. */
static dl_status send_first_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    if (P == 1 || n == 0)
        return DL_OK;
    char *out = scratch, *in = out + n * dl_dtype_size(t);
    DL_TRY(dl_copy(dev, out, buf, n, t));
    for (int k = 0; k < P - 1; k++) {
        // the send, to completion: it returns at once below the eager limit, and
        // waits for the neighbour's receive above it
        DL_TRY(dl_comm_send(c, out, n, (r + 1) % P, t));
        DL_TRY(dl_comm_recv(c, in, n, (r + P - 1) % P, t));
        DL_TRY(dl_add(dev, buf, in, n, t));
        char *next = in; // what arrived goes on next step
        in = out;
        out = next;
    }
    return DL_OK;
}

dl_status ring_run(ring_algo a, dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk,
                   void *scratch)
{
    switch (a) {
    case RING_NAIVE:
        return ring_naive_allreduce(c, dev, buf, n, t, scratch);
    case RING_RING:
        return ring_allreduce(c, dev, buf, n, t, scratch);
    case RING_CHUNKED:
        return ring_allreduce_chunked(c, dev, buf, n, t, chunk, scratch);
    case RING_LIBRARY:
        return dl_comm_allreduce(c, buf, n, t, DL_RED_SUM);
    case RING_REDUCE_SCATTER:
        return ring_reduce_scatter(c, dev, buf, n, t, scratch);
    case RING_ALL_GATHER:
        return ring_all_gather(c, dev, buf, n, t);
    case RING_SEND_FIRST:
        return send_first_allreduce(c, dev, buf, n, t, scratch);
    default:
        return dl_error_set(DL_ERR_ARG, "ring_run: unknown algorithm %d", (int)a);
    }
}
