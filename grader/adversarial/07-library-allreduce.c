// attack: the row-parallel layer's partial sums added by the library's allreduce, not the ring (refused at build: the ranks talk only through dl_ring_allreduce; were it built, tp_traffic would count none of the ring's messages)
// lab: 07
// base: reference
// file: tp.c
// override: tp_forward
// lose: all
// status: references-outside-api
// expect: refused \[references-outside-api\].*dl_comm_allreduce
dl_status tp_forward(tp_block *b, const float *X, size_t n, float *Y)
{
    if (b == NULL || X == NULL || Y == NULL || n == 0 || n > b->max_batch)
        return dl_error_set(DL_ERR_ARG, "tp_forward: need a block, X, Y and 1 <= n <= max_batch");
    DL_TRY(dl_layer_forward(b->dev, &b->col, X, n, DL_LAYER_BIAS | DL_LAYER_RELU, b->act));
    DL_TRY(dl_layer_forward(b->dev, &b->row, b->act, n, 0, Y));
    DL_TRY(dl_comm_allreduce(b->comm, Y, n * b->out, DL_F32, DL_RED_SUM));
    return dl_layer_bias_act(b->dev, Y, b->row.b, n, b->out, 0);
}
