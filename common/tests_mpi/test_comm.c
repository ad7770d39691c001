/* test_comm.c — dl_comm under real mpirun (started by tools/test-comm.sh with
 * 1, 2, 3 and 4 ranks). Values are small integers held in floats, so every
 * result is exact and compared with ==.
 *
 *   test_comm ops     every operation, dtype and size, isendrecv around the
 *                     ring with several in flight; counters exact; and the
 *                     training layer on several ranks (replica, eval, epoch)
 *   test_comm fail    rank 1 exits with status 3 mid-run: the job must stop
 *   test_comm hang    rank 1 stops answering: the others time out and stop
 *   test_comm early   the last rank fails before its first collective, the
 *                     way a driver does (dl_rank_exit), while the others
 *                     wait in an allreduce: the job must stop at once
 *   test_comm claim [SPEC]  each rank takes its device as a driver does
 *                     (dl_rank_device, default "cuda") and stops as one does
 *                     on failure: the collective refusal of two ranks on
 *                     one GPU, testable on the CPU with DL_TEST_SIMULATED_GPUS
 *   test_comm cuda [SPEC]   the operations on GPU buffers (NCCL), the device
 *                     taken by dl_rank_device (default "cuda"); GPU tier only
 * Prints "ok"/"FAIL" lines (rank 0) and exits non-zero on any failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, isinf, NAN
#include <stdio.h> // printf
#include <stdlib.h> // malloc, exit
#include <string.h> // strcmp, memset
#include <unistd.h> // sleep

#include "dl/blas.h" // dl_flops_add
#include "dl/comm.h"
#include "dl/epoch.h" // dl_epoch, dl_epoch_clock_*
#include "dl/eval.h" // dl_eval_accuracy
#include "dl/bf16.h" // dl_bf16, dl_f2bf, dl_bf2f
#include "dl/half.h"
#include "dl/ops.h" // dl_cast
#include "dl/rank.h" // dl_rank_device, dl_rank_exit
#include "dl/replica.h" // dl_replica_diff
#include "dl/ring.h" // dl_ring_allreduce, dl_ring_bytes, dl_ring_messages, dl_ring_offset
#include "dl/trace.h" // dl_trace_start, dl_trace_events, dl_trace_stop

static int failures;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

#define OK(call) CHECK((call) == DL_OK, "%s: %s", #call, dl_last_error())

static int rank, size;

static const size_t sizes[] = {0, 1, 7, 1000, 1 << 18};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void test_allreduce(dl_comm *c)
{
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        float *f = malloc((n + 1) * sizeof *f);
        double *d = malloc((n + 1) * sizeof *d);
        int64_t *l = malloc((n + 1) * sizeof *l);
        int32_t *i = malloc((n + 1) * sizeof *i);
        dl_half *h = malloc((n + 1) * sizeof *h);
        dl_bf16 *b = malloc((n + 1) * sizeof *b), *big = malloc((n + 1) * sizeof *big);
        for (size_t j = 0; j < n; j++) {
            f[j] = (float)(rank + 1 + (int)(j % 5));
            d[j] = (double)(rank + 1) * 1e9 + (double)j; // exact in double, not in float
            l[j] = ((int64_t)1 << 40) * rank + (int64_t)j;
            i[j] = rank - 2;
            h[j] = dl_f2h((float)(rank + (int)(j % 3)));
            b[j] = dl_f2bf((float)(rank + (int)(j % 3)));
            big[j] = dl_f2bf(ldexpf((float)(rank + 1), 100)); // far beyond fp16; every partial sum exact
        }
        OK(dl_comm_allreduce(c, f, n, DL_F32, DL_RED_SUM));
        OK(dl_comm_allreduce(c, d, n, DL_F64, DL_RED_SUM));
        OK(dl_comm_allreduce(c, l, n, DL_I64, DL_RED_SUM));
        OK(dl_comm_allreduce(c, i, n, DL_I32, DL_RED_MAX));
        OK(dl_comm_allreduce(c, h, n, DL_F16, DL_RED_SUM));
        OK(dl_comm_allreduce(c, b, n, DL_BF16, DL_RED_SUM));
        dl_comm_req *breq = NULL;
        OK(dl_comm_allreduce_async(c, big, n, DL_BF16, DL_RED_SUM, &breq));
        OK(dl_comm_wait(c, breq));
        double ranks = (double)size * (size + 1) / 2; // sum of rank + 1
        for (size_t j = 0; j < n; j++) {
            CHECK(f[j] == (float)(ranks + (double)size * (j % 5)), "f32 sum [%zu] = %g", j, (double)f[j]);
            CHECK(d[j] == ranks * 1e9 + (double)size * j, "f64 sum [%zu] = %.17g", j, d[j]);
            CHECK(l[j] == ((int64_t)1 << 40) * (size * (size - 1) / 2) + (int64_t)size * (int64_t)j,
                  "i64 sum [%zu] = %lld", j, (long long)l[j]);
            CHECK(i[j] == size - 3, "i32 max [%zu] = %d", j, i[j]);
            CHECK(dl_h2f(h[j]) == (float)(size * (size - 1) / 2 + size * (int)(j % 3)), "f16 sum [%zu] = %g", j,
                  (double)dl_h2f(h[j]));
            CHECK(dl_bf2f(b[j]) == (float)(size * (size - 1) / 2 + size * (int)(j % 3)), "bf16 sum [%zu] = %g", j,
                  (double)dl_bf2f(b[j]));
            CHECK(dl_bf2f(big[j]) == ldexpf((float)ranks, 100), "bf16 async sum [%zu] = %g", j,
                  (double)dl_bf2f(big[j]));
        }
        for (size_t j = 0; j < n; j++) {
            f[j] = (float)(size * (rank + 1)); // average = size * (size + 1) / 2
            b[j] = dl_f2bf(f[j]);
            i[j] = rank;
        }
        OK(dl_comm_allreduce(c, f, n, DL_F32, DL_RED_AVG));
        OK(dl_comm_allreduce(c, b, n, DL_BF16, DL_RED_AVG));
        OK(dl_comm_allreduce(c, i, n, DL_I32, DL_RED_MIN));
        for (size_t j = 0; j < n; j++) {
            CHECK(f[j] == (float)(size * (size + 1) / 2.0), "f32 avg [%zu] = %g", j, (double)f[j]);
            CHECK(dl_bf2f(b[j]) == (float)(size * (size + 1) / 2.0), "bf16 avg [%zu] = %g", j, (double)dl_bf2f(b[j]));
            CHECK(i[j] == 0, "i32 min [%zu] = %d", j, i[j]);
        }
        free(f), free(d), free(l), free(i), free(h), free(b), free(big);
    }
    // several in flight at once, waited in reverse order
    enum { K = 4 };
    float bufs[K][64];
    dl_comm_req *req[K];
    for (int q = 0; q < K; q++) {
        for (int j = 0; j < 64; j++)
            bufs[q][j] = (float)(q * 100 + rank);
        OK(dl_comm_allreduce_async(c, bufs[q], 64, DL_F32, DL_RED_SUM, &req[q]));
    }
    for (int q = K - 1; q >= 0; q--)
        OK(dl_comm_wait(c, req[q]));
    for (int q = 0; q < K; q++) {
        for (int j = 0; j < 64; j++)
            CHECK(bufs[q][j] == (float)(q * 100 * size + size * (size - 1) / 2), "async %d [%d] = %g", q, j,
                  (double)bufs[q][j]);
    }
    dl_status st = dl_comm_allreduce(c, bufs[0], 4, DL_I64, DL_RED_AVG);
    CHECK(st == DL_ERR_ARG, "an integer average returned %s", dl_status_name(st));
}

static void test_broadcast_gather_sendrecv(dl_comm *c)
{
    for (int root = 0; root < size; root++) {
        double v[33];
        for (int j = 0; j < 33; j++)
            v[j] = rank == root ? 1000.0 * root + j : -1.0;
        OK(dl_comm_broadcast(c, v, 33, DL_F64, root));
        for (int j = 0; j < 33; j++)
            CHECK(v[j] == 1000.0 * root + j, "broadcast from %d: [%d] = %g", root, j, v[j]);
    }
    dl_status st = dl_comm_broadcast(c, NULL, 0, DL_F32, size);
    CHECK(st == DL_ERR_ARG, "broadcast from root %d (of %d) returned %s", size, size, dl_status_name(st));
    size_t n = 5;
    float send[5], *recv = malloc(n * (size_t)size * sizeof *recv);
    for (size_t j = 0; j < n; j++)
        send[j] = (float)(rank * 10 + (int)j);
    OK(dl_comm_allgather(c, send, recv, n, DL_F32));
    for (int r = 0; r < size; r++) {
        for (size_t j = 0; j < n; j++)
            CHECK(recv[r * n + j] == (float)(r * 10 + (int)j), "allgather [%d][%zu] = %g", r, j,
                  (double)recv[r * n + j]);
    }
    free(recv);
    // a ring shift: send to the right, receive from the left, uneven counts
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t ns = (size_t)(3 + rank), nr = (size_t)(3 + left);
    float out[16], in[16];
    for (size_t j = 0; j < ns; j++)
        out[j] = (float)(rank * 100 + (int)j);
    OK(dl_comm_sendrecv(c, out, ns, right, in, nr, left, DL_F32));
    for (size_t j = 0; j < nr; j++)
        CHECK(in[j] == (float)(left * 100 + (int)j), "sendrecv from %d: [%zu] = %g", left, j, (double)in[j]);
    st = dl_comm_sendrecv(c, out, 1, size + 2, in, 1, 0, DL_F32);
    CHECK(st == DL_ERR_ARG, "sendrecv to rank %d returned %s", size + 2, dl_status_name(st));
    OK(dl_comm_barrier(c));
}

/* Rank r's k-th value for request q: exact in a float (below 2^24). */
static float ring_value(int r, int q, size_t j)
{
    return (float)(r * 1000000 + q * 10000 + (int)(j % 10000));
}

/* dl_comm_isendrecv around the ring (send right, receive left): empty, one
 * element, 1 MiB (past MPI's eager limit) and uneven sizes, all in flight at
 * once, waited out of order; then counters, errors, and blocking sendrecv
 * with empty sides. */
static void test_isendrecv(dl_comm *c)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { K = 6 };
    // request q sends base[q] + (sender's rank) elements, so each rank's
    // receive count is the left neighbour's send count
    const size_t base[K] = {0, 1, (size_t)1 << 18, 7, 0, 1000};
    const int grow[K] = {0, 0, 0, 1, 1, 1}; // uneven: + rank elements
    float *out[K], *in[K];
    size_t ns[K], nr[K];
    dl_comm_req *req[K];
    dl_comm_stats_reset(c);
    uint64_t want_bytes = 0, want_msgs = 0;
    for (int q = 0; q < K; q++) {
        ns[q] = base[q] + (size_t)(grow[q] * rank);
        nr[q] = base[q] + (size_t)(grow[q] * left);
        out[q] = ns[q] ? malloc(ns[q] * sizeof(float)) : NULL;
        in[q] = malloc((nr[q] + 1) * sizeof(float));
        for (size_t j = 0; j < ns[q]; j++)
            out[q][j] = ring_value(rank, q, j);
        for (size_t j = 0; j <= nr[q]; j++)
            in[q][j] = -1.0f;
        want_bytes += ns[q] * sizeof(float);
        want_msgs += ns[q] > 0;
        OK(dl_comm_isendrecv(c, out[q], ns[q], right, in[q], nr[q], left, DL_F32, &req[q]));
    }
    const int order[K] = {2, 0, 5, 1, 4, 3}; // not the order they were started in
    for (int k = 0; k < K; k++)
        OK(dl_comm_wait(c, req[order[k]]));
    for (int q = 0; q < K; q++) {
        size_t bad = 0, first = 0;
        for (size_t j = 0; j < nr[q]; j++) {
            if (in[q][j] != ring_value(left, q, j) && bad++ == 0)
                first = j;
        }
        CHECK(bad == 0, "isendrecv %d (%zu elements from rank %d): %zu wrong, first [%zu] = %g", q, nr[q], left, bad,
              first, (double)in[q][first]);
        CHECK(in[q][nr[q]] == -1.0f, "isendrecv %d wrote past its %zu elements", q, nr[q]);
        free(out[q]), free(in[q]);
    }
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    CHECK(s.calls[DL_OP_SENDRECV] == K && s.bytes[DL_OP_SENDRECV] == want_bytes && s.messages == want_msgs,
          "isendrecv counters: %llu calls, %llu bytes, %llu messages; expected %d, %llu, %llu",
          (unsigned long long)s.calls[DL_OP_SENDRECV], (unsigned long long)s.bytes[DL_OP_SENDRECV],
          (unsigned long long)s.messages, K, (unsigned long long)want_bytes, (unsigned long long)want_msgs);
    CHECK(s.seconds[DL_OP_SENDRECV] >= 0, "time in isendrecv");
    CHECK(s.calls[DL_OP_ALLREDUCE] == 0 && s.calls[DL_OP_BARRIER] == 0, "isendrecv counted under another operation");

    // to itself: a copy; refused when it would leave a message unmatched
    float self_out[5] = {1, 2, 3, 4, 5}, self_in[5] = {0};
    dl_comm_req *r = NULL;
    OK(dl_comm_isendrecv(c, self_out, 5, rank, self_in, 5, rank, DL_F32, &r));
    OK(dl_comm_wait(c, r));
    CHECK(self_in[0] == 1 && self_in[4] == 5, "isendrecv to itself: [4] = %g", (double)self_in[4]);
    r = (dl_comm_req *)&r; // must be cleared on failure
    dl_status st = dl_comm_isendrecv(c, self_out, 1, size, self_in, 1, left, DL_F32, &r);
    CHECK(st == DL_ERR_ARG && r == NULL, "isendrecv to rank %d returned %s", size, dl_status_name(st));
    if (size > 1) {
        st = dl_comm_isendrecv(c, self_out, 1, rank, self_in, 1, left, DL_F32, &r);
        CHECK(st == DL_ERR_ARG, "isendrecv to itself but from rank %d returned %s", left, dl_status_name(st));
    }
    dl_comm_stats_get(c, &s);
    CHECK(s.calls[DL_OP_SENDRECV] == K + 1 && s.messages == want_msgs + 1, "refused calls were counted");

    // blocking sendrecv with empty sides: all empty, then rank r sends r elements
    // (rank 0 sends nothing, rank 1 receives nothing)
    OK(dl_comm_sendrecv(c, NULL, 0, right, NULL, 0, left, DL_F32));
    float v[8] = {0}, w[8];
    for (int j = 0; j < 8; j++)
        v[j] = (float)(rank * 10 + j), w[j] = -1.0f;
    OK(dl_comm_sendrecv(c, rank ? v : NULL, (size_t)rank, right, left ? w : NULL, (size_t)left, left, DL_F32));
    for (int j = 0; j < 8; j++)
        CHECK(w[j] == (j < left ? (float)(left * 10 + j) : -1.0f), "sendrecv of %d from %d: [%d] = %g", left, left, j,
              (double)w[j]);
    // a count that does not match the sender's is named, not accepted short
    st = dl_comm_sendrecv(c, v, 2, right, w, 3, left, DL_F32);
    CHECK(st == DL_ERR_ARG, "a receive of 3 from a send of 2 returned %s", dl_status_name(st));
    CHECK(size == 1 || strstr(dl_last_error(), "received 2 element(s)") != NULL, "mismatch message: %s",
          dl_last_error());
    OK(dl_comm_barrier(c));
}

/* dl_comm_send / dl_comm_recv: one way, blocking. Even ranks send first and
 * odd ranks receive first, so it cannot deadlock at any size; counted as
 * sendrecv calls, a send as a message. */
static void test_send_recv(dl_comm *c)
{
    if (size < 2) {
        float x = 1;
        dl_status st = dl_comm_send(c, &x, 1, 0, DL_F32);
        CHECK(st == DL_ERR_ARG, "a send to itself returned %s", dl_status_name(st));
        return;
    }
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    size_t n = (size_t)1 << 18; // past the eager limit
    float *out = malloc(n * sizeof *out), *in = malloc(n * sizeof *in);
    for (size_t j = 0; j < n; j++)
        out[j] = (float)(rank * 7 + (int)(j % 11));
    dl_comm_stats before, after;
    dl_comm_stats_get(c, &before);
    if (rank % 2 == 0) {
        OK(dl_comm_send(c, out, n, right, DL_F32));
        OK(dl_comm_recv(c, in, n, left, DL_F32));
    } else {
        OK(dl_comm_recv(c, in, n, left, DL_F32));
        OK(dl_comm_send(c, out, n, right, DL_F32));
    }
    if (size % 2 == 0 || size == 1) { // an odd ring has two even neighbours that would both send first
        size_t bad = 0;
        for (size_t j = 0; j < n; j++)
            bad += in[j] != (float)(left * 7 + (int)(j % 11));
        CHECK(bad == 0, "send/recv from %d: %zu wrong", left, bad);
    }
    dl_comm_stats_get(c, &after);
    CHECK(after.calls[DL_OP_SENDRECV] - before.calls[DL_OP_SENDRECV] == 2 && after.messages - before.messages == 1 &&
              after.bytes[DL_OP_SENDRECV] - before.bytes[DL_OP_SENDRECV] == n * sizeof(float),
          "send/recv counters: %llu calls, %llu messages",
          (unsigned long long)(after.calls[DL_OP_SENDRECV] - before.calls[DL_OP_SENDRECV]),
          (unsigned long long)(after.messages - before.messages));
    dl_status st = dl_comm_send(c, out, 1, rank, DL_F32);
    CHECK(st == DL_ERR_ARG, "a send to itself returned %s", dl_status_name(st));
    st = dl_comm_recv(c, in, 1, size, DL_F32);
    CHECK(st == DL_ERR_ARG, "a receive from rank %d returned %s", size, dl_status_name(st));
    free(out);
    free(in);
}

static void test_counters(dl_comm *c)
{
    dl_comm_stats_reset(c);
    float x[10] = {0};
    OK(dl_comm_allreduce(c, x, 10, DL_F32, DL_RED_SUM));
    OK(dl_comm_allreduce(c, x, 3, DL_F32, DL_RED_SUM));
    OK(dl_comm_broadcast(c, x, 10, DL_F32, 0));
    OK(dl_comm_barrier(c));
    dl_comm_req *r;
    OK(dl_comm_allreduce_async(c, x, 6, DL_F32, DL_RED_SUM, &r));
    OK(dl_comm_wait(c, r));
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    CHECK(s.calls[DL_OP_ALLREDUCE] == 2 && s.bytes[DL_OP_ALLREDUCE] == 52, "allreduce counters %llu calls %llu bytes",
          (unsigned long long)s.calls[DL_OP_ALLREDUCE], (unsigned long long)s.bytes[DL_OP_ALLREDUCE]);
    CHECK(s.calls[DL_OP_ALLREDUCE_ASYNC] == 1 && s.bytes[DL_OP_ALLREDUCE_ASYNC] == 24, "async counters %llu %llu",
          (unsigned long long)s.calls[DL_OP_ALLREDUCE_ASYNC], (unsigned long long)s.bytes[DL_OP_ALLREDUCE_ASYNC]);
    CHECK(s.calls[DL_OP_BROADCAST] == 1 && s.bytes[DL_OP_BROADCAST] == 40, "broadcast counters");
    CHECK(s.calls[DL_OP_BARRIER] == 1 && s.calls[DL_OP_SENDRECV] == 0, "barrier/sendrecv counters");
    CHECK(s.messages == 0, "collectives counted %llu point-to-point messages", (unsigned long long)s.messages);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(dl_comm_sendrecv(c, x, 3, right, x + 3, 3, left, DL_F32));
    OK(dl_comm_sendrecv(c, x, 0, right, x, 0, left, DL_F32));
    dl_comm_stats_get(c, &s);
    CHECK(s.calls[DL_OP_SENDRECV] == 2 && s.bytes[DL_OP_SENDRECV] == 12 && s.messages == 1,
          "sendrecv counters: %llu calls, %llu bytes, %llu messages", (unsigned long long)s.calls[DL_OP_SENDRECV],
          (unsigned long long)s.bytes[DL_OP_SENDRECV], (unsigned long long)s.messages);
    CHECK(s.seconds[DL_OP_ALLREDUCE] >= 0, "time in allreduce");
}

/* Every span opened is closed on every path: an allreduce the transport
 * refuses when it starts (MPI reduces f16 by sum and avg only) still closes
 * the timeline's span it opened, and so does one that ran. */
static void test_failed_span(dl_comm *c)
{
    dl_trace_clear();
    dl_trace_start(0);
    dl_half h[4] = {0};
    dl_status st = dl_comm_allreduce(c, h, 4, DL_F16, DL_RED_MAX);
    CHECK(st == DL_ERR_UNSUPPORTED, "an f16 max over MPI returned %s", dl_status_name(st));
    float x[2] = {1, 2};
    OK(dl_comm_allreduce(c, x, 2, DL_F32, DL_RED_SUM));
    dl_trace_stop();
    size_t n = 0;
    const dl_span *ev = dl_trace_events(&n);
    CHECK(n == 2, "%zu spans for two allreduces", n);
    for (size_t k = 0; k < n; k++)
        CHECK(ev[k].t1 >= 0, "span %zu (%s) left open", k, dl_trace_kind_name(ev[k].kind));
    dl_trace_clear();
}

/* The same operations with buffers on this rank's GPU (NCCL, or a world of
 * one). Used by `make test-gpu`. Finalizes c before it closes the device c
 * is bound to (dl_comm_finalize reads it and destroys the NCCL communicator on it). */
static int test_cuda(dl_comm *c, const char *spec)
{
    dl_device dev;
    dl_device_spec ds;
    dl_status got = dl_device_parse(spec, &ds);
    if (got == DL_OK)
        got = dl_rank_device(c, &ds, &dev); // as the drivers do: refused together
    if (got != DL_OK)
        exit(dl_rank_exit(c, got, "test_comm cuda"));
    size_t n = 1 << 16;
    float *h = malloc(n * sizeof *h), *d = NULL, *g = NULL;
    OK(dl_malloc(&dev, (void **)&d, n * sizeof *h));
    OK(dl_malloc(&dev, (void **)&g, n * (size_t)size * sizeof *h));
    for (size_t j = 0; j < n; j++)
        h[j] = (float)(rank + 1 + (int)(j % 7));
    OK(dl_memcpy_h2d(&dev, d, h, n * sizeof *h));
    OK(dl_comm_allreduce(c, d, n, DL_F32, DL_RED_SUM));
    OK(dl_memcpy_d2h(&dev, h, d, n * sizeof *h));
    for (size_t j = 0; j < n; j++)
        CHECK(h[j] == (float)(size * (size + 1) / 2 + size * (int)(j % 7)), "cuda allreduce [%zu] = %g", j,
              (double)h[j]);
    // bf16 on NCCL (ncclBfloat16): the sum again, small integers exact in bf16
    void *b = NULL;
    OK(dl_malloc(&dev, &b, n * sizeof(dl_bf16)));
    OK(dl_cast(&dev, b, DL_BF16, d, DL_F32, n));
    OK(dl_comm_allreduce(c, b, n, DL_BF16, DL_RED_SUM));
    OK(dl_cast(&dev, g, DL_F32, b, DL_BF16, n));
    OK(dl_memcpy_d2h(&dev, h, g, n * sizeof *h));
    for (size_t j = 0; j < n; j++)
        CHECK(h[j] == (float)size * (float)(size * (size + 1) / 2 + size * (int)(j % 7)),
              "cuda bf16 allreduce [%zu] = %g", j, (double)h[j]);
    dl_free(&dev, b);
    OK(dl_comm_allreduce(c, d, n, DL_F32, DL_RED_AVG));
    OK(dl_comm_broadcast(c, d, n, DL_F32, size - 1));
    OK(dl_comm_allgather(c, d, g, n, DL_F32));
    dl_comm_req *r;
    OK(dl_comm_allreduce_async(c, d, n, DL_F32, DL_RED_MAX, &r));
    OK(dl_comm_wait(c, r));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(dl_comm_sendrecv(c, d, 100, right, g, 100, left, DL_F32));
    // isendrecv around the ring on device buffers: empty, one element and 1 MiB
    // in flight together, waited out of order (one rank: copies to itself)
    enum { K = 3 };
    const size_t counts[K] = {0, 1, n / 4};
    dl_comm_req *r3[K];
    float *rx = NULL, *back = malloc(K * n * sizeof *back);
    OK(dl_malloc(&dev, (void **)&rx, K * n * sizeof *rx));
    for (size_t j = 0; j < n; j++)
        h[j] = ring_value(rank, 0, j);
    OK(dl_memcpy_h2d(&dev, d, h, n * sizeof *h));
    OK(dl_memset0(&dev, rx, K * n * sizeof *rx));
    dl_comm_stats_reset(c);
    for (int q = 0; q < K; q++)
        OK(dl_comm_isendrecv(c, d, counts[q], right, rx + (size_t)q * n, counts[q], left, DL_F32, &r3[q]));
    for (int q = K - 1; q >= 0; q--)
        OK(dl_comm_wait(c, r3[q]));
    OK(dl_memcpy_d2h(&dev, back, rx, K * n * sizeof *back));
    for (int q = 0; q < K; q++) {
        for (size_t j = 0; j < n; j++) {
            float want = j < counts[q] ? ring_value(left, 0, j) : 0.0f;
            if (back[(size_t)q * n + j] != want) {
                CHECK(0, "cuda isendrecv %d [%zu] = %g, expected %g", q, j, (double)back[(size_t)q * n + j],
                      (double)want);
                break;
            }
        }
    }
    free(back);
    dl_free(&dev, rx);
    dl_comm_stats st;
    dl_comm_stats_get(c, &st);
    CHECK(st.calls[DL_OP_SENDRECV] == K && st.messages == K - 1 &&
              st.bytes[DL_OP_SENDRECV] == (1 + n / 4) * sizeof(float),
          "cuda isendrecv counters: %llu calls, %llu messages", (unsigned long long)st.calls[DL_OP_SENDRECV],
          (unsigned long long)st.messages);
    OK(dl_comm_barrier(c));
    dl_free(&dev, d), dl_free(&dev, g);
    free(h);
    int total = failures;
    OK(dl_comm_allreduce(c, &total, 1, DL_I32, DL_RED_SUM)); // host buffer: MPI
    if (rank == 0)
        printf("%s test_comm cuda: %d rank(s), backend %s, %d failure(s)\n", total == 0 ? "ok" : "FAIL", size,
               dl_comm_backend(c), total);
    dl_comm_finalize(c); // while dev, which c is bound to, is still open
    dl_device_close(&dev);
    return total == 0 ? 0 : 1;
}

// ---- the training layer (dl/replica.h, dl/eval.h, dl/epoch.h) on several ranks ----

static void test_replica(dl_comm *c)
{
    float x[4] = {1, 2, NAN, 4};
    double diff = -1;
    OK(dl_replica_diff(c, x, 4, &diff));
    CHECK(diff == 0, "identical copies (NaN where rank 0 has NaN) differ by %g", diff);
    if (rank == size - 1)
        x[1] += 0.5f; // the last rank drifts
    OK(dl_replica_diff(c, x, 4, &diff));
    CHECK(diff == (size > 1 ? 0.5 : 0.0), "the last rank's drift of 0.5 measured as %g", diff);
    if (rank == size - 1)
        x[3] = NAN; // a NaN against rank 0's number
    OK(dl_replica_diff(c, x, 4, &diff));
    CHECK(size == 1 || isinf(diff), "a NaN against a number gave %g, expected inf", diff);
}

static void test_eval(dl_comm *c)
{
    dl_dataset set;
    OK(dl_dataset_alloc(&set, 17, 4, 3));
    for (size_t i = 0; i < 17 * 4; i++)
        set.X[i] = (float)((i * 7919) % 13) - 6.0f;
    for (size_t i = 0; i < 17; i++)
        set.y[i] = (int32_t)(i % 3);
    const size_t layers[] = {4, 6, 3};
    dl_mlp same, mine;
    OK(dl_mlp_create(&same, dl_cpu(), layers, 3, 8, 5)); // the same model everywhere
    OK(dl_mlp_create(&mine, dl_cpu(), layers, 3, 8, 5 + (uint64_t)rank)); // a model of its own
    dl_devset s;
    OK(dl_devset_make(&s, dl_cpu(), &set, 0, set.n));
    double acc = -1, alone = -1, own = -1, theirs = -1;
    OK(dl_eval_accuracy(c, &same, &s, 3, &acc)); // 6 chunks (3, 3, 3, 3, 3, 2 rows) dealt over the ranks
    OK(dl_eval_accuracy_on(c, 0, &same, &s, 3, &alone)); // rank 0 alone
    CHECK(acc == alone, "sharded accuracy %.17g, rank 0 alone %.17g", acc, alone);
    OK(dl_eval_accuracy_on(c, size - 1, &mine, &s, 3, &theirs)); // the last rank's own model
    int32_t pred[17];
    OK(dl_mlp_predict(&mine, set.X, 17, pred));
    size_t right = 0;
    for (size_t i = 0; i < 17; i++)
        right += pred[i] == set.y[i];
    own = (double)right / 17;
    OK(dl_comm_broadcast(c, &own, 1, DL_F64, size - 1));
    CHECK(theirs == own, "the last rank's accuracy %.17g, broadcast as %.17g", own, theirs);
    dl_devset_free(&s);
    dl_mlp_free(&same), dl_mlp_free(&mine);
    dl_dataset_free(&set);
}

static void test_epoch(dl_comm *c)
{
    dl_epoch e;
    dl_epoch_begin(&e, c);
    dl_flops_add(100 * (uint64_t)(rank + 1)); // rank r does r + 1 rows of 100 FLOPs at loss r + 1
    dl_epoch_step(&e, (size_t)rank + 1, rank + 1.0);
    dl_epoch_stop(&e);
    dl_epoch_sums s;
    OK(dl_epoch_reduce(&e, 10, 1, 100, &s));
    double sum = 0, sq = 0;
    for (int r = 1; r <= size; r++)
        sum += r, sq += (double)r * r;
    CHECK(s.loss == sq / sum && s.local_loss == rank + 1.0, "loss %g (local %g), expected %g", s.loss, s.local_loss,
          sq / sum);
    CHECK(s.rows_min == 1 && s.rows_max == size, "rows from %g to %g", s.rows_min, s.rows_max);
    // the slowest rank sets the pace: its FLOPs, and the rows scaled to them
    CHECK(s.w.flops == 100.0 * size && s.w.samples == size, "workload %g FLOPs on %g rows", s.w.flops, s.w.samples);
    double t0 = 0, epoch = 0, imb = 0, *per = malloc((size_t)size * sizeof *per);
    OK(dl_epoch_clock_begin(c, &t0));
    OK(dl_epoch_clock_end(c, t0, rank + 1.0, per, &epoch, &imb));
    for (int r = 0; r < size; r++)
        CHECK(per[r] == r + 1.0, "rank %d's compute time arrived as %g", r, per[r]);
    CHECK(fabs(imb - 2.0 * size / (size + 1)) < 1e-12, "imbalance %g, expected max/mean = %g", imb,
          2.0 * size / (size + 1));
    double lo = epoch, hi = epoch;
    OK(dl_comm_allreduce(c, &lo, 1, DL_F64, DL_RED_MIN));
    OK(dl_comm_allreduce(c, &hi, 1, DL_F64, DL_RED_MAX));
    CHECK(lo == hi, "epoch times differ across ranks: %g to %g", lo, hi);
    free(per);
}

static void test_ring(dl_comm *c) // the kit's ring: exact sums, its traffic as dl_ring_bytes says
{
    dl_device dev;
    OK(dl_device_open("cpu", &dev));
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], big = dl_ring_offset(n, size, 1);
        float *x = malloc((n + 1) * sizeof *x), *scratch = malloc((big + 1) * sizeof *scratch);
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((i * 7 + (size_t)rank * 3) % 11);
        dl_comm_stats s;
        dl_comm_stats_reset(c);
        OK(dl_ring_allreduce(c, &dev, x, n, DL_F32, scratch));
        dl_comm_stats_get(c, &s);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < size; q++)
                want += (double)((i * 7 + (size_t)q * 3) % 11);
            bad += x[i] != (float)want;
        }
        CHECK(bad == 0, "ring, n = %zu: %zu elements are not the sum", n, bad);
        CHECK(s.bytes[DL_OP_SENDRECV] == dl_ring_bytes(n, size, rank, 4), "ring, n = %zu: %llu bytes sent, model %llu",
              n, (unsigned long long)s.bytes[DL_OP_SENDRECV], (unsigned long long)dl_ring_bytes(n, size, rank, 4));
        CHECK(s.messages == dl_ring_messages(n, size, rank), "ring, n = %zu: %llu messages, model %llu", n,
              (unsigned long long)s.messages, (unsigned long long)dl_ring_messages(n, size, rank));
        CHECK(n < (size_t)size || s.messages == 2 * (uint64_t)(size - 1), "ring, n = %zu: %llu messages, not 2(P - 1)",
              n, (unsigned long long)s.messages);
        free(x);
        free(scratch);
    }
    dl_device_close(&dev);
}

int main(int argc, char **argv)
{
    dl_comm *c;
    if (dl_comm_init(&argc, &argv, &c) != DL_OK) {
        fprintf(stderr, "test_comm: %s\n", dl_last_error());
        return 1;
    }
    rank = dl_comm_rank(c);
    size = dl_comm_size(c);
    const char *mode = argc > 1 ? argv[1] : "ops";
    if (strcmp(mode, "ops") == 0) {
        CHECK(dl_comm_local_rank(c) == rank && dl_comm_local_size(c) == size, "local rank %d of %d",
              dl_comm_local_rank(c), dl_comm_local_size(c));
        test_allreduce(c);
        test_ring(c);
        test_broadcast_gather_sendrecv(c);
        test_isendrecv(c);
        if (size % 2 == 0 || size == 1)
            test_send_recv(c);
        test_counters(c);
        if (strcmp(dl_comm_backend(c), "mpi") == 0) // a world of one without a launcher refuses nothing
            test_failed_span(c);
        test_replica(c);
        test_eval(c);
        test_epoch(c);
        int total = failures;
        OK(dl_comm_allreduce(c, &total, 1, DL_I32, DL_RED_SUM));
        if (rank == 0)
            printf("%s test_comm ops: %d rank(s), backend %s, %d failure(s)\n", total == 0 ? "ok" : "FAIL", size,
                   dl_comm_backend(c), total);
        dl_comm_finalize(c);
        return total == 0 ? 0 : 1;
    }
    if (strcmp(mode, "fail") == 0 || strcmp(mode, "hang") == 0) {
        float x = 1.0f;
        OK(dl_comm_allreduce(c, &x, 1, DL_F32, DL_RED_SUM)); // everyone is up
        if (rank == 1 && mode[0] == 'f') {
            fprintf(stderr, "rank 1: failing on purpose\n");
            exit(3);
        }
        if (rank == 1)
            sleep(600); // stops answering
        OK(dl_comm_allreduce(c, &x, 1, DL_F32, DL_RED_SUM)); // the others wait here
        printf("rank %d: the collective returned although rank 1 is gone\n", rank);
        dl_comm_finalize(c);
        return 0;
    }
    if (strcmp(mode, "early") == 0) {
        if (rank == size - 1) { // fails before its first collective
            dl_error_set(DL_ERR_IO, "rank %d: failing on purpose before the first collective", rank);
            return dl_rank_exit(c, DL_ERR_IO, "test_comm early");
        }
        float x = 1.0f;
        OK(dl_comm_allreduce(c, &x, 1, DL_F32, DL_RED_SUM)); // the others wait here
        printf("rank %d: the collective returned although rank %d failed\n", rank, size - 1);
        dl_comm_finalize(c);
        return 0;
    }
    if (strcmp(mode, "claim") == 0) {
        dl_device dev;
        dl_device_spec ds;
        dl_status st = dl_device_parse(argc > 2 ? argv[2] : "cuda", &ds);
        if (st == DL_OK)
            st = dl_rank_device(c, &ds, &dev);
        if (st != DL_OK)
            return dl_rank_exit(c, st, "test_comm claim");
        OK(dl_comm_barrier(c));
        printf("ok test_comm claim: rank %d on %s\n", rank, dl_device_describe(&dev));
        dl_comm_finalize(c); // while dev, which c is bound to, is still open
        dl_device_close(&dev);
        return failures == 0 ? 0 : 1;
    }
    if (strcmp(mode, "cuda") == 0) {
        return test_cuda(c, argc > 2 ? argv[2] : "cuda"); // finalizes c
    }
    fprintf(stderr, "usage: test_comm ops|fail|hang|early|claim [SPEC]|cuda [SPEC]\n");
    return 2;
}
