/* kit.c — lab 06's provided parts: the memory ledger (shard.h) and kit.h. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h> // opendir
#include <stdint.h> // uint64_t
#include <stdio.h> // snprintf
#include <stdlib.h> // qsort, malloc, realloc
#include <string.h> // strcmp

#include "dl/bandwidth.h" // dl_bw_seconds
#include "dl/fs.h" // dl_home, dl_mkdir_p
#include "dl/data.h" // dl_npy_write_f32
#include "dl/p2plog.h" // dl_p2plog_start, dl_p2plog_events: the layers' collectives, started and waited
#include "dl/trace.h" // dl_trace_start, dl_trace_events: backward's spans per layer
#include "kit.h"

const char *const kit_mode_names[KIT_MODES] = {"ddp", "zero1", "fsdp"};

// ---- the ledger ----

static const char *const kind_names[SHARD_KINDS] = {"params", "grads", "optim", "acts", "comm"};

const char *shard_mem_kind_name(shard_mem_kind kind)
{
    return (unsigned)kind < SHARD_KINDS ? kind_names[kind] : NULL;
}

/* The kit's own ledger. A shard_mem is your code's to read and, being plain
 * memory, to write: its counts are only a copy (mirrored after every
 * change). What the run reports and the grader reads are these, kept here
 * where no other file can name them; shard_free finds its blocks here too. */
static shard_mem led;

const shard_mem *kit_ledger(void)
{
    return &led;
}

/* The blocks shard_free gave back, kept for the next shard_alloc, as a
 * caching allocator keeps them (PyTorch's): on a GPU cudaFree waits for the
 * whole device and cudaMalloc is slow, and FSDP gathers and frees every
 * layer every step, so after the first step a step allocates nothing. A
 * request takes the smallest cached block that holds it, at most twice its
 * size; the ledger counts what was asked for (allocated), and the pool's
 * blocks besides what is reserved. Reuse is safe in stream order: a block
 * is freed once the operations that use it have been waited for (shard.h:
 * on a GPU a wait makes the compute stream wait for NCCL's), and its next
 * user's work is queued after that, on the compute stream or on a comm
 * stream that waits for it. */
static struct {
    const dl_device *dev;
    void *p[SHARD_MAX_BLOCKS];
    size_t bytes[SHARD_MAX_BLOCKS];
    int n;
    size_t cached, slack, peak; /* bytes cached; handed out beyond what was asked; the most reserved at once */
    size_t held[SHARD_MAX_BLOCKS]; /* the size of the ledger's block k, which may exceed what it asked for */
} pool;

/* After a change: the bytes reserved now (the ledger's, the blocks' slack
 * and the cache) against the peak. */
static void reserve_mark(void)
{
    size_t now = led.now_total + pool.slack + pool.cached;
    if (now > pool.peak)
        pool.peak = now;
}

/* kit_mem_watch's timeline: the ledger's bytes by kind after each change. */
#define WATCH_MAX 4096
static struct {
    int on;
    size_t n, dropped;
    size_t now[WATCH_MAX][SHARD_KINDS];
} watch;

/* After a change: the timeline, and the copy in m. */
static void changed(shard_mem *m)
{
    if (watch.on) {
        if (watch.n < WATCH_MAX)
            memcpy(watch.now[watch.n++], led.now, sizeof led.now);
        else
            watch.dropped++;
    }
    if (m != NULL && m != &led) {
        const dl_device *dev = m->dev;
        *m = led;
        m->dev = dev;
    }
}

static void count_in(shard_mem *m, shard_mem_kind kind, size_t bytes)
{
    led.now[kind] += bytes;
    led.now_total += bytes;
    if (led.now[kind] > led.peak[kind])
        led.peak[kind] = led.now[kind];
    if (led.now_total > led.peak_total)
        led.peak_total = led.now_total;
    reserve_mark();
    changed(m);
}

static void count_out(shard_mem *m, shard_mem_kind kind, size_t bytes)
{
    led.now[kind] -= bytes < led.now[kind] ? bytes : led.now[kind];
    led.now_total -= bytes < led.now_total ? bytes : led.now_total;
    changed(m);
}

void kit_mem_watch(const shard_mem *mem, int on)
{
    (void)mem; // one ledger a process: the kit's
    watch.on = on;
    if (on) {
        watch.n = watch.dropped = 0;
        memcpy(watch.now[watch.n++], led.now, sizeof led.now); // where the step starts
    }
}

// clang-format off
#define KIT_STEPMEM(X)              \
    X(KIT_S_EVENT, "event")         \
    X(KIT_S_PARAMS, "params")       \
    X(KIT_S_GRADS, "grads")         \
    X(KIT_S_OPTIM, "optim")         \
    X(KIT_S_ACTS, "acts")           \
    X(KIT_S_COMM, "comm")           \
    X(KIT_S_TOTAL, "total")
// clang-format on
DL_CSV_SCHEMA(kit_stepmem, KIT_STEPMEM);

dl_status kit_write_mem_step(const char *dir)
{
    if (watch.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the step's memory timeline dropped %zu of its changes (at most %d)",
                            watch.dropped, WATCH_MAX);
    double *rows = malloc((watch.n + 1) * KIT_STEPMEM_NCOLS * sizeof *rows);
    if (rows == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for the step's memory timeline");
    for (size_t e = 0; e < watch.n; e++) {
        double *r = rows + e * KIT_STEPMEM_NCOLS, total = 0;
        r[KIT_S_EVENT] = (double)e;
        for (int k = 0; k < SHARD_KINDS; k++)
            total += r[KIT_S_PARAMS + k] = (double)watch.now[e][k];
        r[KIT_S_TOTAL] = total;
    }
    dl_status st = dl_csv_write(dir, "memory_step.csv", kit_stepmem, rows, (int)watch.n);
    free(rows);
    return st;
}

/* A cached block of bytes..2·bytes (its size into *got), or NULL. */
static void *pool_take(const dl_device *dev, size_t bytes, size_t *got)
{
    int best = -1;
    for (int k = 0; k < pool.n; k++)
        if (pool.bytes[k] >= bytes && pool.bytes[k] / 2 <= bytes && (best < 0 || pool.bytes[k] < pool.bytes[best]))
            best = k;
    if (best < 0 || pool.dev != dev)
        return NULL;
    void *p = pool.p[best];
    *got = pool.bytes[best];
    pool.cached -= *got;
    pool.p[best] = pool.p[--pool.n];
    pool.bytes[best] = pool.bytes[pool.n];
    return p;
}

void kit_pool_release(void)
{
    for (int k = 0; k < pool.n; k++)
        dl_free(pool.dev, pool.p[k]);
    pool.n = 0;
    pool.cached = 0;
}

size_t kit_reserved_peak(void)
{
    return pool.peak;
}

dl_status shard_alloc(shard_mem *m, shard_mem_kind kind, size_t bytes, void **out)
{
    if (m == NULL || m->dev == NULL || (unsigned)kind >= SHARD_KINDS || bytes == 0 || out == NULL)
        return dl_error_set(DL_ERR_ARG, "shard_alloc: need a ledger with a device, a kind, bytes > 0 and out");
    if (led.n_blocks >= SHARD_MAX_BLOCKS)
        return dl_error_set(DL_ERR_NOMEM, "shard_alloc: %d blocks live already (SHARD_MAX_BLOCKS): free some",
                            led.n_blocks);
    size_t got = bytes;
    void *p = pool_take(m->dev, bytes, &got);
    if (p == NULL) {
        DL_TRY(dl_malloc(m->dev, &p, bytes));
        if (pool.n == 0)
            pool.dev = m->dev; // one device a process; blocks are cached for it alone
    }
    dl_status st = dl_memset0(m->dev, p, bytes);
    if (st != DL_OK) {
        dl_free(m->dev, p);
        return st;
    }
    pool.slack += got - bytes;
    pool.held[led.n_blocks] = got;
    led.block[led.n_blocks].p = p;
    led.block[led.n_blocks].bytes = bytes;
    led.block[led.n_blocks].kind = kind;
    led.n_blocks++;
    count_in(m, kind, bytes);
    *out = p;
    return DL_OK;
}

void shard_free(shard_mem *m, void *p)
{
    if (m == NULL || p == NULL)
        return;
    for (int k = 0; k < led.n_blocks; k++) {
        if (led.block[k].p != p)
            continue;
        shard_mem_kind kind = led.block[k].kind;
        size_t bytes = led.block[k].bytes, held = pool.held[k];
        led.block[k] = led.block[--led.n_blocks];
        pool.held[k] = pool.held[led.n_blocks];
        pool.slack -= held - bytes;
        if (pool.n < SHARD_MAX_BLOCKS && pool.dev == m->dev) { // kept for the next shard_alloc
            pool.p[pool.n] = p;
            pool.bytes[pool.n++] = held;
            pool.cached += held;
        } else {
            dl_free(m->dev, p);
        }
        count_out(m, kind, bytes);
        return;
    }
}

size_t shard_scratch_bytes(size_t n, int P)
{
    if (P <= 1 || n == 0)
        return 0;
    size_t biggest = (n + (size_t)P - 1) / (size_t)P;
    return (biggest < SHARD_CHUNK ? biggest : SHARD_CHUNK) * sizeof(float);
}

// ---- the model's own buffers ----

static size_t act_bytes(const size_t *sizes, int n_sizes, size_t batch)
{
    size_t outs = 0, widest = 0;
    for (int k = 1; k < n_sizes; k++)
        outs += sizes[k];
    for (int k = 0; k < n_sizes; k++)
        widest = sizes[k] > widest ? sizes[k] : widest;
    return batch * (outs + 2 * widest + 1) * sizeof(float);
}

static void model_sizes(const dl_mlp *m, size_t *sizes, int *n_sizes)
{
    sizes[0] = m->layer[0].in;
    for (int l = 0; l < m->n_layers; l++)
        sizes[l + 1] = m->layer[l].out;
    *n_sizes = m->n_layers + 1;
}

dl_status kit_mem_model_buffers(shard_mem *mem, dl_mlp *m, int keep_velocity)
{
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    int ns;
    model_sizes(m, sizes, &ns);
    count_in(mem, SHARD_PARAMS, m->n_params * sizeof(float));
    count_in(mem, SHARD_GRADS, m->n_params * sizeof(float));
    if (keep_velocity) {
        count_in(mem, SHARD_OPTIM, m->n_params * sizeof(float));
    } else {
        dl_free(m->dev, m->velocity);
        m->velocity = NULL;
    }
    count_in(mem, SHARD_ACTS, act_bytes(sizes, ns, m->max_batch));
    return DL_OK;
}

void kit_mem_release_model(shard_mem *mem, const dl_mlp *m)
{
    size_t sizes[DL_MLP_MAX_LAYERS + 1];
    int ns;
    model_sizes(m, sizes, &ns);
    count_out(mem, SHARD_PARAMS, m->n_params * sizeof(float));
    count_out(mem, SHARD_GRADS, m->n_params * sizeof(float));
    if (m->velocity != NULL)
        count_out(mem, SHARD_OPTIM, m->n_params * sizeof(float));
    count_out(mem, SHARD_ACTS, act_bytes(sizes, ns, m->max_batch));
}

void kit_mem_drop_full(shard_mem *mem, dl_mlp *m)
{
    count_out(mem, SHARD_PARAMS, m->n_params * sizeof(float));
    count_out(mem, SHARD_GRADS, m->n_params * sizeof(float));
    dl_free(m->dev, m->params);
    dl_free(m->dev, m->grads);
    m->params = m->grads = NULL;
    for (int l = 0; l < m->n_layers; l++)
        m->layer[l].W = m->layer[l].b = m->layer[l].gW = m->layer[l].gb = NULL;
    for (int k = 0; k < SHARD_KINDS; k++)
        led.peak[k] = led.now[k];
    led.peak_total = led.now_total;
    pool.peak = 0;
    reserve_mark(); // the reserved peak starts again too
    changed(mem);
}

dl_status kit_eval_every_rank(dl_mlp *m, const dl_devset *set, size_t chunk, double *acc)
{
    for (size_t at = 0; at < set->n; at += chunk) {
        size_t k = set->n - at < chunk ? set->n - at : chunk;
        DL_TRY(dl_mlp_count_right(m, set->X + at * set->d, set->y + at, k));
    }
    double right = 0;
    DL_TRY(dl_mlp_take_right(m, &right));
    *acc = set->n > 0 ? right / (double)set->n : 0;
    return DL_OK;
}

dl_status kit_fsdp_params(dl_comm *c, const dl_mlp *m, const fsdp_state *f, float *host)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t widest = 0;
    for (int l = 0; l < m->n_layers; l++)
        widest = m->layer[l].count > widest ? m->layer[l].count : widest;
    size_t pad_max = (widest + (size_t)P - 1) / (size_t)P;
    // on the device, where the transport reads (NCCL on GPUs), then back to the host
    float *mine = NULL, *all = NULL, *back = malloc(pad_max * (size_t)P * sizeof *back);
    dl_status st = back != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory for the shards");
    if (st == DL_OK)
        st = dl_malloc(m->dev, (void **)&mine, pad_max * sizeof *mine);
    if (st == DL_OK)
        st = dl_malloc(m->dev, (void **)&all, pad_max * (size_t)P * sizeof *all);
    for (int l = 0; l < m->n_layers && st == DL_OK; l++) {
        size_t n = m->layer[l].count, base = n / (size_t)P, longer = n % (size_t)P,
               pad = (n + (size_t)P - 1) / (size_t)P;
        size_t cnt = base + ((size_t)r < longer); // lab 04's segments, by the kit's own arithmetic
        st = dl_memset0(m->dev, mine, pad_max * sizeof *mine);
        if (st == DL_OK && cnt > 0 && f->layer[l].param != NULL)
            st = dl_memcpy_d2d(m->dev, mine, f->layer[l].param, cnt * sizeof *mine);
        if (st == DL_OK)
            st = dl_comm_allgather(c, mine, all, pad, DL_F32);
        if (st == DL_OK)
            st = dl_memcpy_d2h(m->dev, back, all, pad * (size_t)P * sizeof *back);
        for (int s = 0; s < P && st == DL_OK; s++) {
            size_t off = (size_t)s * base + ((size_t)s < longer ? (size_t)s : longer);
            memcpy(host + m->layer[l].offset + off, back + (size_t)s * pad,
                   (base + ((size_t)s < longer)) * sizeof *host);
        }
    }
    dl_free(m->dev, mine), dl_free(m->dev, all), free(back);
    return st;
}

// ---- DDP's step ----

dl_status kit_ddp_step(dl_comm *c, dl_mlp *m, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    DL_TRY(dl_mlp_forward(m, X, n));
    DL_TRY(dl_mlp_loss(m, y, n, NULL));
    DL_TRY(dl_mlp_backward(m, X, n, 0, NULL, NULL));
    DL_TRY(dl_comm_allreduce(c, m->grads, m->n_params, DL_F32, DL_RED_AVG));
    return dl_mlp_sgd(m, opt->lr, opt->momentum, opt->weight_decay);
}

// ---- the closed forms ----

static double ceil_div(double n, int P)
{
    return (double)(((size_t)n + (size_t)P - 1) / (size_t)P);
}

/* FSDP's peaks, by replaying the reference's order of allocations on a
 * ledger of sizes only (rank 0: the largest shards): forward gathers layer
 * l (l = 0: now; later: prefetched by l − 1), prefetches l + 1, frees l;
 * backward gathers l (l = L − 1: now), allocates its whole gradient,
 * prefetches l − 1, and once l's gradient is final finishes l + 1's
 * reduce-scatter (its gradient and slots freed) and starts l's (P − 1 slots
 * of ⌈n_l/P⌉), then frees l's parameters; the step finishes layer 0's. */
typedef struct sim {
    double now[SHARD_KINDS], peak[SHARD_KINDS], total, peak_total;
} sim;
static void sim_add(sim *s, int kind, double bytes)
{
    s->now[kind] += bytes;
    s->total += bytes;
    s->peak[kind] = s->now[kind] > s->peak[kind] ? s->now[kind] : s->peak[kind];
    s->peak_total = s->total > s->peak_total ? s->total : s->peak_total;
}

static double fsdp_peaks(const size_t *sizes, int n_sizes, size_t batch, int P, double *bytes)
{
    int L = n_sizes - 1;
    double n[DL_MLP_MAX_LAYERS], f = sizeof(float);
    sim s = {{0}, {0}, 0, 0};
    for (int l = 0; l < L; l++) {
        n[l] = (double)(sizes[l] * sizes[l + 1] + sizes[l + 1]);
        for (int k = SHARD_PARAMS; k <= SHARD_OPTIM; k++)
            sim_add(&s, k, f * ceil_div(n[l], P));
    }
    sim_add(&s, SHARD_ACTS, (double)act_bytes(sizes, n_sizes, batch));
    for (int l = 0; l < L; l++) { // forward
        if (l == 0)
            sim_add(&s, SHARD_PARAMS, f * n[0]);
        if (l + 1 < L)
            sim_add(&s, SHARD_PARAMS, f * n[l + 1]);
        sim_add(&s, SHARD_PARAMS, -f * n[l]);
    }
    for (int l = L - 1; l >= 0; l--) { // backward
        if (l == L - 1)
            sim_add(&s, SHARD_PARAMS, f * n[l]);
        sim_add(&s, SHARD_GRADS, f * n[l]);
        if (l > 0)
            sim_add(&s, SHARD_PARAMS, f * n[l - 1]);
        if (l + 1 < L) { // l + 1's reduce-scatter done
            sim_add(&s, SHARD_GRADS, -f * n[l + 1]);
            sim_add(&s, SHARD_COMM, -f * (P - 1) * ceil_div(n[l + 1], P));
        }
        sim_add(&s, SHARD_COMM, f * (P - 1) * ceil_div(n[l], P));
        sim_add(&s, SHARD_PARAMS, -f * n[l]);
    }
    for (int k = 0; k < SHARD_KINDS; k++)
        bytes[k] = s.peak[k];
    return s.peak_total;
}

double kit_mem_bytes(kit_mode mode, const size_t *sizes, int n_sizes, size_t batch, int P, double *bytes)
{
    double n = 0, biggest = 0, sharded = 0; // FSDP: Σ ⌈n_l/P⌉
    for (int l = 0; l + 1 < n_sizes; l++) {
        double nl = (double)(sizes[l] * sizes[l + 1] + sizes[l + 1]);
        n += nl;
        biggest = nl > biggest ? nl : biggest;
        sharded += ceil_div(nl, P);
    }
    const double f = sizeof(float);
    for (int k = 0; k < SHARD_KINDS; k++)
        bytes[k] = 0;
    bytes[SHARD_ACTS] = (double)act_bytes(sizes, n_sizes, batch);
    switch (mode) {
    case KIT_DDP:
        bytes[SHARD_PARAMS] = bytes[SHARD_GRADS] = bytes[SHARD_OPTIM] = f * n;
        break;
    case KIT_ZERO1:
        bytes[SHARD_PARAMS] = bytes[SHARD_GRADS] = f * n;
        bytes[SHARD_OPTIM] = f * ceil_div(n, P);
        bytes[SHARD_COMM] = (double)shard_scratch_bytes((size_t)n, P);
        break;
    default:
        return fsdp_peaks(sizes, n_sizes, batch, P, bytes);
    }
    double total = 0;
    for (int k = 0; k < SHARD_KINDS; k++)
        total += bytes[k];
    return total;
}

double kit_sent_bytes(kit_mode mode, size_t n, int P)
{
    double ring = (double)(P - 1) / P * 4.0 * (double)n; // one reduce-scatter, or one all-gather
    return mode == KIT_FSDP ? 3 * ring : 2 * ring;
}

// ---- the projected step ----

kit_projection kit_project_step(kit_mode mode, const size_t *sizes, int n_sizes, size_t batch, const dl_profile *p)
{
    int L = n_sizes - 1, P = p->gpus;
    double fwd[DL_MLP_MAX_LAYERS], bwd[DL_MLP_MAX_LAYERS], nl[DL_MLP_MAX_LAYERS], n = 0, shards = 0;
    double flop_s = p->fp32_peak * p->fp32_efficiency, mem_s = p->mem_bw * p->mem_efficiency, B = (double)batch;
    double compute = 0;
    for (int l = 0; l < L; l++) {
        double in = (double)sizes[l], out = (double)sizes[l + 1];
        nl[l] = in * out + out;
        n += nl[l];
        shards += ceil_div(nl[l], P);
        fwd[l] = B * 2 * in * out / flop_s + p->launch_overhead;
        bwd[l] = B * ((l > 0 ? 4 : 2) * in * out + 2 * out) / flop_s + p->launch_overhead;
        compute += fwd[l] + bwd[l];
    }
    double lat = p->hop_latency, bw = p->bus_bw;
    kit_projection r = {0, 0, 0};
    if (mode == KIT_DDP) {
        double opt = 20 * n / mem_s + p->launch_overhead;
        r.compute_s = compute + opt;
        r.step_s = r.compute_s + dl_bw_seconds(DL_BW_ALLREDUCE, P, 1, 4 * n, lat, bw);
    } else if (mode == KIT_ZERO1) {
        double opt = 20 * ceil_div(n, P) / mem_s + p->launch_overhead;
        r.compute_s = compute + opt;
        r.step_s = r.compute_s + dl_bw_seconds(DL_BW_REDUCE_SCATTER, P, 1, 4 * n, lat, bw) +
                   dl_bw_seconds(DL_BW_ALLGATHER, P, 1, 4 * n, lat, bw);
    } else { // two streams: compute (busy until cpu) and communication (until net), in issue order
        double cpu = 0, net = 0, gathered[DL_MLP_MAX_LAYERS];
        for (int pass = 0; pass < 2; pass++) { // forward, then backward
            for (int k = 0; k < L; k++) {
                int l = pass == 0 ? k : L - 1 - k;
                if (k == 0) { // the pass's first layer: gathered now
                    net = (net > cpu ? net : cpu) + dl_bw_seconds(DL_BW_ALLGATHER, P, 1, 4 * nl[l], lat, bw);
                    gathered[l] = net;
                }
                double start = cpu > gathered[l] ? cpu : gathered[l];
                int next = pass == 0 ? l + 1 : l - 1;
                if (next >= 0 && next < L) { // prefetched when this layer starts
                    net = (net > start ? net : start) + dl_bw_seconds(DL_BW_ALLGATHER, P, 1, 4 * nl[next], lat, bw);
                    gathered[next] = net;
                }
                cpu = start + (pass == 0 ? fwd[l] : bwd[l]);
                if (pass == 1) // its gradient reduce-scattered once its backward ends
                    net = (net > cpu ? net : cpu) + dl_bw_seconds(DL_BW_REDUCE_SCATTER, P, 1, 4 * nl[l], lat, bw);
            }
        }
        double opt = 20 * shards / mem_s + L * p->launch_overhead;
        r.compute_s = compute + opt;
        r.step_s = (net > cpu ? net : cpu) + opt;
    }
    r.exposed_s = r.step_s - r.compute_s;
    return r;
}

// clang-format off
#define KIT_PROJ(X)                              \
    X(KIT_J_PROFILE, "profile")                  \
    X(KIT_J_GPUS, "gpus")                        \
    X(KIT_J_DDP, "ddp_ms")                       \
    X(KIT_J_ZERO1, "zero1_ms")                   \
    X(KIT_J_FSDP, "fsdp_ms")                     \
    X(KIT_J_DDP_EXPOSED, "ddp_exposed_ms")       \
    X(KIT_J_ZERO1_EXPOSED, "zero1_exposed_ms")   \
    X(KIT_J_FSDP_EXPOSED, "fsdp_exposed_ms")
// clang-format on
DL_CSV_SCHEMA(kit_proj, KIT_PROJ);

static int shipped_profiles(char (*names)[256], int max);

dl_status kit_write_projection(const char *dir, const size_t *sizes, int n_sizes, size_t batch)
{
    char names[32][256];
    int n = shipped_profiles(names, 32);
    if (n < 0)
        return DL_ERR_IO;
    char path[1200];
    DL_TRY(dl_path_join(path, sizeof path, dir, "projection.csv"));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_proj));
    dl_status st = DL_OK;
    for (int k = 0; k < n && st == DL_OK; k++) {
        dl_profile p;
        if (dl_profile_load(names[k], &p) != DL_OK)
            continue;
        dl_csv_cell(&f, KIT_J_PROFILE, "%s", p.name);
        dl_csv_cell(&f, KIT_J_GPUS, "%d", p.gpus);
        for (int md = 0; md < KIT_MODES; md++) {
            kit_projection j = kit_project_step((kit_mode)md, sizes, n_sizes, batch, &p);
            dl_csv_cell(&f, KIT_J_DDP + md, "%.6g", 1e3 * j.step_s);
            dl_csv_cell(&f, KIT_J_DDP_EXPOSED + md, "%.6g", 1e3 * j.exposed_s);
        }
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

double kit_largest_model(kit_mode mode, double mem, int P, int layers)
{
    double per = mode == KIT_DDP     ? 12.0
                 : mode == KIT_ZERO1 ? 8.0 + 4.0 / P
                                     : 12.0 / P + (16.0 + 4.0 * (P - 1) / P) / layers;
    return mem > 0 ? mem / per : 0;
}

// ---- the files ----

/* After p in 1, 2, 4, ..., 64 with P put in its place: the next power of two, or P before it. */
static int next_ranks(int p, int P)
{
    int q = 1;
    while (q <= p)
        q *= 2;
    return p < P && P < q ? P : q;
}

dl_status kit_write_memory(const char *dir, const size_t *sizes, int n_sizes, size_t batch, kit_mode mode, int P)
{
    char path[1200];
    DL_TRY(dl_path_join(path, sizeof path, dir, "memory.csv"));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_mem));
    dl_status st = DL_OK;
    for (int md = 0; md < KIT_MODES; md++) {
        // P = 1, 2, 4, ..., 64, and the run's own P where it is none of them (in order)
        for (int p = 1; p <= 64 && st == DL_OK; p = next_ranks(p, P)) {
            double b[SHARD_KINDS], total = kit_mem_bytes((kit_mode)md, sizes, n_sizes, batch, p, b);
            dl_csv_cell(&f, KIT_MEM_SOURCE, "model");
            dl_csv_cell(&f, KIT_MEM_MODE, "%s", kit_mode_names[md]);
            dl_csv_cell(&f, KIT_MEM_P, "%d", p);
            for (int k = 0; k < SHARD_KINDS; k++)
                dl_csv_cell(&f, KIT_MEM_PARAMS + k, "%.0f", b[k]);
            dl_csv_cell(&f, KIT_MEM_TOTAL, "%.0f", total);
            st = dl_csv_end_row(&f);
        }
    }
    if (st == DL_OK) {
        dl_csv_cell(&f, KIT_MEM_SOURCE, "measured");
        dl_csv_cell(&f, KIT_MEM_MODE, "%s", kit_mode_names[mode]);
        dl_csv_cell(&f, KIT_MEM_P, "%d", P);
        for (int k = 0; k < SHARD_KINDS; k++)
            dl_csv_cell(&f, KIT_MEM_PARAMS + k, "%zu", led.peak[k]);
        dl_csv_cell(&f, KIT_MEM_TOTAL, "%zu", led.peak_total);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

// clang-format off
#define KIT_LARGEST(X)                \
    X(KIT_L_PROFILE, "profile")       \
    X(KIT_L_GPU, "gpu")               \
    X(KIT_L_GPUS, "gpus")             \
    X(KIT_L_MEM, "gpu_mem")           \
    X(KIT_L_DDP, "ddp_params")        \
    X(KIT_L_ZERO1, "zero1_params")    \
    X(KIT_L_FSDP, "fsdp_params")
// clang-format on
DL_CSV_SCHEMA(kit_largest, KIT_LARGEST);

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The shipped profiles' files (the .conf files of DL_HOME/common/perf), sorted by name:
 * up to max paths into names; the count, or -1 (DL_ERR_IO set). */
static int shipped_profiles(char (*names)[256], int max)
{
    char perf[1100];
    snprintf(perf, sizeof perf, "%s/common/perf", dl_home());
    DIR *d = opendir(perf);
    if (d == NULL) {
        dl_error_set(DL_ERR_IO, "%s: cannot list the shipped profiles", perf);
        return -1;
    }
    int n = 0;
    for (struct dirent *e; n < max && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0 &&
            snprintf(names[n], sizeof names[n], "%s/%s", perf, e->d_name) < (int)sizeof names[n])
            n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    return n;
}

dl_status kit_write_largest(const char *dir)
{
    char names[32][256], path[1200];
    int n = shipped_profiles(names, 32);
    if (n < 0)
        return DL_ERR_IO;
    DL_TRY(dl_path_join(path, sizeof path, dir, "largest.csv"));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_largest));
    dl_status st = DL_OK;
    for (int k = 0; k < n && st == DL_OK; k++) {
        dl_profile p;
        if (dl_profile_load(names[k], &p) != DL_OK || p.gpu_mem <= 0)
            continue;
        dl_csv_cell(&f, KIT_L_PROFILE, "%s", p.name);
        dl_csv_cell(&f, KIT_L_GPU, "\"%s\"", p.gpu);
        dl_csv_cell(&f, KIT_L_GPUS, "%d", p.gpus);
        dl_csv_cell(&f, KIT_L_MEM, "%.0f", p.gpu_mem);
        for (int md = 0; md < KIT_MODES; md++)
            dl_csv_cell(&f, KIT_L_DDP + md, "%.0f",
                        kit_largest_model((kit_mode)md, p.gpu_mem, p.gpus, KIT_LARGEST_LAYERS));
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

static dl_status write_fsdp_record(const char *dir, int rank); // below: FSDP's layers, when recorded

// ---- the phases of the transport's log ----

const char *const kit_phase_names[KIT_PHASES] = {"none", "step", "reduce_scatter", "all_gather"};

/* Marks: from record `at` of the log on, phase (kind, id). One rank's, of the process. */
static struct {
    struct mark {
        size_t at;
        kit_phase_kind kind;
        long id;
    } * v;
    size_t n, cap, dropped;
} marks;
static long cur_step = -1; /* the step the log is in (kit_phase), -1 outside one */

void kit_phase(dl_comm *c, kit_phase_kind kind, long id)
{
    size_t at = 0;
    dl_comm_log(c, &at, NULL);
    cur_step = kind == KIT_PH_STEP ? id : -1;
    if (marks.n == marks.cap) {
        size_t cap = marks.cap ? 2 * marks.cap : 256;
        struct mark *v = realloc(marks.v, cap * sizeof *v);
        if (v == NULL) {
            marks.dropped++;
            return;
        }
        marks.v = v, marks.cap = cap;
    }
    marks.v[marks.n++] = (struct mark){at, (unsigned)kind < KIT_PHASES ? kind : KIT_PH_NONE, kind ? id : -1};
}

// clang-format off
#define KIT_COMMLOG(X)          \
    X(KIT_C_INDEX, "index")     \
    X(KIT_C_OP, "op")           \
    X(KIT_C_COUNT, "count")     \
    X(KIT_C_DTYPE, "dtype")     \
    X(KIT_C_PHASE, "phase")     \
    X(KIT_C_PHASE_ID, "phase_id")
#define KIT_PEAK(X)             \
    X(KIT_P_KIND, "kind")       \
    X(KIT_P_PEAK, "peak")       \
    X(KIT_P_NOW, "now")
// clang-format on
DL_CSV_SCHEMA(kit_commlog, KIT_COMMLOG);
DL_CSV_SCHEMA(kit_peak, KIT_PEAK);

/* DIR/comm.RANK.csv: the log so far, each record with its phase. */
static dl_status write_log(const char *dir, dl_comm *c)
{
    char path[1200], name[64];
    size_t n = 0, dropped = 0, m = 0;
    const dl_comm_rec *rec = dl_comm_log(c, &n, &dropped);
    if (dropped > 0 || marks.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the transport's log dropped %zu records and %zu phase marks", dropped,
                            marks.dropped);
    snprintf(name, sizeof name, "comm.%d.csv", dl_comm_rank(c));
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_commlog));
    dl_status st = DL_OK;
    kit_phase_kind kind = KIT_PH_NONE;
    long id = -1;
    for (size_t k = 0; k < n && st == DL_OK; k++) {
        for (; m < marks.n && marks.v[m].at <= k; m++)
            kind = marks.v[m].kind, id = marks.v[m].id;
        dl_csv_cell(&f, KIT_C_INDEX, "%zu", k);
        dl_csv_cell(&f, KIT_C_OP, "%s", dl_comm_op_name(rec[k].op));
        dl_csv_cell(&f, KIT_C_COUNT, "%zu", rec[k].count);
        dl_csv_cell(&f, KIT_C_DTYPE, "%s", dl_dtype_name(rec[k].t));
        dl_csv_cell(&f, KIT_C_PHASE, "%s", kit_phase_names[kind]);
        dl_csv_cell(&f, KIT_C_PHASE_ID, "%ld", id);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

dl_status kit_dump(const char *dir, dl_comm *c, const float *params, size_t n_params)
{
    int r = dl_comm_rank(c);
    char path[1200], name[64];
    DL_TRY(dl_mkdir_p(dir));
    snprintf(name, sizeof name, "params.%d.npy", r);
    dl_status st = dl_path_join(path, sizeof path, dir, name);
    if (st == DL_OK)
        st = dl_npy_write_f32(path, params, 1, n_params);
    dl_csv_out f;
    snprintf(name, sizeof name, "memory.%d.csv", r);
    if (st == DL_OK)
        st = dl_path_join(path, sizeof path, dir, name);
    if (st == DL_OK)
        st = dl_csv_open(&f, path, kit_peak);
    for (int k = 0; k <= SHARD_KINDS && st == DL_OK; k++) {
        dl_csv_cell(&f, KIT_P_KIND, "%s", k < SHARD_KINDS ? kind_names[k] : "total");
        dl_csv_cell(&f, KIT_P_PEAK, "%zu", k < SHARD_KINDS ? led.peak[k] : led.peak_total);
        dl_csv_cell(&f, KIT_P_NOW, "%zu", k < SHARD_KINDS ? led.now[k] : led.now_total);
        st = dl_csv_end_row(&f);
        if (st != DL_OK)
            dl_csv_abort(&f);
    }
    if (st == DL_OK)
        st = dl_csv_close(&f);
    if (st == DL_OK)
        st = write_log(dir, c);
    return st == DL_OK ? write_fsdp_record(dir, r) : st;
}

// ---- FSDP's layers, recorded around the hooks (kit_fsdp_record) ----

/* The student's hooks, called by the kit's own, which note where the kit's
 * records (dl/p2plog.h, dl/trace.h) stand when each layer's compute begins
 * and ends. One rank's, of the process. */
static struct {
    int on;
    dl_mlp_hook_fn pre, post;
    void *ctx;
    struct lmark {
        long step;
        int pass, layer, what; /* pass: dl_mlp_phase; what: KIT_LM_* */
        size_t p2p, span; /* events of the p2p record and of the trace before this point */
    } * v;
    size_t n, cap, dropped;
} hooked;
enum { KIT_LM_ENTER = 0, KIT_LM_COMPUTE, KIT_LM_COMPUTED, KIT_LMS };
static const char *const lm_names[KIT_LMS] = {"enter", "compute", "computed"};

static void lmark(int pass, int layer, int what)
{
    if (cur_step < 0) // the steps only, not the evaluation's forwards
        return;
    if (hooked.n == hooked.cap) {
        size_t cap = hooked.cap ? 2 * hooked.cap : 1024;
        struct lmark *v = realloc(hooked.v, cap * sizeof *v);
        if (v == NULL) {
            hooked.dropped++;
            return;
        }
        hooked.v = v, hooked.cap = cap;
    }
    size_t np = 0, nt = 0;
    dl_p2plog_events(&np, NULL);
    dl_trace_events(&nt);
    hooked.v[hooked.n++] = (struct lmark){cur_step, pass, layer, what, np, nt};
}

static dl_status kit_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    (void)ctx;
    lmark(phase, layer, KIT_LM_ENTER);
    dl_status st = hooked.pre != NULL ? hooked.pre(hooked.ctx, layer, phase) : DL_OK;
    if (st == DL_OK)
        lmark(phase, layer, KIT_LM_COMPUTE);
    return st;
}

static dl_status kit_post(void *ctx, int layer, dl_mlp_phase phase)
{
    (void)ctx;
    lmark(phase, layer, KIT_LM_COMPUTED);
    return hooked.post != NULL ? hooked.post(hooked.ctx, layer, phase) : DL_OK;
}

void kit_fsdp_record(dl_mlp *m)
{
    if (!hooked.on) {
        dl_trace_start(0);
        dl_p2plog_start((size_t)1 << 22);
        hooked.on = 1;
    }
    kit_fsdp_watch(m);
}

void kit_fsdp_watch(dl_mlp *m)
{
    if (!hooked.on || m->pre == kit_pre || (m->pre == NULL && m->post == NULL))
        return;
    hooked.pre = m->pre, hooked.post = m->post, hooked.ctx = m->hook_ctx;
    dl_mlp_set_hooks(m, kit_pre, kit_post, NULL);
}

// clang-format off
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
// clang-format on
DL_CSV_SCHEMA(kit_p2p, KIT_P2P);
DL_CSV_SCHEMA(kit_layers, KIT_LAYERS);

/* DIR/trace.RANK.csv (dl_trace_write_csv), DIR/p2p.RANK.csv (the kit's
 * record of every operation started and waited: index, kind start|wait|add,
 * op, id, bytes sent) and DIR/layers.RANK.csv (for each step, pass and
 * layer, where those two stood when the layer's pre hook was entered, when
 * its compute began and when it ended: the number of p2p events and trace
 * spans before). Only when kit_fsdp_record started them. */
static dl_status write_fsdp_record(const char *dir, int rank)
{
    if (!hooked.on)
        return DL_OK;
    char path[1200], name[64];
    size_t n = 0, dropped = 0;
    const dl_p2p_ev *ev = dl_p2plog_events(&n, &dropped);
    if (dropped > 0 || hooked.dropped > 0 || dl_trace_dropped() > 0)
        return dl_error_set(DL_ERR_NOMEM, "FSDP's record dropped %zu operations, %zu layer marks and %zu spans",
                            dropped, hooked.dropped, dl_trace_dropped());
    snprintf(name, sizeof name, "trace.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    DL_TRY(dl_trace_write_csv(path));
    snprintf(name, sizeof name, "p2p.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_p2p));
    dl_status st = DL_OK;
    for (size_t k = 0; k < n && st == DL_OK; k++) {
        dl_csv_cell(&f, KIT_X_INDEX, "%zu", k);
        dl_csv_cell(&f, KIT_X_KIND, "%s", dl_p2plog_kind_name(ev[k].kind));
        dl_csv_cell(&f, KIT_X_OP, "%s", ev[k].op >= 0 ? dl_comm_op_name((dl_comm_op)ev[k].op) : "none");
        dl_csv_cell(&f, KIT_X_ID, "%ld", ev[k].id);
        dl_csv_cell(&f, KIT_X_BYTES, "%zu", ev[k].kind == DL_P2P_START ? ev[k].a_bytes : (size_t)0);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    DL_TRY(dl_csv_close(&f));
    snprintf(name, sizeof name, "layers.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    DL_TRY(dl_csv_open(&f, path, kit_layers));
    for (size_t k = 0; k < hooked.n && st == DL_OK; k++) {
        const struct lmark *m = &hooked.v[k];
        dl_csv_cell(&f, KIT_Y_STEP, "%ld", m->step);
        dl_csv_cell(&f, KIT_Y_PASS, "%s", m->pass == DL_MLP_FORWARD ? "forward" : "backward");
        dl_csv_cell(&f, KIT_Y_LAYER, "%d", m->layer);
        dl_csv_cell(&f, KIT_Y_MARK, "%s", lm_names[m->what]);
        dl_csv_cell(&f, KIT_Y_P2P, "%zu", m->p2p);
        dl_csv_cell(&f, KIT_Y_SPAN, "%zu", m->span);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

// ---- the self-test of task 2 ----

size_t kit_selftest_n(int P, int k)
{
    const size_t n[KIT_SELFTEST_CASES] = {0, 1, (size_t)(P > 1 ? P - 1 : 0), 10, 1000, 100003};
    return k >= 0 && k < KIT_SELFTEST_CASES ? n[k] : 0;
}

float kit_selftest_value(int stream, int k, int rank, size_t i)
{
    // splitmix64 of the four coordinates
    uint64_t z = ((uint64_t)(unsigned)stream << 60) ^ ((uint64_t)(unsigned)k << 52) ^ ((uint64_t)(unsigned)rank << 40) ^
                 (uint64_t)i;
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 8388608.0f) - 1.0f; // 24 bits: [0, 2) - 1
}

/* One call of the self-test on case k: fill, call, write DIR/PREFIX.K.RANK.npy. */
static dl_status selftest_case(dl_comm *c, const dl_device *dev, int gather, int k, const char *dir, float *host,
                               float *buf, float *scratch)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t n = kit_selftest_n(P, k), base = n / (size_t)P, longer = n % (size_t)P;
    size_t lo = (size_t)r * base + ((size_t)r < longer ? (size_t)r : longer), hi = lo + base + ((size_t)r < longer);
    for (size_t i = 0; i < n; i++)
        host[i] = !gather             ? kit_selftest_value(KIT_ST_INPUT, k, r, i)
                  : i >= lo && i < hi ? kit_selftest_value(KIT_ST_SHARD, k, 0, i)
                                      : kit_selftest_value(KIT_ST_JUNK, k, r, i);
    if (n > 0)
        DL_TRY(dl_memcpy_h2d(dev, buf, host, n * sizeof *host));
    kit_phase(c, gather ? KIT_PH_ALL_GATHER : KIT_PH_REDUCE_SCATTER, k);
    dl_status st = gather ? shard_all_gather(c, dev, buf, n) : shard_reduce_scatter(c, dev, buf, n, scratch);
    kit_phase(c, KIT_PH_NONE, -1);
    if (st != DL_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", dl_last_error());
        return dl_error_set(st, "%s on n = %zu over %d ranks: %s", gather ? "shard_all_gather" : "shard_reduce_scatter",
                            n, P, why);
    }
    if (n > 0)
        DL_TRY(dl_memcpy_d2h(dev, host, buf, n * sizeof *host));
    char path[1200], name[64];
    snprintf(name, sizeof name, "%s.%d.%d.npy", gather ? "ag" : "rs", k, r);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    return dl_npy_write_f32(path, host, 1, n);
}

/* One case of the self-test of task 4: both collectives started, then waited (see kit.h). */
static dl_status start_case(dl_comm *c, const dl_device *dev, int k, const char *dir, float *host, float *ag,
                            float *grad, float *out, float *scratch)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t n = kit_selftest_n(P, k), base = n / (size_t)P, longer = n % (size_t)P;
    size_t lo = (size_t)r * base + ((size_t)r < longer ? (size_t)r : longer), hi = lo + base + ((size_t)r < longer);
    for (size_t i = 0; i < n; i++)
        host[i] =
            i >= lo && i < hi ? kit_selftest_value(KIT_ST_SHARD, k, 0, i) : kit_selftest_value(KIT_ST_JUNK, k, r, i);
    if (n > 0)
        DL_TRY(dl_memcpy_h2d(dev, ag, host, n * sizeof *host));
    for (size_t i = 0; i < n; i++)
        host[i] = kit_selftest_value(KIT_ST_INPUT, k, r, i);
    if (n > 0)
        DL_TRY(dl_memcpy_h2d(dev, grad, host, n * sizeof *host));
    shard_pending pa = {0}, pr = {0};
    const char *fn = "shard_all_gather_start";
    // rank 0 starts both before the others have started anything: a start that waits for its peers never
    // returns. Not on a GPU: NCCL connects two ranks inside their first exchange, which waits for the peer
    int first = dev->kind != DL_DEVICE_CUDA;
    dl_status st = first && r > 0 ? dl_comm_barrier(c) : DL_OK;
    if (st == DL_OK) {
        kit_phase(c, KIT_PH_ALL_GATHER, k);
        st = shard_all_gather_start(c, dev, ag, n, &pa);
    }
    if (st == DL_OK) {
        kit_phase(c, KIT_PH_REDUCE_SCATTER, k);
        fn = "shard_reduce_scatter_start";
        st = shard_reduce_scatter_start(c, dev, grad, n, out, scratch, &pr);
    }
    kit_phase(c, KIT_PH_NONE, -1);
    if (st == DL_OK && first && r == 0)
        st = dl_comm_barrier(c);
    for (int w = 0; w < 2 && st == DL_OK; w++) { // waited in either order: odd ranks the reduce-scatter first
        fn = "shard_wait";
        st = shard_wait(c, dev, (w + r) % 2 == 0 ? &pa : &pr);
    }
    if (st != DL_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", dl_last_error());
        return dl_error_set(st, "%s on n = %zu over %d ranks: %s", fn, n, P, why);
    }
    char path[1200], name[64];
    if (n > 0)
        DL_TRY(dl_memcpy_d2h(dev, host, ag, n * sizeof *host));
    snprintf(name, sizeof name, "ags.%d.%d.npy", k, r);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    DL_TRY(dl_npy_write_f32(path, host, 1, n));
    if (hi > lo)
        DL_TRY(dl_memcpy_d2h(dev, host, out, (hi - lo) * sizeof *host));
    snprintf(name, sizeof name, "rss.%d.%d.npy", k, r);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    return dl_npy_write_f32(path, host, 1, hi - lo);
}

dl_status kit_selftest(dl_comm *c, const dl_device *dev, const char *what, const char *dir)
{
    int P = dl_comm_size(c), gather = strcmp(what, "all_gather") == 0, start = strcmp(what, "start") == 0;
    if (!gather && !start && strcmp(what, "reduce_scatter") != 0)
        return dl_error_set(DL_ERR_ARG, "--selftest %s: reduce_scatter, all_gather or start", what);
    if (dir == NULL)
        return dl_error_set(DL_ERR_ARG, "--selftest needs --dump DIR");
    DL_TRY(dl_mkdir_p(dir));
    size_t most = 1;
    for (int k = 0; k < KIT_SELFTEST_CASES; k++)
        most = kit_selftest_n(P, k) > most ? kit_selftest_n(P, k) : most;
    size_t shard = (most + (size_t)P - 1) / (size_t)P; // the largest shard
    float *host = malloc(most * sizeof *host), *buf = NULL, *scratch = NULL, *grad = NULL, *out = NULL;
    dl_status st = host != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory for %zu floats", most);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&buf, most * sizeof *buf);
    if (st == DL_OK) // the ring's one shard; the starts' P - 1 slots
        st = dl_malloc(dev, (void **)&scratch, (start && P > 1 ? (size_t)(P - 1) : 1) * shard * sizeof *scratch);
    if (st == DL_OK && start)
        st = dl_malloc(dev, (void **)&grad, most * sizeof *grad);
    if (st == DL_OK && start)
        st = dl_malloc(dev, (void **)&out, shard * sizeof *out);
    dl_comm_log_start(c, 0);
    for (int k = 0; k < KIT_SELFTEST_CASES && st == DL_OK; k++)
        st = start ? start_case(c, dev, k, dir, host, buf, grad, out, scratch)
                   : selftest_case(c, dev, gather, k, dir, host, buf, scratch);
    if (st == DL_OK)
        st = write_log(dir, c);
    free(host);
    dl_free(dev, buf);
    dl_free(dev, scratch);
    dl_free(dev, grad);
    dl_free(dev, out);
    return st;
}
