/* pipe.c — lab 07, tasks 4-6: the stages, and one step of the pipeline in
 * two orders (pipe.h has the contract). */
#include "pipe.h"

dl_status pp_layers(int L, int P, int s, int *first, int *last)
{
    if (first == NULL || last == NULL || P < 1 || P > L || s < 0 || s >= P)
        return dl_error_set(DL_ERR_ARG, "pp_layers: stage %d of %d over %d layers: expected 1 <= P <= L, 0 <= s < P", s,
                            P, L);
    /* BEGIN SOLUTION */
    int q = L / P, rem = L % P;
    *first = s * q + (s < rem ? s : rem);
    *last = *first + q + (s < rem);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 4: stage s's run of layers"); */
}

/* BEGIN SOLUTION */
/* Micro-batch i's input: from the stage before (none at stage 0: the data is there). */
static dl_status recv_forward(pp_stage *st, int i)
{
    float *in = pp_in(st, i);
    if (in == NULL)
        return DL_ERR_ARG;
    return st->s > 0 ? dl_comm_recv(st->comm, in, st->n * st->in, st->s - 1, DL_F32) : DL_OK;
}

static dl_status send_forward(pp_stage *st, int i)
{
    return st->s < st->P - 1 ? dl_comm_send(st->comm, pp_out(st, i), st->n * st->out, st->s + 1, DL_F32) : DL_OK;
}

static dl_status recv_backward(pp_stage *st, int i)
{
    return st->s < st->P - 1 ? dl_comm_recv(st->comm, pp_dout(st, i), st->n * st->out, st->s + 1, DL_F32) : DL_OK;
}

static dl_status send_backward(pp_stage *st, int i)
{
    return st->s > 0 ? dl_comm_send(st->comm, pp_din(st, i), st->n * st->in, st->s - 1, DL_F32) : DL_OK;
}

/* Backward of i, from its output's gradient to its input's, sent back; then its slot given back. */
static dl_status backward(pp_stage *st, int i)
{
    DL_TRY(pp_backward(st, i, 1.0f / (float)st->m)); // each micro-batch's loss weighs 1/m of the step's
    pp_release(st, i);
    return send_backward(st, i);
}
/* END SOLUTION */

dl_status pp_gpipe(pp_stage *st)
{
    /* BEGIN SOLUTION */
    for (int i = 0; i < st->m; i++) {
        DL_TRY(recv_forward(st, i));
        DL_TRY(pp_forward(st, i));
        DL_TRY(send_forward(st, i));
    }
    for (int i = 0; i < st->m; i++) {
        DL_TRY(recv_backward(st, i));
        DL_TRY(backward(st, i));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 5: every forward, then every backward"); */
}

dl_status pp_1f1b(pp_stage *st)
{
    /* BEGIN SOLUTION */
    int s = st->s, P = st->P, m = st->m, warm = P - s - 1 < m ? P - s - 1 : m;
    for (int i = 0; i < warm; i++) { // warm-up: the forwards the stages after this one need to start
        DL_TRY(recv_forward(st, i));
        DL_TRY(pp_forward(st, i));
        DL_TRY(send_forward(st, i));
    }
    if (warm < m)
        DL_TRY(recv_forward(st, warm));
    for (int k = 0; k < m - warm; k++) { // steady state: forward i = warm + k, backward k
        int i = warm + k;
        DL_TRY(pp_forward(st, i));
        // i's output goes on while k's gradient comes back: one exchange with the next stage, which is
        // sending k's gradient while it waits for i (two blocking sends would wait for each other)
        if (s < P - 1)
            DL_TRY(dl_comm_sendrecv(st->comm, pp_out(st, i), st->n * st->out, s + 1, pp_dout(st, k), st->n * st->out,
                                    s + 1, DL_F32));
        DL_TRY(pp_backward(st, k, 1.0f / (float)m));
        pp_release(st, k); // before i + 1's slot is taken: never more than P - s at once
        if (k + 1 < m - warm && s > 0) { // k's gradient back while i + 1 arrives: one exchange
            float *next = pp_in(st, i + 1);
            if (next == NULL)
                return DL_ERR_ARG;
            DL_TRY(
                dl_comm_sendrecv(st->comm, pp_din(st, k), st->n * st->in, s - 1, next, st->n * st->in, s - 1, DL_F32));
        } else if (k + 1 < m - warm) { // stage 0: its next input is the data
            if (pp_in(st, i + 1) == NULL)
                return DL_ERR_ARG;
        } else {
            DL_TRY(send_backward(st, k));
        }
    }
    for (int k = m - warm; k < m; k++) { // cool-down: the backwards left
        DL_TRY(recv_backward(st, k));
        DL_TRY(backward(st, k));
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 6: one forward, one backward, at most P - s micro-batches held"); */
}
