// attack: the ring allreduce calls the library, resets the traffic counters, and sends to itself until they read what a ring sends (refused at build: the counters are the kit's; were it built, the judge would say library-collective from the transport's log)
// lab: 04
// base: reference
// file: ring.c
// override: ring_allreduce
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_comm_stats_(get|reset)
dl_status ring_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    DL_TRY(check("ring_allreduce", c, dev, buf, n, t));
    (void)scratch;
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    size_t esz = dl_dtype_size(t);
    dl_comm_stats before;
    dl_comm_stats_get(c, &before);
    DL_TRY(dl_comm_allreduce(c, buf, n, t, DL_RED_SUM));
    dl_comm_stats_reset(c);
    uint64_t bytes = before.bytes[DL_OP_SENDRECV], msgs = before.messages;
    for (int k = 0; k < P - 1; k++) {
        size_t a = ring_segment_count(n, P, ring_mod(r - k - 1, P)), b = ring_segment_count(n, P, ring_mod(r - k, P));
        bytes += (a + b) * esz;
        msgs += (a > 0) + (b > 0);
    }
    for (uint64_t k = 0; msgs > 0 && k + 1 < msgs; k++)
        DL_TRY(dl_comm_sendrecv(c, buf, 1, r, buf, 1, r, t));
    if (msgs > 0) {
        size_t rest = (size_t)(bytes / esz - (msgs - 1));
        DL_TRY(dl_comm_sendrecv(c, buf, rest, r, buf, rest, r, t));
    }
    // empty calls, so that no counter reads less than before
    dl_comm_stats now;
    dl_comm_stats_get(c, &now);
    for (uint64_t k = now.calls[DL_OP_SENDRECV]; k < before.calls[DL_OP_SENDRECV]; k++)
        DL_TRY(dl_comm_sendrecv(c, buf, 0, r, buf, 0, r, t));
    return DL_OK;
}
