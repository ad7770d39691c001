/* blas.c — row-major GEMM/GEMV: validation, the FLOP counter, the CPU path
 * (cblas) and dispatch to the CUDA path (blas_cuda.cu). */
#include "dl/blas.h"

#include <limits.h> // INT_MAX
#include <stdatomic.h>
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // strlen

#include "backend.h" // dl_cuda_gemm_, ...
#include "blas_cpu.h" // blas_cpu_sgemm, blas_cpu_sgemv: OpenBLAS, opened and checked
#include "dl/lowp.h" // dl_lowp, dl_lowp_to_f32, dl_f32_to_lowp

// ---- FLOP counter ----

static _Atomic uint64_t flop_count;

uint64_t dl_flops(void)
{
    return atomic_load(&flop_count);
}

void dl_flops_reset(void)
{
    atomic_store(&flop_count, 0);
}

void dl_flops_add(uint64_t flops)
{
    atomic_fetch_add(&flop_count, flops);
}

void dl_blas_describe(dl_blas_info *out)
{
    blas_cpu_info(out);
}

void dl_blas_set_flush_subnormals(int on)
{
    blas_cpu_set_flush(on);
}

const char *dl_blas_name(void)
{
    static char buf[120];
    if (buf[0] == '\0') {
        dl_blas_info b;
        blas_cpu_info(&b);
        snprintf(buf, sizeof buf, "%s %s, %s kernels", b.library, b.version, b.core);
    }
    return buf;
}

void dl_blas_set_threads(int n)
{
    if (n > 0)
        blas_cpu_set_threads(n);
}

int dl_blas_threads(void)
{
    return blas_cpu_threads();
}

// ---- validation ----

static size_t max1(size_t v)
{
    return v > 0 ? v : 1;
}

static dl_status check_dims(const char *fn, size_t M, size_t N, size_t K)
{
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return dl_error_set(DL_ERR_ARG, "%s: sizes M=%zu N=%zu K=%zu exceed INT_MAX", fn, M, N, K);
    return DL_OK;
}

static dl_status check_ld(const char *fn, const char *name, size_t ld, size_t cols)
{
    if (ld < max1(cols) || ld > INT_MAX)
        return dl_error_set(DL_ERR_ARG, "%s: %s=%zu, expected at least %zu (the row length)", fn, name, ld, max1(cols));
    return DL_OK;
}

static dl_status check_gemm(const char *fn, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, const void *A,
                            size_t lda, const void *B, size_t ldb, const void *C, size_t ldc)
{
    DL_TRY(check_dims(fn, M, N, K));
    DL_TRY(check_ld(fn, "lda", lda, ta == DL_TRANS ? M : K));
    DL_TRY(check_ld(fn, "ldb", ldb, tb == DL_TRANS ? K : N));
    DL_TRY(check_ld(fn, "ldc", ldc, N));
    if ((M * N > 0 && C == NULL) || (M * N * K > 0 && (A == NULL || B == NULL)))
        return dl_error_set(DL_ERR_ARG, "%s: NULL matrix pointer", fn);
    return DL_OK;
}

// ---- fp32 ----

dl_status dl_gemm(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                  const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc)
{
    DL_TRY(check_gemm("dl_gemm", ta, tb, M, N, K, A, lda, B, ldb, C, ldc));
    if (M == 0 || N == 0)
        return DL_OK;
    dl_flops_add(2ull * M * N * K);
    dl_dev_count_launch(0);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_gemm_(dev, ta, tb, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    blas_cpu_sgemm(ta == DL_TRANS, tb == DL_TRANS, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C,
                   (int)ldc);
    return DL_OK;
}

dl_status dl_gemv(const dl_device *dev, dl_trans ta, size_t M, size_t N, float alpha, const float *A, size_t lda,
                  const float *x, float beta, float *y)
{
    DL_TRY(check_dims("dl_gemv", M, N, 1));
    DL_TRY(check_ld("dl_gemv", "lda", lda, N));
    size_t ylen = ta == DL_TRANS ? N : M;
    if (ylen == 0)
        return DL_OK;
    if (y == NULL || (M * N > 0 && (A == NULL || x == NULL)))
        return dl_error_set(DL_ERR_ARG, "dl_gemv: NULL pointer");
    dl_flops_add(2ull * M * N);
    dl_dev_count_launch(0);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_gemv_(dev, ta, (int)M, (int)N, alpha, A, (int)lda, x, beta, y);
    blas_cpu_sgemv(ta == DL_TRANS, (int)M, (int)N, alpha, A, (int)lda, x, beta, y);
    return DL_OK;
}

// ---- fp16 or bf16 in, fp32 accumulate ----

/* Copies a (rows, cols) matrix of t (DL_F16 or DL_BF16) with stride ld into a
 * dense float one; NULL when out of memory. */
static float *widen(const void *src, dl_dtype t, size_t rows, size_t cols, size_t ld)
{
    float *dst = malloc(max1(rows * cols) * sizeof *dst);
    if (dst == NULL)
        return NULL;
    for (size_t i = 0; i < rows; i++)
        dl_lowp_to_f32((const char *)src + i * ld * dl_dtype_size(t), t, dst + i * cols, cols);
    return dst;
}

dl_status dl_gemm_ex(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                     const void *A, size_t lda, const void *B, size_t ldb, dl_dtype ab_type, float beta, void *C,
                     dl_dtype c_type, size_t ldc)
{
    if (!dl_lowp(ab_type) || (c_type != DL_F32 && c_type != ab_type))
        return dl_error_set(DL_ERR_ARG,
                            "dl_gemm_ex: %s inputs and a %s result; expected f16 or bf16 inputs, and "
                            "an f32 result or one of the inputs' type",
                            dl_dtype_name(ab_type), dl_dtype_name(c_type));
    DL_TRY(check_gemm("dl_gemm_ex", ta, tb, M, N, K, A, lda, B, ldb, C, ldc));
    if (M == 0 || N == 0)
        return DL_OK;
    dl_flops_add(2ull * M * N * K);
    dl_dev_count_launch(0);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_gemm_ex_(dev, ta, tb, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, ab_type, beta, C,
                                c_type, (int)ldc);
    size_t ar = ta == DL_TRANS ? K : M, ac = ta == DL_TRANS ? M : K;
    size_t br = tb == DL_TRANS ? N : K, bc = tb == DL_TRANS ? K : N;
    int c16 = c_type != DL_F32;
    float *a = widen(A, ab_type, ar, ac, lda);
    float *b = widen(B, ab_type, br, bc, ldb);
    float *c = c16 ? widen(C, c_type, M, N, ldc) : NULL;
    if (a == NULL || b == NULL || (c16 && c == NULL)) {
        free(a);
        free(b);
        free(c);
        return dl_error_set(DL_ERR_NOMEM, "dl_gemm_ex: out of memory for the fp32 copies");
    }
    if (c16) {
        blas_cpu_sgemm(ta == DL_TRANS, tb == DL_TRANS, (int)M, (int)N, (int)K, alpha, a, (int)ac, b, (int)bc, beta, c,
                       (int)N);
        for (size_t i = 0; i < M; i++)
            dl_f32_to_lowp(c + i * N, (char *)C + i * ldc * dl_dtype_size(c_type), c_type, N);
    } else {
        blas_cpu_sgemm(ta == DL_TRANS, tb == DL_TRANS, (int)M, (int)N, (int)K, alpha, a, (int)ac, b, (int)bc, beta,
                       (float *)C, (int)ldc);
    }
    free(a);
    free(b);
    free(c);
    return DL_OK;
}

dl_status dl_gemm_f16(const dl_device *dev, dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha,
                      const dl_half *A, size_t lda, const dl_half *B, size_t ldb, float beta, void *C, dl_dtype c_type,
                      size_t ldc)
{
    return dl_gemm_ex(dev, ta, tb, M, N, K, alpha, A, lda, B, ldb, DL_F16, beta, C, c_type, ldc);
}
