/* pipe_kit.h — lab 07's pipeline kit (pipe_kit.c, which the grader links
 * too): a stage's layers, slots and record, set up and stepped by the
 * driver (pp_run.c), and the schedule's timing from its record. Not a
 * student file.
 *
 * - pp_kit_init(st, c, dev, whole, first, last, m, n): stage st of the
 *   comm's rank holds a copy of whole's layers first .. last − 1 (checked:
 *   0 <= first < last <= L), momentum zeroed, room for m slots of n rows.
 *   DL_ERR_ARG names a bad run of layers; DL_ERR_NOMEM. pp_kit_free frees
 *   it all (a zeroed stage may be freed).
 * - pp_kit_begin(st, X, y): a step's rows (m·n of them, st->dev's) and
 *   labels; gradients zeroed, the record and the loss restarted.
 *   pp_kit_end(st, lr, mu, wd, &loss): checks that every micro-batch went
 *   forward and backward once and every slot was given back (DL_ERR_ARG
 *   naming the first that did not), then dl_mlp_sgd's update of the
 *   stage's layers; *loss: the mean of the micro-batches' losses (the
 *   last stage; NAN elsewhere).
 * - What the stage held: st->kit's peak slots and their bytes (PP_SLOT
 *   bytes: the input and every layer's output for n rows); its record: the
 *   kit calls' order, op k = PP_OP(kind, i) (kind PP_F or PP_B), with wall
 *   times.
 * - pp_kit_diff(st, ref, &diff): the largest |difference| between the
 *   stage's layers and ref's same layers, over every rank (collective).
 * - pp_sim(ops, P, m, tF, tB, start, end, &T): the schedule the stages'
 *   orders make when a forward takes tF and a backward tB and each waits
 *   for its input: ops is P rows of 2m ops (stage s's order), start and end
 *   (P × 2m, or NULL) each op's times, T the last end. A forward of i on s
 *   waits for s − 1's; a backward of i on s for s + 1's and its own
 *   forward. DL_ERR_ARG when the orders cannot all finish (a stage waits
 *   for an op that never comes: the schedule deadlocks, or an op is
 *   missing). The bubble is 1 − m·(tF + tB)/T.
 */
#ifndef LAB07_PIPE_KIT_H
#define LAB07_PIPE_KIT_H

#include "dl/layer.h" // dl_layer_loss
#include "dl/mlp.h" // dl_mlp
#include "pipe.h"

#define PP_MAX_M 64 /* micro-batches a step */
enum { PP_F = 0, PP_B = 1 };
#define PP_OP(kind, i) ((kind)*PP_MAX_M + (i))

struct pp_kit {
    int L; /* the model's layers */
    dl_mlp_layer layer[DL_MLP_MAX_LAYERS]; /* first .. last − 1: the stage's copies (gW, gb: the step's sums) */
    float *vW[DL_MLP_MAX_LAYERS], *vb[DL_MLP_MAX_LAYERS]; /* momentum */
    float *tW, *tb; /* one micro-batch's gradient of a layer, before it is added */
    float *dout, *din, *d[2]; /* the travelling gradients, and backward's scratch */
    float *ones; /* n ones */
    dl_layer_loss xent; /* the last stage's loss, beside its logits */
    const float *X; /* the step's rows (stage 0) */
    const int32_t *y; /* its labels (the last stage) */
    float *slot[PP_MAX_M]; /* taken slots: the input, then each layer's output */
    int state[PP_MAX_M]; /* 0 free, 1 taken, 2 forward done, 3 backward done (then free) */
    int done[PP_MAX_M]; /* 1: backward done this step */
    int held, peak; /* slots held now, at most this step */
    size_t slot_floats;
    int n_ops, ops[2 * PP_MAX_M];
    double t0[2 * PP_MAX_M], t1[2 * PP_MAX_M];
    double loss;
};

dl_status pp_kit_init(pp_stage *st, dl_comm *c, const dl_device *dev, const dl_mlp *whole, int first, int last, int m,
                      size_t n);
void pp_kit_free(pp_stage *st);
dl_status pp_kit_begin(pp_stage *st, const float *X, const int32_t *y);
dl_status pp_kit_end(pp_stage *st, float lr, float mu, float wd, double *loss);
dl_status pp_kit_diff(pp_stage *st, const dl_mlp *ref, double *diff);
dl_status pp_sim(const int *ops, int P, int m, double tF, double tB, double *start, double *end, double *T);

#endif /* LAB07_PIPE_KIT_H */
