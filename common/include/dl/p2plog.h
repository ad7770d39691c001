/* dl/p2plog.h — the kit's own record of how a hand-written collective moved
 * and added its data: every dl_comm operation started, every completion,
 * every dl_add, in the order the host issued them, with their buffer ranges.
 * Lab 04's driver records each call of a student's algorithm in its --dump
 * mode and writes the record beside the result; the grader reads it to see
 * that no library collective did the work and that a pipelined ring had a
 * transfer in flight while it added a chunk (grader/lab04.c).
 *
 * Contract
 * - Kit-internal: drivers and the grader read it; a student's code has no
 *   business with it (the grader refuses student objects that reference any
 *   symbol outside the lab's API and the documented kit calls, and these are
 *   not among them). Events are added only from inside the kit's own calls,
 *   so the record says what those calls did, whatever order they were
 *   called in:
 *     DL_P2P_START  dl_comm_sendrecv, _isendrecv, _send, _recv and every
 *                   collective, once the operation has started successfully
 *                   (the moment dl_comm_stats counts it); op is its
 *                   dl_comm_op, send/recv its ranges (a collective's buffer
 *                   as both, a barrier none)
 *     DL_P2P_WAIT   the end of that operation: inside a blocking call, or in
 *                   dl_comm_wait (also when it fails); id names its START
 *     DL_P2P_ADD    dl_add with count > 0, once its checks passed: dst and
 *                   src ranges (on CUDA: queued, in stream order)
 * - One record per process, off by default (each hook costs one branch).
 *   dl_p2plog_start(cap) forgets what was recorded and records at most cap
 *   events (0 = 1 << 16); later ones are counted as dropped. A START's id is
 *   its index among the STARTs since dl_p2plog_start, dropped ones included.
 * - Pointers are recorded as they were passed (host or device addresses);
 *   a reader relates them to the buffers it knows.
 */
#ifndef DL_P2PLOG_H
#define DL_P2PLOG_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_p2p_kind { DL_P2P_START = 0, DL_P2P_WAIT, DL_P2P_ADD } dl_p2p_kind;

typedef struct dl_p2p_ev {
    int kind; /* dl_p2p_kind */
    int op; /* START: the operation's dl_comm_op; else -1 */
    long id; /* START: its number (0, 1, ...); WAIT: the START it ends; ADD: -1 */
    const void *a; /* START: the send buffer; ADD: dst */
    size_t a_bytes;
    const void *b; /* START: the receive buffer; ADD: src */
    size_t b_bytes;
} dl_p2p_ev;

void dl_p2plog_start(size_t cap);
void dl_p2plog_stop(void);
/* The events recorded since dl_p2plog_start, in order; *dropped (may be
 * NULL) those past the cap. Valid until the next dl_p2plog_start. */
const dl_p2p_ev *dl_p2plog_events(size_t *n, size_t *dropped);
/* "start", "wait", "add". */
const char *dl_p2plog_kind_name(int kind);

// ---- the kit's hooks (comm.c, ops.c) ----

/* Records a START; returns its id (-1 when not recording). */
long dl_p2plog_op_(int op, const void *send, size_t send_bytes, const void *recv, size_t recv_bytes);
void dl_p2plog_wait_(long id);
void dl_p2plog_add_(const void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* DL_P2PLOG_H */
