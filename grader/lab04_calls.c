/* lab04_calls.c — lab 04's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). Most of lab
 * 04 is judged from the driver's dumps; the in-process items call these on
 * a world of one. */
#define _POSIX_C_SOURCE 200809L
#include "replay.h"
#include "ring.h"

#define T1 "lab04 task 1"
#define T2 "lab04 task 2"
#define T3 "lab04 task 3"
#define T4 "lab04 task 4"
#define T5 "lab04 task 5"

/* The segment arithmetic (task 2): its value is its output (replay.h). */
GR_SEGMENT_FN(ring_segment_offset, T2)
GR_SEGMENT_FN(ring_segment_count, T2)

/* The collectives: what they leave in buf (on dev) is their output. */
#define COLLECTIVE(name, task, params, args)                                             \
    GR_DECLARE(name);                                                                    \
    dl_status GR_FN(name) params                                                         \
    {                                                                                    \
        gr_call c;                                                                       \
        gr_call_begin(&c, #name, task);                                                  \
        dl_status st = DL_OK;                                                            \
        if (gr_call_live(&c))                                                            \
            st = GR_REAL(name) args;                                                     \
        gr_out_dev(&c, dev, buf, buf != NULL && dev != NULL ? n * dl_dtype_size(t) : 0); \
        return gr_call_end(&c, st);                                                      \
    }

COLLECTIVE(ring_naive_allreduce, T1,
           (dl_comm * cm, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch),
           (cm, dev, buf, n, t, scratch))
COLLECTIVE(ring_reduce_scatter, T2,
           (dl_comm * cm, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch),
           (cm, dev, buf, n, t, scratch))
COLLECTIVE(ring_all_gather, T3, (dl_comm * cm, const dl_device *dev, void *buf, size_t n, dl_dtype t),
           (cm, dev, buf, n, t))
COLLECTIVE(ring_allreduce, T4, (dl_comm * cm, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch),
           (cm, dev, buf, n, t, scratch))
COLLECTIVE(ring_allreduce_chunked, T5,
           (dl_comm * cm, const dl_device *dev, void *buf, size_t n, dl_dtype t, size_t chunk, void *scratch),
           (cm, dev, buf, n, t, chunk, scratch))
