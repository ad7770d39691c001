/* shard.h — lab 06: sharded data parallelism. Part 1, ZeRO stage 1: each
 * rank keeps the optimizer state of its own shard of the parameters only,
 * built on the two halves of lab 04's ring, a reduce-scatter and an
 * all-gather. Part 2, FSDP (ZeRO stage 3): the parameters and gradients are
 * sharded too, each layer gathered only while forward or backward uses it,
 * on the same two collectives started without waiting.
 *
 * This header is the contract between your code (shard.c, zero.c, fsdp.c), the
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

// ---- provided (kit_ledger.c): the memory ledger ----

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
 * and in all, and the live blocks. The driver sets dev; shard_alloc and
 * shard_free keep the rest up to date (the kit's own buffers go in with
 * them too). They are a copy for you to read: the kit keeps the ledger it
 * reports, and that the grader reads, where your code cannot write it. */
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
 * nothing. A pointer shard_alloc did not give is left alone. The kit keeps
 * the block for a later shard_alloc (no cudaFree in a step), so free a block
 * only once every operation that reads or writes it has been waited for. */
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
 * or n = 0. Provided (kit_ledger.c). */
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

// ---- task 4 (fsdp.c): the collectives, started now and finished later ----

#define SHARD_MAX_RANKS 64

/* One collective in flight: the requests it started and what finishing it
 * needs. Zeroed means none; shard_wait leaves it zeroed. */
typedef struct shard_pending {
    dl_comm_req *req[SHARD_MAX_RANKS];
    int n; /* requests in req */
    float *out; /* a reduce-scatter's shard of the mean; NULL for an all-gather */
    const float *grad; /* a reduce-scatter's input (its own shard is read at the end) */
    float *scratch; /* a reduce-scatter's P − 1 slots */
    size_t n_elems; /* n */
} shard_pending;

/* Starts an all-gather of buf (n floats on dev, shard r of it complete on
 * rank r) by pairwise exchange: P − 1 dl_comm_isendrecv calls, one with
 * every other rank, each sending shard r to one peer and receiving that
 * peer's own shard into its place in buf. Which peer each call pairs with
 * is yours to arrange, so that every rank's calls meet their partners'. The
 * same bytes as the ring's P − 1 steps, but no exchange waits for another:
 * all P − 1 are started, and the call returns without waiting for any —
 * not even for a peer to start (on GPUs but for the first exchange with
 * each peer: NCCL connects the two inside it). shard_wait finishes it. */
dl_status shard_all_gather_start(dl_comm *c, const dl_device *dev, float *buf, size_t n, shard_pending *p);

/* Starts a reduce-scatter of grad (n floats on dev) to the mean by pairwise
 * exchange: P − 1 dl_comm_isendrecv calls, one with every other rank, each
 * sending that peer's shard of grad to it and receiving the peer's copy of
 * shard r into scratch (shard_slots_bytes(n, P) bytes on dev: room for
 * every peer's copy, laid out as you like). Returns without waiting;
 * shard_wait finishes it: out (shard_count(n, P, r) floats on dev, NULL
 * allowed when that count is 0) = the P copies of shard r (grad's own and
 * the P − 1 received) added up in fp32, in any order, times 1/P. grad and
 * scratch stay untouched until then. P = 1: out = grad's own shard, at
 * shard_wait. */
dl_status shard_reduce_scatter_start(dl_comm *c, const dl_device *dev, const float *grad, size_t n, float *out,
                                     float *scratch, shard_pending *p);

/* Bytes of the slots shard_reduce_scatter_start receives into: P − 1 copies
 * of the largest shard, (P − 1)·⌈n/P⌉ floats (0 when P = 1 or n = 0): every
 * copy arrives before any can be added. Provided (kit_ledger.c). */
size_t shard_slots_bytes(size_t n, int P);

/* Waits for every request of p (all of them, also after one fails), then
 * finishes a reduce-scatter (the sum and the mean into out); zeroes p. A
 * zeroed p is done already. */
dl_status shard_wait(dl_comm *c, const dl_device *dev, shard_pending *p);

// ---- task 5 (fsdp.c): FSDP ----

/* Layer l's share of one rank, and what it holds while the layer is in use.
 * A layer's n_l = model->layer[l].count elements (its W, then its b) are
 * sharded on their own: this rank's shard is shard r of those n_l. */
typedef struct fsdp_layer {
    size_t offset, count; /* this rank's shard of the layer's n_l elements */
    float *param, *grad, *velocity; /* (count,) each: SHARD_PARAMS, SHARD_GRADS, SHARD_OPTIM */
    float *full; /* the layer's n_l parameters, gathered, while forward or backward uses them (SHARD_PARAMS) */
    float *full_grad; /* its n_l gradients from its backward until its reduce-scatter is done (SHARD_GRADS) */
    float *scratch; /* the reduce-scatter's slots (shard_slots_bytes) while it is in flight (SHARD_COMM) */
    shard_pending gather, reduce; /* the collectives in flight on it (zeroed: none) */
} fsdp_layer;

/* One rank's FSDP state. The driver fills the first block and zeroes the
 * rest; your functions own the second. */
typedef struct fsdp_state {
    dl_comm *comm;
    dl_mlp *model;
    shard_mem *mem;
    int prefetch; /* 1: the next layer's all-gather in flight while a layer computes; 0: none ahead of need */

    fsdp_layer layer[DL_MLP_MAX_LAYERS];
    dl_status status; /* the first failure inside fsdp_grad_ready, else DL_OK */
} fsdp_state;

/* Takes this rank's shard of every layer from the model's full initial
 * parameters (model->params, the same on every rank: the driver frees
 * model->params, grads and velocity after this call), allocating the three
 * shards of every layer through f->mem, and sets fsdp_pre and fsdp_post as
 * the model's hooks (dl_mlp_set_hooks, ctx f). DL_ERR_ARG for a state
 * without comm, model or mem, or more than SHARD_MAX_RANKS ranks. */
dl_status fsdp_init(fsdp_state *f);

/* The model's hooks (ctx: the fsdp_state); what must hold when each returns:
 * - pre(l, phase): layer l's parameters are whole, in buffers of your own,
 *   and the model's views W and b point at them; in backward its gW and gb
 *   point at a whole-gradient buffer of your own too.
 * - post(l, phase): the four views are NULL.
 * Throughout (README, task 5's invariants): at most two layers' parameters
 * whole at once, and forward's gathered layers are not kept for backward
 * (backward gathers again); with f->prefetch, the gather of the layer the
 * pass needs next is in flight while layer l computes; without it, nothing
 * is gathered ahead of need. */
dl_status fsdp_pre(void *ctx, int layer, dl_mlp_phase phase);
dl_status fsdp_post(void *ctx, int layer, dl_mlp_phase phase);

/* Backward's callback (dl_mlp_ready_fn, ctx: the fsdp_state): layer
 * `layer`'s gradient (grad, count elements: its whole gradient) is final:
 * its reduce-scatter to the mean, into the layer's grad shard, starts now,
 * and stays in flight while backward computes the layers below. At no time
 * does a rank hold more than two layers' gradients whole, and what a
 * finished reduce-scatter read is freed. It cannot return a status: the
 * first failure goes into f->status, which fsdp_step sets to DL_OK before
 * its backward and reads after it. */
void fsdp_grad_ready(void *ctx, int layer, void *grad, size_t count);

/* One FSDP optimizer step on this rank's batch, as zero_step's contract
 * says (forward, loss with NULL, backward with fsdp_grad_ready, SGD with
 * momentum on every layer's shard with dl_mlp_sgd_slice), with every
 * collective finished and every whole-layer buffer freed before it returns.
 * The result equals one rank's step on every rank's rows together.
 * model->steps is the kit's: neither step needs to advance it. */
dl_status fsdp_step(fsdp_state *f, const float *X, const int32_t *y, size_t n, const shard_sgd *opt);

/* Frees everything fsdp_init and the hooks allocated, waits for nothing
 * left in flight, removes the hooks; safe on a zeroed or freed state. */
void fsdp_free(fsdp_state *f);

#ifdef __cplusplus
}
#endif
#endif /* LAB06_SHARD_H */
