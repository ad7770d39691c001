/* kit_selftest.c — lab 06's self-tests of tasks 2 and 4 (kit.h: kit_selftest),
 * run by the driver's --selftest for the grader: your collectives on the
 * kit's cases, on your own shards where they cut n as shards must, every
 * result kept and written only once every rank has made its last call. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h> // uint64_t
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp

#include "dl/data.h" // dl_npy_write_f32
#include "dl/fs.h" // dl_mkdir_p, dl_path_join
#include "kit.h"

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

/* Notes your shards of case k in the layout ("caseK"). */
static void note_case(kit_record *R, int P, int k)
{
    char of[16];
    snprintf(of, sizeof of, "case%d", k);
    kit_layout_note(R, of, kit_selftest_n(P, k), P);
}

/* This rank's shard of case k, [*lo, *hi): where your shard_offset puts it when your shards cut n into P
 * contiguous pieces in rank order, else lab 04's segment. */
static void own_shard(int P, int r, int k, size_t *lo, size_t *hi)
{
    size_t n = kit_selftest_n(P, k), base = n / (size_t)P, longer = n % (size_t)P, at = 0;
    *lo = (size_t)r * base + ((size_t)r < longer ? (size_t)r : longer);
    *hi = *lo + base + ((size_t)r < longer);
    int whole = shard_offset(n, P, P) == n;
    for (int s = 0; s < P && whole; s++) {
        whole = shard_offset(n, P, s) == at && shard_count(n, P, s) <= n - at;
        at += shard_count(n, P, s);
    }
    if (whole && at == n) {
        *lo = shard_offset(n, P, r);
        *hi = *lo + shard_count(n, P, r);
    }
}

/* One result kept until the end: DIR/PREFIX.K.RANK.npy of n floats. */
typedef struct kept {
    char name[64];
    float *v;
    size_t n;
} kept;

static dl_status keep(kept *o, const dl_device *dev, const char *prefix, int k, int r, const float *src, size_t n)
{
    snprintf(o->name, sizeof o->name, "%s.%d.%d.npy", prefix, k, r);
    o->n = n;
    o->v = malloc((n ? n : 1) * sizeof *o->v);
    if (o->v == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for the self-test's results");
    return n > 0 ? dl_memcpy_d2h(dev, o->v, src, n * sizeof *o->v) : DL_OK;
}

/* Fills buf (n floats on dev, host as staging): the gather's input (this rank's shard, junk elsewhere) or the
 * reduce-scatter's. */
static dl_status fill(const dl_device *dev, float *host, float *buf, int gather, int P, int r, int k)
{
    size_t n = kit_selftest_n(P, k), lo = 0, hi = 0;
    if (gather)
        own_shard(P, r, k, &lo, &hi);
    for (size_t i = 0; i < n; i++)
        host[i] = !gather             ? kit_selftest_value(KIT_ST_INPUT, k, r, i)
                  : i >= lo && i < hi ? kit_selftest_value(KIT_ST_SHARD, k, 0, i)
                                      : kit_selftest_value(KIT_ST_JUNK, k, r, i);
    return n > 0 ? dl_memcpy_h2d(dev, buf, host, n * sizeof *host) : DL_OK;
}

static dl_status failed(dl_status st, const char *fn, size_t n, int P)
{
    char why[512];
    snprintf(why, sizeof why, "%s", dl_last_error());
    return dl_error_set(st, "%s on n = %zu over %d ranks: %s", fn, n, P, why);
}

/* One call of task 2's self-test on case k. */
static dl_status ring_case(kit_record *R, dl_comm *c, const dl_device *dev, int gather, int k, float *host, float *buf,
                           float *scratch, kept *out)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t n = kit_selftest_n(P, k);
    note_case(R, P, k);
    DL_TRY(fill(dev, host, buf, gather, P, r, k));
    kit_phase(R, c, gather ? KIT_PH_ALL_GATHER : KIT_PH_REDUCE_SCATTER, k);
    dl_status st = gather ? shard_all_gather(c, dev, buf, n) : shard_reduce_scatter(c, dev, buf, n, scratch);
    kit_phase(R, c, KIT_PH_NONE, -1);
    if (st != DL_OK)
        return failed(st, gather ? "shard_all_gather" : "shard_reduce_scatter", n, P);
    return keep(out, dev, gather ? "ag" : "rs", k, r, buf, n);
}

/* One case of task 4's self-test: both collectives started, then waited (see kit.h). */
static dl_status start_case(kit_record *R, dl_comm *c, const dl_device *dev, int k, float *host, float *ag, float *grad,
                            float *out, float *scratch, kept *res)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t n = kit_selftest_n(P, k), lo, hi;
    note_case(R, P, k);
    own_shard(P, r, k, &lo, &hi);
    DL_TRY(fill(dev, host, ag, 1, P, r, k));
    DL_TRY(fill(dev, host, grad, 0, P, r, k));
    shard_pending pa = {0}, pr = {0};
    const char *fn = "shard_all_gather_start";
    // rank 0 starts both before the others have started anything: a start that waits for its peers never
    // returns. Not on a GPU: NCCL connects two ranks inside their first exchange, which waits for the peer
    int first = dev->kind != DL_DEVICE_CUDA;
    dl_status st = first && r > 0 ? dl_comm_barrier(c) : DL_OK;
    if (st == DL_OK) {
        kit_phase(R, c, KIT_PH_ALL_GATHER, k);
        st = shard_all_gather_start(c, dev, ag, n, &pa);
    }
    if (st == DL_OK) {
        kit_phase(R, c, KIT_PH_REDUCE_SCATTER, k);
        fn = "shard_reduce_scatter_start";
        st = shard_reduce_scatter_start(c, dev, grad, n, hi > lo ? out : NULL, scratch, &pr);
    }
    kit_phase(R, c, KIT_PH_NONE, -1);
    if (st == DL_OK && first && r == 0)
        st = dl_comm_barrier(c);
    for (int w = 0; w < 2 && st == DL_OK; w++) { // waited in either order: odd ranks the reduce-scatter first
        fn = "shard_wait";
        st = shard_wait(c, dev, (w + r) % 2 == 0 ? &pa : &pr);
    }
    if (st != DL_OK)
        return failed(st, fn, n, P);
    DL_TRY(keep(&res[0], dev, "ags", k, r, ag, n));
    return keep(&res[1], dev, "rss", k, r, out, hi - lo);
}

/* One half of the self-test (reduce_scatter, all_gather or start) into dir. */
static dl_status half(kit_record *R, dl_comm *c, const dl_device *dev, const char *what, const char *dir)
{
    int P = dl_comm_size(c), gather = strcmp(what, "all_gather") == 0, start = strcmp(what, "start") == 0;
    DL_TRY(dl_mkdir_p(dir));
    size_t most = 1;
    for (int k = 0; k < KIT_SELFTEST_CASES; k++)
        most = kit_selftest_n(P, k) > most ? kit_selftest_n(P, k) : most;
    // room for any shard, yours or lab 04's: the whole buffer; the ring's one shard, the starts' P − 1 slots
    size_t slots = start ? shard_slots_bytes(most, P) / sizeof(float) : most;
    float *host = malloc(most * sizeof *host), *buf = NULL, *scratch = NULL, *grad = NULL, *out = NULL;
    kept res[2 * KIT_SELFTEST_CASES] = {{{0}, NULL, 0}};
    dl_status st = host != NULL ? DL_OK : dl_error_set(DL_ERR_NOMEM, "out of memory for %zu floats", most);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&buf, most * sizeof *buf);
    if (st == DL_OK)
        st = dl_malloc(dev, (void **)&scratch, (slots > most ? slots : most) * sizeof *scratch);
    if (st == DL_OK && start)
        st = dl_malloc(dev, (void **)&grad, most * sizeof *grad);
    if (st == DL_OK && start)
        st = dl_malloc(dev, (void **)&out, most * sizeof *out);
    dl_comm_log_start(c, 0);
    for (int k = 0; k < KIT_SELFTEST_CASES && st == DL_OK; k++)
        st = start ? start_case(R, c, dev, k, host, buf, grad, out, scratch, &res[2 * k])
                   : ring_case(R, c, dev, gather, k, host, buf, scratch, &res[k]);
    if (st == DL_OK) // every rank past its last call: from here on no code of yours runs
        st = dl_comm_barrier(c);
    for (int k = 0; k < 2 * KIT_SELFTEST_CASES && st == DL_OK; k++) {
        char path[1200];
        if (res[k].v != NULL && (st = dl_path_join(path, sizeof path, dir, res[k].name)) == DL_OK)
            st = dl_npy_write_f32(path, res[k].v, res[k].n > 0 ? 1 : 0, res[k].n); // (n = 0: shape (0,), no element)
    }
    if (st == DL_OK)
        st = kit_write_log(R, dir, c);
    if (st == DL_OK)
        st = kit_write_layout(R, dir, dl_comm_rank(c));
    for (int k = 0; k < 2 * KIT_SELFTEST_CASES; k++)
        free(res[k].v);
    free(host);
    dl_free(dev, buf);
    dl_free(dev, scratch);
    dl_free(dev, grad);
    dl_free(dev, out);
    return st;
}

dl_status kit_selftest(kit_record *R, dl_comm *c, const dl_device *dev, const char *what, const char *dir)
{
    static const char *const halves[] = {"reduce_scatter", "all_gather", "start"};
    int all = strcmp(what, "all") == 0, known = all;
    for (int h = 0; h < 3; h++)
        known |= strcmp(what, halves[h]) == 0;
    if (!known)
        return dl_error_set(DL_ERR_ARG, "--selftest %s: reduce_scatter, all_gather, start or all", what);
    if (dir == NULL)
        return dl_error_set(DL_ERR_ARG, "--selftest needs --dump DIR");
    if (!all)
        return half(R, c, dev, what, dir);
    for (int h = 0; h < 3; h++) { // each half's records as its own run keeps them: the log from here, no marks,
        char sub[1200]; // no shards noted
        size_t at = 0;
        dl_comm_log(c, &at, NULL);
        R->marks.from = at, R->marks.n = 0, R->marks.step = -1;
        R->lay.n = 0;
        DL_TRY(dl_path_join(sub, sizeof sub, dir, halves[h]));
        DL_TRY(half(R, c, dev, halves[h], sub));
    }
    return DL_OK;
}
