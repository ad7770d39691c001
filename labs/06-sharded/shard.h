/* shard.h — lab 06: sharded data parallelism. ZeRO stage 1 — each rank keeps
 * the optimizer state of its own shard of the parameters only — built on the
 * two halves of lab 04's ring: a reduce-scatter and an all-gather.
 *
 * This header is the contract between your code (shard.c, zero.c), the
 * driver (main.c, which owns the data, the epochs, the memory accounting and
 * the outputs, and runs plain DDP beside yours as --mode ddp) and the
 * grader. Do not change it; the handout (README.md) explains each task.
 *
 * Conventions
 * - The model is the kit's MLP (dl/mlp.h); its n = model->n_params
 *   parameters lie in one flat fp32 buffer, model->params, and backward
 *   writes their gradients into model->grads, in the same layout.
 * - Shards are lab 04's segments: the n elements are cut into P contiguous
 *   shards, shard s starting at shard_offset(n, P, s); the first n mod P
 *   shards hold one element more than the others (n = 10, P = 3: 4, 3, 3).
 *   Rank r owns shard r. n may be smaller than P: a shard may be empty.
 * - Collectives are called by every rank of c with the same n, like lab 04's.
 *   Move data only with dl_comm_sendrecv / dl_comm_isendrecv / dl_comm_wait
 *   (no dl_comm collective: the grader refuses them), add with dl_add, scale
 *   with dl_scale, copy with dl_copy; buffers live on dev (host memory on the
 *   CPU, device memory on CUDA) and are never touched from the host.
 * - Memory: everything your code allocates, it allocates with shard_alloc
 *   and frees with shard_free (no malloc, no dl_malloc: the grader refuses
 *   them), so that the kit's ledger counts it. That ledger is what the lab
 *   measures: bytes per rank by kind, now and at their peak.
 * - Every function returns DL_OK, the status of a failing kit call, or
 *   DL_ERR_ARG for bad arguments. A skeleton returns DL_ERR_TODO.
 */
#ifndef LAB06_SHARD_H
#define LAB06_SHARD_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t

#include "dl/comm.h" // dl_comm, dl_comm_sendrecv, dl_comm_isendrecv, dl_comm_wait
#include "dl/device.h" // dl_device
#include "dl/mlp.h" // dl_mlp, dl_mlp_sgd_slice
#include "dl/ops.h" // dl_add, dl_scale, dl_copy
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

// ---- provided (kit.c): the memory ledger ----

/* What a block of memory holds. */
typedef enum shard_mem_kind {
    SHARD_PARAMS = 0, /* parameters */
    SHARD_GRADS, /* their gradients */
    SHARD_OPTIM, /* optimizer state: SGD's momentum */
    SHARD_ACTS, /* activations and backward's scratch */
    SHARD_COMM, /* buffers the collectives need (a ring's scratch) */
    SHARD_KINDS
} shard_mem_kind;

#define SHARD_MAX_BLOCKS 64

/* One rank's ledger: the bytes allocated now and at most so far, per kind
 * and in all. The driver sets dev; only shard_alloc and shard_free change
 * the rest (the kit's own buffers go in with them too). */
typedef struct shard_mem {
    const dl_device *dev;
    size_t now[SHARD_KINDS], peak[SHARD_KINDS];
    size_t now_total, peak_total; /* peak_total: the most ever allocated at once */
    struct {
        void *p;
        size_t bytes;
        shard_mem_kind kind;
    } block[SHARD_MAX_BLOCKS];
    int n_blocks;
} shard_mem;

/* *out = bytes (> 0) of zeroed memory on m->dev, counted as kind. DL_ERR_ARG
 * for a bad kind, 0 bytes or NULL out; DL_ERR_NOMEM (or the device's status)
 * when it cannot be had, or when SHARD_MAX_BLOCKS blocks are live. */
dl_status shard_alloc(shard_mem *m, shard_mem_kind kind, size_t bytes, void **out);
/* Frees a block shard_alloc gave, and takes it out of the ledger; NULL does
 * nothing. A pointer shard_alloc did not give is left alone. */
void shard_free(shard_mem *m, void *p);
/* "params", "grads", "optim", "acts", "comm"; NULL for a bad kind. */
const char *shard_mem_kind_name(shard_mem_kind kind);

// ---- task 1 (shard.c): where the shards lie ----

/* First element of shard s of n elements over P ranks (0 <= s <= P; s = P
 * gives n). */
size_t shard_offset(size_t n, int P, int s);
/* Elements of shard s (0 <= s < P). */
size_t shard_count(size_t n, int P, int s);

// ---- task 2 (shard.c): the two halves of the ring ----

/* The most elements one message of shard_reduce_scatter carries: a ring
 * step moves its shard in pieces of at most SHARD_CHUNK elements, so its
 * scratch is one piece, not one shard (lab 04's chunks, without the
 * pipelining): otherwise, on 2 ranks, the scratch would cost all the
 * momentum ZeRO-1 saves. */
#define SHARD_CHUNK 16384
/* Bytes of scratch shard_reduce_scatter needs on dev: the largest piece a
 * step receives, min(shard_count(n, P, 0), SHARD_CHUNK) floats; 0 when P = 1
 * or n = 0. Provided (kit.c). */
size_t shard_scratch_bytes(size_t n, int P);

/* Reduce-scatter to the mean: P − 1 ring steps (send to the right
 * neighbour, receive from the left, add into your own copy), each moving
 * its shard in pieces of at most SHARD_CHUNK elements — on every rank as many
 * pieces as the largest shard needs, ⌈shard_count(n, P, 0) / SHARD_CHUNK⌉,
 * so that every call pairs with its neighbours' (a piece past the end of a
 * shorter shard is empty) — after which shard r
 * of rank r's buf holds the sum over the ranks of shard r, scaled by 1/P
 * (dl_scale(dev, ..., 1.0f / P)): the mean of the ranks' shards. The other
 * shards of buf hold partial sums on return. scratch holds
 * shard_scratch_bytes(n, P) bytes on dev. P = 1: buf is its own mean. */
dl_status shard_reduce_scatter(dl_comm *c, const dl_device *dev, float *buf, size_t n, float *scratch);
/* All-gather: P − 1 ring steps that start from shard r on rank r (whatever
 * the rest of buf holds) and circulate the shards until every rank's buf
 * holds all P of them, bit for bit those of their owners. */
dl_status shard_all_gather(dl_comm *c, const dl_device *dev, float *buf, size_t n);

// ---- task 3 (zero.c): ZeRO-1 ----

typedef struct shard_sgd {
    float lr, momentum, weight_decay;
} shard_sgd;

/* One rank's ZeRO-1 state. The driver fills the first block (model with
 * its full parameters and gradients, and no momentum of its own:
 * model->velocity is NULL) and zeroes the rest; your functions own the
 * second block. */
typedef struct zero_state {
    dl_comm *comm;
    dl_mlp *model;
    shard_mem *mem; /* the ledger every allocation of yours goes through */

    size_t offset, count; /* this rank's shard of the model->n_params parameters */
    float *velocity; /* (count,) SGD's momentum for this shard only, SHARD_OPTIM, zeroed */
    float *scratch; /* shard_reduce_scatter's scratch (shard_scratch_bytes), SHARD_COMM */
} zero_state;

/* Sets this rank's shard and allocates its momentum (zeros) and the
 * reduce-scatter's scratch through z->mem. DL_ERR_ARG for a state without
 * comm, model or mem. */
dl_status zero_init(zero_state *z);

/* One ZeRO-1 optimizer step on this rank's batch (X (n, in) and y (n,) on
 * the model's device): forward, loss (dl_mlp_loss with loss NULL: the kit
 * reads the losses once per epoch) and backward on the full replicated
 * parameters; the gradients reduce-scattered to their mean, so each rank
 * holds the global batch's mean gradient for its shard only; SGD with
 * momentum on that shard alone (dl_mlp_sgd_slice, with the shard's own
 * momentum); then the updated shards all-gathered, so every rank starts the
 * next step with the same, complete parameters. The result equals one
 * rank's step on every rank's rows together, and every rank ends it with
 * the same bits. */
dl_status zero_step(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt);

/* Frees what zero_init allocated (through z->mem) and zeroes the second
 * block. Safe on a zeroed or already freed state. */
void zero_free(zero_state *z);

#ifdef __cplusplus
}
#endif
#endif /* LAB06_SHARD_H */
