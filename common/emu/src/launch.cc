/* launch.cc — kernel launches on the emulated CUDA device: checked at the
 * call, queued on their stream, run over the worker threads; a checked
 * launch (emu/emu.h) runs in several orders on copies of what it can write
 * and compares the bits. */
#include <pthread.h> // pthread_create
#include <sched.h> // sched_getaffinity
#include <stdlib.h> // getenv, malloc
#include <string.h> // memcmp, memcpy
#include <unistd.h> // sysconf
#include <vector> // std::vector

#include "internal.h"

// ---- settings ----

static int check_read;
static unsigned check_flags, check_seed = 1;
// the schedule of plain launches (emu_schedule_set): taken by each launch when it is issued
static int sched_threads = ORDER_FWD, sched_blocks = EMU_BLOCKS_PARALLEL;
static unsigned sched_seed = 1;

static void read_env(void)
{
    if (check_read)
        return;
    check_read = 1;
    const char *c = getenv("DL_EMU_CHECK"), *s = getenv("DL_EMU_SEED");
    if (c != NULL && (!strcmp(c, "1") || !strcmp(c, "orders")))
        check_flags = EMU_CHECK_ORDERS;
    else if (c != NULL && !strcmp(c, "repro"))
        check_flags = EMU_CHECK_ORDERS | EMU_CHECK_REPRO;
    if (s != NULL && atoi(s) > 0)
        check_seed = (unsigned)atoi(s);
}

unsigned emu_check_get(void)
{
    read_env();
    return __atomic_load_n(&check_flags, __ATOMIC_SEQ_CST);
}

unsigned emu_check_set(unsigned flags)
{
    read_env();
    if (flags & EMU_CHECK_REPRO)
        flags |= EMU_CHECK_ORDERS;
    return __atomic_exchange_n(&check_flags, flags, __ATOMIC_SEQ_CST);
}

void emu_check_seed(unsigned seed)
{
    read_env();
    check_seed = seed;
}

int emu_schedule_set(int threads, int blocks, unsigned seed)
{
    if (threads < ORDER_FWD || threads > ORDER_LREV ||
        (blocks != EMU_BLOCKS_PARALLEL && (blocks < ORDER_FWD || blocks > ORDER_SHUF)))
        return -1;
    emu_dev_lock lock; // launches read it under the same lock
    sched_threads = threads;
    sched_blocks = blocks;
    sched_seed = seed;
    return 0;
}

int emu_workers(void)
{
    static int n;
    if (n == 0) {
        const char *s = getenv("DL_EMU_THREADS");
        int v = s != NULL ? atoi(s) : 0;
        cpu_set_t set;
        if (v <= 0)
            v = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
        n = v < 1 ? 1 : v > 256 ? 256 : v;
    }
    return n;
}

// ---- the worker pool ----

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER, job_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER, pool_done = PTHREAD_COND_INITIALIZER;
static int helpers;
static unsigned job_gen, job_n, job_next, job_busy;
static void (*job_fn)(void *, unsigned);
static void *job_arg;
static __thread int in_job;

static void work(void)
{
    in_job = 1;
    for (unsigned i; (i = __atomic_fetch_add(&job_next, 1, __ATOMIC_SEQ_CST)) < job_n;)
        job_fn(job_arg, i);
    in_job = 0;
}

static void *helper(void *unused)
{
    (void)unused;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool_mu);
        while (job_gen == seen)
            pthread_cond_wait(&pool_work, &pool_mu);
        seen = job_gen;
        pthread_mutex_unlock(&pool_mu);
        work();
        pthread_mutex_lock(&pool_mu);
        if (--job_busy == 0)
            pthread_cond_signal(&pool_done);
        pthread_mutex_unlock(&pool_mu);
    }
    return NULL;
}

void emu_pool_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
    if (n <= 1 || in_job || emu_workers() == 1) {
        for (unsigned i = 0; i < n; i++)
            fn(arg, i);
        return;
    }
    pthread_mutex_lock(&job_mu); // one job at a time
    pthread_mutex_lock(&pool_mu);
    while (helpers < emu_workers() - 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, helper, NULL) != 0)
            break;
        pthread_detach(t);
        helpers++;
    }
    job_fn = fn;
    job_arg = arg;
    job_n = n;
    job_next = 0;
    job_busy = (unsigned)helpers;
    job_gen++;
    pthread_cond_broadcast(&pool_work);
    pthread_mutex_unlock(&pool_mu);
    work(); // the caller takes part
    pthread_mutex_lock(&pool_mu);
    while (job_busy > 0)
        pthread_cond_wait(&pool_done, &pool_mu);
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_unlock(&job_mu);
}

// ---- a launch ----

typedef struct launch {
    emu_kernel_ k;
    emu_site_ site;
    emu_cfg_ cfg;
    unsigned checks, seed;
    int threads, blocks; /* a plain launch's schedule (emu_schedule_set) */
    unsigned sched_seed;
    char where[600];
} launch;

static void init_run(emu_run *r, const launch *L, int thread_order, unsigned seed)
{
    *r = emu_run();
    r->k = &L->k;
    r->site = L->site;
    snprintf(r->where, sizeof r->where, "%s", L->where);
    r->grid = L->cfg.grid;
    r->block = L->cfg.block;
    r->dyn_shared = L->cfg.shared;
    r->thread_order = thread_order;
    r->seed = seed;
}

static void fail_launch(const launch *L, cudaError_t e, int kind, const char *msg)
{
    char site[300];
    snprintf(site, sizeof site, "%s:%d", L->site.file, L->site.line);
    emu_set_sticky(e, msg);
    emu_finding_add(kind, L->site.kernel, site, msg);
}

static void block_fn(void *arg, unsigned i)
{
    emu_run *r = (emu_run *)arg;
    if (!r->failed)
        emu_run_block(r, i);
}

/* After a run: the canaries around the allocations the pointers reach. */
static int guards_intact(const launch *L)
{
    for (int i = 0; i < L->k.nptr; i++) {
        emu_alloc a;
        long off = 0;
        if (emu_mem_find(L->k.ptr[i], &a) && !emu_guard_intact(a.p, a.bytes, a.map, a.map_bytes, &off)) {
            char msg[800];
            snprintf(msg, sizeof msg,
                     "%s: out of bounds: the kernel wrote at offset %ld of the %zu-byte allocation argument %d points "
                     "into (#%u), %s",
                     L->where, off, a.bytes, L->k.ptr_arg[i], a.id, off < 0 ? "before its start" : "past its end");
            fail_launch(L, cudaErrorIllegalAddress, EMU_OUT_OF_BOUNDS, msg);
            return 0;
        }
    }
    return 1;
}

static void run_plain(launch *L)
{
    emu_run *r = new emu_run;
    init_run(r, L, L->threads, L->sched_seed);
    dim3 g = L->cfg.grid;
    unsigned nb = g.x * g.y * g.z;
    unsigned *order = L->blocks == EMU_BLOCKS_PARALLEL ? NULL : (unsigned *)malloc((size_t)nb * sizeof *order);
    if (order != NULL) { // one after another, in the schedule's order
        emu_order(order, nb, L->blocks, L->sched_seed * 7919u + 1);
        for (unsigned b = 0; b < nb && !r->failed; b++)
            emu_run_block(r, order[b]);
        free(order);
    } else {
        emu_pool_for(nb, block_fn, r);
    }
    if (r->failed)
        fail_launch(L, r->err, r->kind, r->msg);
    else
        guards_intact(L);
    delete r;
}

// ---- checked launches ----

typedef struct region {
    char *p;
    size_t bytes;
    int arg; /* the first argument that points into it */
    unsigned id;
    char *before, *first; /* the contents before the launch, after the first run */
} region;

static const struct {
    int threads, blocks;
    const char *what;
} runs[] = {
    {ORDER_FWD, ORDER_FWD, "threads and blocks in order"},
    {ORDER_REV, ORDER_FWD, "threads in reverse order"},
    {ORDER_SHUF, ORDER_FWD, "threads shuffled"},
    {ORDER_FWD, ORDER_REV, "blocks in reverse order"},
    {ORDER_SHUF, ORDER_SHUF, "threads and blocks shuffled"},
};

/* Describes the first difference between r->first and memory; 0 if none. */
static int differs(const region *r, char *out, size_t len)
{
    if (memcmp(r->first, r->p, r->bytes) == 0)
        return 0;
    size_t first = 0, n = 0;
    for (size_t i = r->bytes; i-- > 0;)
        if (r->first[i] != r->p[i]) {
            first = i;
            n++;
        }
    size_t w = first & ~(size_t)3;
    float a = 0, b = 0;
    if (w + 4 <= r->bytes) {
        memcpy(&a, r->first + w, 4);
        memcpy(&b, r->p + w, 4);
    }
    snprintf(out, len,
             "%zu of %zu bytes differ in the allocation argument %d points into (#%u), the first at byte %zu (the "
             "4 bytes at %zu, as float: %.9g vs %.9g)",
             n, r->bytes, r->arg, r->id, first, w, a, b);
    return 1;
}

static void run_checked(launch *L)
{
    std::vector<region> regs;
    for (int i = 0; i < L->k.nptr; i++) {
        emu_alloc a;
        int known = 0;
        if (!L->k.writable[i] || !emu_mem_find(L->k.ptr[i], &a))
            continue;
        for (const region &r : regs)
            known |= r.p == a.p;
        if (!known)
            regs.push_back(region{a.p, a.bytes, L->k.ptr_arg[i], a.id, NULL, NULL});
    }
    for (region &r : regs) {
        r.before = (char *)malloc(r.bytes);
        r.first = (char *)malloc(r.bytes);
        if (r.before != NULL)
            memcpy(r.before, r.p, r.bytes);
    }
    dim3 g = L->cfg.grid;
    unsigned nb = g.x * g.y * g.z;
    unsigned *order = (unsigned *)malloc((size_t)nb * sizeof *order);
    emu_run *run = new emu_run;
    for (unsigned i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int ok = order != NULL;
        for (region &r : regs)
            ok &= r.before != NULL && r.first != NULL;
        if (!ok) {
            fail_launch(L, cudaErrorMemoryAllocation, EMU_BAD_LAUNCH, "out of host memory for a checked launch");
            break;
        }
        if (i > 0)
            for (region &r : regs)
                memcpy(r.p, r.before, r.bytes);
        init_run(run, L, runs[i].threads, L->seed + i);
        emu_order(order, nb, runs[i].blocks, L->seed * 7919u + i);
        for (unsigned b = 0; b < nb && !run->failed; b++)
            emu_run_block(run, order[b]);
        if (run->failed) {
            fail_launch(L, run->err, run->kind, run->msg);
            break;
        }
        if (!guards_intact(L))
            break;
        if (i == 0) {
            for (region &r : regs)
                memcpy(r.first, r.p, r.bytes);
            continue;
        }
        char diff[600] = "", msg[2048];
        for (unsigned k = 0; k < regs.size() && !differs(&regs[k], diff, sizeof diff); k++)
            ;
        if (diff[0] == '\0')
            continue;
        int by_blocks = runs[i].blocks != ORDER_FWD;
        const char *order_of = by_blocks ? "blocks" : "threads in a block";
        if (run->float_atomics) {
            snprintf(msg, sizeof msg,
                     "%s: nondeterministic: the results' bits change with the order of the %s (%s vs %s), and the "
                     "kernel adds floats with atomics, whose rounding depends on which comes first: %s.%s",
                     L->where, order_of, runs[0].what, runs[i].what, diff,
                     L->checks & EMU_CHECK_REPRO ? " This launch must give the same bits on every call: add the "
                                                   "partial sums in a fixed order instead."
                                                 : "");
            if (L->checks & EMU_CHECK_REPRO)
                fail_launch(L, cudaErrorLaunchFailure, EMU_NONDETERMINISTIC, msg);
            else if (!emu_quiet())
                fprintf(stderr, "emulated CUDA: note (allowed: no reproducibility asked): %s\n", msg);
            break;
        }
        snprintf(msg, sizeof msg, "%s: race: the results change with the order of the %s (%s vs %s): %s. %s", L->where,
                 order_of, runs[0].what, runs[i].what, diff,
                 by_blocks ? "Blocks write memory that other blocks read or write, in no fixed order (only the end "
                             "of a kernel orders its blocks)."
                           : "A thread reads what another thread of its block writes with no __syncthreads between "
                             "them (or __syncwarp within a warp), or two threads write the same place.");
        fail_launch(L, cudaErrorLaunchFailure, EMU_RACE, msg);
        break;
    }
    delete run;
    free(order);
    for (region &r : regs) {
        free(r.before);
        free(r.first);
    }
}

static void run_launch(void *arg)
{
    launch *L = (launch *)arg;
    if (L->checks & EMU_CHECK_ORDERS)
        run_checked(L);
    else
        run_plain(L);
}

static void free_launch(void *arg)
{
    launch *L = (launch *)arg;
    L->k.destroy(L->k.closure);
    delete L;
}

cudaError_t emu_submit_(const emu_site_ &site, const emu_cfg_ &cfg, emu_kernel_ *k)
{
    char where[600], at[400];
    snprintf(at, sizeof at, "%s:%d", site.file, site.line);
    snprintf(where, sizeof where, "kernel %s (launched at %s)", site.kernel, at);
    dim3 g = cfg.grid, b = cfg.block;
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    unsigned long long blocks = (unsigned long long)g.x * g.y * g.z;
    cudaError_t e = emu_sticky();
    const char *bad = NULL;
    char why[1200];
    if (emu_tls_.in_kernel) {
        k->destroy(k->closure);
        emu_thread_unsupported("a kernel launch from inside a kernel (dynamic parallelism)");
    }
    if (threads == 0 || blocks == 0)
        bad = "a grid or block with a dimension of 0";
    else if (threads > 1024 || b.z > 64)
        bad = "more than 1024 threads per block, or blockDim.z > 64";
    else if (g.y > 65535 || g.z > 65535 || g.x > 0x7fffffffu || blocks > 0xffffffffull)
        bad = "gridDim.y and .z may be at most 65535, .x at most 2^31-1 (and the emulated device runs at most 2^32 "
              "blocks)";
    else if (cfg.shared > EMU_SHARED_LIMIT)
        bad = "more than 48 KiB of dynamic shared memory (CUDA's limit without cudaFuncSetAttribute)";
    if (e == cudaSuccess && bad != NULL) {
        snprintf(why, sizeof why, "%s with grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of shared memory: %s", where,
                 g.x, g.y, g.z, b.x, b.y, b.z, cfg.shared, bad);
        e = emu_error(cudaErrorInvalidConfiguration, EMU_BAD_LAUNCH, site.kernel, at, "%s", why);
    }
    for (int i = 0; e == cudaSuccess && i < k->nptr; i++) {
        emu_alloc a;
        if (k->ptr[i] != NULL && !emu_mem_find(k->ptr[i], &a))
            e = emu_error(cudaErrorIllegalAddress, EMU_HOST_POINTER, site.kernel, at,
                          "%s: argument %d is %p, host memory (not from cudaMalloc or cudaMallocHost): on a GPU the "
                          "kernel faults when it reads or writes it",
                          where, k->ptr_arg[i], k->ptr[i]);
    }
    if (e == cudaSuccess && emu_stream_check(cfg.stream, "a kernel launch") != cudaSuccess)
        e = cudaErrorInvalidResourceHandle;
    if (e != cudaSuccess) {
        k->destroy(k->closure);
        return emu_error(e, 0, NULL, NULL, "%s", "");
    }
    launch *L = new launch;
    L->k = *k;
    L->site = site;
    L->cfg = cfg;
    L->checks = emu_check_get();
    L->seed = check_seed;
    emu_dev_lock lock;
    L->threads = sched_threads;
    L->blocks = sched_blocks;
    L->sched_seed = sched_seed;
    snprintf(L->where, sizeof L->where, "%s", where);
    return emu_enqueue(cfg.stream, run_launch, free_launch, L);
}
