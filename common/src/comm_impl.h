/* comm_impl.h — one communicator's state (struct dl_comm), for the files
 * of dl_comm alone: comm.c routes each operation to its transport,
 * comm_boot.c starts and ends the communicator and binds its device,
 * placement.c agrees every rank's device claim. No caller outside them sees
 * inside. */
#ifndef DL_COMM_IMPL_H
#define DL_COMM_IMPL_H

#include "comm_backend.h" // dl_mpi, dl_nccl
#include "comm_record.h" // comm_recorders
#include "dl/comm.h" // dl_comm
#include "dl/device.h" // dl_device, dl_device_kind

enum { BACKEND_SELF = 0, BACKEND_MPI = 1, BACKEND_NCCL = 2 };

struct dl_comm {
    int rank, size, local_rank, local_size;
    int backend;
    const dl_device *dev;
    dl_mpi *mpi; /* NULL in a world of one without a launcher */
    dl_nccl *nccl; /* set once a CUDA device is bound in a world of several */
    int claimed; /* the last dl_comm_claim_device was agreed by every rank */
    dl_device_kind claim_kind;
    int claim_ordinal;
    comm_recorders rec; /* the counters and the logs (comm_record.h) */
};

/* placement.c: dev is what c's rank claimed last, with a verdict of DL_OK. */
int dl_comm_claimed_(const dl_comm *c, const dl_device *dev);

#endif /* DL_COMM_IMPL_H */
