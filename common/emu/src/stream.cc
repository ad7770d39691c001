/* stream.cc — streams and events of the emulated CUDA device, and the
 * device-wide waits (cudaDeviceSynchronize, cudaDeviceReset).
 *
 * A stream is a FIFO of operations, each with a global issue number; an
 * operation may first need other streams run up to a number: the legacy
 * stream (0) orders with every blocking stream both ways, and
 * cudaStreamWaitEvent adds the event's stream and number. Nothing runs at
 * issue: a stream drains when the host waits for it (directly, or through a
 * query, an event, a copy into pageable memory, cudaFree), or when it holds
 * more than MAX_PENDING operations, as a GPU's queue fills. A sticky error
 * drops whatever is queued. Streams and events destroyed stay allocated,
 * marked dead, until cudaDeviceReset, so queued work never points at freed
 * memory. */
#include <deque> // std::deque
#include <pthread.h> // pthread_mutex_t
#include <set> // std::set
#include <time.h> // clock_gettime
#include <vector> // std::vector

#include "internal.h"

#define MAX_PENDING 1024

typedef struct dep {
    CUstream_st *s;
    uint64_t seq;
} dep;

typedef struct op {
    emu_op_fn run, destroy;
    void *arg;
    uint64_t seq;
    std::vector<dep> deps;
} op;

struct CUstream_st {
    std::deque<op> q;
    uint64_t done; /* the issue number of the last operation run */
    unsigned flags;
    int live;
};

struct CUevent_st {
    CUstream_st *s; /* the stream of the last record; NULL before one */
    uint64_t seq; /* that record's issue number */
    double t_ms; /* host clock when it ran */
    unsigned flags;
    int live;
};

static pthread_mutex_t dev_mu;
static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static uint64_t next_seq = 1;
static CUstream_st legacy_stream, per_thread_stream;
static std::set<CUstream_st *> *streams; /* all made, dead ones too */
static std::set<CUevent_st *> *events;

static void init_lock(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&dev_mu, &a);
    streams = new std::set<CUstream_st *>();
    events = new std::set<CUevent_st *>();
    legacy_stream.live = per_thread_stream.live = 1;
}

emu_dev_lock::emu_dev_lock()
{
    pthread_once(&dev_once, init_lock);
    pthread_mutex_lock(&dev_mu);
}

emu_dev_lock::~emu_dev_lock()
{
    pthread_mutex_unlock(&dev_mu);
}

static CUstream_st *resolve(cudaStream_t s)
{
    if (s == NULL || s == cudaStreamLegacy)
        return &legacy_stream;
    if (s == cudaStreamPerThread)
        return &per_thread_stream;
    return s;
}

static int blocking(const CUstream_st *s)
{
    return s != &legacy_stream && !(s->flags & cudaStreamNonBlocking);
}

cudaError_t emu_stream_check(cudaStream_t s, const char *call)
{
    emu_dev_lock lock;
    CUstream_st *r = resolve(s);
    if (r == &legacy_stream || r == &per_thread_stream || (streams->count(r) && r->live))
        return cudaSuccess;
    return emu_error(cudaErrorInvalidResourceHandle, 0, NULL, NULL, "%s: stream %p was destroyed or never created",
                     call, (void *)s);
}

static uint64_t last_issued(const CUstream_st *s)
{
    return s->q.empty() ? s->done : s->q.back().seq;
}

/* Runs the operation at the front of s (its dependencies first). */
static void run_front(CUstream_st *s);

static void drain_upto(CUstream_st *s, uint64_t seq)
{
    while (s->done < seq && !s->q.empty() && s->q.front().seq <= seq)
        run_front(s);
}

static void run_front(CUstream_st *s)
{
    op o = s->q.front();
    for (const dep &d : o.deps)
        drain_upto(d.s, d.seq);
    s->q.pop_front();
    if (emu_sticky() == cudaSuccess)
        o.run(o.arg);
    if (o.destroy != NULL)
        o.destroy(o.arg);
    s->done = o.seq;
}

cudaError_t emu_enqueue(cudaStream_t stream, emu_op_fn run, emu_op_fn destroy, void *arg)
{
    emu_dev_lock lock;
    CUstream_st *s = resolve(stream);
    op o;
    o.run = run;
    o.destroy = destroy;
    o.arg = arg;
    o.seq = next_seq++;
    if (s == &legacy_stream) { // waits for every blocking stream's work so far
        for (CUstream_st *t : *streams)
            if (t->live && blocking(t) && last_issued(t) > t->done)
                o.deps.push_back(dep{t, last_issued(t)});
        if (last_issued(&per_thread_stream) > per_thread_stream.done)
            o.deps.push_back(dep{&per_thread_stream, last_issued(&per_thread_stream)});
    } else if (blocking(s) && last_issued(&legacy_stream) > legacy_stream.done)
        o.deps.push_back(dep{&legacy_stream, last_issued(&legacy_stream)});
    s->q.push_back(o);
    while (s->q.size() > MAX_PENDING) // a full queue makes the host wait, as on a GPU
        run_front(s);
    return cudaSuccess;
}

static void noop(void *);

/* Adds a dependency-only operation: s waits for (t, seq). */
static void enqueue_wait(CUstream_st *s, CUstream_st *t, uint64_t seq)
{
    static char none;
    emu_enqueue(s, noop, NULL, &none);
    s->q.back().deps.push_back(dep{t, seq});
}

cudaError_t emu_drain(cudaStream_t stream)
{
    emu_dev_lock lock;
    CUstream_st *s = resolve(stream);
    while (!s->q.empty())
        run_front(s);
    return emu_sticky();
}

static void noop(void *)
{
}

cudaError_t emu_wait_point(cudaStream_t stream)
{
    emu_dev_lock lock;
    static char none;
    emu_enqueue(stream, noop, NULL, &none); // takes the stream's implicit order (the legacy stream's)
    return emu_drain(stream);
}

cudaError_t emu_drain_all(void)
{
    emu_dev_lock lock;
    emu_drain(&legacy_stream);
    emu_drain(&per_thread_stream);
    for (CUstream_st *s : *streams)
        emu_drain(s);
    return emu_sticky();
}

static cudaError_t result(cudaError_t e)
{
    return e == cudaSuccess ? e : emu_error(e, 0, NULL, NULL, "%s", "");
}

// ---- the API: the device ----

cudaError_t cudaDeviceSynchronize(void)
{
    return result(emu_drain_all());
}

cudaError_t cudaDeviceReset(void)
{
    emu_dev_lock lock;
    emu_drain_all();
    for (CUstream_st *s : *streams)
        delete s;
    streams->clear();
    for (CUevent_st *e : *events)
        delete e;
    events->clear();
    emu_mem_reset();
    emu_sticky_clear();
    cudaGetLastError();
    return cudaSuccess;
}

// ---- the API: streams ----

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (stream == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaStreamCreate: stream is NULL");
    emu_dev_lock lock;
    CUstream_st *s = new CUstream_st();
    s->flags = flags;
    s->live = 1;
    streams->insert(s);
    *stream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    emu_dev_lock lock;
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
        return emu_error(cudaErrorInvalidResourceHandle, 0, NULL, NULL, "cudaStreamDestroy: the default stream");
    if (emu_stream_check(stream, "cudaStreamDestroy") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    emu_drain(stream); // its work completes, as on a GPU, before the stream goes
    stream->live = 0;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    emu_dev_lock lock;
    if (emu_stream_check(stream, "cudaStreamSynchronize") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    // the legacy stream's wait takes in every blocking stream's work, as an operation issued on it would
    return result(resolve(stream) == &legacy_stream ? emu_wait_point(stream) : emu_drain(stream));
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return cudaStreamSynchronize(stream); // the device "finishes" while asked: never cudaErrorNotReady
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    emu_dev_lock lock;
    if (emu_stream_check(stream, "cudaStreamWaitEvent") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if (event == NULL || !events->count(event) || !event->live)
        return emu_error(cudaErrorInvalidResourceHandle, 0, NULL, NULL, "cudaStreamWaitEvent: event %p is not live",
                         (void *)event);
    if (event->s != NULL) // an event never recorded is complete: nothing to wait for
        enqueue_wait(resolve(stream), event->s, event->seq);
    return cudaSuccess;
}

// ---- the API: events ----

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct record_op {
    CUevent_st *e;
    uint64_t seq;
} record_op;

static void run_record(void *arg)
{
    record_op *r = (record_op *)arg;
    if (r->e->seq == r->seq) // a later record replaced this one
        r->e->t_ms = now_ms();
}

static void free_record(void *arg)
{
    delete (record_op *)arg;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (event == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaEventCreate: event is NULL");
    emu_dev_lock lock;
    CUevent_st *e = new CUevent_st();
    e->flags = flags;
    e->live = 1;
    events->insert(e);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

static cudaError_t event_check(cudaEvent_t e, const char *call)
{
    if (e != NULL && events->count(e) && e->live)
        return cudaSuccess;
    return emu_error(cudaErrorInvalidResourceHandle, 0, NULL, NULL, "%s: event %p was destroyed or never created", call,
                     (void *)e);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    emu_dev_lock lock;
    if (event_check(event, "cudaEventDestroy") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    event->live = 0;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    emu_dev_lock lock;
    if (event_check(event, "cudaEventRecord") != cudaSuccess ||
        emu_stream_check(stream, "cudaEventRecord") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    cudaError_t e = emu_sticky();
    if (e != cudaSuccess)
        return result(e);
    record_op *r = new record_op{event, next_seq}; // the number emu_enqueue gives it
    event->s = resolve(stream);
    event->seq = next_seq;
    return emu_enqueue(stream, run_record, free_record, r);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    emu_dev_lock lock;
    if (event_check(event, "cudaEventSynchronize") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if (event->s != NULL)
        drain_upto(event->s, event->seq);
    return result(emu_sticky());
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return cudaEventSynchronize(event); // as cudaStreamQuery: done once asked
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    emu_dev_lock lock;
    if (ms == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaEventElapsedTime: ms is NULL");
    if (event_check(start, "cudaEventElapsedTime") != cudaSuccess ||
        event_check(end, "cudaEventElapsedTime") != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if ((start->flags | end->flags) & cudaEventDisableTiming || start->s == NULL || end->s == NULL)
        return emu_error(cudaErrorInvalidResourceHandle, 0, NULL, NULL,
                         "cudaEventElapsedTime: an event made with cudaEventDisableTiming, or never recorded");
    if (start->s->done < start->seq || end->s->done < end->seq)
        return emu_error(cudaErrorNotReady, 0, NULL, NULL, "%s", "");
    *ms = (float)(end->t_ms - start->t_ms);
    return cudaSuccess;
}
