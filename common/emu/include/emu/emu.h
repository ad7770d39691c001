/* emu/emu.h — the emulated CUDA device's own controls (common/emu): checked
 * launches, what they found, and the hooks the kit fills (BLAS, NCCL). Plain
 * C, so the kit's C code and the grader can call it.
 *
 * Contract
 * - The emulated device runs CUDA code on the CPU (README.md beside this
 *   module): a block's threads are fibers on one worker thread, blocks spread
 *   over the cores. What CUDA leaves undefined and a GPU usually forgives —
 *   a barrier some threads skip, a shuffle with a lane missing, a read past an
 *   array — stops the kernel: the launch fails with a sticky error (as a GPU
 *   fault does), the message names the kernel, its launch site and what went
 *   wrong, and a finding is recorded.
 * - A checked launch (emu_check_set) runs the kernel several times on copies
 *   of what it can write: threads in order, reversed and shuffled between
 *   barriers, then blocks reversed and shuffled; it compares the bits. A
 *   change with the thread order names a race or a missing barrier
 *   (EMU_RACE); a change with the block order is a race between blocks
 *   (EMU_RACE) unless the kernel added floats with atomics, which is
 *   EMU_NONDETERMINISTIC — an error only under EMU_CHECK_REPRO (the contract
 *   "the same bits on every call"). A checked launch runs its blocks one
 *   after another on one core; after it the memory holds the in-order run's
 *   results, when all runs agree.
 * - "What the kernel can write" is every allocation a non-const pointer
 *   argument points into. A kernel that writes through pointers it reads from
 *   memory, or into __device__ globals, is not compared there.
 * - Findings are process-wide, kept in order, at most EMU_MAX_FINDINGS (later
 *   ones are counted, not kept). Every call here is thread-safe.
 */
#ifndef EMU_EMU_H
#define EMU_EMU_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

// ---- checked launches ----

enum {
    EMU_CHECK_ORDERS = 1u, /* run each launch in several thread and block orders, compare */
    EMU_CHECK_REPRO = 2u /* and its bits must not change with the block order */
};

/* Sets the checks of the launches issued from now on and returns the previous
 * flags. The initial flags come from DL_EMU_CHECK: "1" or "orders" is
 * EMU_CHECK_ORDERS, "repro" both flags, unset or "0" none. Cannot fail. */
unsigned emu_check_set(unsigned flags);
unsigned emu_check_get(void);

/* The shuffled orders' seed (DL_EMU_SEED, else 1): the same seed gives the
 * same orders, so a finding can be reproduced. Cannot fail. */
void emu_check_seed(unsigned seed);

// ---- the schedule of plain launches ----

/* Orders of a block's threads between barriers (and of blocks, where it applies). */
enum {
    EMU_ORDER_IN_ORDER = 0, /* 0, 1, 2, ... */
    EMU_ORDER_REVERSED = 1, /* the last first */
    EMU_ORDER_SHUFFLED = 2, /* a permutation drawn from the seed */
    EMU_ORDER_WARPS_REVERSED = 3, /* threads: the last warp first, each warp's lanes in order */
    EMU_ORDER_LANES_REVERSED = 4 /* threads: warps in order, each warp's lanes last first */
};
#define EMU_BLOCKS_PARALLEL (-1) /* blocks over the worker threads: the default */

/* Sets how launches issued from now on run when they are not checked: their
 * threads start and leave each barrier in the order `threads`, and their
 * blocks run one after another on one core in the order `blocks` (an
 * EMU_ORDER_* but the warp ones), or over the cores (EMU_BLOCKS_PARALLEL, the
 * default, with threads EMU_ORDER_IN_ORDER). A program can so run one call
 * under several schedules and compare the results itself: a change with the
 * warps' order is a missing __syncthreads, with the lanes' order a missing
 * __syncwarp, with the blocks' order a race between blocks or float atomics.
 * Returns 0, or -1 for an order it does not know (nothing changed). */
int emu_schedule_set(int threads, int blocks, unsigned seed);

// ---- findings ----

typedef enum emu_kind {
    EMU_RACE = 1, /* results change with the order of threads or blocks */
    EMU_NONDETERMINISTIC, /* float atomics: the bits change with the block order */
    EMU_DIVERGENT_BARRIER, /* threads of a block at different __syncthreads, or one exited */
    EMU_DIVERGENT_WARP, /* a shuffle, vote or __syncwarp some lanes of its mask never reach */
    EMU_OUT_OF_BOUNDS, /* global or shared memory outside its allocation */
    EMU_HOST_POINTER, /* a host pointer given to a kernel, cuBLAS or NCCL */
    EMU_BAD_COPY, /* a copy in the wrong direction or past an allocation's end */
    EMU_BAD_LAUNCH, /* a launch configuration CUDA refuses */
    EMU_UNSUPPORTED, /* a CUDA feature the emulated device does not implement */
    EMU_STACK_OVERFLOW /* a thread used more than its fiber stack */
} emu_kind;

#define EMU_MAX_FINDINGS 64

typedef struct emu_finding {
    emu_kind kind;
    char kernel[128]; /* the kernel as launched ("xent_kernel"), or the call ("cudaMemcpy") */
    char site[256]; /* "file:line" of the launch or call, "" when unknown */
    char text[1024]; /* the whole message, as printed */
} emu_finding;

/* Findings recorded since the start or the last emu_findings_clear. */
int emu_finding_count(void);
/* Copies finding i (0-based) into *out; -1 when there is no such finding. */
int emu_finding_get(int i, emu_finding *out);
void emu_findings_clear(void);
/* "race", "nondeterministic", "divergent barrier", ...; "?" for others. */
const char *emu_kind_name(emu_kind k);
/* quiet = 1: findings are recorded but not printed to stderr. Returns the
 * previous setting. Faults that end the process always print. */
int emu_set_quiet(int quiet);

// ---- the device ----

/* "ddplab emulated CUDA device": what cudaGetDeviceProperties names it. */
const char *emu_device_name(void);
/* Worker threads that run blocks (DL_EMU_THREADS, else the cores). */
int emu_workers(void);
/* Bytes of device memory allocated and not freed. */
size_t emu_device_bytes(void);

// ---- the kit's hooks ----

/* A column-major single-precision GEMM with BLAS's sgemm contract:
 * C (m, n) = alpha·op(A)·op(B) + beta·C, op = transpose when trans is 1;
 * C is not read when beta is 0. cuBLAS calls on the emulated device run on it
 * (16-bit operands widened to fp32 first). NULL restores the module's own
 * loop (fp32 sums in order of k). Cannot fail. */
typedef void (*emu_sgemm_fn)(int transa, int transb, int m, int n, int k, float alpha, const float *A, int lda,
                             const float *B, int ldb, float beta, float *C, int ldc);
void emu_set_sgemm(emu_sgemm_fn fn);

/* NCCL on the emulated device runs its collectives through this table, which
 * the kit fills with its own communicator (dl_comm) before ncclCommInitRank.
 * Without one, only communicators of one rank can be made.
 * - Each operation is called on the host thread that issued the NCCL call (or
 *   ncclGroupEnd), after the stream has run everything issued before it; it
 *   returns when the operation is complete on this rank: the same order on
 *   every rank, as NCCL requires. Buffers are device memory, which is host
 *   memory here: read and write them directly.
 * - dtype and op are nccl.h's ncclDataType_t and ncclRedOp_t values; bytes
 *   per element: emu_nccl_type_size. sendrecv's counts may be 0 (one side
 *   only); it must not deadlock when the peers send to each other.
 * - Each returns 0, or nonzero after writing a message into err (errlen
 *   bytes): the NCCL call then fails with ncclSystemError and that message,
 *   and ncclCommGetAsyncError reports it.
 * - The transport should use a communicator of its own (an MPI_Comm_dup),
 *   so that its messages never match the program's own. */
typedef struct emu_nccl_transport {
    void *ctx;
    int nranks, rank; /* must match ncclCommInitRank's */
    int (*allreduce)(void *ctx, const void *send, void *recv, size_t count, int dtype, int op, char *err,
                     size_t errlen);
    int (*broadcast)(void *ctx, const void *send, void *recv, size_t count, int dtype, int root, char *err,
                     size_t errlen);
    int (*allgather)(void *ctx, const void *send, void *recv, size_t sendcount, int dtype, char *err, size_t errlen);
    int (*sendrecv)(void *ctx, const void *send, size_t sendcount, int dst, void *recv, size_t recvcount, int src,
                    int dtype, char *err, size_t errlen);
    void (*abort)(void *ctx); /* ncclCommAbort: stop whatever is under way; may be NULL */
} emu_nccl_transport;

/* Copies *t as the transport of communicators made from now on; NULL removes
 * it. Returns 0, or -1 when a function is missing (nothing changed). */
int emu_nccl_set_transport(const emu_nccl_transport *t);
/* Bytes per element of an ncclDataType_t; 0 for an unknown one. */
size_t emu_nccl_type_size(int dtype);

#ifdef __cplusplus
}
#endif

#endif /* EMU_EMU_H */
