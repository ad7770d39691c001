/* planner.h — lab 07, part 3: the planner. Given a model and a machine, which
 * layout of data × tensor × pipeline parallelism (× a ZeRO stage, lab 06)
 * fits in memory, and which is fastest? This header is the contract between
 * your code (planner.c), the driver and the grader. Do not change it; the
 * handout (README.md) explains each task.
 *
 * The model: L blocks of the kind part 1 split, w → 4w → w (Megatron's MLP
 * block), trained in the kit's mixed precision (lab 05: fp16 weights,
 * activations and messages; fp32 master weights, momentum and unscaled
 * gradient), on `rows` rows a step in micro-batches of `micro_rows`.
 *
 * The machine: `nodes` nodes of `gpus_per_node` GPUs of profile `gpu`
 * (dl/project.h). Inside a node GPUs talk at gpu->bus_bw with a latency of
 * gpu->hop_latency a step; between nodes at gpu->nic_bw and
 * gpu->nic_latency (a profile without them is one node only).
 *
 * A layout: d × t × p = every GPU, d data-parallel replicas, each model
 * split by tensor parallelism over t GPUs and by pipeline over p stages
 * (p divides L: L/p blocks a stage), ZeRO stage z (0 to 3) over the d
 * replicas. Ranks are placed tensor innermost: a tensor group is t
 * consecutive GPUs, a data group spans t·d, the pipeline all d·t·p. A group
 * talks inside a node when its span fits in one (span <= gpus_per_node),
 * else between nodes (the model takes a group that could fit in a node to
 * lie in one: true when the spans divide gpus_per_node). The model of one
 * layout, every term a closed form:
 *
 * Memory, one GPU (plan_memory), in bytes:
 *   params    what it holds: L/p blocks, of each 1/t of both weight matrices
 *             and of the first bias, and all of the second bias:
 *             (L/p)·((8w² + 4w)/t + w)
 *   state     16 bytes a parameter: fp16 weights 2, fp16 gradient 2, fp32
 *             unscaled gradient 4, fp32 master weights 4, momentum 4. ZeRO
 *             keeps 1/d of some on each replica: stage 1 the master weights
 *             and momentum, stage 2 also both gradients, stage 3 everything.
 *   act       fp16: what a micro-batch keeps on one block until its
 *             backward, its input (b·w), its hidden units (b·4w/t) and its
 *             output (b·w), b = micro_rows, on each of the stage's blocks,
 *             for as many micro-batches as 1F1B holds at once on stage 0:
 *             min(m, p), m = rows/(d·b) (plan_memory computes m for this;
 *             plan_time writes it)
 *   mem       state + act; it fits when mem <= gpu->gpu_mem.
 * Time of one step (plan_time), in seconds:
 *   m         micro-batches a step per pipeline: rows / (d·b)
 *   compute   6 FLOPs per weight per row (forward 2, backward 4), for every
 *             weight (8w² a block) and every row of the step, shared by the
 *             d·t·p GPUs, at gpu->fp16_peak · gpu->fp16_efficiency; bubble
 *             (p − 1)/m, the idle time over the busy time (part 2's
 *             (P − 1)/(m + P − 1) is the idle share of the whole):
 *             compute_s = that time × (1 + bubble)
 *   tp        per micro-batch and block of a stage, two ring allreduces
 *             among t (forward and backward), each of b·w fp16 values:
 *             dl_bw_seconds(DL_BW_ALLREDUCE, t, 2, their bytes together,
 *             the link's latency, its bandwidth)
 *   pp        per micro-batch, one message forward (its activations, b·w
 *             fp16) and one back (their gradient), each bytes / bandwidth +
 *             latency over the pipeline group's link: 2m messages a step,
 *             as the busiest stage sees them (p > 1 only)
 *   dp        once a step, one allreduce among d of the fp16 gradient of
 *             the parameters it holds (params, 2 bytes each; at stages 1 and 2 the
 *             reduce-scatter and all-gather move the same bytes; stage 3
 *             gathers the weights again: 1.5 times them, as lab 06 measured)
 *   step_s    compute_s + tp_s + pp_s + dp_s (nothing overlaps)
 * Every function returns DL_OK or DL_ERR_ARG (naming what) for a layout
 * that is not one: d·t·p not the machine's GPUs, p not dividing L, rows not
 * divisible by d·b, z outside 0..3, a size below 1. A skeleton returns
 * DL_ERR_TODO.
 */
#ifndef LAB07_PLANNER_H
#define LAB07_PLANNER_H

#include "dl/bandwidth.h" // dl_bw_seconds
#include "dl/project.h" // dl_profile
#include "dl/status.h" // dl_status, DL_TODO

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plan_model {
    int layers; /* L blocks */
    double width; /* w */
    double rows; /* a step's rows, every replica together */
    double micro_rows; /* b, a micro-batch's rows */
} plan_model;

typedef struct plan_machine {
    const dl_profile *gpu;
    int gpus_per_node, nodes;
} plan_machine;

typedef struct plan_layout {
    int d, t, p, zero; /* the layout (inputs) */
    double params, state_bytes, act_bytes, mem_bytes; /* plan_memory's */
    int fits; /* plan_memory's: mem_bytes <= the GPU's memory */
    double m, bubble, compute_s, tp_s, pp_s, dp_s, step_s; /* plan_time's */
} plan_layout;

// ---- task 7: memory (planner.c) ----

/* Fills l's params, state_bytes, act_bytes, mem_bytes and fits. */
dl_status plan_memory(const plan_model *model, const plan_machine *mc, plan_layout *l);

// ---- task 8: time (planner.c) ----

/* Fills l's m, bubble, compute_s, tp_s, pp_s, dp_s and step_s. */
dl_status plan_time(const plan_model *model, const plan_machine *mc, plan_layout *l);

// ---- task 9: the plan (planner.c) ----

/* Every layout of the machine — t·p dividing the GPUs, p also L, d the
 * rest, rows divisible by d·b, z = 0..3 — into out (room for max), *n of
 * them, with plan_memory and plan_time filled, in order of t, then p, then
 * z (each rising); *best: the index of the fastest that fits, or −1 when
 * none does. Times within 1e-9 of each other (relative) are equal: of equal
 * times the layout with the least memory a GPU, then the first. DL_ERR_ARG
 * for a model or machine with a size below 1, or more layouts than max (*n:
 * those written). */
dl_status plan_best(const plan_model *model, const plan_machine *mc, plan_layout *out, int max, int *n, int *best);

#ifdef __cplusplus
}
#endif
#endif /* LAB07_PLANNER_H */
