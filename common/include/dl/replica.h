/* dl/replica.h — do the ranks hold the same copy? The largest difference
 * between every rank's copy of an array (or of a model's parameters) and
 * rank 0's.
 *
 * Contract
 * - Collective: every rank calls it, in the same order, with the same n.
 * - dl_replica_diff(c, x, n, &diff): x is this rank's n floats on the host.
 *   Rank 0's copy is broadcast and each rank takes max_k |x[k] − x0[k]| in
 *   double; *diff is the maximum over the ranks, the same on every rank.
 *   Two NaNs at the same place count as equal, a NaN against a number as
 *   +inf. So *diff = 0 exactly when every rank holds rank 0's values: data
 *   parallelism done right keeps the copies bitwise equal, and anything
 *   else (a missing broadcast, unsynchronised gradients, shard-local
 *   statistics) shows up as a positive number.
 * - dl_replica_mlp_diff does the same for m's parameters, wherever they
 *   live (they are copied to the host; the check's traffic goes over the
 *   host transport).
 * - A world of one gives 0 without communicating. n = 0 gives 0.
 * - Failure: DL_ERR_NOMEM, or the status of the failed copy or collective;
 *   *diff is then NAN.
 */
#ifndef DL_REPLICA_H
#define DL_REPLICA_H

#include <stddef.h> // size_t

#include "dl/comm.h" // dl_comm
#include "dl/mlp.h" // dl_mlp
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

dl_status dl_replica_diff(dl_comm *c, const float *x, size_t n, double *diff);
dl_status dl_replica_mlp_diff(dl_comm *c, const dl_mlp *m, double *diff);

#ifdef __cplusplus
}
#endif
#endif /* DL_REPLICA_H */
