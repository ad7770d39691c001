/* mpi_stub.c — the MPI transport in a build without MPI: a program started on
 * its own is still a world of one (comm.c never opens MPI then), and one
 * started by a launcher (mpirun, or srun: dl_comm_slurm_tasks) as one of
 * several ranks fails with a clear message.
 * The only place MPI's absence is handled. */
#include <stdlib.h> // getenv, atoi

#include "comm_backend.h"

static dl_status no_mpi(void)
{
    return dl_error_set(DL_ERR_UNSUPPORTED, "comm: this build has no MPI (install libopenmpi-dev with `make deps` "
                                            "and rebuild)");
}

/* The first of the launcher's variables that is set, else fallback. */
static int env_int(const char *const names[3], int fallback)
{
    for (int i = 0; i < 3; i++) {
        const char *v = names[i] != NULL ? getenv(names[i]) : NULL;
        if (v != NULL && v[0] != '\0')
            return atoi(v);
    }
    return fallback;
}

dl_status dl_mpi_open_(int *argc, char ***argv, dl_mpi **out, int *rank, int *size, int *local_rank, int *local_size)
{
    (void)argc, (void)argv, (void)rank, (void)size, (void)local_rank, (void)local_size;
    static const char *const size_vars[3] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    *out = NULL;
    return dl_error_set(DL_ERR_UNSUPPORTED,
                        "comm: started as one of %d ranks, but this build has no MPI (install "
                        "libopenmpi-dev with `make deps` and rebuild)",
                        env_int(size_vars, dl_comm_slurm_tasks() > 1 ? dl_comm_slurm_tasks() : 1));
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
