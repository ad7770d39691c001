/* dl/project.h — what a run would take on a target machine: a roofline model
 * for the compute and an α–β (latency–bandwidth) model for the ring
 * collectives, fed with what the run actually did.
 *
 * Contract
 * - A profile is a small "key = value" file (in common/perf/) describing
 *   hardware: peak FLOP/s and the achievable share, memory bandwidth, ring
 *   bus bandwidth, per-hop latency, kernel launch cost. dl_profile_load
 *   rejects unknown keys, missing keys and non-positive values with
 *   "file:line: reason" (DL_ERR_FORMAT), or DL_ERR_IO when unreadable.
 * - A workload is one rank's epoch as measured by the counters: FLOPs counted
 *   by dl_gemm, memory bytes of the element-wise passes, kernel launches,
 *   the collectives' calls and bytes counted by dl_comm, the samples this
 *   rank processed and the dataset size, and whether the allreduce
 *   overlapped backward. The slowest rank's workload is the one that counts.
 * - dl_project gives, on `ranks` GPUs of the profile: compute time per epoch
 *   (max(FLOPs / (peak·eff), bytes / (bw·eff)) + launches · cost), comm time
 *   from dl_bw_seconds (dl/bandwidth.h, the kit's one bandwidth formula) with
 *   bus_bw as the busbw and hop_latency per ring step (allreduce: 2(P−1)/P ·
 *   bytes / bus_bw + 2(P−1) · hop_latency per call; broadcast and allgather,
 *   which the workload counts together: allgather's (P−1)/P · bytes / bus_bw +
 *   (P−1) · hop_latency — for a broadcast, whose busbw factor is 1, that is
 *   optimistic by up to P/(P−1); no comm on one GPU),
 *   the epoch time (compute + comm, or max(compute, comm) + one step's comm
 *   when overlapped), the time one GPU needs for the whole dataset (the same
 *   per-sample compute, no comm), and the speedup between the two. It is
 *   deterministic: the same counters give the same numbers anywhere.
 */
#ifndef DL_PROJECT_H
#define DL_PROJECT_H

#include <stddef.h> // size_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_profile {
    char name[64];
    int gpus;
    double fp32_peak, fp16_peak, mem_bw;
    double fp32_efficiency, fp16_efficiency, mem_efficiency;
    double bus_bw, hop_latency, launch_overhead;
    char path[512];
} dl_profile;

typedef struct dl_workload {
    double flops; /* one rank's FLOPs in one epoch (dl_flops) */
    double fp16_share; /* share of those FLOPs done in fp16 (0 for fp32) */
    double mem_bytes; /* element-wise bytes read + written in the epoch */
    double launches; /* kernels launched in the epoch */
    double steps; /* optimizer steps in the epoch */
    double allreduce_calls, allreduce_bytes;
    double bcast_calls, bcast_bytes; /* broadcast + allgather */
    double samples; /* rows this rank processed in the epoch */
    double dataset; /* rows of one epoch of the dataset */
    int overlapped; /* 1: allreduce ran during backward */
} dl_workload;

typedef struct dl_projection {
    int ranks;
    double compute_s, comm_s, epoch_s; /* on `ranks` GPUs */
    double single_s; /* one GPU, the whole dataset */
    double speedup; /* single_s / epoch_s */
} dl_projection;

dl_status dl_profile_load(const char *path, dl_profile *p);
/* DL_HOME/common/perf/4xA10-pcie4.conf */
const char *dl_profile_default(void);
dl_status dl_project(const dl_profile *p, const dl_workload *w, int ranks, dl_projection *out);

#ifdef __cplusplus
}
#endif
#endif /* DL_PROJECT_H */
