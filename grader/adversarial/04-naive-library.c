// attack: the naive allreduce in f32 lets the library sum, then fakes the naive traffic (n to rank 0, the sum back)
// lab: 04
// base: reference
// file: naive.c
// replace: yes
// paths: grade
// lose: naive
// expect: library-collective
#include "ring.h"

dl_status ring_naive_allreduce(dl_comm *c, const dl_device *dev, void *buf, size_t n, dl_dtype t, void *scratch)
{
    int P = dl_comm_size(c), r = dl_comm_rank(c);
    if (P == 1 || n == 0)
        return DL_OK;
    if (t == DL_F32) {
        DL_TRY(dl_comm_allreduce(c, buf, n, t, DL_RED_SUM));
        if (r != 0) { // the counters see what the naive algorithm sends
            DL_TRY(dl_comm_sendrecv(c, buf, n, 0, buf, 0, 0, t));
            return dl_comm_sendrecv(c, buf, 0, 0, scratch, n, 0, t);
        }
        for (int q = 1; q < P; q++)
            DL_TRY(dl_comm_sendrecv(c, buf, 0, q, scratch, n, q, t));
        for (int q = 1; q < P; q++)
            DL_TRY(dl_comm_sendrecv(c, buf, n, q, buf, 0, q, t));
        return DL_OK;
    }
    // f16: honest, as the reference
    if (r != 0) {
        DL_TRY(dl_comm_sendrecv(c, buf, n, 0, buf, 0, 0, t));
        return dl_comm_sendrecv(c, buf, 0, 0, buf, n, 0, t);
    }
    float *acc = scratch;
    void *recv = (char *)scratch + n * sizeof(float);
    DL_TRY(dl_cast(dev, acc, DL_F32, buf, DL_F16, n));
    for (int q = 1; q < P; q++) {
        DL_TRY(dl_comm_sendrecv(c, buf, 0, q, recv, n, q, t));
        DL_TRY(dl_accumulate(dev, acc, recv, n, t));
    }
    DL_TRY(dl_cast(dev, buf, DL_F16, acc, DL_F32, n));
    for (int q = 1; q < P; q++)
        DL_TRY(dl_comm_sendrecv(c, buf, n, q, buf, 0, q, t));
    return DL_OK;
}
