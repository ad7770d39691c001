/* trace_chrome.c — dl/trace_chrome.h: every rank's timeline (dl/trace.h),
 * gathered over dl_comm, as Chrome's trace-event JSON. */
#include "dl/trace_chrome.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, calloc, free

#include "dl/json.h" // dl_json
#include "dl/trace.h" // dl_trace_events, dl_trace_kind_name

#define FIELDS 7 /* doubles per event when ranks exchange them */

static void span(dl_json *j, int rank, const double *e)
{
    int kind = (int)e[0], tid = kind == DL_EV_ALLREDUCE ? 1 : kind == DL_EV_STEP ? 2 : 0;
    char name[64];
    if (kind == DL_EV_BACKWARD)
        snprintf(name, sizeof name, "backward layer %d", (int)e[1]);
    else if (kind == DL_EV_ALLREDUCE)
        snprintf(name, sizeof name, "allreduce %d (%.0f KiB%s)", (int)e[1], e[5] / 1024, e[6] > 0 ? "" : ", blocking");
    else if (kind == DL_EV_STEP)
        snprintf(name, sizeof name, "step %.0f", e[2]);
    else
        snprintf(name, sizeof name, "%s", dl_trace_kind_name(kind));
    double t1 = e[4] < e[3] ? e[3] : e[4];
    dl_json_object(j, NULL);
    dl_json_str(j, "name", name);
    dl_json_str(j, "cat", dl_trace_kind_name(kind));
    dl_json_str(j, "ph", "X");
    dl_json_num(j, "ts", e[3] * 1e6); // microseconds
    dl_json_num(j, "dur", (t1 - e[3]) * 1e6);
    dl_json_int(j, "pid", rank);
    dl_json_int(j, "tid", tid);
    dl_json_object(j, "args");
    dl_json_int(j, "step", (long long)e[2]);
    if (kind == DL_EV_ALLREDUCE)
        dl_json_num(j, "bytes", e[5]);
    dl_json_end_object(j);
    dl_json_end_object(j);
}

static void meta(dl_json *j, const char *what, int pid, int tid, const char *name)
{
    dl_json_object(j, NULL);
    dl_json_str(j, "name", what);
    dl_json_str(j, "ph", "M");
    dl_json_int(j, "pid", pid);
    dl_json_int(j, "tid", tid);
    dl_json_object(j, "args");
    dl_json_str(j, "name", name);
    dl_json_end_object(j);
    dl_json_end_object(j);
}

dl_status dl_trace_write_chrome(dl_comm *c, const char *path)
{
    size_t n;
    const dl_span *ev = dl_trace_events(&n); // waits for the device's times
    int P = dl_comm_size(c), rank = dl_comm_rank(c);
    long long mine = (long long)n, most = 0;
    long long *counts = malloc((size_t)P * sizeof *counts);
    if (counts == NULL)
        return dl_error_set(DL_ERR_NOMEM, "trace: out of memory");
    dl_status st = dl_comm_allgather(c, &mine, counts, 1, DL_I64);
    for (int r = 0; st == DL_OK && r < P; r++)
        most = counts[r] > most ? counts[r] : most;
    size_t stride = (size_t)(most > 0 ? most : 1) * FIELDS;
    double *send = st == DL_OK ? calloc(stride, sizeof *send) : NULL;
    double *all = send != NULL ? malloc(stride * (size_t)P * sizeof *all) : NULL;
    if (st == DL_OK && all == NULL)
        st = dl_error_set(DL_ERR_NOMEM, "trace: out of memory for %lld events of %d ranks", most, P);
    for (size_t k = 0; st == DL_OK && k < n; k++) {
        const dl_span *e = &ev[k];
        double *d = send + k * FIELDS;
        d[0] = e->kind, d[1] = e->id, d[2] = (double)e->step, d[3] = e->t0, d[4] = e->t1, d[5] = e->bytes;
        d[6] = e->async;
    }
    if (st == DL_OK)
        st = dl_comm_allgather(c, send, all, stride, DL_F64);
    if (st == DL_OK && rank == 0) {
        dl_json j;
        st = dl_json_open(&j, path);
        if (st == DL_OK) {
            dl_json_object(&j, NULL);
            dl_json_str(&j, "displayTimeUnit", "ms");
            dl_json_array(&j, "traceEvents");
            for (int r = 0; r < P; r++) {
                char name[32];
                snprintf(name, sizeof name, "rank %d", r);
                meta(&j, "process_name", r, 0, name);
                meta(&j, "thread_name", r, 0, "compute");
                meta(&j, "thread_name", r, 1, "communication");
                meta(&j, "thread_name", r, 2, "steps");
                for (long long k = 0; k < counts[r]; k++)
                    span(&j, r, all + (size_t)r * stride + (size_t)k * FIELDS);
            }
            dl_json_end_array(&j);
            dl_json_end_object(&j);
            st = dl_json_close(&j);
        }
    }
    free(counts);
    free(send);
    free(all);
    return st;
}
