/* dl/eval.h — a model's accuracy on a held-out set, shared out over the
 * ranks.
 *
 * Contract
 * - Collective: every rank calls it, in the same order, with the same set.
 * - The rows are taken in chunks of min(b->cap, m->max_batch) rows, in
 *   order; each chunk is staged through b (dl_batch_range) and predicted by
 *   dl_mlp_predict in one forward pass. dl_eval_accuracy deals chunk k to
 *   rank k mod P and sums the right predictions over the ranks (one
 *   allreduce of a count): it needs every rank to hold the same parameters
 *   (as data parallelism keeps them), and then each row's prediction is
 *   computed exactly as one rank alone computes it, so the accuracy does not
 *   depend on the number of ranks, to the last bit.
 * - dl_eval_accuracy_on(c, root, ...) is for ranks whose models differ (the
 *   naive first attempt): rank root predicts every chunk with its own model
 *   and broadcasts its accuracy; the other ranks predict nothing.
 * - *acc = right / set->n, the same on every rank. b is left holding the
 *   last chunk staged (or nothing); m's activations are overwritten.
 * - Failure: DL_ERR_ARG for an empty set or one whose width is not b's;
 *   DL_ERR_NOMEM; the status of a failed copy, forward or collective. *acc
 *   is then NAN. A rank that fails before the collective leaves the others
 *   waiting in it: the driver must end the job (dl_rank_exit aborts it).
 */
#ifndef DL_EVAL_H
#define DL_EVAL_H

#include "dl/batch.h" // dl_batch
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_dataset
#include "dl/mlp.h" // dl_mlp
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

dl_status dl_eval_accuracy(dl_comm *c, dl_mlp *m, dl_batch *b, const dl_dataset *set, double *acc);
dl_status dl_eval_accuracy_on(dl_comm *c, int root, dl_mlp *m, dl_batch *b, const dl_dataset *set, double *acc);

#ifdef __cplusplus
}
#endif
#endif /* DL_EVAL_H */
