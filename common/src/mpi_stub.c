/* mpi_stub.c — the MPI transport in a build without MPI: a program started on
 * its own is still a world of one (comm_boot.c never opens MPI then), and one
 * started by a launcher (mpirun, or srun: dl_comm_slurm_tasks) as one of
 * several ranks fails with a clear message.
 * The only place MPI's absence is handled. */
#include "comm_backend.h"
#include "dl/launch.h" // dl_comm_launcher, dl_comm_slurm_tasks

static dl_status no_mpi(void)
{
    return dl_error_set(DL_ERR_UNSUPPORTED, "comm: this build has no MPI (install libopenmpi-dev with `make deps` "
                                            "and rebuild)");
}

dl_status dl_mpi_open_(int *argc, char ***argv, dl_mpi **out, int *rank, int *size, int *local_rank, int *local_size)
{
    (void)argc, (void)argv, (void)rank, (void)size, (void)local_rank, (void)local_size;
    *out = NULL;
    int tasks = dl_comm_slurm_tasks(), announced = dl_comm_launcher(NULL, NULL);
    return dl_error_set(DL_ERR_UNSUPPORTED,
                        "comm: started as one of %d ranks, but this build has no MPI (install "
                        "libopenmpi-dev with `make deps` and rebuild)",
                        tasks > 1       ? tasks
                        : announced > 0 ? announced
                                        : 1);
}

void dl_mpi_close_(dl_mpi *m)
{
    (void)m;
}

dl_status dl_mpi_dup_(dl_mpi *m, dl_mpi **out)
{
    (void)m;
    *out = NULL;
    return no_mpi();
}

void dl_mpi_abort_(dl_mpi *m, int code)
{
    (void)m, (void)code;
}

dl_status dl_mpi_start_(dl_mpi *m, const dl_comm_args *a, void **req)
{
    (void)m, (void)a;
    *req = NULL;
    return no_mpi();
}

dl_status dl_mpi_wait_(dl_mpi *m, void *req, const char *what)
{
    (void)m, (void)req, (void)what;
    return no_mpi();
}
