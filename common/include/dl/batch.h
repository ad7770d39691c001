/* dl/batch.h — rows of a host dataset staged where the model reads them: the
 * training batch gathered by index, or a range of rows (a test set).
 *
 * Contract
 * - A dl_batch has room for cap rows of d features on dev: host staging
 *   buffers, and on CUDA device buffers of the same size, all allocated by
 *   dl_batch_create. After a successful gather or range, b->X (n, d) and
 *   b->y (n,) are pointers of dev (host pointers on the CPU device) to pass
 *   to dl_mlp_forward / dl_mlp_loss, and b->n = n. They stay valid until
 *   the next call on b.
 * - dl_batch_gather copies rows idx[0..n) of src, in that order, into the
 *   host staging and, on CUDA, onto the device with a copy on the device's
 *   compute stream, so the model's kernels queued after it see it; the copy
 *   has read the staging when the call returns (dl_memcpy_h2d), so the next
 *   call may refill it.
 * - dl_batch_range stages rows first..first+n-1 of src without gathering: on
 *   the CPU b->X and b->y then point into src itself (no copy; valid while
 *   src is unchanged), on CUDA they are copied to the device buffers.
 * - Failure: DL_ERR_ARG for n = 0, n > cap, src->d != d, or a range past
 *   the end of src; DL_ERR_RANGE for an index >= src->n (named with its
 *   position); the device's status when a copy fails. On any failure
 *   b->n = 0 and b->X, b->y are NULL: nothing half-staged looks ready.
 * - dl_batch_create fails with DL_ERR_ARG (cap or d of 0, no device) or
 *   DL_ERR_NOMEM / the device's status, leaving *b zeroed; dl_batch_free
 *   releases everything and zeroes *b (a zeroed batch may be freed).
 */
#ifndef DL_BATCH_H
#define DL_BATCH_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t

#include "dl/data.h" // dl_dataset
#include "dl/device.h" // dl_device
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_batch {
    const dl_device *dev;
    size_t cap, d; /* room: cap rows of d features */
    size_t n; /* rows staged by the last call (0: none) */
    const float *X; /* (n, d) on dev: what the model reads */
    const int32_t *y; /* (n,) on dev */
    float *hX; /* (cap, d) host staging */
    int32_t *hy; /* (cap,) host staging */
    float *dX; /* (cap, d) device copy; NULL on the CPU */
    int32_t *dy; /* (cap,) device copy; NULL on the CPU */
} dl_batch;

dl_status dl_batch_create(dl_batch *b, const dl_device *dev, size_t cap, size_t d);
void dl_batch_free(dl_batch *b);
/* Stages rows idx[0..n) of src (see the contract). */
dl_status dl_batch_gather(dl_batch *b, const dl_dataset *src, const size_t *idx, size_t n);
/* Stages rows first..first+n-1 of src (see the contract). */
dl_status dl_batch_range(dl_batch *b, const dl_dataset *src, size_t first, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DL_BATCH_H */
