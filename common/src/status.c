/* status.c — status names, the thread-local last error, DL_TODO. */
#include "dl/status.h"

#include <stdarg.h> // va_list
#include <stdio.h> // vsnprintf, fprintf
#include <string.h> // strcmp, memcpy

// ---- names ----

static const char *const names[DL_STATUS_COUNT] = {
    "DL_OK",         "DL_ERR_ARG",     "DL_ERR_IO",        "DL_ERR_FORMAT",  "DL_ERR_NOMEM",
    "DL_ERR_RANGE",  "DL_ERR_NUMERIC", "DL_ERR_NO_DEVICE", "DL_ERR_NO_CUDA", "DL_ERR_CUDA",
    "DL_ERR_CUBLAS", "DL_ERR_NCCL",    "DL_ERR_MPI",       "DL_ERR_TODO",    "DL_ERR_UNSUPPORTED",
};

static const char *const descriptions[DL_STATUS_COUNT] = {
    "ok",
    "bad argument",
    "input/output error",
    "malformed input",
    "out of memory",
    "value out of range",
    "non-finite result",
    "device not available",
    "built without CUDA",
    "CUDA error",
    "cuBLAS error",
    "NCCL error",
    "MPI error",
    "not implemented yet",
    "not supported",
};

const char *dl_status_name(dl_status st)
{
    if ((unsigned)st >= DL_STATUS_COUNT)
        return "DL_ERR_?";
    return names[st];
}

const char *dl_status_str(dl_status st)
{
    if ((unsigned)st >= DL_STATUS_COUNT)
        return "unknown status";
    return descriptions[st];
}

// ---- last error ----

static _Thread_local char last_error[1024];

dl_status dl_error_set(dl_status st, const char *fmt, ...)
{
    // formatted aside first: an argument may be dl_last_error() itself
    // ("checkpoint %s: cannot read: %s", path, dl_last_error())
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    return st;
}

const char *dl_last_error(void)
{
    return last_error;
}

void dl_error_clear(void)
{
    last_error[0] = '\0';
}

int dl_exit_code(dl_status st)
{
    switch (st) {
    case DL_OK:
        return 0;
    case DL_ERR_ARG:
    case DL_ERR_FORMAT:
    case DL_ERR_IO:
    case DL_ERR_RANGE:
    case DL_ERR_NO_DEVICE: // the flag asked for a device this machine or build lacks
    case DL_ERR_NO_CUDA:
        return 2;
    default:
        return 1;
    }
}

// ---- DL_TODO ----

#define MAX_TODOS 64
static const char *todo_seen[MAX_TODOS];
static int todo_n;

int dl_todo_count(void)
{
    return todo_n;
}

dl_status dl_todo_(const char *msg, const char *file, int line)
{
    int seen = 0;
    for (int i = 0; i < todo_n; i++) {
        if (strcmp(todo_seen[i], msg) == 0)
            seen = 1;
    }
    if (!seen) {
        if (todo_n < MAX_TODOS)
            todo_seen[todo_n++] = msg;
        fprintf(stderr, "not implemented yet: %s (%s:%d)\n", msg, file, line);
    }
    return dl_error_set(DL_ERR_TODO, "not implemented yet: %s", msg);
}
