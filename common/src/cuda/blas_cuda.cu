/* blas_cuda.cu — row-major GEMM/GEMV on cuBLAS (column-major) in one place.
 *
 * The transpose identity. A row-major matrix X (r, c) with row stride ld is,
 * read as column-major, the matrix Xᵀ (c, r) with leading dimension ld. So for
 * row-major C (M, N) = op(A)·op(B) we ask cuBLAS for the column-major
 *     Cᵀ (N, M) = op(B)ᵀ · op(A)ᵀ
 * whose operands are exactly the buffers B and A read column-major, with the
 * *same* transpose flags:
 *     row-major call                 cuBLAS call
 *     gemm(ta, tb, M, N, K, A, B)    gemm(tb, ta, N, M, K, B, A)
 *     gemv(none, M, N, A)  y = A x   gemv(T, N, M, A)   (A read as Aᵀ (N, M))
 *     gemv(T,    M, N, A)  y = Aᵀx   gemv(N, N, M, A)
 * Every row-major call in the kit goes through these three functions. */
#include <cublas_v2.h> // cublasSgemm, cublasSgemv, cublasGemmEx
#include <cuda_runtime.h> // cudaStream_t

#include "../backend.h" // dl_cuda_gemm_, dl_cuda_gemv_, dl_cuda_gemm_ex_
#include "dl/cuda_check.h" // DL_CUBLAS_CHECK

static cublasOperation_t op(dl_trans t)
{
    return t == DL_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
}

extern "C" dl_status dl_cuda_gemm_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                                   const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    cublasHandle_t h = (cublasHandle_t)dev->blas;
    DL_CUBLAS_CHECK(cublasSgemm(h, op(tb), op(ta), N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
    return DL_OK;
}

extern "C" dl_status dl_cuda_gemv_(const dl_device *dev, dl_trans ta, int M, int N, float alpha, const float *A,
                                   int lda, const float *x, float beta, float *y)
{
    cublasHandle_t h = (cublasHandle_t)dev->blas;
    cublasOperation_t o = ta == DL_TRANS ? CUBLAS_OP_N : CUBLAS_OP_T;
    DL_CUBLAS_CHECK(cublasSgemv(h, o, N, M, &alpha, A, lda, x, 1, &beta, y, 1));
    return DL_OK;
}

/* DL_F16 -> CUDA_R_16F, DL_BF16 -> CUDA_R_16BF, else CUDA_R_32F */
static cudaDataType_t cuda_type(dl_dtype t)
{
    return t == DL_F16 ? CUDA_R_16F : t == DL_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

extern "C" dl_status dl_cuda_gemm_ex_(const dl_device *dev, dl_trans ta, dl_trans tb, int M, int N, int K, float alpha,
                                      const void *A, int lda, const void *B, int ldb, dl_dtype ab_type, float beta,
                                      void *C, dl_dtype c_type, int ldc)
{
    cublasHandle_t h = (cublasHandle_t)dev->blas;
    cudaDataType_t abt = cuda_type(ab_type), ct = cuda_type(c_type);
    DL_CUBLAS_CHECK(cublasGemmEx(h, op(tb), op(ta), N, M, K, &alpha, B, abt, ldb, A, abt, lda, &beta, C, ct, ldc,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return DL_OK;
}
