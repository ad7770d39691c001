/* comm_args.c — dl_comm's argument checks, before any transport sees an
 * operation (comm_args.h). */
#include "comm_args.h"

#include "dl/status.h" // dl_error_set

static dl_status check_buffer(const char *what, const void *p, size_t count, dl_dtype t)
{
    if (dl_dtype_size(t) == 0)
        return dl_error_set(DL_ERR_ARG, "comm: %s of unknown dtype %d", what, (int)t);
    if (count > (size_t)0x7fffffff)
        return dl_error_set(DL_ERR_ARG, "comm: %s of %zu elements exceeds 2^31 - 1", what, count);
    if (count > 0 && p == NULL)
        return dl_error_set(DL_ERR_ARG, "comm: %s of %zu elements from a NULL buffer", what, count);
    return DL_OK;
}

static dl_status check_reduction(const char *what, dl_dtype t, dl_red op)
{
    if ((unsigned)op > DL_RED_MIN)
        return dl_error_set(DL_ERR_ARG, "comm: %s with unknown reduction %d", what, (int)op);
    if (op == DL_RED_AVG && (t == DL_I32 || t == DL_I64))
        return dl_error_set(DL_ERR_ARG, "comm: DL_RED_AVG needs a floating dtype, not %s", dl_dtype_name(t));
    return DL_OK;
}

static dl_status check_peers(int rank, int size, const char *what, int dst, int src, size_t send_count,
                             size_t recv_count)
{
    if (dst < 0 || dst >= size || src < 0 || src >= size)
        return dl_error_set(DL_ERR_ARG, "comm: %s to %d from %d, expected ranks 0..%d", what, dst, src, size - 1);
    if ((dst == rank) != (src == rank))
        return dl_error_set(DL_ERR_ARG,
                            "comm: %s to %d from %d on rank %d: a rank that sends to itself receives from "
                            "itself in the same call",
                            what, dst, src, rank);
    if (dst == rank && send_count != recv_count)
        return dl_error_set(DL_ERR_ARG, "comm: %s to itself of %zu elements but %zu expected", what, send_count,
                            recv_count);
    return DL_OK;
}

dl_status dl_comm_broadcast_args_(int size, void *buf, size_t count, dl_dtype t, int root, dl_comm_args *a)
{
    DL_TRY(check_buffer("broadcast", buf, count, t));
    if (root < 0 || root >= size)
        return dl_error_set(DL_ERR_ARG, "comm: broadcast root %d, expected 0..%d", root, size - 1);
    *a = (dl_comm_args){.op = DL_OP_BROADCAST,
                        .send = buf,
                        .send_count = count,
                        .recv = buf,
                        .recv_count = count,
                        .root = root,
                        .t = t};
    return DL_OK;
}

dl_status dl_comm_allreduce_args_(const char *what, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_args *a)
{
    DL_TRY(check_buffer(what, buf, count, t));
    DL_TRY(check_reduction(what, t, op));
    *a = (dl_comm_args){
        .op = DL_OP_ALLREDUCE, .send = buf, .send_count = count, .recv = buf, .recv_count = count, .t = t, .red = op};
    return DL_OK;
}

dl_status dl_comm_allgather_args_(int size, const void *send, void *recv, size_t count, dl_dtype t, dl_comm_args *a)
{
    DL_TRY(check_buffer("allgather", send, count, t));
    DL_TRY(check_buffer("allgather", recv, count, t));
    *a = (dl_comm_args){.op = DL_OP_ALLGATHER,
                        .send = send,
                        .send_count = count,
                        .recv = recv,
                        .recv_count = count * (size_t)size,
                        .t = t};
    return DL_OK;
}

dl_status dl_comm_sendrecv_args_(int rank, int size, const char *what, const void *send, size_t send_count, int dst,
                                 void *recv, size_t recv_count, int src, dl_dtype t, dl_comm_args *a)
{
    DL_TRY(check_buffer(what, send, send_count, t));
    DL_TRY(check_buffer(what, recv, recv_count, t));
    DL_TRY(check_peers(rank, size, what, dst, src, send_count, recv_count));
    *a = (dl_comm_args){.op = DL_OP_SENDRECV,
                        .send = send,
                        .send_count = send_count,
                        .dst = dst,
                        .recv = recv,
                        .recv_count = recv_count,
                        .src = src,
                        .t = t};
    return DL_OK;
}

dl_status dl_comm_one_way_args_(int rank, int size, const char *what, const void *send, size_t send_count, void *recv,
                                size_t recv_count, int peer, dl_dtype t, dl_comm_args *a)
{
    DL_TRY(check_buffer(what, send != NULL ? send : recv, send_count + recv_count, t));
    if (peer < 0 || peer >= size || peer == rank)
        return dl_error_set(DL_ERR_ARG, "comm: %s on rank %d with rank %d: expected another rank of 0..%d", what, rank,
                            peer, size - 1);
    *a = (dl_comm_args){.op = DL_OP_SENDRECV,
                        .send = send,
                        .send_count = send_count,
                        .dst = peer,
                        .recv = recv,
                        .recv_count = recv_count,
                        .src = peer,
                        .one_way = 1,
                        .t = t};
    return DL_OK;
}
