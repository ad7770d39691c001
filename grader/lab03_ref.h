/* lab03_ref.h — lab 03's references (lab03_ref.c): the grader's own
 * implementations of the sampler's and the learning rate's contracts. */
#ifndef GR_LAB03_REF_H
#define GR_LAB03_REF_H

#include <stddef.h> // size_t

#include "ddp.h" // ddp_sampler, ddp_lr_config

/* The sampler's rows for s's rank and epoch into out (per of them, *per_out);
 * *dealt: how many positions r, r+P, ... lie before the epoch order's end. */
void gr3_ref_indices(const ddp_sampler *s, size_t *out, size_t *per_out, size_t *dealt);
/* The learning rate at step t of schedule c. */
double gr3_ref_lr(const ddp_lr_config *c, long t);

#endif
