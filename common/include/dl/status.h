/* dl/status.h — status codes, the last-error message, and DL_TODO.
 *
 * Contract
 * - Every library function that can fail returns a dl_status. DL_OK is 0.
 * - A function that fails also records a one-line, human-readable reason with
 *   dl_error_set(); dl_last_error() returns it (thread-local, overwritten by the
 *   next failure). Messages name the file, line, value or flag at fault and
 *   what was expected, e.g. "data.csv:12:3: not a number: 'abc'".
 * - Library code never exits; only a driver's main() turns a status into an
 *   exit code with dl_exit_code(): 2 for bad input (DL_ERR_ARG, DL_ERR_FORMAT,
 *   DL_ERR_IO, DL_ERR_RANGE, and DL_ERR_NO_DEVICE / DL_ERR_NO_CUDA when a flag
 *   asks for a device that is not there), 1 for anything else.
 * - DL_TODO(msg) is what a skeleton returns where the student has not written
 *   the code yet: it logs "not implemented yet: msg" once per message to
 *   stderr, records the same text as the last error, and returns DL_ERR_TODO.
 */
#ifndef DL_STATUS_H
#define DL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_status {
    DL_OK = 0,
    DL_ERR_ARG, /* a bad argument or option value */
    DL_ERR_IO, /* a file could not be opened, read or written */
    DL_ERR_FORMAT, /* a file was readable but its content is malformed */
    DL_ERR_NOMEM, /* an allocation failed */
    DL_ERR_RANGE, /* a value is out of its allowed range (a label, a size) */
    DL_ERR_NUMERIC, /* a result is not finite where it must be */
    DL_ERR_NO_DEVICE, /* the requested device is not available */
    DL_ERR_NO_CUDA, /* the library was built without CUDA */
    DL_ERR_CUDA, /* a CUDA runtime call or kernel failed */
    DL_ERR_CUBLAS, /* a cuBLAS call failed */
    DL_ERR_NCCL, /* an NCCL call failed */
    DL_ERR_MPI, /* an MPI call failed */
    DL_ERR_TODO, /* not implemented yet (a skeleton's gap) */
    DL_ERR_UNSUPPORTED, /* a valid request this build or device cannot do */
    DL_STATUS_COUNT
} dl_status;

/* Name of a status ("DL_ERR_ARG"). Cannot fail; unknown values give "DL_ERR_?". */
const char *dl_status_name(dl_status st);

/* Short English description of a status ("bad argument"). Cannot fail. */
const char *dl_status_str(dl_status st);

/* Records the reason for the failure being returned (printf-style) and returns
 * st, so a caller can write `return dl_error_set(DL_ERR_ARG, "...", ...);`.
 * dl_last_error() may be one of the arguments (to wrap a callee's reason). */
dl_status dl_error_set(dl_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The last recorded reason on this thread, "" when none. Cannot fail. */
const char *dl_last_error(void);

/* Clears the last recorded reason. */
void dl_error_clear(void);

/* Exit code a driver uses for a failed status: 2 for bad input, else 1. */
int dl_exit_code(dl_status st);

/* Implementation of DL_TODO; use the macro. */
dl_status dl_todo_(const char *msg, const char *file, int line);

/* Number of distinct DL_TODO messages seen by this process. */
int dl_todo_count(void);

#define DL_TODO(msg) dl_todo_((msg), __FILE__, __LINE__)

/* Evaluates a dl_status expression and returns it from the caller on failure. */
#define DL_TRY(expr)                   \
    do {                               \
        dl_status dl_try_st_ = (expr); \
        if (dl_try_st_ != DL_OK)       \
            return dl_try_st_;         \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* DL_STATUS_H */
