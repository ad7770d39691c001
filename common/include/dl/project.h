/* dl/project.h — what a run would take on a target machine: a roofline model
 * for the compute and an α–β (latency–bandwidth) model for the ring
 * collectives, fed with what the run actually did.
 *
 * Contract
 * - A profile is a small "key = value" file (in common/perf/) describing
 *   hardware: peak FLOP/s and the achievable share, memory bandwidth, ring
 *   bus bandwidth, per-hop latency, kernel launch cost; and, optionally, in
 *   words (the rest of the line), the GPU ("gpu") and how the GPUs are
 *   linked ("interconnect"), and one GPU's memory in bytes ("gpu_mem", 0
 *   when absent: lab 04's measured profiles do not know it), and the links
 *   between nodes of such GPUs ("nic_bw", "nic_latency", 0 when absent: the
 *   profile is one node). dl_profile_load rejects unknown keys, missing
 *   keys and non-positive values with "file:line: reason" (DL_ERR_FORMAT),
 *   or DL_ERR_IO when unreadable.
 * - The shipped profiles are the *.conf files of DL_HOME/common/perf/. One
 *   is chosen by name: its file's name with or without ".conf", its "name"
 *   key, or its short name (that name without the leading "<gpus>x" and
 *   from the first '-' on: "h200" for 4xH200-sxm), in any case. An argument
 *   that contains a '/' or names a regular file is a path and is read as
 *   it is, so "h200" means the shipped profile unless ./h200 exists.
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
 * - That per-sample estimate of one GPU depends on the run it comes from
 *   (launches and optimizer updates per step are spread over that run's
 *   rows), so two runs of the same job would each have their own "one GPU".
 *   dl_project_against measures every run against one baseline instead:
 *   single_s is the projected epoch of `one`, the same job done on one GPU
 *   (all rows, no communication; dl_epoch_ideal_workload with P = 1), and
 *   speedup = single_s / epoch_s. Fails as dl_project does, for either.
 */
#ifndef DL_PROJECT_H
#define DL_PROJECT_H

#include <stddef.h> // size_t
#include <stdio.h> // FILE

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
    double gpu_mem; /* "gpu_mem", one GPU's memory in bytes (optional: 0 when the file has none) */
    /* "nic_bw", "nic_latency" (optional, 0 when the file has none): between nodes of these GPUs, the
     * bandwidth each GPU has to the others (its share of the node's network, bytes/s, one way) and a
     * message's latency (s); within a node the GPUs talk at bus_bw and hop_latency */
    double nic_bw, nic_latency;
    char path[512];
    char gpu[96]; /* "gpu", in words ("" when the file has none) */
    char interconnect[128]; /* "interconnect", in words ("" when none) */
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

/* One optimizer step of bucketed data parallelism, simulated on a profile
 * (lab 05). The kit describes the step by its layers and its buckets:
 * - each layer's forward and backward cost (FLOPs, element-wise bytes,
 *   launches) at the per-rank batch — what the recorded step asked of the
 *   device (dl_span's counters), or a model of it — timed as kernels that
 *   run one after another on one stream: FLOPs / (peak·eff) + bytes /
 *   (bw·eff) + launches · cost (the GEMMs are compute-bound and the
 *   element-wise passes memory-bound, and neither hides the other; on the
 *   fp16 peak for an fp16 layer);
 * - the buckets in launch order, each with its bytes and the layer after
 *   whose backward it was launched (from the recorded order, not from
 *   timing; −1: after the whole backward, as one flat allreduce is).
 * The timeline: accum micro-batches of forward then backward (layer L−1
 * first); on the last one each bucket starts at the later of its layer's
 * end, the previous bucket's start (launched in order) and the end of the
 * previous bucket's allreduce (one communication stream); an allreduce
 * takes dl_bw_seconds(allreduce, ranks, 1, bytes). The optimizer starts
 * when backward and the last allreduce are both done. step_s is its end;
 * exposed_s = step_s − compute_s is the communication nothing hid; on one
 * rank there is none. DL_ERR_ARG for ranks < 1, accum < 1, no layers or more
 * than DL_SIM_MAX_LAYERS, more than DL_SIM_MAX_BUCKETS buckets or a bucket's layer out of range. */
#define DL_SIM_MAX_BUCKETS 256
#define DL_SIM_MAX_LAYERS 64

typedef struct dl_sim_layer {
    double fwd_flops, fwd_bytes, fwd_launches;
    double bwd_flops, bwd_bytes, bwd_launches;
    int fp16; /* 1: its GEMMs run at the fp16 peak */
} dl_sim_layer;

typedef struct dl_sim_bucket {
    double bytes; /* this rank's contribution to the allreduce */
    int after_layer; /* launched when this layer's backward ended; −1: after backward */
} dl_sim_bucket;

typedef struct dl_sim_step {
    double forward_s, backward_s, optim_s; /* of one micro-batch (optim: once) */
    double compute_s; /* accum · (forward + backward) + optimizer */
    double comm_s; /* the allreduces' time, summed */
    double step_s, exposed_s;
    double backward_end_s; /* when the last backward ended */
    double bucket_start_s[DL_SIM_MAX_BUCKETS], bucket_end_s[DL_SIM_MAX_BUCKETS];
} dl_sim_step;

dl_status dl_project_step(const dl_profile *p, int ranks, int accum, const dl_sim_layer *layers, int n_layers,
                          const dl_sim_bucket *buckets, int n_buckets, double optim_bytes, double optim_launches,
                          dl_sim_step *out);

/* Reads the profile `name_or_path` names (see the contract: a shipped
 * profile's name, or a path) into *p, with p->path the file it read. Fails
 * as dl_profile_resolve does, or as the contract says for the file. */
dl_status dl_profile_load(const char *name_or_path, dl_profile *p);
/* DL_HOME/common/perf/4xA10-pcie4.conf */
const char *dl_profile_default(void);
/* Writes into path (len bytes) the file `name_or_path` names: itself when it
 * is a path, else the shipped profile of that name. DL_ERR_ARG for a name
 * no shipped profile has (the message lists the shipped profiles' short
 * names and says that a path works too) or a path longer than len;
 * DL_ERR_IO when DL_HOME/common/perf cannot be read. */
dl_status dl_profile_resolve(const char *name_or_path, char *path, size_t len);
/* The shipped profiles' files (DL_HOME/common/perf/NAME.conf), sorted by
 * name: up to max paths into paths, their number into *n. DL_ERR_IO when the
 * folder cannot be read. */
dl_status dl_profile_shipped(char (*paths)[256], int max, int *n);
/* Prints to out one line per shipped profile (short name, name, GPUs, fp32
 * and fp16 peaks, memory and bus bandwidth, GPU and interconnect in words;
 * the default marked), then how to choose one. DL_ERR_IO when the folder
 * cannot be read; fails as dl_profile_load does for a broken profile. */
dl_status dl_profile_list(FILE *out);
/* For a driver's --profile after dl_cli_parse said DL_CLI_RUN: when value
 * is "list", prints dl_profile_list to stdout and returns DL_CLI_HELP (the
 * driver exits 0), or DL_CLI_ERROR after "prog: error: <why>" on stderr;
 * for any other value (NULL too) returns DL_CLI_RUN (dl/cli.h). */
int dl_profile_cli(const char *prog, const char *value);
dl_status dl_project(const dl_profile *p, const dl_workload *w, int ranks, dl_projection *out);
dl_status dl_project_against(const dl_profile *p, const dl_workload *w, int ranks, const dl_workload *one,
                             dl_projection *out);

#ifdef __cplusplus
}
#endif
#endif /* DL_PROJECT_H */
