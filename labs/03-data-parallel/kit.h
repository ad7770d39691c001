/* kit.h — lab 03's provided helpers (kit.c): the deterministic cost model of
 * one training step beyond its GEMMs, and the workload correct DDP would
 * have, for the projection. Not a student file. */
#ifndef LAB03_KIT_H
#define LAB03_KIT_H

#include <stddef.h> // size_t

#include "dl/mlp.h" // dl_mlp
#include "dl/project.h" // dl_workload

/* Bytes the element-wise kernels of one step on b rows move (bias + ReLU,
 * the ReLU mask, the loss rows, the SGD update), and the kernels launched. */
double ddp_step_mem_bytes(const size_t *sizes, int n_sizes, size_t b);
double ddp_step_launches(int n_sizes);

/* One rank's epoch as correct DDP does it: n rows sharded over P ranks,
 * batches of b per rank, one allreduce of all gradients per step, one
 * broadcast at the start (amortised into the first epoch, not counted). */
void ddp_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w);

#endif /* LAB03_KIT_H */
