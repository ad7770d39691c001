/* comm_args.h — dl_comm's argument checks, for comm.c alone: each public
 * operation's arguments checked (ranks in range, counts below 2^31, a known
 * dtype and reduction, non-NULL buffers where count > 0) and turned into the
 * one dl_comm_args its transport takes (comm_backend.h). Each returns DL_OK
 * and fills *a, or DL_ERR_ARG with a message naming the call (what) and
 * leaves *a untouched. */
#ifndef DL_COMM_ARGS_H
#define DL_COMM_ARGS_H

#include <stddef.h> // size_t

#include "comm_backend.h" // dl_comm_args
#include "dl/comm.h" // dl_red
#include "dl/dtype.h" // dl_dtype

/* rank of size: the caller's place in the world, which the peers are checked against. */
dl_status dl_comm_broadcast_args_(int size, void *buf, size_t count, dl_dtype t, int root, dl_comm_args *a);
dl_status dl_comm_allreduce_args_(const char *what, void *buf, size_t count, dl_dtype t, dl_red op, dl_comm_args *a);
dl_status dl_comm_allgather_args_(int size, const void *send, void *recv, size_t count, dl_dtype t, dl_comm_args *a);
dl_status dl_comm_sendrecv_args_(int rank, int size, const char *what, const void *send, size_t send_count, int dst,
                                 void *recv, size_t recv_count, int src, dl_dtype t, dl_comm_args *a);
/* One way: the other side of a sendrecv does not exist (count 0), and the
 * peer is another rank (a blocking message to itself could never arrive). */
dl_status dl_comm_one_way_args_(int rank, int size, const char *what, const void *send, size_t send_count, void *recv,
                                size_t recv_count, int peer, dl_dtype t, dl_comm_args *a);

#endif /* DL_COMM_ARGS_H */
