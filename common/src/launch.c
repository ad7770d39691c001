/* launch.c — the launcher that started this process (dl/launch.h): the one
 * list of its variables, read from the environment. */
#define _POSIX_C_SOURCE 200809L
#include "dl/launch.h"

#include <stddef.h> // size_t, NULL
#include <stdlib.h> // getenv, strtol

// ---- the launcher ----

/* A positive count from the environment variable name, else 0. */
static int env_count(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] < '1' || v[0] > '9')
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' && n <= 1 << 24 ? (int)n : 0;
}

int dl_comm_launcher(const char **var, int *mpi)
{
    static const struct {
        const char *name;
        int mpi, size; // an MPI launcher's; the variable holds the size (else: its presence says 1)
    } vars[] = {{"OMPI_COMM_WORLD_SIZE", 1, 1},
                {"PMI_SIZE", 1, 1},
                {"PMIX_SIZE", 1, 1},
                {"PMIX_RANK", 1, 0},
                {"WORLD_SIZE", 0, 1}};
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
        if (getenv(vars[k].name) == NULL)
            continue;
        if (var != NULL)
            *var = vars[k].name;
        if (mpi != NULL)
            *mpi = vars[k].mpi;
        int n = vars[k].size ? env_count(vars[k].name) : 1;
        return n > 0 ? n : 1;
    }
    if (var != NULL)
        *var = NULL;
    if (mpi != NULL)
        *mpi = 0;
    return 0;
}

int dl_comm_slurm_tasks(void)
{
    int mpi = 0;
    if (dl_comm_launcher(NULL, &mpi) > 0 && mpi)
        return 0; // an MPI launcher's world, whatever step its daemons run in
    if ((getenv("SLURM_STEP_ID") == NULL && getenv("SLURM_STEPID") == NULL) || getenv("SLURM_PROCID") == NULL)
        return 0; // not a task of a step: a batch script, salloc's shell, no Slurm
    int n = env_count("SLURM_STEP_NUM_TASKS");
    return n > 0 ? n : env_count("SLURM_NTASKS");
}
