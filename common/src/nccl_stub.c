/* nccl_stub.c — the NCCL backend in a build without NCCL: dl_comm then keeps
 * MPI for every device, and binding a CUDA device to a world of several ranks
 * fails with a clear message. The only place NCCL's absence is handled. */
#include "backend.h"

static dl_status no_nccl(void)
{
    return dl_error_set(DL_ERR_UNSUPPORTED, "this build has no NCCL (install the CUDA toolkit with NCCL, "
                                            "rebuild), so ranks cannot share CUDA buffers; use --device cpu");
}

dl_status dl_nccl_unique_id_(unsigned char id[128])
{
    (void)id;
    return no_nccl();
}

dl_status dl_nccl_init_(void **state, const dl_device *dev, int nranks, int rank, const unsigned char id[128])
{
    (void)state, (void)dev, (void)nranks, (void)rank, (void)id;
    return no_nccl();
}

void dl_nccl_destroy_(void *state, int abort)
{
    (void)state, (void)abort;
}

dl_status dl_nccl_allreduce_(void *state, void *buf, size_t count, dl_dtype t, int red, void **req)
{
    (void)state, (void)buf, (void)count, (void)t, (void)red, (void)req;
    return no_nccl();
}

dl_status dl_nccl_wait_(void *state, void *req, double timeout, int rank)
{
    (void)state, (void)req, (void)timeout, (void)rank;
    return no_nccl();
}

dl_status dl_nccl_broadcast_(void *state, void *buf, size_t count, dl_dtype t, int root)
{
    (void)state, (void)buf, (void)count, (void)t, (void)root;
    return no_nccl();
}

dl_status dl_nccl_allgather_(void *state, const void *send, void *recv, size_t count, dl_dtype t)
{
    (void)state, (void)send, (void)recv, (void)count, (void)t;
    return no_nccl();
}

dl_status dl_nccl_sendrecv_(void *state, const void *send, size_t send_count, int dst, void *recv, size_t recv_count,
                            int src, dl_dtype t)
{
    (void)state, (void)send, (void)send_count, (void)dst, (void)recv, (void)recv_count, (void)src, (void)t;
    return no_nccl();
}
