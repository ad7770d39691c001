/* kit.h — lab 03's provided helpers (kit.c), shared by the driver and the
 * grader: the workload correct DDP would have, and the projection of it
 * over per-rank batch sizes. The cost model of a step is libddplab's
 * (dl_mlp_step_cost), the counting of a real epoch too (dl/epoch.h). Not a
 * student file. */
#ifndef LAB03_KIT_H
#define LAB03_KIT_H

#include <stddef.h> // size_t

#include "dl/metrics.h" // DL_CSV_SCHEMA
#include "dl/project.h" // dl_workload, dl_profile

/* metrics.csv: one row per epoch; the driver writes it, the grader reads it
 * by these names. */
// clang-format off
#define LAB03_METRICS(X)              \
    X(LAB03_EPOCH, "epoch")           \
    X(LAB03_LOSS, "loss")             \
    X(LAB03_VAL_ACC, "val_acc")       \
    X(LAB03_ROWS_MIN, "rows_min")     \
    X(LAB03_ROWS_MAX, "rows_max")     \
    X(LAB03_PARAM_DIFF, "param_diff") \
    X(LAB03_EPOCH_S, "epoch_s")       \
    X(LAB03_COMPUTE_S, "compute_s")   \
    X(LAB03_IMBALANCE, "imbalance")   \
    X(LAB03_LR, "lr")
// clang-format on
DL_CSV_SCHEMA(lab03_metrics, LAB03_METRICS);

/* projection.csv: one row per per-rank batch (ddp_projection_sweep). */
// clang-format off
#define LAB03_PROJECTION(X)              \
    X(LAB03_PR_BATCH, "batch_per_rank")  \
    X(LAB03_PR_SPEEDUP, "speedup")       \
    X(LAB03_PR_COMPUTE_MS, "compute_ms") \
    X(LAB03_PR_COMM_MS, "comm_ms")
// clang-format on
DL_CSV_SCHEMA(lab03_projection, LAB03_PROJECTION);

/* One rank's epoch as correct DDP does it: n rows sharded over P ranks,
 * batches of b per rank, one allreduce of all gradients per step, one
 * broadcast at the start (amortised into the first epoch, not counted).
 * dl_epoch_ideal_workload under lab 03's name (the grader's reference). */
void ddp_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w);

/* projection.csv: correct DDP of n rows projected on prof->gpus GPUs at
 * per-rank batches 256, 512, ... up to ceil(n / gpus), at most max of them;
 * each row holds the batch, the speedup over the same job on one GPU at
 * that batch, and the projected compute and communication in ms. Returns
 * the rows written, or −1 with dl_last_error() set. */
int ddp_projection_sweep(const size_t *sizes, int n_sizes, size_t n, const dl_profile *prof,
                         double (*rows)[LAB03_PROJECTION_NCOLS], int max);

#endif /* LAB03_KIT_H */
