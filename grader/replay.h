/* replay.h — the student's calls, recorded where they run and replayed where they are judged.
 *
 * The grader is two programs. The worker (build/<code>/labNN-worker) holds the
 * student's code: it runs one item's test body, calling the student's
 * functions for real, and records what each call returned. The judge
 * (build/grader/labNN) holds no student code: it runs the same test body,
 * and each call to a student function returns what the worker recorded. So
 * every check, every reference and the verdict run in the judge, on the
 * values the student's code computed; nothing the worker says about passing
 * is believed, because it says nothing of the kind.
 *
 * Contract
 * - Every function of a lab's student API has one wrapper in
 *   grader/labNN_calls.c, written with GR_FN(name); the Makefile links both
 *   programs with -Wl,--wrap=name for each, so the test code and the kit's
 *   code call the wrapper. The file is compiled twice: with GR_RECORD (worker:
 *   calls GR_REAL(name), then records its outputs) and without (judge).
 *   Kit functions whose state the tests read may be wrapped the same way.
 * - Only calls from trusted code are recorded: a call the student's code makes
 *   (through kit code) runs straight through.
 * - A wrapper reads:
 *       gr_call c;
 *       gr_call_begin(&c, "logreg_scaler_fit", "lab01 task 1");
 *       dl_status st = DL_OK;
 *       if (gr_call_live(&c))
 *           st = GR_REAL(logreg_scaler_fit)(X, n, d, s);
 *       gr_out(&c, s->mean, d * sizeof *s->mean);   // every output, in order
 *       return gr_call_end(&c, st);
 *   Output sizes must depend only on the arguments and on outputs recorded
 *   before them, so both programs compute the same sizes.
 * - In the judge, a record that is missing fails the running test with what
 *   stopped the worker and where ("your code exited (status 0) inside
 *   logreg_scaler_fit (lab01 task 1) before the check finished"); a record of
 *   another call or size fails it as a divergence. A judge test that ends
 *   with records left over fails too (gr_replay_finish).
 */
#ifndef GRADER_REPLAY_H
#define GRADER_REPLAY_H

#include <stddef.h> // size_t

#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status
#include "sandbox.h" // gr_fate

/* GR_DECLARE(name); before a wrapper; GR_FN(name) names it; GR_REAL(name) is
 * the student's function (in the judge, a name that is never called: the
 * linker binds it to the wrapper itself). */
#define GR_FN(name) __wrap_##name
#ifdef GR_RECORD
#define GR_DECLARE(name) extern __typeof__(name) __real_##name
#define GR_REAL(name) __real_##name
#else
#define GR_DECLARE(name) extern __typeof__(name) name
#define GR_REAL(name) name
#endif

/* The wrapper of a function size_t name(size_t n, int P, int s) whose value
 * is its only output: the segment and shard arithmetic of labs 04 and 06. */
#define GR_SEGMENT_FN(name, task)              \
    GR_DECLARE(name);                          \
    size_t GR_FN(name)(size_t n, int P, int s) \
    {                                          \
        gr_call c;                             \
        gr_call_begin(&c, #name, task);        \
        size_t v = 0;                          \
        if (gr_call_live(&c))                  \
            v = GR_REAL(name)(n, P, s);        \
        gr_out(&c, &v, sizeof v);              \
        gr_call_end(&c, DL_OK);                \
        return v;                              \
    }

typedef struct gr_call {
    const char *name; /* "logreg_scaler_fit" */
    const char *task; /* "lab01 task 1" */
    int mode; /* passthrough, record or replay */
    int seq; /* number of the call in the item */
} gr_call;

void gr_call_begin(gr_call *c, const char *name, const char *task);
/* 1 when the wrapper must call the real function (the worker). */
int gr_call_live(const gr_call *c);
/* An output of bytes at p: recorded after the call, or filled in by the replay. */
void gr_out(gr_call *c, void *p, size_t bytes);
/* The same for device memory (copied through the host). */
void gr_out_dev(gr_call *c, const dl_device *dev, void *p, size_t bytes);
/* An output the student's code allocated: recorded, or allocated (malloc)
 * and filled by the replay; returns the pointer to store. */
void *gr_out_alloc(gr_call *c, void *p, size_t bytes);
/* Records or replays the status and dl_last_error(); returns the status. */
dl_status gr_call_end(gr_call *c, dl_status st);

/* Callbacks from the student's code into the test's: the worker marks each
 * with gr_cb_begin(c, id) and records its arguments with gr_out; the judge's
 * wrapper loops on gr_cb_next (1 and *id set while callbacks remain, 0 when
 * the call's outputs follow), reads the arguments with gr_out, and makes the
 * same callback into its own test code. */
void gr_cb_begin(gr_call *c, int id);
int gr_cb_next(gr_call *c, int *id);
/* The call being recorded (worker), for callback trampolines. */
gr_call *gr_call_current(void);

// ---- the two programs' sides ----

/* Worker: records to fd (3). */
void gr_record_start(int fd);
void gr_record_finish(int passed, const char *msg);
/* Judge: replays the recording at path; fate says how the worker ended. */
void gr_replay_start(const char *path, const gr_fate *fate, const char *item);
/* Judge: fails the test if records are left that the test did not read. */
void gr_replay_finish(void);
int gr_is_worker(void);

#endif /* GRADER_REPLAY_H */
