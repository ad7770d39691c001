/* dl/trace.h — a timeline of this process: what the kit ran, in which order,
 * and when. Lab 05 draws it per rank, writes it as a Chrome/Perfetto trace,
 * proves the overlap of communication with backward from its order, and
 * projects a step onto a target machine from it.
 *
 * Contract
 * - One trace per process; it records only between dl_trace_start and
 *   dl_trace_stop (off by default: the kit's calls then cost one branch).
 * - While it records, the kit adds events itself, so no student code can
 *   leave one out or forge one by accident:
 *     dl_mlp_forward         one FORWARD span;
 *     dl_mlp_backward        one BACKWARD span per layer (id = the layer),
 *                            closed when that layer's gradient is final and
 *                            before its ready callback runs;
 *     dl_mlp_sgd             one OPTIM span;
 *     dl_comm_allreduce      one ALLREDUCE span (async = 0);
 *     dl_comm_allreduce_async  one ALLREDUCE span (async = 1) from the start
 *                            of the call to the end of its dl_comm_wait;
 *   and the driver brackets each optimizer step with dl_trace_begin(
 *   DL_EV_STEP) / dl_trace_end. Every event carries the step set by
 *   dl_trace_set_step.
 * - Order: events are numbered in the order they began (their index in
 *   dl_trace_events). A span begun inside a ready callback therefore comes
 *   after that layer's BACKWARD span and before the next layer's: the order
 *   is exact on every device.
 * - Times are seconds since dl_trace_start on this rank's clock (dl_now).
 *   host_t0/host_t1 are when the host began and ended the call. On the CPU
 *   (no device bound) t0/t1 are the same values, bit for bit.
 * - On a CUDA device the kit's calls return before the GPU ran them, so once
 *   dl_trace_use_device has bound the device, t0/t1 are when the GPU ran the
 *   work (device = 1): each span records a CUDA event at its begin and at its
 *   end on the stream its work runs on — the compute stream for step,
 *   forward, backward and optimizer spans; for an allreduce, the comm stream,
 *   made to wait for the compute stream at the call (as the transport does
 *   next), its end recorded at the trace's next call, once the transport has
 *   queued it: the span is when NCCL ran it, not until dl_comm_wait returned
 *   (with no comm stream bound, an allreduce is measured on the compute
 *   stream, from the call to the compute stream's passing its wait). Reading
 *   the trace (dl_trace_events and the writers) and dl_trace_stop wait for
 *   the ended spans' events and put them on the host clock through reference
 *   events on the compute stream: the first recorded at dl_trace_start (or
 *   at binding, while recording) on an idle stream at a known host time,
 *   then one per second of host time, each timed from the one before
 *   (cudaEventElapsedTime's float stays sub-microsecond over short
 *   intervals). A device time is never before the host issued the work
 *   (t0 >= host_t0) nor after the read that converted it. A span still open
 *   at dl_trace_stop, or whose event CUDA refused, keeps its host times
 *   (device = 0). The events come from a pool made at dl_trace_start and
 *   grown on demand to 65536; when it is spent, the trace waits for the
 *   ended spans to free theirs (a host wait inside the run, once per about
 *   32768 spans not read). The order stays exact either way.
 * - At most `cap` events are kept (dl_trace_start's argument, 0 = 1 << 20);
 *   later ones are counted in dl_trace_dropped and not stored.
 * - dl_trace_write_csv writes this rank's events, one per row (index, kind,
 *   id, step, t0, t1, bytes, async, launches, syncs; the last two -1 for a
 *   span still open). Every rank's events in one Chrome trace:
 *   dl/trace_chrome.h (it needs dl_comm, which records into this trace).
 */
#ifndef DL_TRACE_H
#define DL_TRACE_H

#include <stddef.h> // size_t

#include "dl/device.h" // dl_device, dl_stream
#include "dl/metrics.h" // DL_CSV_SCHEMA
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

/* dl_trace_write_csv's columns; the grader reads the file by these names. */
// clang-format off
#define DL_TRACE_CSV(X)                  \
    X(DL_TRACE_COL_INDEX, "index")       \
    X(DL_TRACE_COL_KIND, "kind")         \
    X(DL_TRACE_COL_ID, "id")             \
    X(DL_TRACE_COL_STEP, "step")         \
    X(DL_TRACE_COL_T0, "t0")             \
    X(DL_TRACE_COL_T1, "t1")             \
    X(DL_TRACE_COL_BYTES, "bytes")       \
    X(DL_TRACE_COL_ASYNC, "async")       \
    X(DL_TRACE_COL_LAUNCHES, "launches") \
    X(DL_TRACE_COL_SYNCS, "syncs")
// clang-format on
DL_CSV_SCHEMA(dl_trace_csv, DL_TRACE_CSV);

typedef enum dl_ev_kind {
    DL_EV_STEP = 0,
    DL_EV_FORWARD,
    DL_EV_BACKWARD,
    DL_EV_OPTIM,
    DL_EV_ALLREDUCE,
    DL_EV_KINDS
} dl_ev_kind;

typedef struct dl_span {
    int kind; /* dl_ev_kind */
    int id; /* BACKWARD: the layer; ALLREDUCE: its number within the step; else 0 */
    long step;
    double t0, t1; /* seconds since dl_trace_start; t1 < 0 while open */
    double bytes; /* ALLREDUCE: bytes this rank contributed */
    int async; /* ALLREDUCE: 1 when started by dl_comm_allreduce_async */
    double host_t0, host_t1; /* when the host issued it; = t0, t1 unless device */
    int device; /* 1 when t0, t1 come from the device's events */
    /* What the kit asked of the device while the span was open, once it has
     * ended: dl_flops and the dl_dev_stats counters (dl/device.h) at its end
     * minus at its begin — the same counts on the CPU as on a GPU. A span
     * nested in another counts in both. (Before its end: the begin values.) */
    double flops, kernel_bytes, launches, syncs, allocs, h2d_bytes, d2h_bytes;
} dl_span;

#define DL_TRACE_NONE ((size_t)-1)

/* Binds the trace to dev's compute stream and to comm, the stream its
 * allreduces run on (the communicator's; NULL when there is none apart). dev
 * NULL or not a CUDA device: host times only (the default). Converts what
 * was recorded under a previous binding first. dev must stay open while it
 * is bound. Cannot fail: where CUDA refuses the events, host times. */
void dl_trace_use_device(const dl_device *dev, dl_stream comm);
void dl_trace_start(size_t cap);
void dl_trace_stop(void);
int dl_trace_on(void);
/* Forgets every event (recording goes on if it was on). */
void dl_trace_clear(void);
void dl_trace_set_step(long step);
/* Opens a span (an ALLREDUCE's id is numbered by the trace, from 0 in each
 * step); returns its handle for dl_trace_end (DL_TRACE_NONE when not recording). */
size_t dl_trace_begin(dl_ev_kind kind, int id, double bytes, int async);
void dl_trace_end(size_t handle);
const dl_span *dl_trace_events(size_t *n);
size_t dl_trace_dropped(void);
/* "step", "forward", "backward", "optimizer", "allreduce"; "?" otherwise. */
const char *dl_trace_kind_name(int kind);

dl_status dl_trace_write_csv(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* DL_TRACE_H */
