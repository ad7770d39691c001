/* dl/blas.h — row-major GEMM and GEMV on the CPU (cblas) or CUDA (cuBLAS).
 *
 * Contract
 * - All matrices are row-major everywhere. A is (M, K) after op(), B is (K, N)
 *   after op(), C is (M, N); lda/ldb/ldc are row strides in elements and must
 *   be at least the stored row length. op(X) is X or Xᵀ (DL_TRANS).
 * - dl_gemm:  C = alpha·op(A)·op(B) + beta·C.
 *   dl_gemv:  y = alpha·op(A)·x + beta·y with A stored (M, N): op = none gives
 *   y of length M; DL_TRANS gives y of length N.
 * - Pointers are device pointers of dev (host pointers on the CPU). Calls on
 *   CUDA are queued on the device's compute stream.
 * - dl_gemm_ex: A and B are 16-bit floats of ab_type (DL_F16: binary16, or
 *   DL_BF16: bfloat16), the products are accumulated in fp32 (tensor cores:
 *   16-bit in, fp32 accumulate), C is fp32 or ab_type (c_type); beta·C reads
 *   C in c_type. The CPU emulates this: it converts A and B (and a 16-bit C)
 *   exactly to fp32, multiplies with sgemm, and rounds the result once to
 *   c_type when C is 16-bit. Any other ab_type or c_type is DL_ERR_ARG.
 *   dl_gemm_f16 is dl_gemm_ex with ab_type = DL_F16.
 * - Each call adds its FLOPs (2·M·N·K, 2·M·N for gemv) to a per-process
 *   counter read by dl_flops(); the data-parallel labs project speedups from it.
 * - Bad shapes (a stride too small, a size over INT_MAX) give DL_ERR_ARG and
 *   leave C/y untouched. Zero sizes are allowed and do no work.
 */
#ifndef DL_BLAS_H
#define DL_BLAS_H

#include <stddef.h> // size_t
#include <stdint.h> // uint64_t

#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/half.h" // dl_half

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_trans { DL_NO_TRANS = 0, DL_TRANS = 1 } dl_trans;

dl_status dl_gemm(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                  const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc);

dl_status dl_gemv(const dl_device *dev, dl_trans ta, size_t M, size_t N, float alpha, const float *A, size_t lda,
                  const float *x, float beta, float *y);

dl_status dl_gemm_ex(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                     const void *A, size_t lda, const void *B, size_t ldb, dl_dtype ab_type, float beta, void *C,
                     dl_dtype c_type, size_t ldc);

/* dl_gemm_ex(..., A, lda, B, ldb, DL_F16, beta, C, c_type, ldc). */
dl_status dl_gemm_f16(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                      const dl_half *A, size_t lda, const dl_half *B, size_t ldb, float beta, void *C, dl_dtype c_type,
                      size_t ldc);

/* FLOPs counted by dl_gemm/dl_gemv/dl_gemm_ex in this process. */
uint64_t dl_flops(void);
void dl_flops_reset(void);
void dl_flops_add(uint64_t flops);

/* The CPU BLAS as this process opened it (see common/src/blas_cpu.c: OpenBLAS
 * opened on first use with the kernels the CPU's features call for, unless
 * OPENBLAS_CORETYPE names them, and checked against a reference GEMM first).
 * library "OpenBLAS" (or "the kit's loops" where no kernels could be opened or
 * passed the check), its version, the core type whose kernels run ("Haswell",
 * "SkylakeX", ...), who chose them (OpenBLAS's own detection, the kit from
 * the CPU's features, the environment, a fallback), its thread count now, and
 * whether it flushes subnormals (dl/cpu.h: every call does, unless
 * dl_blas_set_flush_subnormals(0) or DL_SUBNORMALS=keep in the environment
 * turned it off: what lab 01's bench and handout use to show what the flush
 * saves). Opens the BLAS when nothing has yet. Cannot fail. */
typedef struct dl_blas_info {
    char library[32];
    char version[32];
    char core[32];
    char chosen_by[160];
    int threads;
    int flushes_subnormals;
} dl_blas_info;
void dl_blas_describe(dl_blas_info *out);
/* on = 1: the BLAS's calls run with subnormals flushed (the default); 0: as
 * IEEE has them. For the whole process, from the next call on. Cannot fail. */
void dl_blas_set_flush_subnormals(int on);

/* "OpenBLAS 0.3.21, SkylakeX kernels" for reports. Cannot fail. */
const char *dl_blas_name(void);
/* Sets the CPU BLAS thread count (OpenBLAS); n <= 0 leaves it alone. */
void dl_blas_set_threads(int n);
/* The CPU BLAS's thread count. Cannot fail. */
int dl_blas_threads(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_BLAS_H */
