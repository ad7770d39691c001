/* replay.c — recording the student's calls in the worker, replaying them in
 * the judge. See replay.h for the contract.
 *
 * The recording is a sequence of records: one byte of type, a 4-byte length,
 * then the payload.
 *   'C' a call begins: u32 sequence number, then the function's name
 *   'O' one output's bytes
 *   'B' a callback begins: i32 callback id
 *   'R' the call returned: i32 status, then dl_last_error() when not DL_OK
 *   'E' the test body ended in the worker (informational; never believed)
 * The worker writes each call's records with write(2) when the call begins and
 * when it returns, so a worker that dies inside a call leaves a recording
 * that ends exactly there. */
#define _GNU_SOURCE
#include "replay.h"

#include <stdarg.h> // va_list
#include <stdint.h> // uint32_t
#include <stdio.h> // vprintf
#include <stdlib.h> // malloc
#include <string.h> // memcpy
#include <unistd.h> // write

#include "dl/fs.h" // dl_read_file
#include "grader.h" // GR_FAIL, gr_note

enum { M_NONE, M_RECORD, M_REPLAY };
enum { C_PASS, C_RECORD, C_REPLAY };

static int mode = M_NONE;

// ---- worker: recording ----

static int rec_fd = -1;
static int depth;
static int seq;
static gr_call *active;
static char *buf;
static size_t blen, bcap;

static void flush(void);

static void put(char type, const void *p, size_t n)
{
    if (blen + n + 5 > bcap) {
        size_t cap = bcap ? bcap : 1 << 16;
        while (cap < blen + n + 5)
            cap *= 2;
        char *nb = realloc(buf, cap);
        if (nb == NULL)
            return; // out of memory: the recording ends here, the judge will say so
        buf = nb;
        bcap = cap;
    }
    uint32_t len = (uint32_t)n;
    buf[blen] = type;
    memcpy(buf + blen + 1, &len, 4);
    if (n > 0)
        memcpy(buf + blen + 5, p, n);
    blen += n + 5;
    if (blen > ((size_t)1 << 20))
        flush(); // long calls with many callbacks
}

static void flush(void)
{
    size_t off = 0;
    while (rec_fd >= 0 && off < blen) {
        ssize_t k = write(rec_fd, buf + off, blen - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    blen = 0;
}

void gr_record_start(int fd)
{
    mode = M_RECORD;
    rec_fd = fd;
}

void gr_record_finish(int passed, const char *msg)
{
    char m[600];
    snprintf(m, sizeof m, "%c%s", passed ? 'P' : 'F', msg ? msg : "");
    put('E', m, strlen(m));
    flush();
}

int gr_is_worker(void)
{
    return mode == M_RECORD;
}

gr_call *gr_call_current(void)
{
    return active;
}

// ---- judge: replaying ----

static char *data;
static size_t size, pos;
static gr_fate fate;
static int have_fate;
static char item[128];
static const char *last_returned = NULL;

void gr_replay_start(const char *path, const gr_fate *f, const char *name)
{
    mode = M_REPLAY;
    free(data);
    data = NULL;
    size = pos = 0;
    seq = 0;
    last_returned = NULL;
    if (dl_read_file(path, &data, &size) != DL_OK) {
        data = NULL;
        size = 0;
    }
    have_fate = f != NULL;
    if (f != NULL)
        fate = *f;
    snprintf(item, sizeof item, "%s", name ? name : "?");
}

/* The next record's type, length and payload; 0 at the end (or a truncated record). */
static int peek(char *type, uint32_t *len, const char **payload)
{
    if (pos + 5 > size)
        return 0;
    uint32_t n;
    memcpy(&n, data + pos + 1, 4);
    if ((size_t)n > size - pos - 5)
        return 0;
    *type = data[pos];
    *len = n;
    *payload = data + pos + 5;
    return 1;
}

static const char *fate_diag(void)
{
    if (!have_fate)
        return "";
    switch (fate.how) {
    case GR_END_EXIT:
        return GR_DIAG("exited-early");
    case GR_END_WALL:
        return GR_DIAG("wall-time-limit");
    case GR_END_BUDGET:
        return GR_DIAG("over-budget");
    case GR_END_SIGNAL:
        return strstr(fate.text, "CPU time")    ? GR_DIAG("cpu-time-limit")
               : strstr(fate.text, "file size") ? GR_DIAG("file-size-limit")
                                                : GR_DIAG("crashed");
    default:
        return GR_DIAG("did-not-start");
    }
}

static void missing(const gr_call *c, int inside)
{
    const char *what = have_fate ? fate.text : "stopped";
    if (inside)
        GR_FAIL("%syour code %s inside %s (%s) before the check finished", fate_diag(), what, c->name, c->task);
    if (last_returned == NULL)
        GR_FAIL("%syour code %s before %s (%s) was called, before the check finished: code that runs when the "
                "program loads, or a crash in the grader's own set-up",
                fate_diag(), what, c->name, c->task);
    GR_FAIL("%syour code %s after %s returned, before %s (%s) was called: before the check finished", fate_diag(), what,
            last_returned, c->name, c->task);
}

static void diverged(const gr_call *c, const char *what)
{
    GR_FAIL(GR_DIAG("diverged") "the recorded run of your code does not match the check at call %d (%s, %s): %s. "
                                "Your code may have written over the grader's memory",
            c->seq, c->name, c->task, what);
}

/* The next record, which must be of type want (else missing/diverged). */
static const char *expect(const gr_call *c, char want, uint32_t *len)
{
    char type;
    const char *payload;
    if (!peek(&type, len, &payload))
        missing(c, want != 'C');
    if (type != want) {
        char why[160];
        snprintf(why, sizeof why, "expected a '%c' record, found '%c'", want, type);
        diverged(c, why);
    }
    pos += 5 + *len;
    return payload;
}

void gr_replay_finish(void)
{
    char type;
    uint32_t len;
    const char *payload;
    if (mode != M_REPLAY || !peek(&type, &len, &payload) || type == 'E')
        return;
    if (type == 'C' && len > 4)
        GR_FAIL(GR_DIAG("diverged") "your code's run made a call the check did not make (%.*s): the recorded run "
                                    "and the check diverged",
                (int)(len - 4), payload + 4);
    GR_FAIL(GR_DIAG("diverged") "the recording of your code's run has records the check did not read");
}

// ---- the wrapper's side ----

void gr_call_begin(gr_call *c, const char *name, const char *task)
{
    c->name = name;
    c->task = task;
    c->seq = 0;
    if (mode == M_RECORD) {
        if (depth++ > 0) {
            c->mode = C_PASS;
            return;
        }
        c->mode = C_RECORD;
        c->seq = ++seq;
        char m[300];
        uint32_t s = (uint32_t)c->seq;
        memcpy(m, &s, 4);
        size_t n = strlen(name);
        n = n > 250 ? 250 : n;
        memcpy(m + 4, name, n);
        put('C', m, n + 4);
        flush();
        active = c;
        return;
    }
    if (mode == M_NONE)
        GR_FAIL("grader bug: item %s is judged without running your code, but its test calls %s", item, name);
    c->mode = C_REPLAY;
    c->seq = ++seq;
    uint32_t len;
    const char *p = expect(c, 'C', &len);
    uint32_t s = 0;
    if (len >= 4)
        memcpy(&s, p, 4);
    if (len < 4 || s != (uint32_t)c->seq || len - 4 != strlen(name) || memcmp(p + 4, name, len - 4) != 0) {
        char why[400];
        snprintf(why, sizeof why, "the recording has call %u to %.*s", s, (int)(len >= 4 ? len - 4 : 0), p + 4);
        diverged(c, why);
    }
}

int gr_call_live(const gr_call *c)
{
    return c->mode != C_REPLAY;
}

void gr_out(gr_call *c, void *p, size_t bytes)
{
    if (c->mode == C_PASS)
        return;
    if (p == NULL)
        bytes = 0; // an optional output the caller did not ask for (the same on both sides)
    if (c->mode == C_RECORD) {
        put('O', p, bytes);
        return;
    }
    uint32_t len;
    const char *q = expect(c, 'O', &len);
    if ((size_t)len != bytes) {
        char why[160];
        snprintf(why, sizeof why, "an output of %zu bytes was recorded as %u bytes", bytes, len);
        diverged(c, why);
    }
    if (bytes > 0)
        memcpy(p, q, bytes);
}

void gr_out_dev(gr_call *c, const dl_device *dev, void *p, size_t bytes)
{
    if (c->mode == C_PASS || bytes == 0)
        return;
    void *h = malloc(bytes);
    if (h == NULL)
        GR_FAIL("grader: out of memory for %zu bytes", bytes);
    if (c->mode == C_RECORD && dl_memcpy_d2h(dev, h, p, bytes) != DL_OK)
        memset(h, 0xff, bytes); // the student's call broke the device: record NaNs
    gr_out(c, h, bytes);
    if (c->mode == C_REPLAY && dl_memcpy_h2d(dev, p, h, bytes) != DL_OK)
        GR_FAIL("grader: cannot copy %zu bytes to the device: %s", bytes, dl_last_error());
    free(h);
}

void *gr_out_alloc(gr_call *c, void *p, size_t bytes)
{
    if (c->mode != C_REPLAY) {
        gr_out(c, p, bytes);
        return p;
    }
    void *q = malloc(bytes > 0 ? bytes : 1);
    if (q == NULL)
        GR_FAIL("grader: out of memory for %zu bytes", bytes);
    gr_out(c, q, bytes);
    return q;
}

dl_status gr_call_end(gr_call *c, dl_status st)
{
    if (c->mode == C_PASS) {
        depth--;
        return st;
    }
    if (c->mode == C_RECORD) {
        char m[1100];
        int32_t s = (int32_t)st;
        memcpy(m, &s, 4);
        size_t n = 0;
        if (st != DL_OK) {
            const char *e = dl_last_error();
            n = strlen(e);
            n = n > 1000 ? 1000 : n;
            memcpy(m + 4, e, n);
        }
        put('R', m, n + 4);
        flush();
        depth--;
        active = NULL;
        return st;
    }
    uint32_t len;
    const char *p = expect(c, 'R', &len);
    int32_t s = 0;
    if (len >= 4)
        memcpy(&s, p, 4);
    last_returned = c->name;
    if (s == DL_OK)
        return DL_OK;
    return dl_error_set((dl_status)s, "%.*s", (int)(len >= 4 ? len - 4 : 0), p + 4);
}

void gr_cb_begin(gr_call *c, int id)
{
    if (c == NULL || c->mode != C_RECORD)
        return;
    int32_t v = id;
    put('B', &v, 4);
}

int gr_cb_next(gr_call *c, int *id)
{
    char type;
    uint32_t len;
    const char *payload;
    if (!peek(&type, &len, &payload))
        missing(c, 1);
    if (type != 'B')
        return 0;
    int32_t v = -1;
    if (len >= 4)
        memcpy(&v, payload, 4);
    pos += 5 + len;
    *id = v;
    return 1;
}

void gr_note(const char *fmt, ...)
{
    if (mode == M_RECORD)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}
