/* block.cc — one block of a kernel on one worker thread: its threads on
 * fibers, __syncthreads, the warp operations and __shared__ memory.
 *
 * A fiber runs threads one after another, in the run's order, until one
 * waits (a barrier, a warp operation); that thread keeps the fiber and the
 * next thread starts on another. A kernel without barriers so runs a whole
 * block on one fiber without a switch. When every thread waits or is done,
 * the scheduler looks at where they wait: all at one __syncthreads releases
 * them (in the run's order again); anything else is a divergence and stops
 * the block. A warp operation completes when the last lane of its mask
 * arrives, which exchanges the values at once. */
#include <pthread.h> // pthread_mutex_t
#include <stdarg.h> // va_list
#include <stdio.h> // snprintf
#include <stdlib.h> // calloc, realloc, abort
#include <string.h> // memcpy, memset
#include <unistd.h> // sysconf

#include "internal.h"

__thread emu_tls_t_ emu_tls_;

enum { T_NEW, T_RUN, T_READY, T_BAR, T_WARP, T_DONE };
enum { BAR_SYNC, BAR_COUNT, BAR_AND, BAR_OR };
static const char *const bar_names[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and",
                                        "__syncthreads_or"};
static const char *const warp_names[] = {"__shfl_sync",   "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                         "__ballot_sync", "__any_sync",     "__all_sync",       "__syncwarp"};

typedef struct tstate {
    unsigned char state, op;
    int bar, pred, result, arg, width;
    const char *file;
    int line;
    unsigned mask, size;
    unsigned char in[16], out[16];
    emu_fiber *f;
    uint3 idx;
} tstate;

typedef struct shared_var { /* storage of one __shared__ declaration, kept between blocks */
    const void *key;
    char *p, *map;
    size_t bytes, map_bytes;
    const char *name, *file;
    int line, used; /* used: by the block that runs now */
} shared_var;

#define MAX_SHARED 64
#define MAX_THREADS 1024

typedef struct worker {
    emu_ctx native;
    emu_fiber *all[MAX_THREADS + 1], *free_[MAX_THREADS + 1];
    unsigned nall, nfree;
    // the block that runs
    emu_run *r;
    unsigned linear, n, next, rhead, rcount, done, phase, cur;
    int abort, in_block;
    tstate th[MAX_THREADS];
    unsigned order[MAX_THREADS], ready[MAX_THREADS];
    // per warp, a bit per lane: waiting in a warp operation (T_WARP), finished (T_DONE)
    unsigned warp_in[MAX_THREADS / 32], warp_done[MAX_THREADS / 32];
    shared_var sh[MAX_SHARED];
    unsigned nsh;
    size_t sh_bytes;
} worker;

static __thread worker *W;
static const char dyn_key = 0; /* the key of dynamic shared memory */

static worker *worker_get(void)
{
    if (W == NULL) {
        W = (worker *)calloc(1, sizeof *W);
        if (W == NULL) {
            emu_print_always("emulated CUDA: out of memory for a worker\n");
            abort();
        }
        emu_ctx_init_native(&W->native);
        emu_fault_handler_install();
    }
    return W;
}

// ---- orders ----

static unsigned mix(unsigned a, unsigned b, unsigned c)
{
    uint64_t x = ((uint64_t)a << 32 ^ b) * 0x9e3779b97f4a7c15ull ^ (uint64_t)c * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    return (unsigned)(x ^ (x >> 29));
}

void emu_order(unsigned *out, unsigned n, int mode, unsigned seed)
{
    if (mode == ORDER_WREV || mode == ORDER_LREV) { // warps of 32 threads (the last one may be short)
        unsigned warps = (n + 31) / 32, k = 0;
        for (unsigned v = 0; v < warps; v++) {
            unsigned wp = mode == ORDER_WREV ? warps - 1 - v : v, lanes = n - wp * 32 < 32 ? n - wp * 32 : 32;
            for (unsigned l = 0; l < lanes; l++)
                out[k++] = wp * 32 + (mode == ORDER_LREV ? lanes - 1 - l : l);
        }
        return;
    }
    for (unsigned i = 0; i < n; i++)
        out[i] = mode == ORDER_REV ? n - 1 - i : i;
    if (mode != ORDER_SHUF)
        return;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (unsigned i = n; i > 1; i--) { // Fisher-Yates on xorshift64*
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        unsigned j = (unsigned)((s * 0x2545f4914f6cdd1dull >> 32) % i), t = out[i - 1];
        out[i - 1] = out[j];
        out[j] = t;
    }
}

// ---- failures ----

static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

void emu_run_fail(emu_run *r, cudaError_t e, int kind, const char *fmt, ...)
{
    pthread_mutex_lock(&fail_mu);
    if (!r->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg, sizeof r->msg, fmt, ap);
        va_end(ap);
        r->err = e;
        r->kind = kind;
        __atomic_store_n(&r->failed, 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&fail_mu);
}

static void where(const worker *w, char *out, size_t len)
{
    uint3 b = emu_tls_.bid;
    snprintf(out, len, "%s, block (%u,%u,%u)", w->r->where, b.x, b.y, b.z);
}

/* Fails the block from inside a thread: the thread never resumes. */
[[noreturn]] static void thread_fail(worker *w, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void thread_fail(worker *w, int kind, const char *fmt, ...)
{
    char what[1200], at[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    where(w, at, sizeof at);
    uint3 t = w->th[w->cur].idx;
    emu_run_fail(w->r, kind == EMU_UNSUPPORTED ? cudaErrorNotSupported : cudaErrorLaunchFailure, kind,
                 "%s, thread (%u,%u,%u): %s", at, t.x, t.y, t.z, what);
    w->abort = 1;
    emu_fiber *f = w->th[w->cur].f;
    for (;;)
        emu_switch(&f->ctx, &w->native);
}

void emu_thread_unsupported(const char *what)
{
    thread_fail(W, EMU_UNSUPPORTED, "%s is not implemented by the emulated CUDA device", what);
}

void emu_outside_kernel_(const char *what)
{
    char msg[400];
    snprintf(msg, sizeof msg,
             "emulated CUDA: %s used outside a kernel: a __global__ function called without <<< >>>, or a "
             "__device__ function called from host code\n",
             what);
    emu_print_always(msg);
    abort();
}

/* "0-127, 200" from the threads in state st (and, for T_BAR, at file:line). */
static void thread_set(const worker *w, int st, const char *file, int line, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < w->n && o + 24 < len; i++) {
        const tstate *s = &w->th[i];
        int in = s->state == st && (file == NULL || (s->file == file && s->line == line));
        if (!in)
            continue;
        unsigned j = i;
        while (j + 1 < w->n && w->th[j + 1].state == st &&
               (file == NULL || (w->th[j + 1].file == file && w->th[j + 1].line == line)))
            j++;
        o += (size_t)snprintf(out + o, len - o, j > i ? "%s%u-%u" : "%s%u", o ? ", " : "", i, j);
        i = j;
    }
}

// ---- threads on fibers ----

/* The worker of the running block; outside a kernel the program stops, naming what. */
static worker *running(const char *what)
{
    worker *w = W;
    if (w == NULL || !w->in_block) {
        emu_outside_kernel_(what);
        abort(); // not reached
    }
    return w;
}

static void set_cur(worker *w, unsigned t)
{
    w->cur = t;
    emu_tls_.tid = w->th[t].idx;
}

static void fiber_main(emu_fiber *f)
{
    worker *w = W;
    emu_fiber_started(&w->native);
    for (;;) {
        while (!w->abort && !w->r->failed && w->next < w->n) {
            unsigned t = w->order[w->next++];
            f->thread = (int)t;
            w->th[t].f = f;
            w->th[t].state = T_RUN;
            set_cur(w, t);
            w->r->k->run(w->r->k->closure);
            w->th[t].state = T_DONE;
            w->warp_done[t >> 5] |= 1u << (t & 31u);
            w->done++;
        }
        f->thread = -1;
        w->free_[w->nfree++] = f;
        emu_switch(&f->ctx, &w->native);
    }
}

static void wait_here(worker *w)
{
    emu_switch(&w->th[w->cur].f->ctx, &w->native);
}

static void make_ready(worker *w, unsigned t)
{
    w->th[t].state = T_READY;
    w->ready[(w->rhead + w->rcount++) % MAX_THREADS] = t;
}

/* All threads wait or are done: release a barrier or name the divergence. */
static void resolve(worker *w)
{
    const tstate *bar = NULL, *warp = NULL;
    unsigned nbar = 0, ndone = 0;
    for (unsigned i = 0; i < w->n; i++) {
        const tstate *s = &w->th[i];
        if (s->state == T_BAR) {
            nbar++;
            if (bar == NULL)
                bar = s;
        } else if (s->state == T_WARP && warp == NULL)
            warp = s;
        ndone += s->state == T_DONE;
    }
    char at[800], a[600], b[600];
    where(w, at, sizeof at);
    if (warp != NULL) {
        unsigned lane = (unsigned)(warp - w->th) & 31u, base = (unsigned)(warp - w->th) - lane;
        size_t o = 0;
        b[0] = '\0';
        for (unsigned l = 0; l < 32 && base + l < w->n && o + 80 < sizeof b; l++) {
            const tstate *s = &w->th[base + l];
            if (!(warp->mask >> l & 1u) || s->state == T_WARP)
                continue;
            o += (size_t)snprintf(b + o, sizeof b - o, "%slane %u %s", o ? "; " : "", l,
                                  s->state == T_DONE ? "has finished" : "waits at a barrier");
            if (s->state == T_BAR)
                o += (size_t)snprintf(b + o, sizeof b - o, " (%s:%d)", s->file, s->line);
        }
        emu_run_fail(w->r, cudaErrorLaunchFailure, EMU_DIVERGENT_WARP,
                     "%s: divergent warp: lanes of warp %u wait at %s (%s:%d) with mask 0x%08x, which the other "
                     "lanes of the mask never reach: %s. Every lane named in the mask must make the same call.",
                     at, base / 32, warp_names[warp->op], warp->file, warp->line, warp->mask, b);
        w->abort = 1;
        return;
    }
    if (bar == NULL)
        return; // cannot happen: nothing waits and not all are done
    int same = 1;
    for (unsigned i = 0; i < w->n; i++)
        if (w->th[i].state == T_BAR && (w->th[i].file != bar->file || w->th[i].line != bar->line))
            same = 0;
    if (ndone > 0 || !same) {
        thread_set(w, T_BAR, bar->file, bar->line, a, sizeof a);
        if (ndone > 0)
            thread_set(w, T_DONE, NULL, 0, b, sizeof b);
        else {
            const tstate *other = bar;
            for (unsigned i = 0; i < w->n && other == bar; i++)
                if (w->th[i].state == T_BAR && (w->th[i].file != bar->file || w->th[i].line != bar->line))
                    other = &w->th[i];
            char c[600];
            thread_set(w, T_BAR, other->file, other->line, c, sizeof c);
            snprintf(b, sizeof b, "%.400s wait at %s:%d", c, other->file, other->line);
        }
        emu_run_fail(w->r, cudaErrorLaunchFailure, EMU_DIVERGENT_BARRIER,
                     "%s: divergent %s: threads %s wait at %s:%d while threads %s%s. Every thread of a block must "
                     "reach the same __syncthreads (one inside an `if` some threads skip, or after an early "
                     "return, is undefined on a GPU).",
                     at, bar_names[bar->bar], a, bar->file, bar->line, b, ndone > 0 ? " have finished" : "");
        w->abort = 1;
        return;
    }
    int count = 0, all = 1, any = 0;
    for (unsigned i = 0; i < w->n; i++) {
        count += w->th[i].pred != 0;
        all &= w->th[i].pred != 0;
        any |= w->th[i].pred != 0;
    }
    int result = bar->bar == BAR_COUNT ? count : bar->bar == BAR_AND ? all : bar->bar == BAR_OR ? any : 0;
    w->phase++;
    emu_order(w->order, w->n, w->r->thread_order, mix(w->r->seed, w->linear, w->phase));
    for (unsigned i = 0; i < w->n; i++) {
        w->th[w->order[i]].result = result;
        make_ready(w, w->order[i]);
    }
}

static int barrier(int kind, int pred, const char *file, int line)
{
    worker *w = running(bar_names[kind]);
    tstate *s = &w->th[w->cur];
    s->state = T_BAR;
    s->bar = kind;
    s->pred = pred;
    s->file = file;
    s->line = line;
    wait_here(w);
    return s->result;
}

void __syncthreads(const char *file, int line)
{
    barrier(BAR_SYNC, 0, file, line);
}
int __syncthreads_count(int p, const char *file, int line)
{
    return barrier(BAR_COUNT, p, file, line);
}
int __syncthreads_and(int p, const char *file, int line)
{
    return barrier(BAR_AND, p, file, line);
}
int __syncthreads_or(int p, const char *file, int line)
{
    return barrier(BAR_OR, p, file, line);
}
void __syncwarp(unsigned mask, const char *file, int line)
{
    emu_warp_op_(EMU_SYNCWARP, mask, NULL, NULL, 0, 0, warpSize, file, line);
}

// ---- warp operations ----

/* Every lane of group (lanes of the warp at base) has arrived: each must make the same call
 * (op, mask, width) as me; then exchange. */
static void warp_complete(worker *w, unsigned base, unsigned group, const tstate *me)
{
    unsigned me_lane = (unsigned)(me - w->th) & 31u;
    for (unsigned l = 0; l < 32; l++) {
        const tstate *o = &w->th[base + l];
        if ((group >> l & 1u) && (o->op != me->op || o->mask != me->mask || o->width != me->width))
            thread_fail(w, EMU_DIVERGENT_WARP,
                        "lanes of warp %u disagree: lane %u calls %s (%s:%d) with mask 0x%08x, lane %u calls %s "
                        "(%s:%d) with mask 0x%08x",
                        base / 32, me_lane, warp_names[me->op], me->file, me->line, me->mask, l, warp_names[o->op],
                        o->file, o->line, o->mask);
    }
    w->warp_in[base / 32] &= ~group;
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; l++)
        if (group >> l & 1u)
            ballot |= (w->th[base + l].pred != 0) << l;
    for (unsigned l = 0; l < 32; l++) {
        if (!(group >> l & 1u))
            continue;
        tstate *d = &w->th[base + l];
        int width = me->width, start = (int)l & ~(width - 1), src = (int)l;
        switch (me->op) {
        case EMU_SHFL_IDX:
            src = start + (d->arg & (width - 1));
            break;
        case EMU_SHFL_UP:
            src = (int)l - d->arg < start ? (int)l : (int)l - d->arg;
            break;
        case EMU_SHFL_DOWN:
            src = (int)l + d->arg >= start + width ? (int)l : (int)l + d->arg;
            break;
        case EMU_SHFL_XOR:
            src = ((int)l ^ d->arg) >= start + width ? (int)l : (int)l ^ d->arg;
            break;
        case EMU_BALLOT:
            memcpy(d->out, &ballot, sizeof ballot);
            continue;
        case EMU_ANY:
        case EMU_ALL: {
            int v = me->op == EMU_ANY ? ballot != 0 : ballot == group;
            memcpy(d->out, &v, sizeof v);
            continue;
        }
        default:
            continue; // __syncwarp
        }
        if (src < 0 || src > 31 || !(group >> src & 1u))
            thread_fail(w, EMU_DIVERGENT_WARP,
                        "%s (%s:%d): lane %u reads lane %d, which is not in the mask 0x%08x or does not exist: a "
                        "GPU returns an undefined value",
                        warp_names[me->op], me->file, me->line, l, src, me->mask);
        memcpy(d->out, w->th[base + (unsigned)src].in, me->size);
    }
    for (unsigned i = 0; i < 32; i++) { // the others go on in the run's order, this one at once
        int rev = w->r->thread_order == ORDER_REV || w->r->thread_order == ORDER_LREV;
        unsigned l = rev ? 31 - i : i;
        if ((group >> l & 1u) && &w->th[base + l] != me)
            make_ready(w, base + l);
    }
}

void emu_warp_op_(int op, unsigned mask, const void *in, void *out, unsigned size, int arg, int width, const char *file,
                  int line)
{
    worker *w = running(warp_names[op]);
    unsigned t = w->cur, lane = t & 31u, base = t - lane;
    unsigned exist = w->n - base >= 32 ? 0xffffffffu : (1u << (w->n - base)) - 1u;
    tstate *s = &w->th[t];
    if (width < 1 || width > 32 || (width & (width - 1)) != 0)
        thread_fail(w, EMU_DIVERGENT_WARP, "%s (%s:%d): width %d is not a power of 2 from 1 to 32", warp_names[op],
                    file, line, width);
    if (!(mask >> lane & 1u))
        thread_fail(w, EMU_DIVERGENT_WARP,
                    "%s (%s:%d): lane %u calls it with mask 0x%08x, which leaves the lane itself out (undefined)",
                    warp_names[op], file, line, lane, mask);
    s->op = (unsigned char)op;
    s->mask = mask;
    s->arg = arg;
    s->width = width;
    s->size = size;
    s->file = file;
    s->line = line;
    if (op == EMU_BALLOT || op == EMU_ANY || op == EMU_ALL)
        memcpy(&s->pred, in, sizeof s->pred);
    else if (size > 0)
        memcpy(s->in, in, size);
    s->state = T_WARP;
    unsigned group = mask & exist, *in_op = &w->warp_in[base / 32];
    *in_op |= 1u << lane;
    // (each lane that arrives checks against one lane already waiting in its group, the last one
    // against all of them in warp_complete: a warp operation costs its lanes O(32), not O(32²))
    unsigned done = group & w->warp_done[base / 32];
    if (done != 0)
        thread_fail(w, EMU_DIVERGENT_WARP,
                    "%s (%s:%d) with mask 0x%08x: lane %d of the mask has already finished; every lane named "
                    "in the mask must make the call",
                    warp_names[op], file, line, mask, __builtin_ctz(done));
    unsigned others = group & *in_op & ~(1u << lane);
    if (others != 0) {
        unsigned l = (unsigned)__builtin_ctz(others);
        const tstate *o = &w->th[base + l];
        if (o->op != op || o->mask != mask || o->width != width)
            thread_fail(w, EMU_DIVERGENT_WARP,
                        "lanes of warp %u disagree: lane %u calls %s (%s:%d) with mask 0x%08x, lane %u calls %s "
                        "(%s:%d) with mask 0x%08x",
                        base / 32, lane, warp_names[op], file, line, mask, l, warp_names[o->op], o->file, o->line,
                        o->mask);
    }
    if ((group & *in_op) == group) {
        warp_complete(w, base, group, s);
        s->state = T_RUN;
    } else
        wait_here(w);
    if (out != NULL && size > 0)
        memcpy(out, s->out, size);
}

// ---- __shared__ memory ----

static void *shared_get(const void *key, size_t bytes, size_t align, const char *name, const char *file, int line)
{
    worker *w = running("__shared__ memory");
    shared_var *v = NULL;
    for (unsigned i = 0; i < w->nsh && v == NULL; i++)
        if (w->sh[i].key == key && w->sh[i].bytes == bytes)
            v = &w->sh[i];
    if (v != NULL && v->used)
        return v->p;
    if (w->sh_bytes + bytes > EMU_SHARED_LIMIT)
        thread_fail(w, EMU_BAD_LAUNCH,
                    "__shared__ %s (%s:%d): %zu bytes more make %zu bytes of shared memory in this block; the "
                    "emulated device has %u (CUDA's 48 KiB without an opt-in)",
                    name, file, line, bytes, w->sh_bytes + bytes, EMU_SHARED_LIMIT);
    if (v == NULL) {
        if (w->nsh == MAX_SHARED) // keep what this block uses, drop the rest
            for (unsigned i = 0; i < w->nsh; i++)
                if (!w->sh[i].used) {
                    emu_guarded_free(w->sh[i].p, w->sh[i].map, w->sh[i].map_bytes);
                    w->sh[i--] = w->sh[--w->nsh];
                }
        if (w->nsh == MAX_SHARED)
            thread_fail(w, EMU_UNSUPPORTED, "more than %d __shared__ declarations in one block", MAX_SHARED);
        v = &w->sh[w->nsh];
        memset(v, 0, sizeof *v);
        v->p = (char *)emu_guarded_alloc(bytes, align < 16 ? 16 : align, &v->map, &v->map_bytes);
        if (v->p == NULL)
            thread_fail(w, EMU_BAD_LAUNCH, "out of host memory for __shared__ %s", name);
        v->key = key;
        v->bytes = bytes;
        w->nsh++;
    }
    v->name = name;
    v->file = file;
    v->line = line;
    v->used = 1;
    w->sh_bytes += bytes;
    memset(v->p, EMU_FILL, bytes); // what a GPU's shared memory holds at first: anything
    return v->p;
}

void *emu_shared_(const void *key, size_t bytes, size_t align, const char *name, const char *file, int line)
{
    return shared_get(key, bytes, align, name, file, line);
}

void *emu_dyn_shared_(size_t align, const char *name, const char *file, int line)
{
    worker *w = running("extern __shared__ memory");
    return shared_get(&dyn_key, w->r->dyn_shared, align, name, file, line);
}

/* The block is over: check the guards of its shared memory, release it. */
static void shared_release(worker *w)
{
    char at[800];
    where(w, at, sizeof at);
    for (unsigned i = 0; i < w->nsh; i++) {
        shared_var *v = &w->sh[i];
        long off = 0;
        if (v->used && !w->abort && !emu_guard_intact(v->p, v->bytes, v->map, v->map_bytes, &off)) {
            emu_run_fail(w->r, cudaErrorIllegalAddress, EMU_OUT_OF_BOUNDS,
                         "%s: out of bounds: a thread wrote at offset %ld of __shared__ %s (%zu bytes, %s:%d), %s", at,
                         off, v->name, v->bytes, v->file, v->line, off < 0 ? "before its start" : "past its end");
            w->abort = 1;
        }
        v->used = 0;
    }
    w->sh_bytes = 0;
}

// ---- a block ----

void emu_run_block(emu_run *r, unsigned linear)
{
    worker *w = worker_get();
    dim3 bd = r->block, gd = r->grid;
    w->r = r;
    w->linear = linear;
    w->n = bd.x * bd.y * bd.z;
    w->next = w->rhead = w->rcount = w->done = w->phase = 0;
    w->abort = 0;
    for (unsigned t = 0; t < w->n; t++) {
        w->th[t].state = T_NEW;
        w->th[t].idx = uint3{t % bd.x, t / bd.x % bd.y, t / (bd.x * bd.y)};
    }
    memset(w->warp_in, 0, sizeof w->warp_in);
    memset(w->warp_done, 0, sizeof w->warp_done);
    emu_order(w->order, w->n, r->thread_order, mix(r->seed, linear, 0));
    emu_tls_.bid = uint3{linear % gd.x, linear / gd.x % gd.y, linear / (gd.x * gd.y)};
    emu_tls_.bdim = uint3{bd.x, bd.y, bd.z};
    emu_tls_.gdim = uint3{gd.x, gd.y, gd.z};
    emu_tls_.float_atomics = 0;
    emu_tls_.in_kernel = 1;
    w->in_block = 1;
    for (;;) {
        if (w->abort || r->failed)
            break;
        if (w->rcount > 0) {
            unsigned t = w->ready[w->rhead];
            w->rhead = (w->rhead + 1) % MAX_THREADS;
            w->rcount--;
            w->th[t].state = T_RUN;
            set_cur(w, t);
            emu_switch(&w->native, &w->th[t].f->ctx);
            continue;
        }
        if (w->next < w->n) {
            emu_fiber *f = NULL;
            if (w->nfree > 0)
                f = w->free_[--w->nfree];
            else if (w->nall < MAX_THREADS + 1 && (f = emu_fiber_new(fiber_main)) != NULL)
                w->all[w->nall++] = f; // at most one per thread that waits, plus one
            if (f == NULL) {
                emu_run_fail(r, cudaErrorMemoryAllocation, EMU_BAD_LAUNCH, "%s: out of memory for fiber stacks",
                             r->where);
                break;
            }
            emu_switch(&w->native, &f->ctx);
            continue;
        }
        if (w->done == w->n)
            break;
        resolve(w);
    }
    for (unsigned i = 0; i < w->nall; i++) // threads left waiting by a failure start over
        if (w->all[i]->thread >= 0) {
            emu_fiber_reset(w->all[i], fiber_main);
            w->free_[w->nfree++] = w->all[i];
        }
    shared_release(w);
    if (emu_tls_.float_atomics)
        __atomic_store_n(&r->float_atomics, 1, __ATOMIC_RELAXED);
    emu_tls_.in_kernel = 0;
    w->in_block = 0;
}

// ---- reports of faults ----

void emu_block_describe(char *out, size_t len)
{
    out[0] = '\0';
    if (W == NULL || !W->in_block)
        return;
    uint3 t = emu_tls_.tid;
    char at[800];
    where(W, at, sizeof at);
    snprintf(out, len, "%s, thread (%u,%u,%u)", at, t.x, t.y, t.z);
}

int emu_block_describe_fault(const void *addr, char *out, size_t len, int *kind)
{
    worker *w = W;
    if (w == NULL)
        return 0;
    const char *a = (const char *)addr;
    long pg = sysconf(_SC_PAGESIZE);
    for (unsigned i = 0; i < w->nsh; i++) {
        const shared_var *v = &w->sh[i];
        if (v->map == NULL || a < v->map || a >= v->map + v->map_bytes)
            continue;
        snprintf(out, len, "offset %ld of __shared__ %s (%zu bytes, %s:%d), %s", (long)(a - v->p), v->name, v->bytes,
                 v->file, v->line, a >= v->map + v->map_bytes - pg ? "past its end" : "before its start");
        *kind = EMU_OUT_OF_BOUNDS;
        return 1;
    }
    for (unsigned i = 0; i < w->nall; i++)
        if (emu_fiber_guard_hit(w->all[i], addr)) {
            snprintf(out, len,
                     "the thread overflowed its stack (%u KiB per emulated thread): a large local array "
                     "or deep recursion",
                     EMU_STACK_BYTES / 1024);
            *kind = EMU_STACK_OVERFLOW;
            return 1;
        }
    return 0;
}
