/* kit.h — lab 06's provided parts beside the ledger (shard.h): plain DDP's
 * step for --mode ddp, the model's own buffers put into the ledger, the
 * memory per rank each way of sharding needs (a closed form, held against
 * the ledger), the largest model a GPU holds each way, and the files the
 * grader reads, and the self-test of task 2 the grader runs. Not a student
 * file: it calls your functions only in kit_selftest. */
#ifndef LAB06_KIT_H
#define LAB06_KIT_H

#include "dl/batch.h" // dl_devset
#include "dl/metrics.h" // DL_CSV_SCHEMA
#include "dl/project.h" // dl_profile
#include "shard.h"

/* The ways to train that the lab compares: DDP (everything replicated),
 * ZeRO-1 (the optimizer state sharded: yours) and FSDP (ZeRO-3: the
 * parameters, gradients and optimizer state sharded, each layer gathered
 * only while it is used). */
typedef enum kit_mode { KIT_DDP = 0, KIT_ZERO1, KIT_FSDP, KIT_MODES } kit_mode;
extern const char *const kit_mode_names[KIT_MODES]; /* "ddp", "zero1", "fsdp" */

/* The run's ledger as the kit keeps it, out of your code's reach: the counts
 * in a shard_mem are a copy any code of the rank could write, so everything
 * the run reports and the grader reads (summary.json, memory.csv, the dump)
 * comes from here. One ledger a process. */
const shard_mem *kit_ledger(void);

/* shard_free keeps the blocks it frees for the next shard_alloc of about
 * their size (a caching allocator: no cudaFree, which waits for the whole
 * device, and no cudaMalloc in a step after the first). kit_reserved_peak:
 * the most bytes held at once, handed out and cached together (PyTorch's
 * "reserved" beside the ledger's "allocated"). kit_pool_release frees the
 * cached blocks (at the end of the run). */
size_t kit_reserved_peak(void);
void kit_pool_release(void);

/* Puts the model's own buffers into the ledger: its parameters and
 * gradients, its momentum when keep_velocity (DDP), else frees the momentum
 * (model->velocity becomes NULL: ZeRO-1 and FSDP keep their own, per
 * shard), and its activations and backward scratch (max_batch rows: every
 * layer's output, two buffers of the widest layer, the bias gradients'
 * ones). */
dl_status kit_mem_model_buffers(shard_mem *mem, dl_mlp *m, int keep_velocity);
/* FSDP, after fsdp_init has taken its shards: frees the model's whole
 * parameters and gradients (model->params and grads NULL, the layers'
 * views NULL) and takes them out of the ledger, whose peaks then start
 * again from what it holds now: the training's peaks, not the set-up's. */
void kit_mem_drop_full(shard_mem *mem, dl_mlp *m);
/* FSDP's evaluation: accuracy on set with every rank running every chunk
 * (each forward gathers its layers, a collective: every rank must make the
 * same calls), in chunks of `chunk` rows. */
dl_status kit_eval_every_rank(dl_mlp *m, const dl_devset *set, size_t chunk, double *acc);
/* FSDP: the whole parameter vector (host, model->n_params floats) on every
 * rank, put together from every rank's layer shards (f->layer[l].param,
 * shard r of layer l as lab 04's segments lay it out) with the kit's own
 * all-gather. */
dl_status kit_fsdp_params(dl_comm *c, const dl_mlp *m, const fsdp_state *f, float *host);
/* Takes the model's buffers out of the ledger again (before dl_mlp_free). */
void kit_mem_release_model(shard_mem *mem, const dl_mlp *m);

/* The memory of one step, as a timeline: kit_mem_watch(mem, 1) starts
 * recording mem's bytes by kind after every allocation and free that
 * changes them (and once at the start), kit_mem_watch(mem, 0) stops;
 * kit_write_mem_step writes DIR/memory_step.csv (event, the kinds, total:
 * one row per change). Nothing comes and goes in a DDP or ZeRO-1 step; an
 * FSDP step gathers and frees a layer at a time. */
void kit_mem_watch(const shard_mem *mem, int on);
dl_status kit_write_mem_step(const char *dir);

/* --mode ddp: forward, loss, backward, one allreduce of the mean gradient
 * (the library's), dl_mlp_sgd on every parameter. */
dl_status kit_ddp_step(dl_comm *c, dl_mlp *m, const float *X, const int32_t *y, size_t n, const shard_sgd *opt);

/* Bytes per rank by kind (shard.h's), on the rank holding the largest
 * shard, for a model of layer sizes {in, hidden..., classes} trained on
 * batches of `batch` rows on P ranks, in fp32 with SGD's momentum:
 *   DDP     params 4n, grads 4n, optim 4n, comm 0 (the library's allreduce)
 *   ZeRO-1  params 4n, grads 4n, optim 4⌈n/P⌉, comm shard_scratch_bytes(n, P)
 *   FSDP    each layer l sharded on its own (n_l elements): Σ 4⌈n_l/P⌉
 *           each of params, grads and optim, plus what the reference's
 *           order of allocations holds at its peak (replayed on sizes, see
 *           kit.c): params up to two gathered layers (the one in use, the
 *           next prefetched), grads up to two whole layers (the one backward
 *           writes, the one being reduce-scattered), comm one layer's P − 1
 *           slots of ⌈n_l/P⌉;
 * and acts, the same for all three (kit_mem_model_buffers' count). P = 1
 * needs no scratch. bytes has room for SHARD_KINDS values: each kind's
 * peak; returns the peak of the total (for DDP and ZeRO-1 nothing comes
 * and goes, so it is their sum; FSDP's kinds peak at different moments). */
double kit_mem_bytes(kit_mode mode, const size_t *sizes, int n_sizes, size_t batch, int P, double *bytes);

/* The bytes each rank sends in one step (the ring's, as lab 04 counts
 * them): DDP's allreduce 2(P−1)/P·4n, ZeRO-1's reduce-scatter and
 * all-gather the same, FSDP's two all-gathers and one reduce-scatter
 * 3(P−1)/P·4n. */
double kit_sent_bytes(kit_mode mode, size_t n, int P);

/* One step projected onto a profile's GPUs (P = the profile's gpus): each
 * layer's forward and backward at the fp32 peak times its efficiency (the
 * FLOPs dl_mlp_step_flops counts, one launch each), the optimizer's 20
 * bytes an element at the memory bandwidth, and the collectives' α–β times
 * (dl_bw_seconds, on one communication stream, in the order they are
 * issued):
 *   DDP     forward, backward, one allreduce of 4n, SGD on n
 *   ZeRO-1  forward, backward, reduce-scatter of 4n, SGD on ⌈n/P⌉, all-gather of 4n
 *   FSDP    the reference's schedule: layer l's all-gather issued when layer
 *           l − 1's forward starts (l + 1's backward), its reduce-scatter
 *           when its backward ends; a layer computes once its gather is
 *           done; SGD on the shards after the last reduce-scatter.
 * step_s, compute_s (the compute stream's busy time) and exposed_s
 * (step_s − compute_s: communication nothing hides). */
typedef struct kit_projection {
    double step_s, compute_s, exposed_s;
} kit_projection;
kit_projection kit_project_step(kit_mode mode, const size_t *sizes, int n_sizes, size_t batch, const dl_profile *p);
/* Writes DIR/projection.csv: a row per shipped profile, its GPUs, and each
 * mode's projected step and exposed communication in ms on them. */
dl_status kit_write_projection(const char *dir, const size_t *sizes, int n_sizes, size_t batch);

/* The largest model (parameters) that fits one GPU of mem bytes, each way,
 * on P GPUs, counting the model's state only (activations depend on the
 * batch, and the ring's scratch is one piece of SHARD_CHUNK elements: both
 * left out), for a model of `layers` equal layers: bytes a parameter
 *   DDP     12 (parameter, gradient, momentum)
 *   ZeRO-1  8 + 4/P (the momentum sharded)
 *   FSDP    12/P + (16 + 4(P − 1)/P)/layers: the shards, and at the peak of
 *           kit_mem_bytes' replay two gathered layers, two whole layers of
 *           gradients and one layer's P − 1 slots of 1/P.
 * 0 when mem is 0 (a profile without gpu_mem). */
double kit_largest_model(kit_mode mode, double mem, int P, int layers);
#define KIT_LARGEST_LAYERS 32 /* the projected models: 32 equal layers, as a transformer's blocks */

/* memory.csv: the model of every mode at P = 1, 2, 4, ..., 64, and the row
 * the run measured (source "measured"); the grader reads it by these names. */
// clang-format off
#define KIT_MEM(X)                \
    X(KIT_MEM_SOURCE, "source")   \
    X(KIT_MEM_MODE, "mode")       \
    X(KIT_MEM_P, "ranks")         \
    X(KIT_MEM_PARAMS, "params")   \
    X(KIT_MEM_GRADS, "grads")     \
    X(KIT_MEM_OPTIM, "optim")     \
    X(KIT_MEM_ACTS, "acts")       \
    X(KIT_MEM_COMM, "comm")       \
    X(KIT_MEM_TOTAL, "total")
// clang-format on
DL_CSV_SCHEMA(kit_mem, KIT_MEM);

/* Writes DIR/memory.csv: the closed form for the three modes at P = 1, 2,
 * 4, ..., 64 (and at the run's P), then the ledger's peaks of this run
 * (mode, P) as "measured". */
dl_status kit_write_memory(const char *dir, const size_t *sizes, int n_sizes, size_t batch, kit_mode mode, int P);
/* Writes DIR/largest.csv: for every shipped profile with gpu_mem, its GPU,
 * memory and the largest model each way on its GPUs. */
dl_status kit_write_largest(const char *dir);
/* --dump DIR (every rank): DIR/params.RANK.npy (the final parameters, host:
 * n_params floats),
 * DIR/memory.RANK.csv (the ledger's peaks by kind) and DIR/comm.RANK.csv
 * (the transport's log from dl_comm_log_start on: index, op, count, dtype,
 * and the phase each record was made in — see kit_phase). */
dl_status kit_dump(const char *dir, dl_comm *c, const float *params, size_t n);

/* The phases of the transport's log, so that the grader tells the training
 * steps' traffic from the kit's own (the epoch clock's barrier, the loss's
 * allreduce, the evaluation's): each record of comm.RANK.csv carries the
 * phase it was made in and the phase's id (the step; the self-test's case),
 * "none" and -1 outside any. */
typedef enum kit_phase_kind {
    KIT_PH_NONE = 0,
    KIT_PH_STEP,
    KIT_PH_REDUCE_SCATTER,
    KIT_PH_ALL_GATHER,
    KIT_PHASES
} kit_phase_kind;
extern const char *const kit_phase_names[KIT_PHASES]; /* "none", "step", "reduce_scatter", "all_gather" */
/* From now on, records belong to phase (kind, id), until the next call
 * (kind KIT_PH_NONE: to none). Needs dl_comm_log_start first; cannot fail
 * (a mark its memory cannot hold is dropped, and the dump says so). */
void kit_phase(dl_comm *c, kit_phase_kind kind, long id);

/* FSDP under --dump (the grader's prefetch item): from now on, the trace
 * (dl/trace.h: backward's span per layer) and the kit's record of every
 * operation started and waited (dl/p2plog.h) record, and the model's hooks
 * (fsdp_init's) are called through the kit's own, which note where both
 * records stand when each layer's pre hook is entered, when its compute
 * begins (pre returned) and when it ends (before post), in every training
 * step (kit_phase's "step"). kit_dump then also writes DIR/trace.RANK.csv,
 * DIR/p2p.RANK.csv and DIR/layers.RANK.csv. The marks are the kit's, made
 * between the kit's dl_mlp and your hooks, never inside them. */
void kit_fsdp_record(dl_mlp *m);
/* Puts the kit's hooks back in front of the model's own if they were
 * replaced (hooks set again); nothing unless kit_fsdp_record runs. */
void kit_fsdp_watch(dl_mlp *m);

/* The self-test of task 2 (--selftest reduce_scatter|all_gather --dump DIR),
 * run by every rank of c on dev with the log started: for each case k of
 * KIT_SELFTEST_CASES, n = kit_selftest_n(P, k) elements.
 *   reduce_scatter: buf[i] = kit_selftest_value(KIT_ST_INPUT, k, rank, i);
 *     shard_reduce_scatter; writes DIR/rs.K.RANK.npy (the whole buffer).
 *   all_gather: buf[i] = kit_selftest_value(KIT_ST_SHARD, k, 0, i) on this
 *     rank's own shard (the kit's shard arithmetic, not yours), and
 *     kit_selftest_value(KIT_ST_JUNK, k, rank, i) elsewhere; shard_all_gather;
 *     writes DIR/ag.K.RANK.npy.
 * Each call is a phase of the log (id k), written to DIR/comm.RANK.csv at
 * the end. Returns the first failing call's status (naming it, and n).
 * Task 4's (--selftest start): on each case, the all-gather's buffer filled
 * as above and the reduce-scatter's input as above, in buffers of their own;
 * rank 0 starts both (shard_all_gather_start, then
 * shard_reduce_scatter_start, each a phase of the log: all_gather and
 * reduce_scatter, id k) before the other ranks start anything — they wait
 * in a barrier that rank 0 enters only after its starts returned, so a start
 * that waits for its peers hangs until DL_COMM_TIMEOUT — then every rank
 * starts both, and waits for both with shard_wait (even ranks the
 * all-gather first, odd ranks the reduce-scatter first); writes
 * DIR/ags.K.RANK.npy (the whole buffer) and DIR/rss.K.RANK.npy (out: its
 * shard_count(n, P, rank) floats). */
#define KIT_SELFTEST_CASES 6
enum { KIT_ST_INPUT = 0, KIT_ST_SHARD, KIT_ST_JUNK };
size_t kit_selftest_n(int P, int k); /* 0, 1, P − 1, 10, 1000, 100003 */
/* A value in [-1, 1) with 24 significant bits, from a hash of (stream, k, rank, i). */
float kit_selftest_value(int stream, int k, int rank, size_t i);
dl_status kit_selftest(dl_comm *c, const dl_device *dev, const char *what, const char *dir);

#endif /* LAB06_KIT_H */
