/* cublas_v2.h — the cuBLAS calls the kit uses, on the emulated CUDA device
 * (common/emu).
 *
 * Contract
 * - cuBLAS's column-major contract, its argument checks and status codes:
 *   C (m, n) = alpha·op(A)·op(B) + beta·C with op(X) = X or Xᵀ, leading
 *   dimensions at least the stored rows; C is not read when beta is 0.
 *   alpha and beta are read at the call (CUBLAS_POINTER_MODE_HOST only).
 * - The work is queued on the handle's stream (cublasSetStream) and runs in
 *   its order. It runs on emu_set_sgemm's GEMM (the kit's CPU BLAS), or the
 *   module's own loop; cublasGemmEx widens 16-bit operands to fp32 exactly,
 *   sums in fp32 (CUBLAS_COMPUTE_32F only) and rounds C once to its type.
 *   Sums run in another order than a GPU's: compare with a tolerance.
 * - Every matrix and vector must lie in device memory, whole (its last
 *   element inside the allocation it starts in); else the call fails with
 *   CUBLAS_STATUS_INVALID_VALUE and a message naming the operand, and
 *   cublasGetStatusString says why.
 */
#ifndef EMU_CUBLAS_V2_H
#define EMU_CUBLAS_V2_H

#include "cuda_runtime.h" // cudaStream_t, cudaDataType

#define CUBLASWINAPI
#define CUBLAS_VER_MAJOR 12

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2 } cublasMath_t;
typedef enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F = 70
} cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 } cublasGemmAlgo_t;

typedef struct cublasContext *cublasHandle_t;

#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasSetStream cublasSetStream_v2
#define cublasGetStream cublasGetStream_v2
#define cublasSetPointerMode cublasSetPointerMode_v2
#define cublasSgemm cublasSgemm_v2
#define cublasSgemv cublasSgemv_v2

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId);
cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId);
/* CUBLAS_POINTER_MODE_DEVICE: CUBLAS_STATUS_NOT_SUPPORTED, named */
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode); /* accepted; changes nothing */
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc);
cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha,
                              const float *A, int lda, const float *x, int incx, const float *beta, float *y, int incy);
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);
const char *cublasGetStatusString(cublasStatus_t status);
const char *cublasGetStatusName(cublasStatus_t status);
}

#endif /* EMU_CUBLAS_V2_H */
