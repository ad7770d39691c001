/* dl/split.h — the kit's seeded, stratified train/val/test split.
 *
 * Contract
 * - dl_split_stratified assigns every row to one of n_parts parts with the
 *   given fractions (summing to 1 within 1e-9). For each class separately the
 *   part sizes are the floors of count·fraction with the remainder handed out
 *   by largest fractional part (ties to the earlier part); rows of a class are
 *   permuted with the seeded RNG before being dealt out. The result is
 *   disjoint and complete, and the same (labels, fractions, seed) always gives
 *   the same split.
 * - Lab 02 asks the student to write the full scikit-learn version (with
 *   random tie-breaking and k-fold); this one exists so earlier labs can split
 *   honestly from the first day.
 * - Fails with DL_ERR_ARG on fractions out of [0, 1] or not summing to 1, and
 *   leaves *out zeroed.
 * - dl_split_hold_out(src, fraction, seed, held, rest) splits a dataset in
 *   two with dl_split_stratified({fraction, 1 − fraction}, seed): the rows
 *   of part 0 become the new dataset *held, those of part 1 *rest, each in
 *   the split's order, names copied. src is unchanged. Fails as
 *   dl_split_stratified does, with DL_ERR_ARG when either part would be
 *   empty, or DL_ERR_NOMEM; then both outputs are zeroed.
 */
#ifndef DL_SPLIT_H
#define DL_SPLIT_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, uint64_t

#include "dl/data.h" // dl_dataset
#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

#define DL_SPLIT_MAX_PARTS 8

typedef struct dl_split {
    int n_parts;
    size_t *idx; /* all n row indices, part by part */
    size_t offset[DL_SPLIT_MAX_PARTS + 1]; /* part p is idx[offset[p] .. offset[p+1]) */
} dl_split;

dl_status dl_split_stratified(const int32_t *y, size_t n, int n_classes, const double *fractions, int n_parts,
                              uint64_t seed, dl_split *out);
void dl_split_free(dl_split *s);
dl_status dl_split_hold_out(const dl_dataset *src, double fraction, uint64_t seed, dl_dataset *held, dl_dataset *rest);
static inline size_t dl_split_size(const dl_split *s, int part)
{
    return s->offset[part + 1] - s->offset[part];
}

#ifdef __cplusplus
}
#endif
#endif /* DL_SPLIT_H */
