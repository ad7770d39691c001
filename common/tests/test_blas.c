/* test_blas.c — row-major GEMM/GEMV (fp32 and fp16) against naive double loops. */
#include "tests.h"

#include <limits.h> // INT_MAX
#include <math.h> // fabs
#include <stdlib.h> // malloc, free, setenv
#include <string.h> // strstr, strcmp

#include "dl/bf16.h" // dl_bf16, dl_f2bf, dl_bf2f
#include "dl/blas.h" // dl_gemm, dl_gemv, dl_gemm_f16, dl_gemm_ex, dl_flops
#include "dl/cpu.h" // dl_cpu_flushes, dl_cpu_flush_subnormals, dl_cpu_has
#include "dl/rng.h" // dl_rng (test matrices)

#define PAD_VALUE 12345.0f

/* A (rows, cols) matrix with row stride ld; the padding holds PAD_VALUE. */
static float *rand_mat(dl_rng *r, size_t rows, size_t cols, size_t ld)
{
    float *m = malloc((rows * ld + 1) * sizeof *m);
    for (size_t i = 0; i < rows * ld + 1; i++)
        m[i] = PAD_VALUE;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            m[i * ld + j] = (float)(2.0 * dl_rng_uniform(r) - 1.0);
    return m;
}

/* op(X)[i][k] for X stored row-major with stride ld. */
static double at(const float *X, size_t ld, dl_trans t, size_t i, size_t k)
{
    return t == DL_TRANS ? X[k * ld + i] : X[i * ld + k];
}

static void ref_gemm(dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, double alpha, const float *A, size_t lda,
                     const float *B, size_t ldb, double beta, const float *C0, size_t ldc, double *ref)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t k = 0; k < K; k++)
                s += at(A, lda, ta, i, k) * at(B, ldb, tb, k, j);
            ref[i * N + j] = alpha * s + beta * C0[i * ldc + j];
        }
}

static int close_enough(double got, double ref, double atol, double rtol)
{
    return fabs(got - ref) <= atol + rtol * fabs(ref);
}

static void check_gemm(dl_trans ta, dl_trans tb, size_t M, size_t N, size_t K, float alpha, float beta)
{
    dl_rng r;
    dl_rng_seed(&r, 1000 + 2 * ta + tb, M * 100 + N * 10 + K);
    size_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    size_t lda = ac + 3, ldb = bc + 5, ldc = N + 2;
    float *A = rand_mat(&r, ar, ac, lda), *B = rand_mat(&r, br, bc, ldb);
    float *C = rand_mat(&r, M, N, ldc), *C0 = malloc((M * ldc + 1) * sizeof *C0);
    memcpy(C0, C, (M * ldc + 1) * sizeof *C);
    double *ref = malloc(M * N * sizeof *ref);
    ref_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C0, ldc, ref);
    ck_assert_st(dl_gemm(dl_cpu(), ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc), DL_OK);
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++)
            ck_assert_msg(close_enough(C[i * ldc + j], ref[i * N + j], 1e-5 * K, 1e-5),
                          "ta=%d tb=%d C[%zu][%zu] = %.9g, expected %.9g", ta, tb, i, j, (double)C[i * ldc + j],
                          ref[i * N + j]);
        for (size_t j = N; j < ldc; j++)
            ck_assert_msg(C[i * ldc + j] == PAD_VALUE, "padding of C row %zu written", i);
    }
    free(A), free(B), free(C), free(C0), free(ref);
}

START_TEST(gemm_all_transposes)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            check_gemm((dl_trans)ta, (dl_trans)tb, 7, 5, 11, 1.0f, 0.0f);
            check_gemm((dl_trans)ta, (dl_trans)tb, 13, 17, 3, 1.0f, 0.0f);
            check_gemm((dl_trans)ta, (dl_trans)tb, 1, 9, 37, 1.0f, 0.0f);
        }
}
END_TEST

START_TEST(gemm_alpha_beta)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            check_gemm((dl_trans)ta, (dl_trans)tb, 6, 4, 9, 0.5f, -2.0f);
            check_gemm((dl_trans)ta, (dl_trans)tb, 3, 8, 5, -1.25f, 1.0f);
            check_gemm((dl_trans)ta, (dl_trans)tb, 4, 4, 4, 0.0f, 3.0f);
        }
}
END_TEST

START_TEST(gemm_zero_sizes)
{
    float A[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, B[12] = {1, 1, 1, 1, 1, 1};
    float C[6] = {1, 2, 3, 4, 5, 6};
    const float C0[6] = {1, 2, 3, 4, 5, 6};
    dl_flops_reset();
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 0, 3, 4, 1, A, 4, B, 3, 0, C, 3), DL_OK);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 2, 0, 4, 1, A, 4, B, 1, 0, C, 1), DL_OK);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 0, 0, 0, 1, NULL, 1, NULL, 1, 0, NULL, 1), DL_OK);
    ck_assert_mem_eq(C, C0, sizeof C);
    // K = 0: the product is empty, so C = beta·C.
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 2, 3, 0, 1, A, 1, B, 3, 0.5f, C, 3), DL_OK);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(C[i], 0.5f * C0[i]);
    ck_assert_uint_eq(dl_flops(), 0);
}
END_TEST

START_TEST(gemm_bad_shapes)
{
    float A[64], B[64], C[64], C0[64];
    for (int i = 0; i < 64; i++)
        A[i] = B[i] = C[i] = C0[i] = (float)i;
    dl_flops_reset();
    // op(A) is (4, 5): stored (4, 5) needs lda >= 5; stored (5, 4) transposed needs lda >= 4.
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 4, 3, 5, 1, A, 4, B, 3, 0, C, 3), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "lda=4");
    ck_assert_st(dl_gemm(dl_cpu(), DL_TRANS, DL_NO_TRANS, 4, 3, 5, 1, A, 3, B, 3, 0, C, 3), DL_ERR_ARG);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 4, 3, 5, 1, A, 5, B, 2, 0, C, 3), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "ldb");
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, 4, 3, 5, 1, A, 5, B, 4, 0, C, 3), DL_ERR_ARG);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 4, 3, 5, 1, A, 5, B, 3, 0, C, 2), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "ldc");
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, (size_t)INT_MAX + 1, 3, 5, 1, A, 5, B, 3, 0, C, 3),
                 DL_ERR_ARG);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 4, 3, 5, 1, NULL, 5, B, 3, 0, C, 3), DL_ERR_ARG);
    ck_assert_st(dl_gemv(dl_cpu(), DL_NO_TRANS, 4, 5, 1, A, 4, B, 0, C), DL_ERR_ARG);
    ck_assert_st(dl_gemm_f16(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 4, 3, 5, 1, (const dl_half *)A, 4, (const dl_half *)B,
                             3, 0, C, DL_F32, 3),
                 DL_ERR_ARG);
    ck_assert_mem_eq(C, C0, sizeof C);
    ck_assert_uint_eq(dl_flops(), 0);
}
END_TEST

START_TEST(gemv_both_ways)
{
    const size_t M = 7, N = 5, lda = N + 3;
    dl_rng r;
    dl_rng_seed(&r, 77, 0);
    float *A = rand_mat(&r, M, N, lda);
    float x[7], y[7], y0[7];
    for (int t = 0; t < 2; t++) {
        size_t xlen = t ? M : N, ylen = t ? N : M;
        for (size_t i = 0; i < 7; i++) {
            x[i] = (float)(dl_rng_uniform(&r) - 0.5);
            y[i] = y0[i] = (float)(dl_rng_uniform(&r) - 0.5);
        }
        const float alpha = 1.5f, beta = -0.5f;
        ck_assert_st(dl_gemv(dl_cpu(), (dl_trans)t, M, N, alpha, A, lda, x, beta, y), DL_OK);
        for (size_t i = 0; i < ylen; i++) {
            double s = 0;
            for (size_t k = 0; k < xlen; k++)
                s += (t ? A[k * lda + i] : A[i * lda + k]) * (double)x[k];
            double want = alpha * s + beta * y0[i];
            ck_assert_msg(close_enough(y[i], want, 1e-5, 1e-5), "trans=%d y[%zu] = %.9g, want %.9g", t, i, (double)y[i],
                          want);
        }
        for (size_t i = ylen; i < 7; i++)
            ck_assert_float_eq(y[i], y0[i]); // beyond y's length: untouched
    }
    free(A);
}
END_TEST

static dl_half *rand_half(dl_rng *r, size_t rows, size_t cols, size_t ld)
{
    dl_half *m = malloc((rows * ld + 1) * sizeof *m);
    for (size_t i = 0; i < rows * ld + 1; i++)
        m[i] = dl_f2h(PAD_VALUE);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            m[i * ld + j] = dl_f2h((float)(4.0 * dl_rng_uniform(r) - 2.0));
    return m;
}

static double hat(const dl_half *X, size_t ld, dl_trans t, size_t i, size_t k)
{
    return dl_h2f(t == DL_TRANS ? X[k * ld + i] : X[i * ld + k]);
}

static void check_gemm_f16(dl_trans ta, dl_trans tb, dl_dtype ct, size_t M, size_t N, size_t K, float alpha, float beta)
{
    dl_rng r;
    dl_rng_seed(&r, 500 + 4 * ct + 2 * ta + tb, K);
    size_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    size_t lda = ac + 2, ldb = bc + 1, ldc = N + 3;
    dl_half *A = rand_half(&r, ar, ac, lda), *B = rand_half(&r, br, bc, ldb);
    float *Cf = NULL;
    dl_half *Ch = NULL;
    void *C;
    double *c0 = malloc(M * N * sizeof *c0);
    if (ct == DL_F16) {
        Ch = rand_half(&r, M, N, ldc);
        C = Ch;
        for (size_t i = 0; i < M * N; i++)
            c0[i] = dl_h2f(Ch[i / N * ldc + i % N]);
    } else {
        Cf = rand_mat(&r, M, N, ldc);
        C = Cf;
        for (size_t i = 0; i < M * N; i++)
            c0[i] = Cf[i / N * ldc + i % N];
    }
    ck_assert_st(dl_gemm_f16(dl_cpu(), ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ct, ldc), DL_OK);
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t k = 0; k < K; k++)
                s += hat(A, lda, ta, i, k) * hat(B, ldb, tb, k, j);
            double want = alpha * s + beta * c0[i * N + j];
            double got;
            if (ct == DL_F16) {
                // Rounded to half; fp32 accumulation may land one half-ulp away.
                want = dl_h2f(dl_f2h((float)want));
                got = dl_h2f(Ch[i * ldc + j]);
                ck_assert_msg(close_enough(got, want, 1e-3, 0x1p-10), "f16 ta=%d tb=%d C[%zu][%zu] = %.6g, want %.6g",
                              ta, tb, i, j, got, want);
            } else {
                got = Cf[i * ldc + j];
                ck_assert_msg(close_enough(got, want, 1e-5 * K, 1e-5), "f32 ta=%d tb=%d C[%zu][%zu] = %.9g, want %.9g",
                              ta, tb, i, j, got, want);
            }
        }
        for (size_t j = N; j < ldc; j++) {
            float pad = ct == DL_F16 ? dl_h2f(Ch[i * ldc + j]) : Cf[i * ldc + j];
            ck_assert_msg(pad == PAD_VALUE || pad == dl_h2f(dl_f2h(PAD_VALUE)), "padding of C row %zu written", i);
        }
    }
    free(A), free(B), free(Cf), free(Ch), free(c0);
}

START_TEST(gemm_f16_on_cpu)
{
    for (int ct = 0; ct < 2; ct++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                check_gemm_f16((dl_trans)ta, (dl_trans)tb, (dl_dtype)ct, 6, 9, 13, 1.0f, 0.0f);
                check_gemm_f16((dl_trans)ta, (dl_trans)tb, (dl_dtype)ct, 5, 3, 21, 0.75f, 0.5f);
            }
}
END_TEST

START_TEST(gemm_f16_rounds_to_half)
{
    // 1 + 2^-11 is not a half: the fp16 output must round it (ties to even: 1).
    dl_half A[2] = {dl_f2h(1.0f), dl_f2h(0x1p-11f)}, B[2] = {dl_f2h(1.0f), dl_f2h(1.0f)};
    dl_half Ch[1] = {dl_f2h(0.0f)};
    float Cf[1] = {0.0f};
    ck_assert_st(dl_gemm_f16(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, 0, Cf, DL_F32, 1), DL_OK);
    ck_assert_float_eq(Cf[0], 1.0f + 0x1p-11f); // fp32 output keeps the exact sum
    ck_assert_st(dl_gemm_f16(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, 0, Ch, DL_F16, 1), DL_OK);
    ck_assert_uint_eq(dl_half_bits(Ch[0]), 0x3c00);
    // Overflow of the fp16 output is inf, as on the GPU.
    dl_half big[2] = {dl_f2h(60000.0f), dl_f2h(60000.0f)};
    ck_assert_st(dl_gemm_f16(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, big, 2, B, 1, 0, Ch, DL_F16, 1), DL_OK);
    ck_assert_uint_eq(dl_half_bits(Ch[0]), 0x7c00);
}
END_TEST

// ---- bf16 in, fp32 accumulate (dl_gemm_ex) ----

static dl_bf16 *rand_bf16(dl_rng *r, size_t rows, size_t cols, size_t ld)
{
    dl_bf16 *m = malloc((rows * ld + 1) * sizeof *m);
    for (size_t i = 0; i < rows * ld + 1; i++)
        m[i] = dl_f2bf(PAD_VALUE);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            m[i * ld + j] = dl_f2bf((float)(4.0 * dl_rng_uniform(r) - 2.0));
    return m;
}

static double bat(const dl_bf16 *X, size_t ld, dl_trans t, size_t i, size_t k)
{
    return dl_bf2f(t == DL_TRANS ? X[k * ld + i] : X[i * ld + k]);
}

/* Against a double reference: the products of bf16 values are exact in
 * double, the fp32 sum is within 1e-5 relative; a bf16 C is that rounded
 * once, so within one bf16 ulp (2^-7 relative) of the rounded reference. */
static void check_gemm_bf16(dl_trans ta, dl_trans tb, int c16, size_t M, size_t N, size_t K, float alpha, float beta)
{
    dl_rng r;
    dl_rng_seed(&r, 900 + 4 * c16 + 2 * ta + tb, K);
    size_t ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    size_t lda = ac + 2, ldb = bc + 1, ldc = N + 3;
    dl_bf16 *A = rand_bf16(&r, ar, ac, lda), *B = rand_bf16(&r, br, bc, ldb);
    dl_bf16 *Cb = c16 ? rand_bf16(&r, M, N, ldc) : NULL;
    float *Cf = c16 ? NULL : rand_mat(&r, M, N, ldc);
    double *c0 = malloc(M * N * sizeof *c0);
    for (size_t i = 0; i < M * N; i++)
        c0[i] = c16 ? dl_bf2f(Cb[i / N * ldc + i % N]) : Cf[i / N * ldc + i % N];
    ck_assert_st(dl_gemm_ex(dl_cpu(), ta, tb, M, N, K, alpha, A, lda, B, ldb, DL_BF16, beta,
                            c16 ? (void *)Cb : (void *)Cf, c16 ? DL_BF16 : DL_F32, ldc),
                 DL_OK);
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t k = 0; k < K; k++)
                s += bat(A, lda, ta, i, k) * bat(B, ldb, tb, k, j);
            double want = alpha * s + beta * c0[i * N + j];
            double got = c16 ? dl_bf2f(Cb[i * ldc + j]) : Cf[i * ldc + j];
            if (c16)
                ck_assert_msg(close_enough(got, dl_bf2f(dl_f2bf((float)want)), 1e-4, 0x1p-7),
                              "bf16 ta=%d tb=%d C[%zu][%zu] = %.6g, want %.6g", ta, tb, i, j, got, want);
            else
                ck_assert_msg(close_enough(got, want, 1e-5 * K, 1e-5), "f32 ta=%d tb=%d C[%zu][%zu] = %.9g, want %.9g",
                              ta, tb, i, j, got, want);
        }
        for (size_t j = N; j < ldc; j++) {
            float pad = c16 ? dl_bf2f(Cb[i * ldc + j]) : Cf[i * ldc + j];
            ck_assert_msg(pad == PAD_VALUE || pad == dl_bf2f(dl_f2bf(PAD_VALUE)), "padding of C row %zu written", i);
        }
    }
    free(A), free(B), free(Cf), free(Cb), free(c0);
}

START_TEST(gemm_bf16_on_cpu)
{
    for (int c16 = 0; c16 < 2; c16++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                check_gemm_bf16((dl_trans)ta, (dl_trans)tb, c16, 6, 9, 13, 1.0f, 0.0f);
                check_gemm_bf16((dl_trans)ta, (dl_trans)tb, c16, 5, 3, 21, 0.75f, 0.5f);
            }
}
END_TEST

START_TEST(gemm_bf16_rounds_and_refuses)
{
    // 1 + 2^-8 is not a bf16: the bf16 output rounds it (ties to even: 1)
    dl_bf16 A[2] = {dl_f2bf(1.0f), dl_f2bf(0x1p-8f)}, B[2] = {dl_f2bf(1.0f), dl_f2bf(1.0f)};
    dl_bf16 Cb[1] = {dl_f2bf(0.0f)};
    float Cf[1] = {0.0f};
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, DL_BF16, 0, Cf, DL_F32, 1),
                 DL_OK);
    ck_assert_float_eq(Cf[0], 1.0f + 0x1p-8f);
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, DL_BF16, 0, Cb, DL_BF16, 1),
                 DL_OK);
    ck_assert_uint_eq(dl_bf16_bits(Cb[0]), 0x3f80);
    // beta reads the bf16 C; overflow of the fp32 sum is inf
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 2, A, 2, B, 1, DL_BF16, 1, Cb, DL_BF16, 1),
                 DL_OK);
    ck_assert_uint_eq(dl_bf16_bits(Cb[0]), 0x4040); // 1 + 2·(1 + 2^-8) = 3 + 2^-7: a tie, to even (3)
    dl_bf16 big[2] = {dl_f2bf(3e38f), dl_f2bf(3e38f)};
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, big, 2, B, 1, DL_BF16, 0, Cb, DL_BF16, 1),
                 DL_OK);
    ck_assert_uint_eq(dl_bf16_bits(Cb[0]), 0x7f80);
    // dl_gemm_f16 is dl_gemm_ex of DL_F16; refusals leave C alone
    dl_half Ah[2] = {dl_f2h(1.0f), dl_f2h(2.0f)}, Bh[2] = {dl_f2h(3.0f), dl_f2h(4.0f)};
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, Ah, 2, Bh, 1, DL_F16, 0, Cf, DL_F32, 1),
                 DL_OK);
    ck_assert_float_eq(Cf[0], 11.0f);
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, DL_F32, 0, Cf, DL_F32, 1),
                 DL_ERR_ARG);
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, DL_BF16, 0, Cf, DL_F16, 1),
                 DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "bf16");
    ck_assert_st(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 2, 1, A, 2, B, 1, DL_BF16, 0, Cf, DL_F64, 1),
                 DL_ERR_ARG);
    ck_assert_float_eq(Cf[0], 11.0f);
}
END_TEST

START_TEST(flops_are_counted_exactly)
{
    float A[64] = {0}, B[64] = {0}, C[64] = {0};
    dl_half Ah[64], Bh[64];
    memset(Ah, 0, sizeof Ah);
    memset(Bh, 0, sizeof Bh);
    dl_flops_reset();
    ck_assert_uint_eq(dl_flops(), 0);
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, 3, 5, 7, 1, A, 7, B, 7, 0, C, 5), DL_OK);
    ck_assert_uint_eq(dl_flops(), 2 * 3 * 5 * 7);
    ck_assert_st(dl_gemv(dl_cpu(), DL_NO_TRANS, 4, 6, 1, A, 6, B, 0, C), DL_OK);
    ck_assert_uint_eq(dl_flops(), 210 + 2 * 4 * 6);
    ck_assert_st(dl_gemv(dl_cpu(), DL_TRANS, 4, 6, 1, A, 6, B, 0, C), DL_OK);
    ck_assert_uint_eq(dl_flops(), 210 + 48 + 48);
    ck_assert_st(dl_gemm_f16(dl_cpu(), DL_TRANS, DL_NO_TRANS, 2, 3, 4, 1, Ah, 2, Bh, 3, 0, C, DL_F32, 3), DL_OK);
    ck_assert_uint_eq(dl_flops(), 306 + 2 * 2 * 3 * 4);
    dl_flops_add(1000);
    ck_assert_uint_eq(dl_flops(), 1354);
    dl_flops_reset();
    ck_assert_uint_eq(dl_flops(), 0);
}
END_TEST

START_TEST(blas_name)
{
    ck_assert_int_gt((int)strlen(dl_blas_name()), 0);
    dl_blas_set_threads(0); // leaves the thread count alone; must not crash
    dl_blas_info b;
    dl_blas_describe(&b);
    ck_assert_str_eq(b.library, "OpenBLAS");
    ck_assert_int_gt((int)strlen(b.version), 0);
    ck_assert_int_gt((int)strlen(b.core), 0);
    ck_assert_int_gt((int)strlen(b.chosen_by), 0);
    ck_assert_int_ge(b.threads, 1);
    ck_assert_int_eq(b.threads, dl_blas_threads());
}
END_TEST

/* The BLAS computes with subnormals flushed (a subnormal input reads as 0),
 * and the caller's own floating-point mode is as it was after each call. */
START_TEST(blas_flushes_subnormals_inside_only)
{
    ck_assert_int_eq(dl_cpu_flushes(), 0); // IEEE outside the BLAS: subnormals kept
    float a[4] = {1e-39f, 1e-39f, 1e-39f, 1e-39f}, b[4] = {1, 1, 1, 1}, c[1] = {5};
    volatile float sub = 1e-39f;
    ck_assert(sub * 1.0f != 0.0f); // the caller keeps subnormals
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 1, 1, 4, 1.0f, a, 4, b, 1, 0.0f, c, 1), DL_OK);
    ck_assert_float_eq(c[0], 0.0f); // 4e-39 is subnormal: flushed inside
    ck_assert_int_eq(dl_cpu_flushes(), 0);
    ck_assert(sub * 1.0f != 0.0f);
    unsigned was = dl_cpu_flush_subnormals();
    ck_assert_int_eq(dl_cpu_flushes(), 1);
    ck_assert(sub * 1.0f == 0.0f);
    dl_cpu_restore(was);
    ck_assert_int_eq(dl_cpu_flushes(), 0);
}
END_TEST

/* The next three need a process whose BLAS is not open yet: Check's fork mode
 * gives each test one (CK_FORK=no runs them all in one process: skipped). */
static int fresh_process(void)
{
    const char *f = getenv("CK_FORK");
    return f == NULL || strcmp(f, "no") != 0;
}

/* OpenBLAS taking older kernels than the CPU's features allow (as 0.3.21
 * does on Xeons newer than it) is reopened with the features' kernels. */
START_TEST(blas_reopens_when_openblas_takes_older_kernels)
{
    if (!fresh_process() || !dl_cpu_has("avx") || getenv("OPENBLAS_CORETYPE") != NULL)
        return;
    setenv("DL_TEST_BLAS_MISDETECT", "Prescott", 1);
    dl_blas_info b;
    dl_blas_describe(&b);
    ck_assert_str_ne(b.core, "Prescott");
    ck_assert_msg(strstr(b.chosen_by, "the kit, from the CPU's features (OpenBLAS took Prescott)") != NULL, "%s",
                  b.chosen_by);
    ck_assert_ptr_null(getenv("OPENBLAS_CORETYPE")); // the environment is as it was
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4];
    ck_assert_st(dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, 2, 2, 3, 1, A, 3, B, 2, 0, C, 2), DL_OK);
    ck_assert_float_eq(C[0], 4);
    ck_assert_float_eq(C[1], 5);
    ck_assert_float_eq(C[2], 10);
    ck_assert_float_eq(C[3], 11);
}
END_TEST

/* Kernels that fail the reference check are named and the next ones tried. */
START_TEST(blas_falls_back_when_the_check_fails)
{
    if (!fresh_process() || getenv("OPENBLAS_CORETYPE") != NULL)
        return;
    // every core but the oldest: whatever this machine starts with fails
    setenv("DL_TEST_BLAS_WRONG", "Haswell,Zen,SkylakeX,Cooperlake,SapphireRapids,Sandybridge,NEOVERSEN1", 1);
    dl_blas_info b;
    dl_blas_describe(&b);
#if defined(__x86_64__)
    // where OpenBLAS itself took the oldest kernels (0.3.21 on a Xeon newer
    // than it), the kit's reopening fails and OpenBLAS's own choice stands
    ck_assert_str_eq(b.core, "Prescott");
    ck_assert_msg(strcmp(b.chosen_by, "the fallback to the oldest kernels") == 0 ||
                      strcmp(b.chosen_by, "OpenBLAS's own detection") == 0,
                  "%s", b.chosen_by);
#endif
    float A[2] = {3, 4}, x[2] = {1, 2}, y[1] = {7};
    ck_assert_st(dl_gemv(dl_cpu(), DL_NO_TRANS, 1, 2, 2.0f, A, 2, x, 1.0f, y), DL_OK);
    ck_assert_float_eq(y[0], 29);
}
END_TEST

START_TEST(blas_falls_back_to_loops_when_no_kernels_pass)
{
    if (!fresh_process() || getenv("OPENBLAS_CORETYPE") != NULL)
        return;
    setenv("DL_TEST_BLAS_WRONG", "Haswell,Zen,SkylakeX,Cooperlake,SapphireRapids,Sandybridge,NEOVERSEN1,Prescott,ARMV8",
           1);
    dl_blas_info b;
    dl_blas_describe(&b);
    ck_assert_str_eq(b.library, "the kit's loops");
    ck_assert_int_eq(b.threads, 1);
    // the loops are the BLAS's contract: every transpose, alpha, beta, strides
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 2, 3, 4, 5, 6}, C[4] = {1, 1, 1, 1};
    ck_assert_st(dl_gemm(dl_cpu(), DL_TRANS, DL_NO_TRANS, 2, 2, 3, 2.0f, A, 2, B, 2, 0.5f, C, 2), DL_OK);
    // Aᵀ (2, 3) = {1,3,5; 2,4,6}; B (3, 2) = {1,2; 3,4; 5,6}: AᵀB = {35, 44; 44, 56}
    ck_assert_float_eq(C[0], 70.5f);
    ck_assert_float_eq(C[1], 88.5f);
    ck_assert_float_eq(C[2], 88.5f);
    ck_assert_float_eq(C[3], 112.5f);
}
END_TEST

Suite *blas_suite(void)
{
    return suite_of("blas", tcase_with_timeout("blas", 20),
                    TESTS(gemm_all_transposes, gemm_alpha_beta, gemm_zero_sizes, gemm_bad_shapes, gemv_both_ways,
                          gemm_f16_on_cpu, gemm_f16_rounds_to_half, gemm_bf16_on_cpu, gemm_bf16_rounds_and_refuses,
                          flops_are_counted_exactly, blas_name, blas_flushes_subnormals_inside_only,
                          blas_reopens_when_openblas_takes_older_kernels, blas_falls_back_when_the_check_fails,
                          blas_falls_back_to_loops_when_no_kernels_pass));
}
