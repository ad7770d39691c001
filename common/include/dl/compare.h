/* dl/compare.h — comparing results with references: |got − ref| ≤ atol + rtol·|ref|.
 *
 * Contract
 * - References are double precision (computed independently by the caller).
 *   Elements whose reference is not finite are masked (skipped, counted in
 *   n_masked). A non-finite result where the reference is finite is always a
 *   mismatch.
 * - dl_allclose_* return 1 when every unmasked element is within tolerance,
 *   else 0, and fill *r (may be NULL) with the worst element (largest
 *   |err| / threshold), its index, got, ref, "% of threshold", and the first
 *   DL_CMP_SHOW mismatches.
 * - dl_cmp_format writes one or more lines describing *r for a failure
 *   message ("grad_w: 2 of 30 elements off; worst [7] got 1.25 want 1.5 ...").
 */
#ifndef DL_COMPARE_H
#define DL_COMPARE_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

#define DL_CMP_SHOW 4

typedef struct dl_cmp {
    size_t n, n_bad, n_masked;
    size_t worst; /* index of the worst element */
    double worst_got, worst_ref;
    double worst_pct; /* 100·|err| / (atol + rtol·|ref|) */
    double atol, rtol;
    size_t show_idx[DL_CMP_SHOW]; /* first mismatches */
    double show_got[DL_CMP_SHOW], show_ref[DL_CMP_SHOW];
    int n_show;
} dl_cmp;

int dl_allclose_f32(const float *got, const double *ref, size_t n, double atol, double rtol, dl_cmp *r);
int dl_allclose_f64(const double *got, const double *ref, size_t n, double atol, double rtol, dl_cmp *r);
void dl_cmp_format(const dl_cmp *r, const char *what, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* DL_COMPARE_H */
