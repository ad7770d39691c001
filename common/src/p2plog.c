/* p2plog.c — dl/p2plog.h: the record of started operations, their ends and
 * the additions between them. */
#include "dl/p2plog.h"

#include "record.h" // dl_record, dl_record_push_

static struct {
    int on;
    dl_record rec; /* of dl_p2p_ev */
    long starts; /* STARTs since dl_p2plog_start, dropped ones included */
} L;

void dl_p2plog_start(size_t cap)
{
    L.rec.n = 0;
    L.rec.dropped = 0;
    L.rec.limit = cap > 0 ? cap : (size_t)1 << 16;
    L.starts = 0;
    L.on = 1;
}

void dl_p2plog_stop(void)
{
    L.on = 0;
}

const dl_p2p_ev *dl_p2plog_events(size_t *n, size_t *dropped)
{
    *n = L.rec.n;
    if (dropped != NULL)
        *dropped = L.rec.dropped;
    return L.rec.items;
}

const char *dl_p2plog_kind_name(int kind)
{
    static const char *const names[] = {"start", "wait", "add"};
    return kind >= 0 && kind <= DL_P2P_ADD ? names[kind] : "?";
}

/* Appends e, or counts it as dropped. */
static void push(dl_p2p_ev e)
{
    dl_p2p_ev *slot = dl_record_push_(&L.rec, sizeof e, 256);
    if (slot != NULL)
        *slot = e;
}

long dl_p2plog_op_(int op, const void *send, size_t send_bytes, const void *recv, size_t recv_bytes)
{
    if (!L.on)
        return -1;
    long id = L.starts++;
    push((dl_p2p_ev){DL_P2P_START, op, id, send, send_bytes, recv, recv_bytes});
    return id;
}

void dl_p2plog_wait_(long id)
{
    if (L.on && id >= 0)
        push((dl_p2p_ev){DL_P2P_WAIT, -1, id, NULL, 0, NULL, 0});
}

void dl_p2plog_add_(const void *dst, const void *src, size_t bytes)
{
    if (L.on)
        push((dl_p2p_ev){DL_P2P_ADD, -1, -1, dst, bytes, src, bytes});
}
