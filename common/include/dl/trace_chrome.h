/* dl/trace_chrome.h — every rank's timeline (dl/trace.h) in one Chrome /
 * Perfetto trace. Apart from dl/trace.h because it gathers over dl_comm,
 * and dl_comm records its allreduces into the trace: the trace itself
 * depends on no communicator.
 *
 * Contract
 * - dl_trace_write_chrome is collective (every rank of c calls it): rank 0
 *   gathers every rank's events (dl_trace_events) and writes Chrome's
 *   trace-event JSON to path (one process per rank, thread 0 compute,
 *   thread 1 communication and thread 2 steps; it opens in ui.perfetto.dev
 *   and chrome://tracing), through a temporary file renamed at the end.
 *   The other ranks write nothing.
 * - On error returns DL_ERR_NOMEM, DL_ERR_IO or the gather's status; rank
 *   0 leaves no partial file at path.
 */
#ifndef DL_TRACE_CHROME_H
#define DL_TRACE_CHROME_H

#include "dl/comm.h" // dl_comm
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

dl_status dl_trace_write_chrome(dl_comm *c, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* DL_TRACE_CHROME_H */
