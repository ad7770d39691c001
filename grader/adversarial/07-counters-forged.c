// attack: dX's allreduce skipped, and the traffic it would have sent faked by messages to itself, so that the byte count matches (the judge compares dX itself with its own, on every rank: backward-allreduce-missing, and the items after it)
// lab: 07
// base: reference
// file: tp.c
// override: tp_backward
// lose: tp_backward tp_equivalence tp_traffic
// expect: \[diagnosis: backward-allreduce-missing\]
dl_status tp_backward(tp_block *b, const float *X, size_t n, const float *dY, float *dX)
{
    if (b == NULL || X == NULL || dY == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_backward: need a block, X, dY and 1 <= n <= max_batch");
    DL_TRY(dl_layer_backward(b->dev, &b->row, b->act, n, dY, b->ones, b->delta));
    DL_TRY(dl_layer_relu_mask(b->dev, b->delta, b->act, n * b->h));
    DL_TRY(dl_layer_backward(b->dev, &b->col, X, n, b->delta, b->ones, dX));
    if (dX == NULL)
        return DL_OK;
    size_t left = (size_t)dl_ring_bytes(n * b->in, b->P, b->r, sizeof(float)) / sizeof(float);
    size_t room = dl_ring_offset(n * b->in, b->P, 1); // the scratch holds a segment
    while (left > 0) { // the ring's bytes, to itself, in pieces the scratch holds
        size_t k = left < room ? left : room;
        DL_TRY(dl_comm_sendrecv(b->comm, dX, k, b->r, b->scratch, k, b->r, DL_F32));
        left -= k;
    }
    return DL_OK;
}
