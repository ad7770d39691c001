/* kit_model.c — lab 06's closed forms (kit.h): the memory per rank each way
 * of sharding needs, the bytes a step sends, one step projected onto a
 * profile's GPUs, the largest model a GPU holds each way, and the files
 * that set them beside the run (memory.csv, projection.csv, largest.csv). */
#define _POSIX_C_SOURCE 200809L

#include "dl/bandwidth.h" // dl_bw_seconds
#include "dl/fs.h" // dl_path_join
#include "kit.h"

const char *const kit_mode_names[KIT_MODES] = {"ddp", "zero1", "fsdp"};

// ---- the closed forms ----

static double ceil_div(double n, int P)
{
    return (double)(((size_t)n + (size_t)P - 1) / (size_t)P);
}

/* FSDP's budget (kit.h), in bytes into bytes[kind]; returns it summed: the
 * shards S of every kind, two adjacent layers' parameters and gradients
 * whole (A: the largest n_l + n_(l+1); one layer alone when there is one),
 * one reduce-scatter's slots for the widest layer. */
static double fsdp_budget(const size_t *sizes, int n_sizes, size_t batch, int P, double *bytes)
{
    int L = n_sizes - 1;
    double f = sizeof(float), shards = 0, pair = 0, widest = 0;
    for (int l = 0; l < L; l++) {
        double nl = (double)(sizes[l] * sizes[l + 1] + sizes[l + 1]);
        double next = l + 1 < L ? (double)(sizes[l + 1] * sizes[l + 2] + sizes[l + 2]) : 0;
        shards += ceil_div(nl, P);
        pair = nl + next > pair ? nl + next : pair;
        widest = nl > widest ? nl : widest;
    }
    bytes[SHARD_PARAMS] = bytes[SHARD_GRADS] = f * (shards + pair);
    bytes[SHARD_OPTIM] = f * shards;
    bytes[SHARD_ACTS] = (double)kit_act_bytes(sizes, n_sizes, batch);
    bytes[SHARD_COMM] = (double)shard_slots_bytes((size_t)widest, P);
    double total = 0;
    for (int k = 0; k < SHARD_KINDS; k++)
        total += bytes[k];
    return total;
}

double kit_mem_bytes(kit_mode mode, const size_t *sizes, int n_sizes, size_t batch, int P, double *bytes)
{
    double n = 0;
    for (int l = 0; l + 1 < n_sizes; l++)
        n += (double)(sizes[l] * sizes[l + 1] + sizes[l + 1]);
    const double f = sizeof(float);
    for (int k = 0; k < SHARD_KINDS; k++)
        bytes[k] = 0;
    bytes[SHARD_ACTS] = (double)kit_act_bytes(sizes, n_sizes, batch);
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
        return fsdp_budget(sizes, n_sizes, batch, P, bytes);
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

dl_status kit_write_projection(const char *dir, const size_t *sizes, int n_sizes, size_t batch)
{
    char names[32][256], path[1200];
    int n = 0;
    DL_TRY(dl_profile_shipped(names, 32, &n));
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
            dl_csv_cell(&f, KIT_MEM_PARAMS + k, "%zu", kit_ledger()->peak[k]);
        dl_csv_cell(&f, KIT_MEM_TOTAL, "%zu", kit_ledger()->peak_total);
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

dl_status kit_write_largest(const char *dir)
{
    char names[32][256], path[1200];
    int n = 0;
    DL_TRY(dl_profile_shipped(names, 32, &n));
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
