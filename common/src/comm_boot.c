/* comm_boot.c — a communicator's life: started under the launcher that
 * started this rank (launch.c's list of its variables; the world MPI sees
 * must be the one the launcher announced), bound to its device (NCCL for a
 * GPU in a world of several: rank 0's id reaches every rank over MPI), ended
 * or aborted. What each operation does is comm.c's. */
#define _POSIX_C_SOURCE 200809L
#include "dl/comm.h"

#include <stdarg.h> // va_list
#include <stdint.h> // int32_t
#include <stdio.h> // fputs, snprintf, vsnprintf
#include <stdlib.h> // calloc, exit, free
#include <string.h> // strcat

#include "comm_backend.h" // dl_comm_args, dl_mpi_*_, dl_nccl_*_
#include "comm_impl.h" // struct dl_comm, dl_comm_claimed_
#include "dl/launch.h" // dl_comm_launcher, dl_comm_slurm_tasks
#include "dl/trace.h" // dl_trace_use_device

dl_status dl_comm_init(int *argc, char ***argv, dl_comm **out)
{
    *out = NULL;
    dl_comm *c = calloc(1, sizeof *c);
    if (c == NULL)
        return dl_error_set(DL_ERR_NOMEM, "comm: out of memory");
    c->size = 1;
    c->local_size = 1;
    c->backend = BACKEND_SELF;
    // before MPI_Init, which may add variables of its own
    const char *var = NULL;
    int announced = dl_comm_launcher(&var, NULL), tasks = dl_comm_slurm_tasks();
    if (announced > 0 || tasks > 1) {
        dl_status st = dl_mpi_open_(argc, argv, &c->mpi, &c->rank, &c->size, &c->local_rank, &c->local_size);
        if (st == DL_OK && tasks <= 1 && announced > 1 && c->size != announced)
            st = dl_error_set(DL_ERR_MPI,
                              "comm: started as one of %d ranks (%s=%d), but MPI sees a world of %d: the ranks "
                              "cannot find one another (each would train alone). Start the kit's programs with "
                              "common/bin/dlrun -n N (or mpirun, or srun)",
                              announced, var, announced, c->size);
        if (st == DL_OK && tasks > 1 && c->size != tasks)
            st = dl_error_set(DL_ERR_MPI,
                              "comm: srun started %d tasks, but MPI sees a world of %d: MPI does not know the "
                              "other tasks (each would train alone). Start MPI programs with srun --mpi=pmix (`srun "
                              "--mpi=list` shows what this cluster has; SLURM_MPI_TYPE sets it), or use "
                              "common/bin/dlrun, which passes it",
                              tasks, c->size);
        if (st != DL_OK) {
            dl_mpi_close_(c->mpi);
            free(c);
            return st;
        }
        c->backend = BACKEND_MPI;
    }
    *out = c;
    return DL_OK;
}

/* An uncounted MPI operation of the bootstrap. */
static dl_status mpi_run(dl_comm *c, const dl_comm_args *a, const char *what)
{
    void *req = NULL;
    DL_TRY(dl_mpi_start_(c->mpi, a, &req));
    return dl_mpi_wait_(c->mpi, req, what);
}

dl_status dl_comm_use_device(dl_comm *c, const dl_device *dev)
{
    if (c->backend != BACKEND_SELF && !dl_comm_claimed_(c, dev))
        DL_TRY(dl_comm_claim_device(c, dev->kind, dev->ordinal));
    if (dev->kind != DL_DEVICE_CUDA || c->backend == BACKEND_SELF) {
        // the CPU keeps MPI; one rank on a GPU needs no NCCL (its collectives are copies)
        c->dev = dev;
        dl_trace_use_device(dev, NULL); // on a GPU, the trace times the compute stream
        return DL_OK;
    }
    if (c->nccl != NULL)
        return dl_error_set(DL_ERR_ARG, "comm: a CUDA device is already bound to this communicator");
    // rank 0 makes the NCCL id and broadcasts it, with its status, so that no
    // rank waits for an id that was never made
    int32_t idw[33] = {0};
    char why[256] = "see rank 0's message";
    if (c->rank == 0 && dl_nccl_unique_id_((unsigned char *)idw) != DL_OK) {
        idw[32] = 1;
        snprintf(why, sizeof why, "%s", dl_last_error());
    }
    dl_comm_args a = {
        .op = DL_OP_BROADCAST, .send = idw, .send_count = 33, .recv = idw, .recv_count = 33, .root = 0, .t = DL_I32};
    DL_TRY(mpi_run(c, &a, "use_device"));
    if (idw[32] != 0)
        return dl_error_set(DL_ERR_NCCL, "comm: rank 0 could not create the NCCL id (%s)", why);
    DL_TRY(dl_nccl_open_(&c->nccl, dev, c->size, c->rank, (const unsigned char *)idw, c->mpi));
    c->dev = dev;
    c->backend = BACKEND_NCCL;
    dl_trace_use_device(dev, dl_nccl_stream_(c->nccl)); // allreduces timed on the comm stream
    return DL_OK;
}

void dl_comm_finalize(dl_comm *c)
{
    if (c == NULL)
        return;
    if (c->dev != NULL && c->dev->kind == DL_DEVICE_CUDA)
        dl_trace_use_device(NULL, NULL); // before the streams it times go
    dl_nccl_close_(c->nccl, 0);
    dl_mpi_close_(c->mpi);
    dl_record_free_(&c->rec.log);
    free(c);
}

void dl_comm_abort(dl_comm *c, int code, const char *fmt, ...)
{
    // one line in one write: when several ranks abort at once their lines
    // must not interleave
    char line[2048];
    int k = snprintf(line, sizeof line, "rank %d: fatal: ", c != NULL ? c->rank : 0);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    fflush(stderr);
    if (c != NULL) {
        dl_nccl_close_(c->nccl, 1);
        dl_mpi_abort_(c->mpi, code);
    }
    exit(code);
}
