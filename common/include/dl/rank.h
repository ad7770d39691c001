/* dl/rank.h — what every multi-rank driver does first: one device per rank.
 *
 * Contract
 * - dl_rank_device(c, spec, dev) opens this rank's device and binds c to it
 *   (dl_comm_use_device). spec (parsed: dl_device_parse, a driver's
 *   dl_args.dev) "auto" takes cuda:LOCAL_RANK when the library was built with CUDA and this
 *   machine has at least as many GPUs as ranks on it, else the CPU; "cuda"
 *   takes cuda:LOCAL_RANK (one GPU per rank, as torchrun does), and "emu"
 *   emu:LOCAL_RANK of the emulated CUDA device (EMU=1 builds; DL_EMU_DEVICES
 *   gives it as many ordinals as ranks of a machine); anything else ("cpu",
 *   "cuda:N", "emu:N") is opened as given. LOCAL_RANK is dl_comm_local_rank:
 *   MPI's count of the ranks on this machine, the same under dlrun, mpirun
 *   and srun (no environment variable decides it). So every rank of a
 *   machine must see all of its GPUs: under Slurm, ask for them per node
 *   (--gpus-per-node=4), not per task (--gpus-per-task=1 gives each task
 *   its own CUDA_VISIBLE_DEVICES, where every rank's GPU is cuda:0).
 * - It is collective, and every rank learns a refusal at once: before any
 *   rank opens a device, the ranks exchange what each is about to open
 *   (dl_comm_claim_device) and all of them return the same verdict. So two
 *   ranks on one GPU — `cuda` with more ranks on a machine than it has GPUs
 *   (rank 1 of 2 on one GPU asks for cuda:1), or `cuda:0` on two ranks — are
 *   refused on every rank within a second or two, with DL_ERR_ARG and a
 *   message naming both ranks, the GPU and the host ("ranks 0 and 1 (would)
 *   both use GPU 0 on host H: NCCL needs one GPU per rank: ..."); so are a
 *   GPU a host lacks and a world split between GPUs and the CPU (see
 *   dl_comm_check_claims). Otherwise it returns the status of dl_device_open
 *   or dl_comm_use_device, with its message; that failure is this rank's
 *   alone, and dl_rank_exit stops the others.
 * - dl_rank_exit(c, st, who) is how a multi-rank driver stops on a failed
 *   status, at any point after dl_comm_init (before the first collective
 *   too). In a world of one it prints "who: error: <the last error, or the
 *   status's name>" on stderr; in a world of several it aborts the whole job
 *   with "rank R: fatal: who: <the same>" (dl_comm_abort: the launcher stops
 *   every rank within a second or two, whatever they are waiting in). It never calls dl_comm_finalize in a
 *   world of several: MPI_Finalize waits for every rank, so a failed rank
 *   that finalizes keeps the others waiting until DL_COMM_TIMEOUT. In a world
 *   of one it finalizes c (which may be NULL: a failed dl_comm_init).
 *   Returns the exit code for main (dl_exit_code: 2 for bad input, else 1).
 */
#ifndef DL_RANK_H
#define DL_RANK_H

#include "dl/comm.h" // dl_comm
#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

dl_status dl_rank_device(dl_comm *c, const dl_device_spec *spec, dl_device *dev);
int dl_rank_exit(dl_comm *c, dl_status st, const char *who);

#ifdef __cplusplus
}
#endif
#endif /* DL_RANK_H */
