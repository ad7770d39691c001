/* p2plog.c — dl/p2plog.h: the record of started operations, their ends and
 * the additions between them. */
#include "dl/p2plog.h"

#include <stdlib.h> // realloc, free

static struct {
    int on;
    dl_p2p_ev *ev;
    size_t n, cap, limit, dropped;
    long starts; /* STARTs since dl_p2plog_start, dropped ones included */
} L;

void dl_p2plog_start(size_t cap)
{
    L.n = 0;
    L.dropped = 0;
    L.starts = 0;
    L.limit = cap > 0 ? cap : (size_t)1 << 16;
    L.on = 1;
}

void dl_p2plog_stop(void)
{
    L.on = 0;
}

const dl_p2p_ev *dl_p2plog_events(size_t *n, size_t *dropped)
{
    *n = L.n;
    if (dropped != NULL)
        *dropped = L.dropped;
    return L.ev;
}

const char *dl_p2plog_kind_name(int kind)
{
    static const char *const names[] = {"start", "wait", "add"};
    return kind >= 0 && kind <= DL_P2P_ADD ? names[kind] : "?";
}

/* Appends e, or counts it as dropped. */
static void push(dl_p2p_ev e)
{
    if (L.n == L.limit) {
        L.dropped++;
        return;
    }
    if (L.n == L.cap) {
        size_t cap = L.cap ? 2 * L.cap : 256;
        cap = cap < L.limit ? cap : L.limit;
        dl_p2p_ev *ev = realloc(L.ev, cap * sizeof *ev);
        if (ev == NULL) {
            L.dropped++;
            return;
        }
        L.ev = ev;
        L.cap = cap;
    }
    L.ev[L.n++] = e;
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
