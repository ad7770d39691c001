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

/* What the kit records of one run beside the ledger (defined below, with
 * the phases): one a run, owned by the driver, handed to every kit call
 * that records or writes it. */
typedef struct kit_record kit_record;

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
 * cached blocks. */
size_t kit_reserved_peak(void);
void kit_pool_release(void);

/* Bytes of the activations and backward scratch of a model of layer sizes
 * {in, hidden..., classes} for batches of `batch` rows: every layer's
 * output, two buffers of the widest layer, the bias gradients' ones. */
size_t kit_act_bytes(const size_t *sizes, int n_sizes, size_t batch);
/* Puts the model's own buffers into the ledger: its parameters and
 * gradients, its momentum when keep_velocity (DDP), else frees the momentum
 * (model->velocity becomes NULL: ZeRO-1 and FSDP keep their own, per
 * shard), and its activations (kit_act_bytes of max_batch rows). */
dl_status kit_mem_model_buffers(shard_mem *mem, dl_mlp *m, int keep_velocity);
/* FSDP, after fsdp_init has taken its shards: frees the model's whole
 * parameters and gradients (model->params and grads NULL, the layers'
 * views NULL) and takes them out of the ledger, whose peaks then start
 * again from what it holds now: the training's peaks, not the set-up's. */
void kit_mem_drop_full(shard_mem *mem, dl_mlp *m);
/* At the end of a run: kit_mem_drop_grads frees what the model still holds
 * of its own gradients and momentum, kit_mem_drop_model (once its final
 * parameters are read) its parameters too, each taken out of the ledger
 * (its peaks stay); dl_mlp_free frees the rest. */
void kit_mem_drop_grads(shard_mem *mem, dl_mlp *m);
void kit_mem_drop_model(shard_mem *mem, dl_mlp *m);

/* The operating system's count of this process's memory, beside the
 * ledger's: kit_rss_restart makes the peak resident set (VmHWM, what
 * wait4's ru_maxrss reports to the process that reaps the rank) start again
 * from what the process holds now (Linux: "5" into /proc/self/clear_refs).
 * The driver calls it once, after the set-up, so that the peak the grader
 * reads from outside is the training's, not the set-up's (dl_mlp_create
 * touches the whole model's momentum, which ZeRO-1 and FSDP free at once).
 * Returns 0, or -1 where the kernel does not offer it. kit_rss_kib: the
 * peak and current resident set in KiB (0 when unknown). */
int kit_rss_restart(void);
void kit_rss_kib(long *peak, long *now);
/* At the start of main: every block of 128 KiB or more comes from the
 * system and goes back to it when freed (glibc: a fixed mmap threshold,
 * which it otherwise raises to the largest block freed, keeping freed
 * memory resident), so the process's resident set follows what it holds.
 * Nothing elsewhere. */
void kit_malloc_returns(void);

/* FSDP's evaluation: accuracy on set with every rank running every chunk
 * (each forward gathers its layers, a collective: every rank must make the
 * same calls), in chunks of `chunk` rows. */
dl_status kit_eval_every_rank(dl_mlp *m, const dl_devset *set, size_t chunk, double *acc);
/* FSDP's final parameters, put together by the kit: kit_fsdp_keep copies
 * this rank's shard of every layer (where fsdp_init put it:
 * f->layer[l].offset, count and param) to the host, so that fsdp_free may
 * give everything back first; kit_fsdp_params then puts the whole parameter
 * vector (host, model->n_params floats) together on every rank from every
 * rank's copies with the kit's own all-gather, each shard at the offset its
 * owner gave it (elements no shard covers are NaN). kit_shards_free frees
 * the copy (a zeroed one too). */
typedef struct kit_shards {
    size_t offset[DL_MLP_MAX_LAYERS], count[DL_MLP_MAX_LAYERS];
    float *v; /* host: the shards' parameters, layer after layer */
} kit_shards;
dl_status kit_fsdp_keep(const dl_mlp *m, const fsdp_state *f, kit_shards *k);
/* One layer of n elements put together on every rank by the kit's own
 * all-gather: each rank's shard (count floats on dev, at offset in the
 * layer, as its owner says) copied into whole (n floats on dev) at its
 * offset; elements no shard covers keep what whole held. A collective. */
dl_status kit_layer_whole(dl_comm *c, const dl_device *dev, size_t n, size_t offset, size_t count, const float *shard,
                          float *whole);
dl_status kit_fsdp_params(dl_comm *c, const dl_mlp *m, const kit_shards *k, float *host);
void kit_shards_free(kit_shards *k);
/* The memory of one step, as a timeline: kit_mem_watch(mem, 1) starts
 * recording mem's bytes by kind after every allocation and free that
 * changes them (and once at the start), kit_mem_watch(mem, 0) stops;
 * kit_write_mem_step writes DIR/memory_step.csv (event, the kinds, total,
 * pass and layer: one row per change). Nothing comes and goes in a DDP or ZeRO-1 step; an
 * FSDP step gathers and frees a layer at a time. */
void kit_mem_watch(const shard_mem *mem, int on);
/* Where the step is, for the timeline's rows (memory_step.csv's pass and
 * layer): KIT_MEM_BEFORE until a layer's hook, then the layer's pass
 * (KIT_MEM_FORWARD, KIT_MEM_BACKWARD) from its pre hook on, and
 * KIT_MEM_AFTER once layer 0's backward is done (the last reduce-scatters
 * and the update). Set by the kit's hooks around the student's (FSDP). */
enum { KIT_MEM_BEFORE = 0, KIT_MEM_FORWARD = 1, KIT_MEM_BACKWARD = 2, KIT_MEM_AFTER = 3 };
void kit_mem_phase(int pass, int layer);
dl_status kit_write_mem_step(const char *dir);

/* --mode ddp: forward, loss, backward, the mean gradient by the library's
 * allreduce, in buckets of KIT_DDP_BUCKET elements (as lab 05's; the
 * library's own scratch is then one bucket's, not the model's), dl_mlp_sgd
 * on every parameter. */
#define KIT_DDP_BUCKET ((size_t)1 << 18)
dl_status kit_ddp_step(dl_comm *c, dl_mlp *m, const float *X, const int32_t *y, size_t n, const shard_sgd *opt);

/* Bytes per rank by kind (shard.h's), on the rank holding the largest
 * shard, for a model of layer sizes {in, hidden..., classes} trained on
 * batches of `batch` rows on P ranks, in fp32 with SGD's momentum:
 *   DDP     params 4n, grads 4n, optim 4n, comm 0 (the library's allreduce)
 *   ZeRO-1  params 4n, grads 4n, optim 4⌈n/P⌉, comm shard_scratch_bytes(n, P)
 *   FSDP    each layer l sharded on its own (n_l elements): S = Σ ⌈n_l/P⌉
 *           elements each of params, grads and optim, plus the budget the
 *           invariants of task 5 (README) allow: params and grads each up to
 *           two adjacent layers whole (the largest n_l + n_(l+1): 4A), comm
 *           one reduce-scatter's slots (shard_slots_bytes of the widest);
 * and acts, the same for all three (kit_act_bytes). P = 1 needs no
 * scratch. bytes has room for SHARD_KINDS values: each kind's peak; returns
 * the total: for DDP and ZeRO-1, where nothing comes and goes, the sum,
 * what the ledger peaks at exactly; for FSDP the budget of everything at
 * once, 4(3S + 2A) + slots + acts, which a schedule keeping the invariants
 * never exceeds (its kinds peak at different moments, so its ledger's
 * total stays below). */
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
 *   FSDP    each layer's all-gather in flight while the layer before it
 *           computes (in backward: the layer after it), its reduce-scatter
 *           started when its backward ends and in flight while the layers
 *           below compute; a layer computes once its gather is done; SGD on
 *           the shards after the last reduce-scatter.
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
 *   FSDP    12/P + (16 + 4(P − 1)/P)/layers: the shards, and the budget
 *           kit_mem_bytes counts: two gathered layers, two whole layers of
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
/* --dump DIR (every rank): DIR/params.RANK.npy (the final parameters,
 * host: n_params floats), DIR/memory.RANK.csv (the ledger's peaks by kind),
 * DIR/comm.RANK.csv (the transport's log from dl_comm_log_start on, each
 * record with the phase it was made in — see kit_phase), DIR/layout.RANK.csv
 * (the shards your shard_offset and shard_count cut, kit_layout_record) and,
 * under kit_fsdp_record, FSDP's record. The driver calls it only once your
 * code has given back its state on every rank (a barrier): nothing of yours
 * runs after it, so what it writes is what the run did. */
dl_status kit_dump(const kit_record *R, const char *dir, dl_comm *c, const float *params, size_t n);

/* The dump's files, by column; the grader reads them by these names. */
// clang-format off
#define KIT_PEAK(X)             \
    X(KIT_P_KIND, "kind")       \
    X(KIT_P_PEAK, "peak")       \
    X(KIT_P_NOW, "now")
#define KIT_COMMLOG(X)          \
    X(KIT_C_INDEX, "index")     \
    X(KIT_C_OP, "op")           \
    X(KIT_C_COUNT, "count")     \
    X(KIT_C_DTYPE, "dtype")     \
    X(KIT_C_PHASE, "phase")     \
    X(KIT_C_PHASE_ID, "phase_id")
#define KIT_P2P(X)              \
    X(KIT_X_INDEX, "index")     \
    X(KIT_X_KIND, "kind")       \
    X(KIT_X_OP, "op")           \
    X(KIT_X_ID, "id")           \
    X(KIT_X_BYTES, "bytes")
#define KIT_LAYERS(X)           \
    X(KIT_Y_STEP, "step")       \
    X(KIT_Y_PASS, "pass")       \
    X(KIT_Y_LAYER, "layer")     \
    X(KIT_Y_MARK, "mark")       \
    X(KIT_Y_P2P, "p2p")         \
    X(KIT_Y_SPAN, "span")
#define KIT_LAYOUT(X)           \
    X(KIT_O_OF, "of")           \
    X(KIT_O_N, "n")             \
    X(KIT_O_SHARD, "shard")     \
    X(KIT_O_OFFSET, "offset")   \
    X(KIT_O_COUNT, "count")
// clang-format on
DL_CSV_SCHEMA(kit_peak, KIT_PEAK);
DL_CSV_SCHEMA(kit_commlog, KIT_COMMLOG);
DL_CSV_SCHEMA(kit_p2p, KIT_P2P);
DL_CSV_SCHEMA(kit_layers, KIT_LAYERS);
DL_CSV_SCHEMA(kit_layout, KIT_LAYOUT);

/* The shards your code cuts, as the dump's layout.RANK.csv holds them: for
 * each buffer it shards (`of`: "model", the whole parameter vector; "layerL";
 * the self-test's "caseK"), n and, for every shard s of P, shard_offset(n,
 * P, s) and shard_count(n, P, s) (and s = P: shard_offset(n, P, P), count
 * 0). kit_layout_record notes those of the model
 * and of each of its layers (called once, in the set-up: your task 1's
 * functions, called by the kit); kit_layout_note one buffer's. Cannot fail
 * (what its memory cannot hold is dropped, and the dump says so). */
void kit_layout_record(kit_record *R, const dl_mlp *m, int P);
void kit_layout_note(kit_record *R, const char *of, size_t n, int P);
/* Writes DIR/layout.RANK.csv (the rows noted so far). */
dl_status kit_write_layout(const kit_record *R, const char *dir, int rank);
/* Writes DIR/comm.RANK.csv: the transport's log so far, each record with its phase. */
dl_status kit_write_log(const kit_record *R, const char *dir, dl_comm *c);

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

/* The run's records (kit_record.c): the phases of the transport's log
 * (kit_phase), the shards your code cuts (kit_layout_note) and FSDP's layers
 * marked around your hooks (kit_fsdp_record). The driver owns one, made
 * ready by kit_record_init; the process's end frees it. */
#define KIT_LAYOUT_MAX 64
enum { KIT_LM_ENTER = 0, KIT_LM_COMPUTE, KIT_LM_COMPUTED, KIT_LM_STANDIN, KIT_LMS };
struct kit_record {
    struct kit_marks { /* from record `at` of the log on, phase (kind, id) */
        struct kit_mark {
            size_t at;
            kit_phase_kind kind;
            long id;
        } * v;
        size_t n, cap, dropped;
        long step; /* the step the log is in, -1 outside one */
        size_t from; /* the first record of the log this record writes (kit_write_log) */
    } marks;
    struct kit_layout { /* each buffer noted: what it is, its n, shard_offset's P + 1 answers */
        struct kit_lay {
            char of[16];
            size_t n;
            int P;
            size_t off[SHARD_MAX_RANKS + 1], cnt[SHARD_MAX_RANKS];
        } v[KIT_LAYOUT_MAX];
        int n, dropped;
    } lay;
    struct kit_hooked { /* your hooks, called by the kit's own */
        int on; /* recording (kit_fsdp_record) */
        dl_mlp *m;
        const fsdp_state *f;
        float *whole; /* the kit's stand-in for a layer backward found not whole (recording only) */
        dl_mlp_hook_fn pre, post;
        void *ctx;
        struct kit_lmark {
            long step;
            int pass, layer, what; /* pass: dl_mlp_phase; what: KIT_LM_* */
            size_t p2p, span; /* events of the p2p record and of the trace before this point */
        } * v;
        size_t n, cap, dropped;
    } hooked;
};
/* R empty, outside any phase. Cannot fail. */
void kit_record_init(kit_record *R);

/* From now on, records belong to phase (kind, id), until the next call
 * (kind KIT_PH_NONE: to none). Needs dl_comm_log_start first; cannot fail
 * (a mark its memory cannot hold is dropped, and the dump says so). */
void kit_phase(kit_record *R, dl_comm *c, kit_phase_kind kind, long id);

/* FSDP under --dump (the grader's overlap item): from now on, the trace
 * (dl/trace.h: backward's span per layer) and the kit's record of every
 * operation started and waited (dl/p2plog.h) record, and the model's hooks
 * (fsdp_init's) are called through the kit's own, which note where both
 * records stand when each layer's pre hook is entered, when its compute
 * begins (pre returned) and when it ends (before post), in every training
 * step (kit_phase's "step"). kit_dump then also writes DIR/trace.RANK.csv,
 * DIR/p2p.RANK.csv and DIR/layers.RANK.csv. The marks are the kit's, made
 * between the kit's dl_mlp and your hooks, never inside them. A backward
 * pre hook that leaves W or b NULL (and gW, gb set) gets the layer from
 * the kit (kit_layer_whole on f's shards, outside the step's traffic,
 * marked "stand-in"), so that the grader judges the rest of the run and
 * names that mistake once. */
void kit_fsdp_record(kit_record *R, dl_mlp *m, const fsdp_state *f);
/* Puts the kit's hooks in front of the model's own (again, if they were
 * replaced): they mark the layers under kit_fsdp_record, and always check,
 * when your pre hook returns, that the layer's views are set (W and b, in
 * backward gW and gb too), stopping the step with a message naming the
 * layer and the view where one is NULL. */
void kit_fsdp_watch(kit_record *R, dl_mlp *m);

/* The self-test of task 2 (--selftest reduce_scatter|all_gather --dump DIR),
 * run by every rank of c on dev with the log started: for each case k of
 * KIT_SELFTEST_CASES, n = kit_selftest_n(P, k) elements.
 *   reduce_scatter: buf[i] = kit_selftest_value(KIT_ST_INPUT, k, rank, i);
 *     shard_reduce_scatter; DIR/rs.K.RANK.npy (the whole buffer).
 *   all_gather: buf[i] = kit_selftest_value(KIT_ST_SHARD, k, 0, i) on this
 *     rank's own shard and kit_selftest_value(KIT_ST_JUNK, k, rank, i)
 *     elsewhere; shard_all_gather; DIR/ag.K.RANK.npy.
 * "This rank's own shard" is where your shard_offset puts it when your
 * shards cut n into P contiguous pieces in rank order (each case's are
 * noted, as "caseK", in DIR/layout.RANK.csv), else where lab 04's segments
 * lie: so the collectives are judged on your own shards, and a slip of task
 * 1 is task 1's alone. Each call is a phase of the log (id k). Returns the
 * first failing call's status (naming it, and n). The results are kept,
 * and written with DIR/comm.RANK.csv and the layout only once every rank has
 * made its last call (a barrier).
 * Task 4's (--selftest start): on each case, the all-gather's buffer filled
 * as above and the reduce-scatter's input as above, in buffers of their own;
 * rank 0 starts both (shard_all_gather_start, then
 * shard_reduce_scatter_start, each a phase of the log: all_gather and
 * reduce_scatter, id k) before the other ranks start anything — they wait
 * in a barrier that rank 0 enters only after its starts returned, so a start
 * that waits for its peers hangs until DL_COMM_TIMEOUT — then every rank
 * starts both, and waits for both with shard_wait (even ranks the
 * all-gather first, odd ranks the reduce-scatter first); DIR/ags.K.RANK.npy
 * (the whole buffer) and DIR/rss.K.RANK.npy (out: this rank's shard).
 * --selftest all: the three, one after the other in one run, each into
 * DIR/HALF/ with its own log and layout, as its run alone writes them into
 * DIR (the grader's: one start of the ranks instead of three; it runs a
 * half alone where the three together fail). */
#define KIT_SELFTEST_CASES 6
enum { KIT_ST_INPUT = 0, KIT_ST_SHARD, KIT_ST_JUNK };
size_t kit_selftest_n(int P, int k); /* 0, 1, P − 1, 10, 1000, 100003 */
/* A value in [-1, 1) with 24 significant bits, from a hash of (stream, k, rank, i). */
float kit_selftest_value(int stream, int k, int rank, size_t i);
dl_status kit_selftest(kit_record *R, dl_comm *c, const dl_device *dev, const char *what, const char *dir);

#endif /* LAB06_KIT_H */
