/* dl/batch.h — rows of a dataset staged where the model reads them: the
 * training batch gathered by index, or a range of rows (a test set); and a
 * dataset made resident on the device once, so that an epoch moves nothing
 * from the host but its order.
 *
 * Contract (staging from the host)
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

/* Contract (rows resident on the device: the GPU data path)
 * - A dl_devset holds rows first..first+n−1 of a host set where a model on
 *   dev reads them. dl_devset_make uploads them once on CUDA (one copy of X,
 *   one of y); on the CPU X and y point into the host set (no copy: the host
 *   set must outlive the devset and stay unchanged), and the device counters
 *   (dl/device.h) still count the upload, as a GPU would do it.
 * - dl_devset_order puts an epoch's row order — n indices into the devset's
 *   rows, checked on the host first — on the device: one upload per epoch.
 * - dl_batch_take(b, s, at, n) stages rows order[at], ..., order[at+n−1] of s
 *   into b, gathered on the device (one launch, nothing from the host, no
 *   wait); the CPU copies the same rows in the same order, so the values are
 *   those dl_batch_gather stages from the same indices, bit for bit.
 * - dl_batch_rows(b, s, first, n) stages rows first..first+n−1 of s as a view
 *   of the devset (no copy, on either device), valid while s lives.
 * - dl_batch_take_idx(b, s, idx, n) stages rows idx[0..n) of s (indices the
 *   host picks per step): the n indices go to the device through b's pinned
 *   staging without a wait (dl_memcpy_h2d_async; the next call waits only if
 *   the device has not run the previous copy yet), then the rows are
 *   gathered there (one launch). The CPU copies the same rows in the same
 *   order: the values dl_batch_gather stages from the same indices.
 * - Failure: DL_ERR_ARG for a range past the devset's end or the order's,
 *   n = 0 or n > b->cap, a devset of another width or device than b;
 *   DL_ERR_RANGE for an index >= s->n (named with its position), the
 *   device's status when a copy or an allocation fails. Nothing half-made
 *   looks ready: a failed make leaves *s zeroed (freeing it is fine), a
 *   failed order leaves the old order (or none), a failed take or rows
 *   leaves b->n = 0, b->X = b->y = NULL.
 */

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
    int32_t *hidx, *didx; /* (cap,) indices: pinned host staging, device copy (dl_batch_take_idx; NULL before) */
    dl_event idx_copied; /* recorded after the last upload of hidx */
} dl_batch;

dl_status dl_batch_create(dl_batch *b, const dl_device *dev, size_t cap, size_t d);
void dl_batch_free(dl_batch *b);
/* Stages rows idx[0..n) of src (see the contract). */
dl_status dl_batch_gather(dl_batch *b, const dl_dataset *src, const size_t *idx, size_t n);
/* Stages rows first..first+n-1 of src (see the contract). */
dl_status dl_batch_range(dl_batch *b, const dl_dataset *src, size_t first, size_t n);

typedef struct dl_devset {
    const dl_device *dev;
    size_t n, d; /* rows and features */
    const float *X; /* (n, d) on dev */
    const int32_t *y; /* (n,) on dev */
    int32_t *order; /* (order_cap,) on dev: the epoch's order, order_n of them set */
    size_t order_n, order_cap;
    int32_t *horder; /* (order_cap,) the host's copy of the order it uploaded */
    float *own_X; /* what dl_devset_make allocated on CUDA (NULL on the CPU) */
    int32_t *own_y;
} dl_devset;

/* Rows first..first+n-1 of src, resident on dev (see the contract). */
dl_status dl_devset_make(dl_devset *s, const dl_device *dev, const dl_dataset *src, size_t first, size_t n);
void dl_devset_free(dl_devset *s);
/* The epoch's order: idx[0..n) are rows of s (see the contract). */
dl_status dl_devset_order(dl_devset *s, const size_t *idx, size_t n);
/* Stages rows order[at..at+n) of s into b, gathered on the device. */
dl_status dl_batch_take(dl_batch *b, const dl_devset *s, size_t at, size_t n);
/* Stages rows first..first+n-1 of s into b as a view. */
dl_status dl_batch_rows(dl_batch *b, const dl_devset *s, size_t first, size_t n);
/* Stages rows idx[0..n) of s into b, gathered on the device (see the contract). */
dl_status dl_batch_take_idx(dl_batch *b, const dl_devset *s, const size_t *idx, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DL_BATCH_H */
