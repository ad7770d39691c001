/* trace.c — dl/trace.h: the process's timeline and its CSV; on a bound CUDA
 * device, the spans' times from CUDA events (dl/device.h's events, so a build
 * without CUDA needs no stub). The Chrome trace, which gathers every rank's
 * timeline over dl_comm, is trace_chrome.c's. */
#define _POSIX_C_SOURCE 200809L
#include "dl/trace.h"

#include <stdio.h> // fprintf
#include <stdlib.h> // realloc, free

#include "dl/blas.h" // dl_flops
#include "dl/device.h" // dl_event_record, dl_dev_stats_get,, dl_event_elapsed_ms, dl_stream_wait_event
#include "dl/fs.h" // dl_tmp_create
#include "dl/timer.h" // dl_now
#include "record.h" // dl_record, dl_record_push_

#define POOL_STEP 1024 /* CUDA events made at once (at dl_trace_start, then as spans need them) */
#define POOL_MAX 65536 /* events held at most; then the ended spans are converted to free theirs */
#define ANCHOR_S 1.0 /* host seconds between reference events (cudaEventElapsedTime is a float of ms) */

/* A span's CUDA events while it waits to be converted to the host clock. */
typedef struct gspan {
    int b, e; /* pool slots of its begin and end events; -1: none */
    int anchor; /* the reference event its times are measured from */
} gspan;

static struct {
    int on;
    dl_record rec; /* of dl_span: the events, numbered in the order they began */
    long step;
    int allreduces; /* in this step so far */
    double origin;
    // device times (dl_trace_use_device)
    const dl_device *dev; /* a CUDA device, or NULL: host times only */
    dl_stream comm; /* where the allreduces run; NULL: no stream apart */
    int gpu; /* this recording takes CUDA events */
    gspan *g; /* beside ev: g[k] is ev[k]'s events */
    size_t g_cap;
    dl_event *pool; /* pool_n events, nfree of them free (their slots in free_slots) */
    int *free_slots;
    size_t pool_n, nfree;
    dl_event *anchor; /* reference events on the compute stream, in order */
    double *anchor_t; /* their times; exact for anchor[0], the others chained at conversion */
    size_t n_anchor, cap_anchor, known; /* anchors before `known` have their time */
    double anchor_host; /* dl_now() when the newest anchor was recorded */
    dl_event wait_ev; /* the compute stream's point an allreduce waits for */
    size_t pending1; /* 1 + the allreduce whose end event the next call records; 0: none */
    size_t settled; /* spans before this one hold no events */
} T;

/* Event k of the record. */
static dl_span *span_at(size_t k)
{
    return (dl_span *)T.rec.items + k;
}

// ---- device times: CUDA events, converted to the host clock when read ----

static int grow_pool(void)
{
    size_t n = T.pool_n + POOL_STEP;
    if (n > POOL_MAX)
        return 0;
    dl_event *pool = realloc(T.pool, n * sizeof *pool);
    if (pool == NULL)
        return 0;
    T.pool = pool;
    int *slots = realloc(T.free_slots, n * sizeof *slots);
    if (slots == NULL)
        return 0;
    T.free_slots = slots;
    while (T.pool_n < n && dl_event_create(T.dev, &T.pool[T.pool_n]) == DL_OK) {
        T.free_slots[T.nfree++] = (int)T.pool_n;
        T.pool_n++;
    }
    return T.nfree > 0;
}

/* Records a reference event on the compute stream. Its time is the host's
 * now, exact when the stream is idle (dl_trace_start synchronises it first);
 * later ones get theirs from the one before, at conversion. */
static int new_anchor(void)
{
    if (T.n_anchor == T.cap_anchor) {
        size_t cap = T.cap_anchor ? 2 * T.cap_anchor : 64;
        dl_event *a = realloc(T.anchor, cap * sizeof *a);
        if (a == NULL)
            return 0;
        T.anchor = a;
        double *t = realloc(T.anchor_t, cap * sizeof *t);
        if (t == NULL)
            return 0;
        T.anchor_t = t;
        T.cap_anchor = cap;
    }
    dl_event *a = &T.anchor[T.n_anchor];
    if (dl_event_create(T.dev, a) != DL_OK)
        return 0;
    double now = dl_now();
    if (dl_event_record(T.dev, a, NULL) != DL_OK) {
        dl_event_destroy(T.dev, a);
        return 0;
    }
    T.anchor_host = now;
    T.anchor_t[T.n_anchor++] = now - T.origin;
    return 1;
}

static void gpu_teardown(void)
{
    for (size_t k = 0; k < T.g_cap; k++)
        T.g[k] = (gspan){-1, -1, 0};
    for (size_t k = 0; k < T.pool_n; k++)
        dl_event_destroy(T.dev, &T.pool[k]);
    for (size_t k = 0; k < T.n_anchor; k++)
        dl_event_destroy(T.dev, &T.anchor[k]);
    if (T.wait_ev.ev != NULL)
        dl_event_destroy(T.dev, &T.wait_ev);
    free(T.pool);
    free(T.free_slots);
    free(T.anchor);
    free(T.anchor_t);
    T.pool = NULL;
    T.free_slots = NULL;
    T.anchor = NULL;
    T.anchor_t = NULL;
    T.pool_n = T.nfree = T.n_anchor = T.cap_anchor = T.known = T.pending1 = 0;
    T.settled = T.rec.n;
    T.gpu = 0;
}

/* Starts taking events when a CUDA device is bound: the pool, and the first
 * reference event on an idle compute stream. Without them, host times. */
static void gpu_setup(void)
{
    if (T.gpu || T.dev == NULL)
        return;
    T.settled = T.rec.n;
    int ok = dl_event_create(T.dev, &T.wait_ev) == DL_OK && grow_pool();
    ok = ok && dl_device_sync(T.dev) == DL_OK && new_anchor();
    if (!ok) {
        gpu_teardown();
        return;
    }
    T.gpu = 1;
    T.known = 1;
}

/* Converts every ended span's events to host seconds and frees them. */
static void settle(void)
{
    if (!T.gpu)
        return;
    size_t end = T.rec.n < T.g_cap ? T.rec.n : T.g_cap;
    for (size_t k = T.settled; k < end; k++) {
        gspan *g = &T.g[k];
        if (g->b < 0 || g->e < 0)
            continue; // no events, or still open
        for (; T.known <= (size_t)g->anchor; T.known++) { // each anchor from the one before: short intervals
            float ms = 0;
            const dl_event *a = &T.anchor[T.known - 1], *b = &T.anchor[T.known];
            if (dl_event_sync(T.dev, b) == DL_OK && dl_event_elapsed_ms(T.dev, a, b, &ms) == DL_OK)
                T.anchor_t[T.known] = T.anchor_t[T.known - 1] + ms / 1e3;
        }
        const dl_event *a = &T.anchor[g->anchor], *b = &T.pool[g->b], *z = &T.pool[g->e];
        float m0 = 0, m1 = 0;
        int ok = dl_event_sync(T.dev, z) == DL_OK && dl_event_elapsed_ms(T.dev, a, b, &m0) == DL_OK;
        if (ok && dl_event_elapsed_ms(T.dev, a, z, &m1) == DL_OK) {
            dl_span *e = span_at(k);
            double t0 = T.anchor_t[g->anchor] + m0 / 1e3, t1 = T.anchor_t[g->anchor] + m1 / 1e3;
            e->t0 = t0 > e->host_t0 ? t0 : e->host_t0; // the GPU cannot start it before the host issued it
            e->t1 = t1 > e->t0 ? t1 : e->t0;
            e->device = 1;
        }
        T.free_slots[T.nfree++] = g->b;
        T.free_slots[T.nfree++] = g->e;
        g->b = g->e = -1;
    }
    while (T.settled < end && T.g[T.settled].b < 0)
        T.settled++;
}

static int take(void)
{
    if (T.nfree == 0 && !grow_pool())
        settle();
    return T.nfree > 0 ? T.free_slots[--T.nfree] : -1;
}

/* Records span h's end event on stream s (once). */
static void end_event(size_t h, dl_stream s)
{
    gspan *g = h < T.g_cap ? &T.g[h] : NULL;
    if (!T.gpu || g == NULL || g->b < 0 || g->e >= 0)
        return;
    int slot = take();
    if (slot >= 0 && dl_event_record(T.dev, &T.pool[slot], s) != DL_OK) {
        T.free_slots[T.nfree++] = slot;
        slot = -1;
    }
    if (slot >= 0)
        g->e = slot;
}

/* An allreduce's end is recorded at the trace's next call: by then the
 * transport has queued it on the comm stream. */
static void flush_pending(void)
{
    size_t h1 = T.pending1;
    T.pending1 = 0;
    if (h1 > 0)
        end_event(h1 - 1, T.comm);
}

/* Records span h's begin event on the stream its work runs on. */
static void begin_event(size_t h, dl_ev_kind kind)
{
    if (h >= T.g_cap) {
        size_t cap = T.rec.cap;
        gspan *g = realloc(T.g, cap * sizeof *g);
        if (g == NULL)
            return;
        for (size_t k = T.g_cap; k < cap; k++)
            g[k] = (gspan){-1, -1, 0};
        T.g = g;
        T.g_cap = cap;
    }
    gspan *g = &T.g[h];
    if (dl_now() - T.anchor_host > ANCHOR_S)
        new_anchor(); // on failure the spans stay measured from the last one
    g->anchor = (int)T.n_anchor - 1;
    int comm = kind == DL_EV_ALLREDUCE && T.comm != NULL;
    int slot = take();
    if (slot < 0)
        return;
    // the comm stream waits for the compute stream here (as the transport makes it do next),
    // so the allreduce's begin is when it can run, after the anchor
    dl_status st = DL_OK;
    if (comm) {
        st = dl_event_record(T.dev, &T.wait_ev, NULL);
        if (st == DL_OK)
            st = dl_stream_wait_event(T.dev, T.comm, &T.wait_ev);
    }
    if (st == DL_OK)
        st = dl_event_record(T.dev, &T.pool[slot], comm ? T.comm : NULL);
    if (st != DL_OK) {
        T.free_slots[T.nfree++] = slot;
        return;
    }
    g->b = slot;
    if (comm)
        T.pending1 = h + 1;
}

/* Before the trace is read: every event recorded and converted. */
static void catch_up(void)
{
    flush_pending();
    settle();
}

// ---- recording ----

void dl_trace_use_device(const dl_device *dev, dl_stream comm)
{
    if (T.gpu) {
        catch_up();
        gpu_teardown();
    }
    T.dev = dev != NULL && dev->kind == DL_DEVICE_CUDA ? dev : NULL;
    T.comm = T.dev != NULL ? comm : NULL;
    if (T.on)
        gpu_setup();
}

void dl_trace_start(size_t cap)
{
    T.rec.limit = cap ? cap : (size_t)1 << 20;
    T.origin = T.on ? T.origin : dl_now();
    T.on = 1;
    gpu_setup();
}

void dl_trace_stop(void)
{
    if (T.gpu) {
        catch_up();
        gpu_teardown(); // a span still open keeps its host times
    }
    T.on = 0;
}

int dl_trace_on(void)
{
    return T.on;
}

void dl_trace_clear(void)
{
    if (T.gpu)
        gpu_teardown();
    dl_record_free_(&T.rec); // the limit stays
    free(T.g);
    T.g = NULL;
    T.g_cap = T.settled = 0;
    T.origin = dl_now();
    if (T.on)
        gpu_setup();
}

void dl_trace_set_step(long step)
{
    T.step = step;
    T.allreduces = 0;
}

/* The device counters into e: at its begin (end = 0) the values now, at its
 * end what they grew by since. */
static void counters(dl_span *e, int end)
{
    dl_dev_stats s;
    dl_dev_stats_get(&s);
    const double now[7] = {(double)dl_flops(), s.kernel_bytes,      (double)s.launches, (double)s.syncs,
                           (double)s.allocs,   (double)s.h2d_bytes, (double)s.d2h_bytes};
    double *const slot[7] = {&e->flops,  &e->kernel_bytes, &e->launches, &e->syncs,
                             &e->allocs, &e->h2d_bytes,    &e->d2h_bytes};
    for (int k = 0; k < 7; k++)
        *slot[k] = end ? now[k] - *slot[k] : now[k];
}

size_t dl_trace_begin(dl_ev_kind kind, int id, double bytes, int async)
{
    if (!T.on)
        return DL_TRACE_NONE;
    flush_pending();
    dl_span *e = dl_record_push_(&T.rec, sizeof *e, 1024);
    if (e == NULL)
        return DL_TRACE_NONE; // counted as dropped
    size_t h = T.rec.n - 1;
    *e = (dl_span){.kind = (int)kind,
                   .id = kind == DL_EV_ALLREDUCE ? T.allreduces++ : id,
                   .step = T.step,
                   .bytes = bytes,
                   .async = async};
    counters(e, 0);
    e->t0 = dl_now() - T.origin;
    e->t1 = -1.0;
    e->host_t0 = e->t0;
    e->host_t1 = -1.0;
    if (h < T.g_cap)
        T.g[h] = (gspan){-1, -1, 0};
    if (T.gpu)
        begin_event(h, kind);
    return h;
}

void dl_trace_end(size_t h)
{
    flush_pending();
    if (h >= T.rec.n)
        return;
    dl_span *e = span_at(h);
    e->host_t1 = dl_now() - T.origin;
    if (!e->device) // converted already: t1 is the device's
        e->t1 = e->host_t1;
    counters(e, 1);
    end_event(h, NULL);
}

const dl_span *dl_trace_events(size_t *n)
{
    catch_up();
    *n = T.rec.n;
    return T.rec.items;
}

size_t dl_trace_dropped(void)
{
    return T.rec.dropped;
}

const char *dl_trace_kind_name(int kind)
{
    static const char *const names[DL_EV_KINDS] = {"step", "forward", "backward", "optimizer", "allreduce"};
    return kind >= 0 && kind < DL_EV_KINDS ? names[kind] : "?";
}

dl_status dl_trace_write_csv(const char *path)
{
    catch_up();
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, dl_trace_csv));
    dl_status st = DL_OK;
    for (size_t k = 0; k < T.rec.n && st == DL_OK; k++) {
        const dl_span *e = span_at(k);
        int ended = e->host_t1 >= 0; // an open span's counters are not yet its own
        dl_csv_cell(&f, DL_TRACE_COL_INDEX, "%zu", k);
        dl_csv_cell(&f, DL_TRACE_COL_KIND, "%s", dl_trace_kind_name(e->kind));
        dl_csv_cell(&f, DL_TRACE_COL_ID, "%d", e->id);
        dl_csv_cell(&f, DL_TRACE_COL_STEP, "%ld", e->step);
        dl_csv_cell(&f, DL_TRACE_COL_T0, "%.9f", e->t0);
        dl_csv_cell(&f, DL_TRACE_COL_T1, "%.9f", e->t1);
        dl_csv_cell(&f, DL_TRACE_COL_BYTES, "%.0f", e->bytes);
        dl_csv_cell(&f, DL_TRACE_COL_ASYNC, "%d", e->async);
        dl_csv_cell(&f, DL_TRACE_COL_LAUNCHES, "%.0f", ended ? e->launches : -1);
        dl_csv_cell(&f, DL_TRACE_COL_SYNCS, "%.0f", ended ? e->syncs : -1);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}
