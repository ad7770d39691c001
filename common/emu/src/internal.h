/* internal.h — what the emulated CUDA runtime's files share (common/emu/src;
 * not part of its API: that is include/). Each section names its file.
 *
 * Locking: one recursive device lock (dev_lock) orders every host call that
 * touches streams, events or the work they run; the allocation table has a
 * lock of its own (memory.cc); findings another (runtime.cc). Kernel blocks
 * run on worker threads (pool_for) while the host thread that drains the
 * stream holds the device lock and takes part.
 */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H

#include <cuda_runtime.h> // cudaError_t, emu_kernel_, emu_site_
#include <stdarg.h> // va_list
#include <stddef.h> // size_t

#define EMU_DEVICE_NAME "ddplab emulated CUDA device"
#define EMU_SHARED_LIMIT (48u * 1024u) /* bytes per block, static and dynamic together */
#define EMU_FILL 0xff /* the byte new device and shared memory is filled with */
#define EMU_CANARY 0xa5 /* the byte around an allocation, inside its pages */

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif

// ---- errors and findings (runtime.cc) ----

/* Records the thread's last error e with the message (printed unless quiet);
 * when kind is not 0 also a finding of that kind for kernel/site. Returns e. */
cudaError_t emu_error(cudaError_t e, int kind, const char *kernel, const char *site, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The device's sticky error (a faulted kernel): every later call returns it. */
void emu_set_sticky(cudaError_t e, const char *msg);
cudaError_t emu_sticky(void);
void emu_sticky_clear(void); /* cudaDeviceReset */
/* Records a finding and prints it (unless quiet); the text is the message. */
void emu_finding_add(int kind, const char *kernel, const char *site, const char *text);
/* Prints to stderr, quiet or not: the process is about to end. */
void emu_print_always(const char *text);
int emu_quiet(void);

// ---- memory (memory.cc) ----

typedef struct emu_alloc {
    char *p; /* what cudaMalloc returned */
    size_t bytes;
    char *map; /* the mapping around it (NULL: malloc'd) */
    size_t map_bytes;
    int pinned; /* 1: cudaMallocHost memory, 0: device memory */
    unsigned id; /* 1 for the first allocation, 2 for the next, ... */
} emu_alloc;

/* The allocation holding p (p == its end counts, for an empty range at the
 * end); 0 when p is in none. *a is a copy. */
int emu_mem_find(const void *p, emu_alloc *a);
/* Memory bounded by pages it cannot touch: bytes at p, p aligned to align,
 * its end at a guard page when bytes is a multiple of align; the slack
 * before and after p inside the pages holds EMU_CANARY. Under ASan: a heap
 * object of exactly bytes. NULL when out of memory. */
void *emu_guarded_alloc(size_t bytes, size_t align, char **map, size_t *map_bytes);
void emu_guarded_free(void *p, char *map, size_t map_bytes);
/* 1 when the canary bytes around [p, p + bytes) are intact; else 0 and
 * *offset is the first damaged byte's offset from p (negative: before). */
int emu_guard_intact(const char *p, size_t bytes, const char *map, size_t map_bytes, long *offset);
/* Describes the memory at addr for a fault report: "4 bytes past the end of
 * the 4000-byte device allocation #3", or "" when it is none of them. */
void emu_mem_describe_fault(const void *addr, char *out, size_t len);
void emu_mem_reset(void); /* cudaDeviceReset: frees everything */
void emu_fault_handler_install(void); /* SIGSEGV: guard pages and stacks, once */
/* Names the kernel, block and thread running on this thread, for a report;
 * "" outside a kernel. */
void emu_block_describe(char *out, size_t len);
/* Describes addr when it is in a guard page of this thread's shared memory
 * or fiber stacks; returns 0 when it is not. kind receives EMU_OUT_OF_BOUNDS
 * or EMU_STACK_OVERFLOW. */
int emu_block_describe_fault(const void *addr, char *out, size_t len, int *kind);

// ---- streams (runtime.cc) ----

/* Takes the device lock (recursive) for the caller's scope. */
struct emu_dev_lock {
    emu_dev_lock();
    ~emu_dev_lock();
};
typedef void (*emu_op_fn)(void *arg);
/* Queues run(arg) on stream s (0: the legacy stream), after what s and the
 * streams it orders with have queued; destroy(arg) after it runs or is
 * dropped (a sticky error drops what is queued). Device lock held. */
cudaError_t emu_enqueue(cudaStream_t s, emu_op_fn run, emu_op_fn destroy, void *arg);
/* Runs what s has queued (and what it depends on). Device lock held.
 * Returns the sticky error, or cudaSuccess. */
cudaError_t emu_drain(cudaStream_t s);
cudaError_t emu_drain_all(void);
/* Where the host waits for s as a call issued on s would: an empty operation
 * queued on s (with its implicit order), then emu_drain(s). */
cudaError_t emu_wait_point(cudaStream_t s);
/* cudaErrorInvalidResourceHandle (recorded) unless s is a live stream or 0. */
cudaError_t emu_stream_check(cudaStream_t s, const char *call);

// ---- kernels (launch.cc, block.cc) ----

enum { ORDER_FWD, ORDER_REV, ORDER_SHUF, ORDER_WREV, ORDER_LREV }; /* = EMU_ORDER_* */

/* One run of a launch over its grid. */
typedef struct emu_run {
    const emu_kernel_ *k;
    emu_site_ site;
    char where[600]; /* "kernel k (launched at file:line)" */
    dim3 grid, block;
    size_t dyn_shared;
    int thread_order; /* ORDER_*: how threads start and leave each barrier */
    unsigned seed;
    volatile int failed; /* a block failed: the rest are skipped */
    int float_atomics; /* some thread added floats with atomics */
    cudaError_t err;
    int kind; /* emu_kind of the failure */
    char msg[2048];
} emu_run;

/* Runs block number linear (x fastest) of r on the calling thread. */
void emu_run_block(emu_run *r, unsigned linear);
/* Fails the running thread's block with EMU_UNSUPPORTED naming what; the
 * thread does not go on. Only inside a kernel. */
[[noreturn]] void emu_thread_unsupported(const char *what);
/* Records r's failure (the first wins). */
void emu_run_fail(emu_run *r, cudaError_t e, int kind, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Calls fn(arg, i) for i < n over the worker threads and the caller. */
void emu_pool_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg);
/* A permutation of 0..n-1 in order, reversed or shuffled by seed. */
void emu_order(unsigned *out, unsigned n, int mode, unsigned seed);

// ---- fibers (fiber.cc) ----

typedef struct emu_ctx {
    void *sp; /* the stack pointer it was left at */
    const void *stack_lo; /* its stack, for ASan's fiber switches */
    size_t stack_bytes;
    void *fake_stack;
    void *uc; /* ucontext_t, where there is no hand-written switch */
} emu_ctx;

typedef struct emu_fiber {
    emu_ctx ctx;
    char *map; /* the stack's mapping; its lowest page is a guard */
    size_t map_bytes;
    int thread; /* the block's thread it runs; -1 when free */
} emu_fiber;

#define EMU_STACK_BYTES (256u * 1024u)

/* Makes c ready to be switched from: a worker thread's own stack. */
void emu_ctx_init_native(emu_ctx *c);
/* A fiber whose first switch-in calls entry(f); NULL when out of memory. */
emu_fiber *emu_fiber_new(void (*entry)(emu_fiber *f));
/* Starts f over: its next switch-in calls entry(f) again. */
void emu_fiber_reset(emu_fiber *f, void (*entry)(emu_fiber *f));
void emu_fiber_free(emu_fiber *f);
/* Saves the running context in from and resumes to. */
void emu_switch(emu_ctx *from, emu_ctx *to);
/* The first thing a fiber's entry calls: ASan's end of the switch in; fills
 * in the native context's stack for later switches back. */
void emu_fiber_started(emu_ctx *native);
/* 1 when addr is in f's guard page. */
int emu_fiber_guard_hit(const emu_fiber *f, const void *addr);

// ---- cuBLAS's GEMM (cublas.cc), for its tests ----
void emu_sgemm_ref(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc);

#endif /* EMU_INTERNAL_H */
