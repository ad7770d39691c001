/* launch.h — the launcher that started this process, read from the
 * environment before MPI starts: the one list of launcher variables the kit
 * reads (dl_comm_launcher) and Slurm's step (dl_comm_slurm_tasks). Read by
 * dl_comm_init, the MPI stub and dl_cli_single_process; it needs no
 * communicator, so a single-process driver asks it without dl/comm.h. The
 * names keep their dl_comm_ prefix: dl/comm.h includes this header, and its
 * callers and the handouts know them by it. Implemented in src/launch.c. */
#ifndef DL_LAUNCH_H
#define DL_LAUNCH_H

#ifdef __cplusplus
extern "C" {
#endif

/* The launcher that started this process as a rank, read from the
 * environment: the number of ranks it announced (at least 1), or 0 when
 * none did. The one list of launcher variables the kit reads, in order:
 *   OMPI_COMM_WORLD_SIZE  Open MPI's mpirun (and dlrun, which runs it)
 *   PMI_SIZE              MPICH's mpiexec, srun --mpi=pmi2
 *   PMIX_SIZE, PMIX_RANK  a PMIx launcher (PMIX_RANK alone: a size of 1)
 *   WORLD_SIZE            torchrun and its kin: not MPI, so the kit's ranks
 *                         cannot find one another (dl_comm_init refuses it)
 * var (may be NULL) gets the variable's name, mpi (may be NULL) whether it
 * is an MPI launcher's. A value that is not a positive number counts 1.
 * dl_comm_init, dl_comm_slurm_tasks and dl_cli_single_process read it. */
int dl_comm_launcher(const char **var, int *mpi);

/* The number of tasks of the Slurm job step this process is one of, when
 * srun started it and no MPI launcher did; 0 otherwise. Read from the
 * environment, before MPI starts (dl_comm_init; dl_cli_single_process).
 * - A step's task: SLURM_STEP_ID (or SLURM_STEPID) and SLURM_PROCID are set;
 *   the count is SLURM_STEP_NUM_TASKS, else SLURM_NTASKS. srun sets all of
 *   them in every task it starts.
 * - A batch script's own process (sbatch) is not: there Slurm sets
 *   SLURM_PROCID=0 and the allocation's SLURM_NTASKS (8 for 2 nodes x 4,
 *   though one process runs) but no SLURM_STEP_ID (the batch step's id is
 *   not exported), so it counts 0; so does salloc's shell.
 * - An MPI launcher's own variables win (dl_comm_launcher: OMPI_COMM_WORLD_SIZE
 *   for mpirun, PMI_SIZE for MPICH's mpiexec or srun --mpi=pmi2): it returns 0. An
 *   mpirun inside an allocation starts its daemons on the other nodes with
 *   srun, so its ranks there inherit a step of one task per node.
 * Cannot fail; a value that is not a positive number counts 0. */
int dl_comm_slurm_tasks(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_LAUNCH_H */
