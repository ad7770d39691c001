/* comm_record.c — dl_comm's recorders, fed by one event per phase of every
 * operation (comm_record.h). */
#include "comm_record.h"

#include "dl/p2plog.h" // dl_p2plog_op_, dl_p2plog_wait_
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_begin, dl_trace_end, DL_TRACE_NONE

/* The transport log's entry for a (dl_comm_log), when it is on. */
static void log_op(dl_record *log, const dl_comm_args *a, dl_comm_op op, size_t trace)
{
    if (log->limit == 0)
        return; // not logging
    dl_comm_rec *r = dl_record_push_(log, sizeof *r, 1024);
    if (r != NULL)
        *r = (dl_comm_rec){.op = op,
                           .buf = a->send,
                           .count = a->send_count,
                           .t = a->t,
                           .red = a->op == DL_OP_ALLREDUCE ? a->red : DL_RED_SUM,
                           .trace = trace == DL_TRACE_NONE ? -1 : (long)trace};
}

void comm_record_(comm_recorders *R, comm_phase ph, comm_op_rec *o, dl_comm_op op, const dl_comm_args *a, dl_status st)
{
    switch (ph) {
    case COMM_BEGUN: // the clock and the span open before the transport takes it
        o->op = op;
        o->t0 = dl_now();
        o->p2p = -1;
        o->trace = a->op == DL_OP_ALLREDUCE
                       ? dl_trace_begin(DL_EV_ALLREDUCE, 0, (double)(a->send_count * dl_dtype_size(a->t)),
                                        op == DL_OP_ALLREDUCE_ASYNC)
                       : DL_TRACE_NONE;
        break;
    case COMM_STARTED: { // one call, the bytes this rank hands over, a message when it is a non-empty send
        size_t esz = dl_dtype_size(a->t);
        R->stats.calls[op]++;
        R->stats.bytes[op] += a->send_count * esz;
        if (a->op == DL_OP_SENDRECV && a->send_count > 0)
            R->stats.messages++;
        o->p2p = dl_p2plog_op_(op, a->send, a->send_count * esz, a->recv, a->recv_count * esz);
        log_op(&R->log, a, op, o->trace);
        break;
    }
    case COMM_DONE:
        if (st == DL_OK)
            R->stats.seconds[o->op] += dl_now() - o->t0;
        dl_trace_end(o->trace);
        dl_p2plog_wait_(o->p2p);
        break;
    case COMM_FAILED:
        dl_trace_end(o->trace);
        break;
    }
}
