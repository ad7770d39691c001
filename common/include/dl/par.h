/* dl/par.h — element-wise work spread over the CPU's cores.
 *
 * Contract
 * - dl_par_for(n, grain, fn, ctx) calls fn(ctx, lo, hi) on contiguous pieces
 *   [lo, hi) that together cover [0, n) once each, on up to dl_par_threads()
 *   threads (the caller runs the first piece), and returns when every piece
 *   is done. Pieces hold at least grain elements: n < 2·grain (or one
 *   thread) is one call fn(ctx, 0, n) in the caller, with no other thread
 *   involved. n = 0 calls nothing.
 * - For element-wise work only: fn must write each element from inputs that
 *   do not depend on the partition, so that the result is the same bits
 *   whatever the thread count (a sum across pieces is not element-wise:
 *   write per-element values and add them in order in the caller).
 * - dl_par_threads() is the CPU BLAS's thread count (dl/blas.h; one per core
 *   unless OPENBLAS_NUM_THREADS says otherwise, and dlrun gives each of
 *   several ranks one), at most DL_PAR_MAX. The helper threads start on first
 *   use, wait asleep between calls (no spinning: the BLAS's own threads and
 *   other ranks keep the cores), and start again in a forked child. They
 *   inherit the floating-point mode of the thread that starts them.
 * - Cannot fail: where a helper thread cannot be started, the caller runs
 *   its pieces. Calls from several threads at once are serialized.
 */
#ifndef DL_PAR_H
#define DL_PAR_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

enum { DL_PAR_MAX = 64 };

typedef void (*dl_par_fn)(void *ctx, size_t lo, size_t hi);
void dl_par_for(size_t n, size_t grain, dl_par_fn fn, void *ctx);
int dl_par_threads(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_PAR_H */
