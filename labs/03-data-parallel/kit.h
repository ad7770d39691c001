/* kit.h — lab 03's provided helpers (kit.c), shared by the driver and the
 * grader: the workload correct DDP would have, and the projection of it
 * over per-rank batch sizes. The cost model of a step is libddplab's
 * (dl_mlp_step_cost), the counting of a real epoch too (dl/epoch.h). Not a
 * student file. */
#ifndef LAB03_KIT_H
#define LAB03_KIT_H

#include <stddef.h> // size_t

#include "dl/project.h" // dl_workload, dl_profile

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
int ddp_projection_sweep(const size_t *sizes, int n_sizes, size_t n, const dl_profile *prof, double (*rows)[4],
                         int max);

#endif /* LAB03_KIT_H */
