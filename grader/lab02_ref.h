/* lab02_ref.h — what lab 02's items (lab02.c) compare against and run on, in lab02_ref.c.
 *
 * Contract
 * - The references are the grader's own, in double precision, and call no
 *   student function: the metrics from a confusion matrix, the softmax loss
 *   and gradient, the PSI of a feature.
 * - The fixtures are seeded (the same seed gives the same data) and cannot
 *   fail; the planted trainer hands eval_validation_curve the scores of a
 *   table and counts what it was asked, for the items to judge.
 */
#ifndef GRADER_LAB02_REF_H
#define GRADER_LAB02_REF_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, int64_t, uint64_t

#include "dl/status.h" // dl_status
#include "eval.h" // eval_report

/* counts[c] labels c, shuffled with seed; *n_out = their number; free with free(). */
int32_t *gr_labels_from_counts(const size_t *counts, int C, size_t *n_out, uint64_t seed);

/* 1 when got[] is a valid approximate mode of counts[] for n_draws: floors or
 * floors + 1, summing to n_draws, the +1s on the largest remainders. */
int gr_is_approx_mode(const size_t *counts, int C, size_t n_draws, const size_t *got, char *why, size_t len);

typedef struct ref_report {
    double p[16], r[16], f1[16], acc, macro[3], micro[3], weighted[3];
    int zero;
} ref_report;

/* Per-class and averaged precision, recall and F1 and the accuracy of a (C, C)
 * confusion matrix (rows: true class); zero counts the classes with an empty
 * row or column. */
void gr_reference_report(const int64_t *cm, int C, ref_report *o);

/* Mean softmax cross-entropy + (lambda/2)|W|^2 of (W (C, d), b (C)); its
 * gradient in gW (C, d) and gb (C). */
double gr_ref_softmax(const float *X, const int32_t *y, size_t n, size_t d, int C, const float *W, const float *b,
                      double lambda, double *gW, double *gb);

typedef struct sproblem {
    size_t n, d;
    int C;
    float *X, *W, *b, lambda;
    int32_t *y;
} sproblem;

/* A seeded random softmax problem: X, W ~ N(0, 1) (W scaled by wscale), y uniform. */
sproblem gr_make_sproblem(uint64_t seed, size_t n, size_t d, int C, float lambda, double wscale);

void gr_free_sproblem(sproblem *p);

typedef struct planted {
    int n;
    const double *val, *test; /* macro-F1 per lambda index */
    const double *lambdas;
    int trained, val_scored, test_scored, test_model, released, live;
    int test_before_all_val;
    int models[16];
} planted;

/* An eval_trainer's callbacks (ctx: a planted) whose scores are pl->val and pl->test. */
dl_status gr_planted_train(void *ctx, double lambda, void **model);

dl_status gr_planted_score(void *ctx, void *model, int split, eval_report *r);

void gr_planted_release(void *ctx, void *model);

/* The host waits (dl/device.h's syncs) inside the last softmax_loss_grad_cuda
 * the test made, as the worker counted them (its wrapper, lab02_calls.c). */
extern uint64_t gr_softmax_cuda_waits;

/* PSI of feature j of b against a, bins equal-width over a's range, NaNs skipped. */
double gr_ref_psi(const float *a, size_t na, const float *b, size_t nb, size_t d, size_t j, int bins);

#endif /* GRADER_LAB02_REF_H */
