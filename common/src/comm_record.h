/* comm_record.h — dl_comm's recorders, for its files alone: the counters
 * (dl_comm_stats), the transport log (dl_comm_log), the p2p log
 * (dl/p2plog.h) and the timeline (dl/trace.h).
 *
 * Every operation reaches them as one event per phase, from one call in
 * comm.c (comm_record_, in phase()): BEGUN before its transport takes it (the
 * timeline's span opens, the clock starts), STARTED once the transport took
 * it (a call and its bytes counted, its records written), DONE when its wait
 * returned (the seconds counted when it succeeded; the span closed, the p2p
 * log's WAIT written) and FAILED when the transport refused it (the span
 * closed: every span opened is closed, on every path). A recorder added
 * later subscribes here, in comm_record.c's one function, not in comm.c. */
#ifndef DL_COMM_RECORD_H
#define DL_COMM_RECORD_H

#include <stddef.h> // size_t

#include "comm_backend.h" // dl_comm_args
#include "dl/comm.h" // dl_comm_stats, dl_comm_op, dl_comm_rec
#include "record.h" // dl_record

/* What one communicator's recorders keep. */
typedef struct comm_recorders {
    dl_comm_stats stats;
    dl_record log; /* of dl_comm_rec (dl_comm_log_start); limit 0: not logging */
} comm_recorders;

/* One operation as the recorders follow it, from BEGUN to DONE or FAILED. */
typedef struct comm_op_rec {
    dl_comm_op op; /* the counter it is counted under */
    double t0;
    size_t trace; /* its span in the timeline (allreduces), or DL_TRACE_NONE */
    long p2p; /* its START in the p2p log, or -1 */
} comm_op_rec;

typedef enum comm_phase { COMM_BEGUN, COMM_STARTED, COMM_DONE, COMM_FAILED } comm_phase;

/* The event of phase ph of the operation o (a: its arguments, counted under
 * op; read at BEGUN and STARTED) to every recorder of R. st: the wait's
 * status at DONE. */
void comm_record_(comm_recorders *R, comm_phase ph, comm_op_rec *o, dl_comm_op op, const dl_comm_args *a, dl_status st);

#endif /* DL_COMM_RECORD_H */
