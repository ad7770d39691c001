/* main.c — lab 04's benchmark, in the manner of nccl-tests' all_reduce_perf:
 * your naive and ring allreduces beside the library's, over a sweep of
 * message sizes.
 *
 *   common/bin/dlrun -n 4 build/labs/lab04                       the default sweep
 *   common/bin/dlrun -n 2 build/labs/lab04 -b 8 -e 256M -f 2 --algo ring,library
 *   build/labs/lab04 --help                                       every flag
 *
 * For each size and algorithm: a correctness pass on exactly predictable data
 * (small integers: every sum is exact in f32 and f16, so the tolerance is 0),
 * then warm-up, a barrier, and a timed loop (the slowest rank's time). One
 * row per size and algorithm: size, count, type, time, algbw, busbw (with
 * each collective's factor, dl_bw_busbw), #wrong. At the end (outputs.c):
 * the average bus bandwidth per algorithm, its large messages' busbw, an α–β
 * fit of t = α + β·bytes, OK or FAILED (exit 1 on any wrong value).
 * Outputs (rank 0) in --out: metrics.csv (one row per size, columns per
 * algorithm), fit.csv, summary.json, busbw and time plots; --write-profile
 * FILE writes the measured bus bandwidth and the per-hop latency as a
 * projection profile for labs 03 and 05 (--profile). --dump DIR writes each rank's
 * result of every algorithm for the sizes in --counts, with the
 * communication counters of each call and the kit's record of what it
 * started, waited for and added (dl/p2plog.h), for the grader. Not a
 * student file. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h> // intptr_t
#include <stdio.h> // printf
#include <stdlib.h> // malloc, free
#include <string.h> // strcmp, strtok_r

#include "dl/bandwidth.h" // dl_bw_algbw, dl_bw_busbw
#include "dl/cli.h" // dl_cli_parse
#include "dl/comm.h" // dl_comm
#include "dl/fs.h" // dl_mkdir_p, dl_tmp_create
#include "dl/half.h" // dl_half
#include "dl/json.h" // the --dump records
#include "dl/p2plog.h" // dl_p2plog_start, dl_p2plog_events: what each dumped call moved and added
#include "dl/project.h" // dl_profile_load, dl_profile_cli
#include "dl/rank.h" // dl_rank_device, dl_rank_exit
#include "dl/timer.h" // dl_now
#include "outputs.h" // lab04_sweep, lab04_summarise, lab04_write_outputs
#include "ring.h"

#define MAX_COUNTS 32

typedef struct options {
    dl_args a;
    size_t min_bytes, max_bytes, chunk_bytes;
    long factor;
    const char *algos, *dump, *counts, *data, *write_profile, *profile;
    int half; /* --dtype (DL_OPT_ENUM): 0 float, 1 half */
    int iters, warmup;
    double budget;
} options;

typedef struct bench {
    dl_comm *c;
    const dl_device *dev;
    const options *o;
    int P, rank;
    dl_dtype t;
    size_t esz;
    ring_algo algo[RING_N_ALGOS];
    int n_algos;
    void *buf, *scratch; /* on the device */
    void *host, *want; /* host: this rank's copy and the expected result */
} bench;

/* A failure of this rank, whatever the others are doing: it stops the whole
 * job at once (dl_rank_exit aborts a world of several; finalizing would keep
 * the others waiting in their next collective until the timeout). */
static int fail(dl_comm *c, dl_status st)
{
    return dl_rank_exit(c, st, "lab04");
}

// ---- data ----

/* Element i of buf as a double. */
static double get(const void *buf, dl_dtype t, size_t i)
{
    return t == DL_F32 ? (double)((const float *)buf)[i] : (double)dl_h2f(((const dl_half *)buf)[i]);
}

static void put(void *buf, dl_dtype t, size_t i, double v)
{
    if (t == DL_F32)
        ((float *)buf)[i] = (float)v;
    else
        ((dl_half *)buf)[i] = dl_f2h((float)v);
}

/* This rank's input (kind from ring_data_parse) and, into want, the exact
 * result algorithm a must leave in this rank's buf. */
static void fill(bench *b, ring_algo a, size_t n, int kind)
{
    ring_data(b->host, n, b->t, b->rank, kind, b->o->a.seed);
    double *sum = calloc(n > 0 ? n : 1, sizeof *sum);
    void *tmp = malloc((n > 0 ? n : 1) * b->esz);
    for (int q = 0; q < b->P; q++) {
        ring_data(tmp, n, b->t, q, kind, b->o->a.seed);
        for (size_t i = 0; i < n; i++)
            sum[i] += get(tmp, b->t, i);
    }
    for (size_t i = 0; i < n; i++)
        put(b->want, b->t, i, sum[i]);
    if (a == RING_ALL_GATHER) { // its input: segment r complete, the rest garbage
        size_t lo = ring_segment_offset(n, b->P, b->rank), hi = ring_segment_offset(n, b->P, b->rank + 1);
        for (size_t i = 0; i < n; i++)
            put(b->host, b->t, i, i >= lo && i < hi ? sum[i] : 1000.0 + (double)b->rank);
    }
    free(sum);
    free(tmp);
}

/* Elements of this rank's result that differ from want (reduce-scatter:
 * only segment r is defined). */
static double count_wrong(const bench *b, ring_algo a, size_t n)
{
    size_t lo = 0, hi = n;
    if (a == RING_REDUCE_SCATTER) {
        lo = ring_segment_offset(n, b->P, b->rank);
        hi = ring_segment_offset(n, b->P, b->rank + 1);
    }
    double wrong = 0;
    for (size_t i = lo; i < hi; i++)
        wrong += get(b->host, b->t, i) != get(b->want, b->t, i);
    return wrong;
}

// ---- one algorithm at one size ----

static dl_status check_once(bench *b, ring_algo a, size_t n, double *wrong)
{
    fill(b, a, n, RING_DATA_INT);
    DL_TRY(dl_memcpy_h2d(b->dev, b->buf, b->host, n * b->esz));
    size_t chunk = b->o->chunk_bytes / b->esz;
    DL_TRY(ring_run(a, b->c, b->dev, b->buf, n, b->t, chunk > 0 ? chunk : 1, b->scratch));
    DL_TRY(dl_memcpy_d2h(b->dev, b->host, b->buf, n * b->esz));
    double w = count_wrong(b, a, n);
    DL_TRY(dl_comm_allreduce(b->c, &w, 1, DL_F64, DL_RED_SUM)); // host memory: over MPI even beside NCCL
    *wrong = w;
    return DL_OK;
}

/* Seconds per call: warm-up, a barrier, then a timed loop; the slowest rank's
 * time. Big sizes run fewer iterations, so that one algorithm at one size
 * takes about --budget seconds. */
static dl_status time_it(bench *b, ring_algo a, size_t n, double *seconds)
{
    size_t chunk = b->o->chunk_bytes / b->esz;
    chunk = chunk > 0 ? chunk : 1;
    DL_TRY(dl_memset0(b->dev, b->buf, n * b->esz));
    double t0 = dl_now();
    DL_TRY(ring_run(a, b->c, b->dev, b->buf, n, b->t, chunk, b->scratch));
    DL_TRY(dl_device_sync(b->dev));
    double first = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(b->c, &first, 1, DL_F64, DL_RED_MAX));
    int iters = b->o->iters, warm = b->o->warmup - 1;
    if (first * (iters + warm) > b->o->budget) {
        iters = (int)(b->o->budget / (first > 0 ? first : 1e-9));
        iters = iters < 1 ? 1 : iters > b->o->iters ? b->o->iters : iters;
        warm = 0;
    }
    for (int k = 0; k < warm; k++)
        DL_TRY(ring_run(a, b->c, b->dev, b->buf, n, b->t, chunk, b->scratch));
    DL_TRY(dl_device_sync(b->dev));
    DL_TRY(dl_comm_barrier(b->c));
    t0 = dl_now();
    for (int k = 0; k < iters; k++)
        DL_TRY(ring_run(a, b->c, b->dev, b->buf, n, b->t, chunk, b->scratch));
    DL_TRY(dl_device_sync(b->dev));
    double t = (dl_now() - t0) / iters;
    DL_TRY(dl_comm_allreduce(b->c, &t, 1, DL_F64, DL_RED_MAX));
    *seconds = t;
    return DL_OK;
}

// ---- the grader's view: every result and the counters of each call ----

/* Byte offset of p from buf (0 for NULL: an empty range). */
static double offset_of(const bench *b, const void *p)
{
    return p == NULL ? 0.0 : (double)((intptr_t)p - (intptr_t)b->buf);
}

/* The kit's record of the call (dl/p2plog.h): "log" holds one row per event,
 * [kind, op, id, a, a_bytes, b, b_bytes] with a and b as byte offsets from
 * buf; "scratch_at" is scratch's. */
static void write_log(dl_json *j, const bench *b)
{
    size_t n = 0, dropped = 0;
    const dl_p2p_ev *ev = dl_p2plog_events(&n, &dropped);
    dl_json_num(j, "scratch_at", offset_of(b, b->scratch));
    dl_json_int(j, "log_dropped", (long long)dropped);
    dl_json_array(j, "log");
    for (size_t k = 0; k < n; k++) {
        const dl_p2p_ev *e = &ev[k];
        double row[7] = {
            e->kind,           e->op, (double)e->id, offset_of(b, e->a), (double)e->a_bytes, offset_of(b, e->b),
            (double)e->b_bytes};
        dl_json_f64s(j, NULL, row, 7);
    }
    dl_json_end_array(j);
}

static dl_status dump(bench *b, const size_t *counts, int n_counts)
{
    char path[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/rank%d.json", b->o->dump, b->rank);
    FILE *f = dl_tmp_create(path, tmp, sizeof tmp, "w");
    if (f == NULL)
        return DL_ERR_IO;
    dl_json j;
    dl_json_open_stream(&j, f);
    dl_json_object(&j, NULL);
    dl_json_int(&j, "rank", b->rank);
    dl_json_int(&j, "ranks", b->P);
    dl_json_str(&j, "dtype", dl_dtype_name(b->t));
    dl_json_str(&j, "data", b->o->data);
    dl_json_int(&j, "chunk", (long long)(b->o->chunk_bytes / b->esz));
    dl_json_array(&j, "calls");
    dl_status st = DL_OK;
    int kind = ring_data_parse(b->o->data);
    // a task not done yet (DL_ERR_TODO, the same on every rank) is recorded and
    // the next algorithm runs; any other failure stops the dump
    for (int k = 0; k < b->n_algos && st == DL_OK; k++) {
        dl_status algo_st = DL_OK;
        for (int q = 0; q < n_counts && st == DL_OK && algo_st == DL_OK; q++) {
            ring_algo a = b->algo[k];
            size_t n = counts[q], chunk = b->o->chunk_bytes / b->esz;
            fill(b, a, n, kind);
            st = dl_memcpy_h2d(b->dev, b->buf, b->host, n * b->esz);
            dl_comm_stats before, after;
            dl_comm_stats_get(b->c, &before);
            dl_p2plog_start(0);
            if (st == DL_OK)
                st = ring_run(a, b->c, b->dev, b->buf, n, b->t, chunk > 0 ? chunk : 1, b->scratch);
            dl_p2plog_stop();
            dl_comm_stats_get(b->c, &after);
            if (st == DL_OK)
                st = dl_memcpy_d2h(b->dev, b->host, b->buf, n * b->esz);
            char file[1400];
            snprintf(file, sizeof file, "%s/%s-n%zu-r%d.bin", b->o->dump, ring_algo_name(a), n, b->rank);
            FILE *bin = st == DL_OK ? fopen(file, "wb") : NULL;
            if (bin != NULL) {
                if (fwrite(b->host, b->esz, n, bin) != n)
                    st = dl_error_set(DL_ERR_IO, "%s: write failed", file);
                fclose(bin);
            }
            dl_json_object(&j, NULL);
            dl_json_str(&j, "algo", ring_algo_name(a));
            dl_json_int(&j, "n", (long long)n);
            dl_json_str(&j, "status", dl_status_name(st));
            dl_json_str(&j, "error", st == DL_OK ? "" : dl_last_error());
            for (int op = 0; op < DL_OP_COUNT; op++) {
                char key[64];
                snprintf(key, sizeof key, "%s_calls", dl_comm_op_name((dl_comm_op)op));
                dl_json_int(&j, key, (long long)(after.calls[op] - before.calls[op]));
                snprintf(key, sizeof key, "%s_bytes", dl_comm_op_name((dl_comm_op)op));
                dl_json_int(&j, key, (long long)(after.bytes[op] - before.bytes[op]));
            }
            dl_json_int(&j, "messages", (long long)(after.messages - before.messages));
            write_log(&j, b);
            dl_json_end_object(&j);
            if (st == DL_ERR_TODO) {
                algo_st = st;
                st = DL_OK;
            } else if (st != DL_OK) { // the ranks are no longer in step: stop them all, saying why
                dl_comm_abort(b->c, 1, "%s with n = %zu failed: %s", ring_algo_name(a), n, dl_last_error());
            }
        }
    }
    dl_json_end_array(&j);
    dl_json_end_object(&j);
    dl_status cs = dl_json_close(&j);
    int bad = fclose(f) != 0 || cs != DL_OK;
    if (st == DL_OK && (bad || rename(tmp, path) != 0))
        st = dl_error_set(DL_ERR_IO, "%s: write failed", path);
    if (st != DL_OK)
        remove(tmp);
    return st;
}

/* Parses "8,64,1009" into counts; the number parsed, or -1. */
static int parse_counts(const char *text, size_t *counts, int max)
{
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0') || *p == '-')
            return -1;
        counts[n++] = (size_t)v;
        p = *end == ',' ? end + 1 : end;
    }
    return *p == '\0' ? n : -1;
}

static int parse_algos(const char *text, ring_algo *algo, int max)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(copy, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
        int a = ring_algo_parse(w);
        if (a < 0 || n == max)
            return -1;
        algo[n++] = (ring_algo)a;
    }
    return n;
}

/* The flags into o: DL_CLI_RUN, DL_CLI_HELP or DL_CLI_ERROR (dl/cli.h). */
static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    dl_args_defaults(&o->a);
    o->a.out = "build/run/04-ring-allreduce";
    o->min_bytes = 8;
    o->max_bytes = (size_t)64 << 20;
    o->factor = 2;
    o->algos = "naive,ring,ring-chunked,library";
    o->half = 0;
    o->iters = 20;
    o->warmup = 5;
    o->budget = 1.0;
    o->chunk_bytes = (size_t)256 << 10;
    o->counts = "0,1,3,4,5,1009";
    o->data = "int";
    const dl_opt extra[] = {
        {"minbytes", DL_OPT_SIZE, &o->min_bytes, "SIZE", "smallest message per rank", NULL, 1, 1ULL << 34, 'b'},
        {"maxbytes", DL_OPT_SIZE, &o->max_bytes, "SIZE", "largest message per rank", NULL, 1, 1ULL << 34, 'e'},
        {"stepfactor", DL_OPT_LONG, &o->factor, "N", "multiply the size by N each step", NULL, 2, 1024, 'f'},
        {"algo", DL_OPT_STRING, &o->algos, "LIST",
         "comma-separated: naive, ring, ring-chunked, library, reduce-scatter, all-gather, send-first", NULL, 1, 0,
         'a'},
        {"dtype", DL_OPT_ENUM, &o->half, "T", "element type", "float|half", 1, 0, 'd'},
        {"iters", DL_OPT_INT, &o->iters, "N", "timed calls per size (fewer for big sizes, see --budget)", NULL, 1,
         100000, 'n'},
        {"warmup", DL_OPT_INT, &o->warmup, "N", "untimed calls first", NULL, 1, 100000, 'w'},
        {"budget", DL_OPT_DOUBLE, &o->budget, "S", "about this many seconds per size and algorithm", NULL, 1e-3, 3600},
        {"chunk-bytes", DL_OPT_SIZE, &o->chunk_bytes, "SIZE", "ring-chunked: bytes per chunk", NULL, 2, 1ULL << 34},
        {"write-profile", DL_OPT_STRING, &o->write_profile, "FILE",
         "write the fitted bus bandwidth and hop latency as a projection profile", NULL, 1, 0},
        {"profile", DL_OPT_STRING, &o->profile, "NAME|FILE",
         "the profile --write-profile copies compute numbers from: a shipped one by name (default a10; --profile list "
         "shows them) or a .conf file",
         NULL, 1, 0},
        {"dump", DL_OPT_STRING, &o->dump, "DIR", "write every result and the counters of each call (grader)", NULL, 1,
         0},
        {"counts", DL_OPT_STRING, &o->counts, "LIST", "--dump: element counts", NULL, 1, 0},
        {"data", DL_OPT_CHOICE, &o->data, "KIND", "--dump: input data", "int|random|crafted", 1, 0},
    };
    int rc = dl_cli_parse(argc, argv, "lab04",
                          "Lab 04: your naive and ring allreduces against the library's, timed over a sweep of "
                          "message sizes like nccl-tests. Start it with common/bin/dlrun -n P.",
                          &o->a, extra, sizeof extra / sizeof extra[0]);
    return rc == DL_CLI_RUN ? dl_profile_cli("lab04", o->profile) : rc; // --profile list
}

/* b from the flags (algorithms, type, --dump's counts into counts), each
 * checked before anything is measured; a wrong --profile stops the run here. */
static dl_status setup(bench *b, options *o, size_t *counts, int *n_counts)
{
    b->o = o;
    b->P = dl_comm_size(b->c);
    b->rank = dl_comm_rank(b->c);
    b->t = o->half ? DL_F16 : DL_F32;
    b->esz = dl_dtype_size(b->t);
    b->n_algos = parse_algos(o->algos, b->algo, RING_N_ALGOS);
    *n_counts = parse_counts(o->counts, counts, MAX_COUNTS);
    if (b->n_algos < 1)
        return dl_error_set(DL_ERR_ARG,
                            "--algo '%s': expected a comma-separated list of naive, ring, ring-chunked, "
                            "library, reduce-scatter, all-gather, send-first",
                            o->algos);
    if (o->min_bytes > o->max_bytes)
        return dl_error_set(DL_ERR_ARG, "-b %zu is larger than -e %zu: the sweep runs from -b up to -e", o->min_bytes,
                            o->max_bytes);
    if (*n_counts < 0)
        return dl_error_set(DL_ERR_ARG, "--counts '%s': expected element counts like 0,1,3,1009", o->counts);
    if (o->write_profile != NULL && b->P < 2)
        return dl_error_set(DL_ERR_ARG, "--write-profile needs at least 2 ranks: one rank measures no link");
    if (o->write_profile != NULL)
        DL_TRY(lab04_check_profile_path(o->write_profile));
    dl_profile base;
    if (o->write_profile != NULL || o->profile != NULL)
        DL_TRY(dl_profile_load(o->profile != NULL ? o->profile : dl_profile_default(), &base));
    if (o->dump != NULL)
        DL_TRY(dl_mkdir_p(o->dump));
    o->a.quiet |= b->rank != 0;
    return DL_OK;
}

/* The sweep's sizes (bytes, whole elements) into w, and b's buffers for the
 * largest message (or --dump's largest count); *most gets its elements. */
static dl_status buffers(bench *b, lab04_sweep *w, const size_t *counts, int n_counts, size_t *most)
{
    const options *o = b->o;
    memset(w, 0, sizeof *w);
    for (size_t s = o->min_bytes; s <= o->max_bytes && w->n_sizes < LAB04_MAX_SIZES; s *= (size_t)o->factor) {
        w->sizes[w->n_sizes++] = s / b->esz * b->esz;
        if (s > o->max_bytes / (size_t)o->factor)
            break;
    }
    size_t m = o->dump != NULL || w->n_sizes == 0 ? 0 : w->sizes[w->n_sizes - 1] / b->esz, scratch = 0;
    for (int q = 0; o->dump != NULL && q < n_counts; q++)
        m = counts[q] > m ? counts[q] : m;
    for (int k = 0; k < b->n_algos; k++) {
        size_t s = ring_scratch_bytes(b->algo[k], m, b->P, b->t, o->chunk_bytes / b->esz);
        scratch = s > scratch ? s : scratch;
    }
    *most = m;
    DL_TRY(dl_malloc(b->dev, &b->buf, m * b->esz + 16));
    DL_TRY(dl_malloc(b->dev, &b->scratch, scratch + 16));
    b->host = malloc(m * b->esz + 16);
    b->want = malloc(m * b->esz + 16);
    if (b->host == NULL || b->want == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of memory for %zu elements", m);
    return DL_OK;
}

/* Every algorithm at every size: checked once, then timed, into w's cells; the table on rank 0. */
static dl_status sweep(bench *b, lab04_sweep *w)
{
    const options *o = b->o;
    if (!o->a.quiet) {
        printf("# lab04: allreduce of %s on %d rank(s), %s (%s), %d iterations after %d warm-up (budget %g s)\n",
               dl_dtype_name(b->t), b->P, b->dev->name, dl_comm_backend(b->c), o->iters, o->warmup, o->budget);
        printf("# %12s %12s %6s  %-14s %12s %12s %12s %8s\n", "size", "count", "type", "algo", "time(us)",
               "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    }
    w->P = b->P, w->t = b->t, w->esz = b->esz, w->dev = b->dev, w->backend = dl_comm_backend(b->c);
    memcpy(w->algo, b->algo, sizeof w->algo);
    w->n_algos = b->n_algos;
    w->cells = calloc((size_t)w->n_sizes * (size_t)b->n_algos, sizeof *w->cells);
    for (int s = 0; s < w->n_sizes; s++) {
        size_t n = w->sizes[s] / b->esz;
        for (int k = 0; k < b->n_algos; k++) {
            lab04_cell *x = &w->cells[s * b->n_algos + k];
            double secs = 0;
            DL_TRY(check_once(b, b->algo[k], n, &x->wrong));
            DL_TRY(time_it(b, b->algo[k], n, &secs));
            w->wrong += x->wrong;
            x->us = secs * 1e6;
            x->algbw = dl_bw_algbw((double)w->sizes[s], secs) / 1e9;
            x->busbw = dl_bw_busbw(ring_algo_coll(b->algo[k]), b->P, (double)w->sizes[s], secs) / 1e9;
            if (!o->a.quiet)
                printf("  %12zu %12zu %6s  %-14s %12.2f %12.3f %12.3f %8.0f\n", w->sizes[s], n, dl_dtype_name(b->t),
                       ring_algo_name(b->algo[k]), x->us, x->algbw, x->busbw, x->wrong);
        }
    }
    return DL_OK;
}

/* The ceiling of a rank's adds and copies: a one-thread copy of half the
 * largest message on its device, into w (nothing when there is none). */
static dl_status copy_ceiling(bench *b, lab04_sweep *w, size_t most)
{
    size_t half = most / 2;
    if (half == 0)
        return DL_OK;
    int reps = 0;
    dl_status st;
    double t0 = dl_now();
    do {
        st = dl_copy(b->dev, (char *)b->buf + half * b->esz, b->buf, half, b->t);
        reps++;
    } while (st == DL_OK && dl_now() - t0 < 0.2 && reps < 100);
    DL_TRY(st);
    DL_TRY(dl_device_sync(b->dev));
    w->copy_bytes = half * b->esz;
    w->copy_gbs = (double)(half * b->esz) * reps / (dl_now() - t0) / 1e9;
    return DL_OK;
}

/* Parse, set up, open this rank's device, then either the grader's dump or
 * the sweep, the copy ceiling, the closing lines and (rank 0) the files. */
int main(int argc, char **argv)
{
    options o;
    dl_comm *c = NULL;
    dl_status st = dl_comm_init(&argc, &argv, &c);
    if (st != DL_OK)
        return fail(NULL, st);
    int rc = parse(argc, argv, &o);
    if (rc != DL_CLI_RUN) {
        dl_comm_finalize(c);
        return rc == DL_CLI_HELP ? 0 : 2;
    }
    bench b;
    memset(&b, 0, sizeof b);
    b.c = c;
    size_t counts[MAX_COUNTS], most = 0;
    int n_counts = 0;
    dl_device dev;
    lab04_sweep w;
    st = setup(&b, &o, counts, &n_counts);
    if (st == DL_OK)
        st = dl_rank_device(c, &o.a.dev, &dev);
    if (st != DL_OK)
        return fail(c, st);
    b.dev = &dev;
    st = buffers(&b, &w, counts, n_counts, &most);
    if (st == DL_OK && o.dump != NULL) {
        st = dump(&b, counts, n_counts);
        if (st != DL_OK)
            return fail(c, st);
        dl_comm_finalize(c);
        return 0;
    }
    if (st == DL_OK)
        st = sweep(&b, &w);
    if (st == DL_OK)
        st = copy_ceiling(&b, &w, most);
    if (st != DL_OK)
        return fail(c, st);
    // what it adds up to: the closing lines and, on rank 0, the files
    lab04_summarise(&w);
    if (!o.a.quiet)
        lab04_report(&w);
    if (b.rank == 0) {
        const lab04_out out = {o.a.out, o.a.plot, o.a.json, o.write_profile, o.profile};
        char list[1024] = "";
        st = lab04_write_outputs(&w, &out, list, sizeof list);
        if (st == DL_OK && !o.a.quiet)
            printf("# wrote %s/{metrics,fit}.csv, summary.json%s%s\n", o.a.out, list[0] ? ", " : "", list);
    }
    // every rank agrees on the outcome before it leaves
    double ok = st == DL_OK ? 0 : 1;
    dl_status st2 = dl_comm_allreduce(c, &ok, 1, DL_F64, DL_RED_MAX);
    if (st2 != DL_OK)
        return fail(c, st2);
    if (st != DL_OK) { // every rank has reached the agreement above: they can finish together
        fprintf(stderr, "lab04: error: %s\n", dl_last_error());
        dl_comm_finalize(c);
        return dl_exit_code(st);
    }
    if (!o.a.quiet)
        printf("%s\n", w.wrong == 0 ? "OK" : "FAILED");
    free(w.cells), free(b.host), free(b.want);
    dl_free(&dev, b.buf);
    dl_free(&dev, b.scratch);
    dl_comm_finalize(c);
    return w.wrong == 0 ? 0 : 1;
}
