// attack: dX's allreduce skipped, and the traffic it would have sent faked by messages to itself (refused at build: sends and receives are not the lab's to make, only the ring's)
// lab: 07
// base: reference
// file: tp.c
// override: tp_backward
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_comm_sendrecv
dl_status tp_backward(tp_block *b, const float *X, size_t n, const float *dY, float *dX)
{
    if (b == NULL || X == NULL || dY == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_backward: need a block, X, dY and 1 <= n <= max_batch");
    DL_TRY(dl_layer_backward(b->dev, &b->row, b->act, n, dY, b->ones, b->delta));
    DL_TRY(dl_layer_relu_mask(b->dev, b->delta, b->act, n * b->h));
    DL_TRY(dl_layer_backward(b->dev, &b->col, X, n, b->delta, b->ones, dX));
    if (dX == NULL)
        return DL_OK;
    size_t bytes = (size_t)dl_ring_bytes(n * b->in, b->P, b->r, sizeof(float));
    return dl_comm_sendrecv(b->comm, dX, bytes / sizeof(float), b->r, b->scratch, bytes / sizeof(float), b->r, DL_F32);
}
