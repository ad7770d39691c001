/* dl/eval.h — a model's accuracy on a held-out set, shared out over the
 * ranks.
 *
 * Contract
 * - Collective: every rank calls it, in the same order, with the same set.
 * - The set is resident where the model computes (dl_devset, dl/batch.h):
 *   nothing is copied from the host. Its rows are taken in chunks of `chunk`
 *   rows (0, or more than m->max_batch: m->max_batch), in order; each chunk
 *   is predicted in one forward pass and its right predictions are counted
 *   on the device (dl_mlp_count_right), read once at the end
 *   (dl_mlp_take_right: one wait). dl_eval_accuracy deals chunk k to rank k
 *   mod P and sums the right predictions over the ranks (one allreduce of a
 *   count): it needs every rank to hold the same parameters (as data
 *   parallelism keeps them), and then each row's prediction is computed
 *   exactly as one rank alone computes it, so the accuracy does not depend
 *   on the number of ranks, to the last bit.
 * - dl_eval_accuracy_on(c, root, ...) is for ranks whose models differ (the
 *   naive first attempt): rank root predicts every chunk with its own model
 *   and broadcasts its accuracy; the other ranks predict nothing.
 * - *acc = right / set->n, the same on every rank; m's activations are
 *   overwritten.
 * - Failure: DL_ERR_ARG for an empty set, one whose width is not the
 *   model's inputs or that lives on another kind of device; the status of a
 *   failed forward, read or collective. *acc
 *   is then NAN. A rank that fails before the collective leaves the others
 *   waiting in it: the driver must end the job (dl_rank_exit aborts it).
 */
#ifndef DL_EVAL_H
#define DL_EVAL_H

#include "dl/batch.h" // dl_devset
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_dataset
#include "dl/mlp.h" // dl_mlp
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

dl_status dl_eval_accuracy(dl_comm *c, dl_mlp *m, const dl_devset *set, size_t chunk, double *acc);
dl_status dl_eval_accuracy_on(dl_comm *c, int root, dl_mlp *m, const dl_devset *set, size_t chunk, double *acc);

#ifdef __cplusplus
}
#endif
#endif /* DL_EVAL_H */
