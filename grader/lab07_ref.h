/* lab07_ref.h — what lab 07's items compare against (lab07_ref.c): the
 * check block of labs/07-model-parallel/kit.h in double, whole and as rank
 * r of P would hold and compute it. Calls no student function: the split
 * is the grader's own arithmetic. */
#ifndef GRADER_LAB07_REF_H
#define GRADER_LAB07_REF_H

#include <stddef.h> // size_t

#include "grader.h" // GR_TEST_DECLARE

#define G7_I 6 /* TP_CHECK_IN */
#define G7_H 7 /* TP_CHECK_HIDDEN */
#define G7_O 5 /* TP_CHECK_OUT */
#define G7_N 4 /* TP_CHECK_ROWS */

/* The check block and its inputs, in double. */
typedef struct gr7_whole {
    double W1[G7_H * G7_I], b1[G7_H], W2[G7_O * G7_H], b2[G7_O], X[G7_N * G7_I], dY[G7_N * G7_O];
} gr7_whole;

/* What rank r of P holds and computes: its shard, its own part of Y and of
 * dX (the sums over its hidden units only), the whole Y and dX, and its
 * gradients. h0, h: its hidden units. */
typedef struct gr7_rank {
    size_t h0, h;
    double W1[G7_H * G7_I], b1[G7_H], W2[G7_O * G7_H], b2[G7_O];
    double Y[G7_N * G7_O], Y_part[G7_N * G7_O], dX[G7_N * G7_I], dX_part[G7_N * G7_I];
    double gW1[G7_H * G7_I], gb1[G7_H], gW2[G7_O * G7_H], gb2[G7_O];
} gr7_rank;

/* The block of seed (tp_check_inputs, on the CPU); fails the test if it cannot be made. */
void gr7_whole_of(unsigned long long seed, gr7_whole *w);
/* Rank r of P's part of w. */
void gr7_rank_of(const gr7_whole *w, int P, int r, gr7_rank *o);

/* Element i of part what (0 W1, 1 b1, 2 W2, 3 b2) of rank r of P's shard of the block first -> second (tp.h's
 * layout): the grader's own split, for the shards a training run dumps. */
struct dl_mlp_layer;
double gr7_shard_at(const struct dl_mlp_layer *first, const struct dl_mlp_layer *second, int P, int r, int what,
                    size_t i);

/* Part 2: stage s of P's layers of L, first .. last − 1 (the first L mod P one longer). */
void gr7_layers(int L, int P, int s, int *first, int *last);
/* Part 3: the planner's closed forms (planner.h), the grader's own, into l (its d, t, p and zero set; checked by
 * the caller); gr7_plan_best: every layout in planner.h's order into out (room for max), *n, and the fastest that
 * fits (-1: none). */
struct plan_model;
struct plan_machine;
struct plan_layout;
void gr7_plan_memory(const struct plan_model *md, const struct plan_machine *mc, struct plan_layout *l);
void gr7_plan_time(const struct plan_model *md, const struct plan_machine *mc, struct plan_layout *l);
void gr7_plan_best(const struct plan_model *md, const struct plan_machine *mc, struct plan_layout *out, int max, int *n,
                   int *best);

/* The pipeline items (lab07_pp.c), for lab07.c's table. */
GR_TEST_DECLARE(test_pp_layers);
GR_TEST_DECLARE(test_pp_gpipe);
GR_TEST_DECLARE(test_pp_1f1b);
GR_TEST_DECLARE(test_pp_deadlock);
GR_TEST_DECLARE(test_pp_gpu4);
/* The planner's items (lab07_plan.c). */
GR_TEST_DECLARE(test_plan_memory);
GR_TEST_DECLARE(test_plan_time);
GR_TEST_DECLARE(test_plan_best);

#endif /* GRADER_LAB07_REF_H */
