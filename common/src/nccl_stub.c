/* nccl_stub.c — the NCCL transport in a build without NCCL: dl_comm then keeps
 * MPI for every device, and binding a CUDA device to a world of several ranks
 * fails with a clear message. The only place NCCL's absence is handled. */
#include "comm_backend.h"

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

dl_status dl_nccl_open_(dl_nccl **out, const dl_device *dev, int nranks, int rank, const unsigned char id[128],
                        dl_mpi *mpi)
{
    (void)dev, (void)nranks, (void)rank, (void)id, (void)mpi;
    *out = NULL;
    return no_nccl();
}

void dl_nccl_close_(dl_nccl *s, int abort)
{
    (void)s, (void)abort;
}

dl_status dl_nccl_start_(dl_nccl *s, const dl_comm_args *a, void **req)
{
    (void)s, (void)a;
    *req = NULL;
    return no_nccl();
}

dl_stream dl_nccl_stream_(const dl_nccl *s)
{
    (void)s;
    return NULL;
}

dl_status dl_nccl_wait_(dl_nccl *s, void *req, const char *what)
{
    (void)s, (void)req, (void)what;
    return no_nccl();
}
