/* test_gpu.c — the GPU tier of common/: every CUDA path against the CPU path.
 *
 * Run by `make test-gpu` on a machine with a CUDA GPU. Each test opens the
 * device itself (a CUDA context does not survive Check's fork). Tolerances:
 * fp32 GEMM/GEMV 1e-5 absolute + 1e-4 relative (different summation order;
 * cuBLAS's default math mode is full fp32, no TF32); fp16 GEMM outputs within
 * one binary16 ulp of the CPU emulation plus accumulation-order slack (bf16:
 * 2^-6 relative, two of its ulps); the MLP's fp16 path within 2^-7 relative +
 * 2^-7 of the largest value (stored fp16 values one ulp apart, carried
 * through the layers; bf16: 2^-4, its ulps being 8 times coarser); dl_add,
 * dl_cast and dl_unscale bit for bit (NaN: any NaN).
 *
 * The same tests run on the emulated CUDA device (make EMU=1; `make test`
 * runs them there through tools/test-emu.sh), with the same tolerances,
 * which cover it by construction. It differs from a GPU by design in three
 * ways, each nearer the CPU path than a GPU is: (1) nvcc contracts a·b + c
 * into one fused multiply-add (one rounding instead of two) and the
 * emulated build does not (-ffp-contract=off), so the element-wise kernels
 * round as the CPU path's DL_HD functions do, which are the same source;
 * (2) expf, log1pf and the fast intrinsics are the host's libm, the CPU
 * path's, not CUDA's (whose expf is within 2 ulps); (3) its cuBLAS runs on
 * the kit's CPU BLAS, with the operands transposed (blas_cuda.cu's
 * identity), so a GEMM may sum in another order than the CPU's own call —
 * the difference the fp32 tolerance above is for, as it is for cuBLAS —
 * and flushes subnormals inside the GEMM as the CPU's does (a GPU's keeps
 * them: a difference below 2^-126, far under every atol here).
 * The bitwise tests hold on it as on a GPU: 16-bit rounding is CUDA's rule,
 * and its kernels keep subnormals (each thread starts with the default
 * floating-point mode, no flush to zero). So on the emulated device these
 * tests check the kernels' logic, indexing and synchronisation against the
 * CPU, not a GPU's rounding; test_kit_kernels_checked adds the emulator's
 * own checks (races, barriers, bounds, the same bits in every order). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h> // fabsf, ldexp, isnan
#include <stdio.h> // printf
#include <stdlib.h> // malloc
#include <string.h> // memcmp

#include "dl/batch.h"
#include "dl/bf16.h" // dl_bf16, dl_f2bf, dl_bf2f
#include "dl/blas.h"
#include "dl/comm.h"
#include "dl/compare.h"
#include "dl/device.h"
#include "dl/eval.h"
#include "dl/lowp.h" // dl_lowp_get
#include "dl/mlp.h"
#include "dl/ops.h"
#include "dl/rng.h"
#include "dl/timer.h" // dl_now
#include "dl/trace.h" // dl_trace_use_device

#ifdef DL_CUDA_EMU
#include "emu/emu.h" // emu_check_set, emu_finding_count, emu_finding_get
#endif

/* The device under test: the GPU ("cuda"), or in the emulated build (make
 * EMU=1) the emulated CUDA device ("emu"). */
static const char *gpu_spec(void)
{
    return dl_built_with_emu() ? "emu" : "cuda";
}

#define OPEN(dev)  \
    dl_device dev; \
    ck_assert_msg(dl_device_open(gpu_spec(), &dev) == DL_OK, "cannot open %s: %s", gpu_spec(), dl_last_error())

static float *randf(size_t n, uint64_t seed)
{
    dl_rng r;
    dl_rng_seed(&r, seed, 9);
    float *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(dl_rng_uniform(&r) * 2 - 1);
    return x;
}

static float *to_dev(const dl_device *dev, const float *h, size_t n)
{
    float *d = NULL;
    ck_assert(dl_malloc(dev, (void **)&d, n * sizeof *d) == DL_OK);
    ck_assert(dl_memcpy_h2d(dev, d, h, n * sizeof *d) == DL_OK);
    return d;
}

START_TEST(test_device_memory_events)
{
    OPEN(dev);
    printf("device: %s, CUDA runtime %s, driver %s, NCCL %s\n", dl_device_describe(&dev), dl_cuda_runtime_version(),
           dl_cuda_driver_version(), dl_nccl_version());
    ck_assert_int_eq(dev.kind, DL_DEVICE_CUDA);
    size_t n = 1 << 20;
    float *h = randf(n, 1), *back = malloc(n * sizeof *back);
    float *d = to_dev(&dev, h, n), *d2 = NULL;
    ck_assert(dl_malloc(&dev, (void **)&d2, n * sizeof *d2) == DL_OK);
    dl_event a, b;
    ck_assert(dl_event_create(&dev, &a) == DL_OK && dl_event_create(&dev, &b) == DL_OK);
    ck_assert(dl_event_record(&dev, &a, NULL) == DL_OK);
    ck_assert(dl_memcpy_d2d(&dev, d2, d, n * sizeof *d) == DL_OK);
    ck_assert(dl_event_record(&dev, &b, NULL) == DL_OK);
    ck_assert(dl_event_sync(&dev, &b) == DL_OK);
    float ms = -1;
    ck_assert(dl_event_elapsed_ms(&dev, &a, &b, &ms) == DL_OK);
    ck_assert_msg(ms >= 0, "elapsed %g ms", ms);
    ck_assert(dl_memcpy_d2h(&dev, back, d2, n * sizeof *back) == DL_OK);
    ck_assert_msg(memcmp(h, back, n * sizeof *h) == 0, "h2d, d2d, d2h round trip changed the data");
    ck_assert(dl_memset0(&dev, d2, n * sizeof *d2) == DL_OK);
    ck_assert(dl_memcpy_d2h(&dev, back, d2, n * sizeof *back) == DL_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(back[i] == 0.0f, "memset0 left %g at %zu", (double)back[i], i);
    ck_assert_str_ne(dl_nccl_version(), "none");
    dl_event_destroy(&dev, &a), dl_event_destroy(&dev, &b);
    dl_free(&dev, d), dl_free(&dev, d2);
    free(h), free(back);
    dl_device_close(&dev);
}
END_TEST

START_TEST(test_gemm_matches_cpu)
{
    OPEN(dev);
    const size_t shapes[][3] = {{1, 1, 1}, {17, 33, 5}, {64, 1, 300}, {129, 257, 65}, {3, 1000, 2}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int ta = 0; ta < 2; ta++) {
            for (int tb = 0; tb < 2; tb++) {
                size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                size_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
                size_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb, nc = M * ldc;
                float *A = randf(na, 10 + s), *B = randf(nb, 20 + s), *C = randf(nc, 30 + s);
                float *Cg = malloc(nc * sizeof *Cg);
                float *dA = to_dev(&dev, A, na), *dB = to_dev(&dev, B, nb), *dC = to_dev(&dev, C, nc);
                ck_assert(dl_gemm(dl_cpu(), ta, tb, M, N, K, 0.7f, A, lda, B, ldb, 0.3f, C, ldc) == DL_OK);
                ck_assert(dl_gemm(&dev, ta, tb, M, N, K, 0.7f, dA, lda, dB, ldb, 0.3f, dC, ldc) == DL_OK);
                ck_assert(dl_memcpy_d2h(&dev, Cg, dC, nc * sizeof *Cg) == DL_OK);
                double *ref = malloc(nc * sizeof *ref);
                for (size_t i = 0; i < nc; i++)
                    ref[i] = C[i];
                dl_cmp c;
                char buf[1024], what[96];
                snprintf(what, sizeof what, "gemm %zux%zux%zu ta=%d tb=%d", M, N, K, ta, tb);
                if (!dl_allclose_f32(Cg, ref, nc, 1e-5, 1e-4, &c)) {
                    dl_cmp_format(&c, what, buf, sizeof buf);
                    ck_abort_msg("%s", buf);
                }
                dl_free(&dev, dA), dl_free(&dev, dB), dl_free(&dev, dC);
                free(A), free(B), free(C), free(Cg), free(ref);
            }
        }
    }
    dl_device_close(&dev);
}
END_TEST

START_TEST(test_gemv_matches_cpu)
{
    OPEN(dev);
    const size_t shapes[][2] = {{1, 1}, {257, 3}, {1000, 30}, {5, 4097}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int ta = 0; ta < 2; ta++) {
            size_t M = shapes[s][0], N = shapes[s][1], lda = N + 1, ny = ta ? N : M, nx = ta ? M : N;
            float *A = randf(M * lda, 40 + s), *x = randf(nx, 50 + s), *y = randf(ny, 60 + s);
            float *yg = malloc(ny * sizeof *yg);
            float *dA = to_dev(&dev, A, M * lda), *dx = to_dev(&dev, x, nx), *dy = to_dev(&dev, y, ny);
            ck_assert(dl_gemv(dl_cpu(), ta, M, N, 1.5f, A, lda, x, 0.5f, y) == DL_OK);
            ck_assert(dl_gemv(&dev, ta, M, N, 1.5f, dA, lda, dx, 0.5f, dy) == DL_OK);
            ck_assert(dl_memcpy_d2h(&dev, yg, dy, ny * sizeof *yg) == DL_OK);
            double *ref = malloc(ny * sizeof *ref);
            for (size_t i = 0; i < ny; i++)
                ref[i] = y[i];
            dl_cmp c;
            if (!dl_allclose_f32(yg, ref, ny, 1e-5, 1e-4, &c)) {
                char buf[1024], what[64];
                snprintf(what, sizeof what, "gemv %zux%zu ta=%d", M, N, ta);
                dl_cmp_format(&c, what, buf, sizeof buf);
                ck_abort_msg("%s", buf);
            }
            dl_free(&dev, dA), dl_free(&dev, dx), dl_free(&dev, dy);
            free(A), free(x), free(y), free(yg), free(ref);
        }
    }
    dl_device_close(&dev);
}
END_TEST

/* dl_gemm_ex on cuBLAS against the CPU emulation; _i = 0: fp16 inputs
 * (through dl_gemm_f16), 1: bf16 inputs. */
START_TEST(test_gemm_f16_matches_cpu)
{
    OPEN(dev);
    dl_dtype ab = _i ? DL_BF16 : DL_F16;
    size_t M = 96, N = 80, K = 200;
    float *a = randf(M * K, 70), *b = randf(K * N, 71);
    uint16_t *A = malloc(M * K * sizeof *A), *B = malloc(K * N * sizeof *B);
    ck_assert(dl_cast(dl_cpu(), A, ab, a, DL_F32, M * K) == DL_OK);
    ck_assert(dl_cast(dl_cpu(), B, ab, b, DL_F32, K * N) == DL_OK);
    for (int ct = 0; ct < 2; ct++) {
        dl_dtype c_type = ct ? ab : DL_F32;
        size_t esz = ct ? sizeof(uint16_t) : sizeof(float);
        void *C = calloc(M * N, esz), *Cg = calloc(M * N, esz), *dC = NULL;
        uint16_t *dA = NULL, *dB = NULL;
        ck_assert(dl_malloc(&dev, (void **)&dA, M * K * sizeof *dA) == DL_OK);
        ck_assert(dl_malloc(&dev, (void **)&dB, K * N * sizeof *dB) == DL_OK);
        ck_assert(dl_malloc(&dev, &dC, M * N * esz) == DL_OK);
        ck_assert(dl_memcpy_h2d(&dev, dA, A, M * K * sizeof *dA) == DL_OK);
        ck_assert(dl_memcpy_h2d(&dev, dB, B, K * N * sizeof *dB) == DL_OK);
        ck_assert(dl_memset0(&dev, dC, M * N * esz) == DL_OK);
        if (ab == DL_F16) {
            ck_assert(dl_gemm_f16(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, M, N, K, 1.0f, (const dl_half *)A, K,
                                  (const dl_half *)B, N, 0.0f, C, c_type, N) == DL_OK);
            ck_assert(dl_gemm_f16(&dev, DL_NO_TRANS, DL_NO_TRANS, M, N, K, 1.0f, (const dl_half *)dA, K,
                                  (const dl_half *)dB, N, 0.0f, dC, c_type, N) == DL_OK);
        } else {
            ck_assert(dl_gemm_ex(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, M, N, K, 1.0f, A, K, B, N, ab, 0.0f, C, c_type,
                                 N) == DL_OK);
            ck_assert_msg(dl_gemm_ex(&dev, DL_NO_TRANS, DL_NO_TRANS, M, N, K, 1.0f, dA, K, dB, N, ab, 0.0f, dC, c_type,
                                     N) == DL_OK,
                          "%s", dl_last_error());
        }
        ck_assert(dl_memcpy_d2h(&dev, Cg, dC, M * N * esz) == DL_OK);
        float *g = malloc(M * N * sizeof *g);
        double *ref = malloc(M * N * sizeof *ref);
        for (size_t i = 0; i < M * N; i++) {
            g[i] = ct ? dl_lowp_get(Cg, i, ab) : ((float *)Cg)[i];
            ref[i] = ct ? dl_lowp_get(C, i, ab) : ((float *)C)[i];
        }
        dl_cmp c;
        // |C| ~ 10 here: one fp16 ulp is 2^-7 ~ 0.008 relative at most 1e-3 of 10; bf16's is 2^-7 relative
        double atol = ct ? 2e-2 : 1e-4, rtol = ct ? (ab == DL_BF16 ? 0x1p-6 : 2e-3) : 1e-4;
        if (!dl_allclose_f32(g, ref, M * N, atol, rtol, &c)) {
            char buf[1024], what[64];
            snprintf(what, sizeof what, "gemm_ex (%s in, %s out)", dl_dtype_name(ab), dl_dtype_name(c_type));
            dl_cmp_format(&c, what, buf, sizeof buf);
            ck_abort_msg("%s", buf);
        }
        dl_free(&dev, dA), dl_free(&dev, dB), dl_free(&dev, dC);
        free(C), free(Cg), free(g), free(ref);
    }
    free(a), free(b), free(A), free(B);
    dl_device_close(&dev);
}
END_TEST

START_TEST(test_bad_calls_are_errors)
{
    OPEN(dev);
    float *d = NULL;
    ck_assert(dl_malloc(&dev, (void **)&d, 64) == DL_OK);
    dl_status st = dl_gemm(&dev, DL_NO_TRANS, DL_NO_TRANS, 4, 4, 4, 1, d, 2, d, 4, 0, d, 4);
    ck_assert_msg(st == DL_ERR_ARG, "lda=2 for K=4 returned %s", dl_status_name(st));
    dl_device bad;
    char past[32];
    snprintf(past, sizeof past, "%s:999", gpu_spec());
    st = dl_device_open(past, &bad);
    ck_assert_msg(st == DL_ERR_NO_DEVICE && strstr(dl_last_error(), past) != NULL, "%s gave %s: %s", past,
                  dl_status_name(st), dl_last_error());
    dl_free(&dev, d);
    dl_device_close(&dev);
}
END_TEST

START_TEST(test_mlp_matches_cpu)
{
    OPEN(dev);
    size_t n = 300, sizes[] = {40, 64, 33, 10};
    float *X = randf(n * 40, 80);
    int32_t *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = (int32_t)(i * 7 % 10);
    dl_mlp mc, mg;
    ck_assert(dl_mlp_create(&mc, dl_cpu(), sizes, 4, 512, 5) == DL_OK);
    ck_assert(dl_mlp_create(&mg, &dev, sizes, 4, 512, 5) == DL_OK);
    float *dX = to_dev(&dev, X, n * 40);
    int32_t *dy = NULL;
    ck_assert(dl_malloc(&dev, (void **)&dy, n * sizeof *dy) == DL_OK);
    ck_assert(dl_memcpy_h2d(&dev, dy, y, n * sizeof *dy) == DL_OK);
    double lc = 0, lg = 0;
    for (int step = 0; step < 5; step++) {
        ck_assert(dl_mlp_forward(&mc, X, n) == DL_OK && dl_mlp_loss(&mc, y, n, &lc) == DL_OK);
        ck_assert(dl_mlp_forward(&mg, dX, n) == DL_OK && dl_mlp_loss(&mg, dy, n, &lg) == DL_OK);
        ck_assert_msg(fabs(lc - lg) <= 1e-5 * fabs(lc) + 1e-6, "step %d: loss CPU %.9g, GPU %.9g", step, lc, lg);
        ck_assert(dl_mlp_backward(&mc, X, n, 0, NULL, NULL) == DL_OK && dl_mlp_sgd(&mc, 0.1f, 0.9f, 1e-3f) == DL_OK);
        ck_assert(dl_mlp_backward(&mg, dX, n, 0, NULL, NULL) == DL_OK && dl_mlp_sgd(&mg, 0.1f, 0.9f, 1e-3f) == DL_OK);
    }
    float *pg = malloc(mg.n_params * sizeof *pg);
    ck_assert(dl_mlp_get_params(&mg, pg) == DL_OK);
    double *ref = malloc(mc.n_params * sizeof *ref);
    for (size_t k = 0; k < mc.n_params; k++)
        ref[k] = mc.params[k];
    dl_cmp c;
    if (!dl_allclose_f32(pg, ref, mc.n_params, 1e-5, 1e-4, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "MLP parameters after 5 SGD steps, GPU vs CPU", buf, sizeof buf);
        ck_abort_msg("%s", buf);
    }
    // the checkpoint state: velocity and step count, and the velocity written back
    ck_assert_int_eq(dl_mlp_steps(&mg), 5);
    ck_assert(dl_mlp_get_velocity(&mg, pg) == DL_OK);
    for (size_t k = 0; k < mc.n_params; k++)
        ref[k] = mc.velocity[k];
    if (!dl_allclose_f32(pg, ref, mc.n_params, 1e-5, 1e-4, &c)) {
        char buf[1024];
        dl_cmp_format(&c, "MLP velocity after 5 SGD steps, GPU vs CPU", buf, sizeof buf);
        ck_abort_msg("%s", buf);
    }
    for (size_t k = 0; k < mc.n_params; k++)
        pg[k] = (float)k * 0.25f;
    ck_assert(dl_mlp_set_velocity(&mg, pg) == DL_OK);
    ck_assert(dl_mlp_get_velocity(&mg, mc.velocity) == DL_OK);
    ck_assert_msg(memcmp(pg, mc.velocity, mc.n_params * sizeof *pg) == 0, "GPU velocity set/get round trip differs");
    dl_free(&dev, dX), dl_free(&dev, dy);
    free(X), free(y), free(pg), free(ref);
    dl_mlp_free(&mc), dl_mlp_free(&mg);
    dl_device_close(&dev);
}
END_TEST

/* Values of a host array of t (DL_F16 or DL_BF16) as doubles, and the worst
 * |x| of them. */
static double *halves(const uint16_t *h, size_t n, dl_dtype t, double *maxabs)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    *maxabs = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = dl_lowp_get(h, i, t);
        *maxabs = fabs(d[i]) > *maxabs ? fabs(d[i]) : *maxabs;
    }
    return d;
}

/* got against ref (host arrays of t) as floats, within the 16-bit path's
 * tolerance (see test_mlp_f16_matches_cpu): 2^-7 for fp16, 2^-4 for bf16. */
static void check_f16_close(const uint16_t *got, const uint16_t *ref, size_t n, dl_dtype t, const char *what)
{
    double mx, *r = halves(ref, n, t, &mx);
    float *g = malloc((n ? n : 1) * sizeof *g);
    for (size_t i = 0; i < n; i++)
        g[i] = dl_lowp_get(got, i, t);
    int e = t == DL_BF16 ? -4 : -7;
    dl_cmp c;
    if (!dl_allclose_f32(g, r, n, ldexp(mx, e), ldexp(1.0, e), &c)) {
        char buf[1024];
        dl_cmp_format(&c, what, buf, sizeof buf);
        ck_abort_msg("%s", buf);
    }
    free(r), free(g);
}

static int f16_ready_order[DL_MLP_MAX_LAYERS], f16_n_ready;
static void f16_ready(void *ctx, int layer, void *grad, size_t count)
{
    const dl_mlp *m = ctx;
    ck_assert(grad == (void *)(m->grads16 + m->layer[layer].offset) && count == m->layer[layer].count);
    f16_ready_order[f16_n_ready++] = layer;
}

/* The 16-bit path on CUDA against the CPU (_i = 0: fp16, 1: bf16): same
 * model, params16 cast on each device, loss scale 1024. The element-wise
 * steps are the same DL_HD code, but cuBLAS sums in another order than the
 * CPU's sgemm, so a stored 16-bit value may land one ulp apart and carry
 * through the layers: logits and grads16 within 2^-7 relative +
 * 2^-7·max|ref| in fp16 (a few ulps of 2^-10 after three layers), 2^-4 in
 * bf16 (a few of its ulps of 2^-7), the loss within 1e-3 relative (1e-2). */
START_TEST(test_mlp_f16_matches_cpu)
{
    OPEN(dev);
    dl_dtype t = _i ? DL_BF16 : DL_F16;
    const char *tn = dl_dtype_name(t);
    size_t n = 300, sizes[] = {40, 64, 33, 10};
    float *X = randf(n * 40, 81);
    int32_t *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = (int32_t)(i * 7 % 10);
    dl_mlp mc, mg;
    ck_assert(dl_mlp_create(&mc, dl_cpu(), sizes, 4, 512, 5) == DL_OK);
    ck_assert(dl_mlp_create(&mg, &dev, sizes, 4, 512, 5) == DL_OK);
    ck_assert(dl_mlp_set_precision(&mc, t) == DL_OK && dl_mlp_set_precision(&mg, t) == DL_OK);
    ck_assert(dl_mlp_set_loss_scale(&mc, 1024.0f) == DL_OK && dl_mlp_set_loss_scale(&mg, 1024.0f) == DL_OK);
    ck_assert(dl_cast(dl_cpu(), mc.params16, t, mc.params, DL_F32, mc.n_params) == DL_OK);
    ck_assert_msg(dl_cast(&dev, mg.params16, t, mg.params, DL_F32, mg.n_params) == DL_OK, "%s", dl_last_error());
    float *dX = to_dev(&dev, X, n * 40);
    int32_t *dy = NULL;
    ck_assert(dl_malloc(&dev, (void **)&dy, n * sizeof *dy) == DL_OK);
    ck_assert(dl_memcpy_h2d(&dev, dy, y, n * sizeof *dy) == DL_OK);
    size_t C = 10;
    uint16_t *h = malloc(mc.n_params * sizeof *h);
    ck_assert(dl_memcpy_d2h(&dev, h, mg.params16, mc.n_params * sizeof *h) == DL_OK);
    ck_assert_msg(memcmp(h, mc.params16, mc.n_params * sizeof *h) == 0, "%s params16 cast differs on the GPU", tn);
    // forward: the 16-bit logits
    ck_assert(dl_mlp_forward(&mc, X, n) == DL_OK);
    ck_assert_msg(dl_mlp_forward(&mg, dX, n) == DL_OK, "%s", dl_last_error());
    uint16_t *lg = malloc(n * C * sizeof *lg);
    ck_assert(dl_memcpy_d2h(&dev, lg, mg.act16[3 - 1], n * C * sizeof *lg) == DL_OK);
    check_f16_close(lg, mc.act16[3 - 1], n * C, t,
                    t == DL_BF16 ? "bf16 logits, GPU vs CPU" : "fp16 logits, GPU vs CPU");
    // loss and backward
    double lc = 0, lgs = 0;
    ck_assert(dl_mlp_loss(&mc, y, n, &lc) == DL_OK && dl_mlp_loss(&mg, dy, n, &lgs) == DL_OK);
    ck_assert_msg(fabs(lc - lgs) <= (t == DL_BF16 ? 1e-2 : 1e-3) * fabs(lc), "%s loss CPU %.9g, GPU %.9g", tn, lc, lgs);
    ck_assert(dl_mlp_backward(&mc, X, n, 0, NULL, NULL) == DL_OK);
    f16_n_ready = 0;
    ck_assert_msg(dl_mlp_backward(&mg, dX, n, 0, f16_ready, &mg) == DL_OK, "%s", dl_last_error());
    ck_assert(f16_n_ready == 3 && f16_ready_order[0] == 2 && f16_ready_order[2] == 0);
    ck_assert(dl_memcpy_d2h(&dev, h, mg.grads16, mc.n_params * sizeof *h) == DL_OK);
    for (int l = 0; l < 3; l++) {
        char what[64];
        snprintf(what, sizeof what, "%s grads16 of layer %d (scale 1024), GPU vs CPU", tn, l);
        const dl_mlp_layer *L = &mc.layer[l];
        check_f16_close(h + L->offset, mc.grads16 + L->offset, L->count, t, what);
    }
    // unscaled on each device into grads: the CPU's bits from the GPU's halves
    int fc = -1, fg = -1;
    float *g32 = malloc(mc.n_params * sizeof *g32), *c32 = malloc(mc.n_params * sizeof *c32);
    ck_assert(dl_unscale(&dev, mg.grads16, t, mg.grads, mg.n_params, 1.0f / 1024.0f, &fg) == DL_OK);
    ck_assert(dl_unscale(dl_cpu(), h, t, c32, mc.n_params, 1.0f / 1024.0f, &fc) == DL_OK);
    ck_assert(fc == 0 && fg == 0);
    ck_assert(dl_memcpy_d2h(&dev, g32, mg.grads, mc.n_params * sizeof *g32) == DL_OK);
    ck_assert_msg(memcmp(g32, c32, mc.n_params * sizeof *g32) == 0, "dl_unscale on the GPU differs from the CPU");
    dl_free(&dev, dX), dl_free(&dev, dy);
    free(X), free(y), free(h), free(lg), free(g32), free(c32);
    dl_mlp_free(&mc), dl_mlp_free(&mg);
    dl_device_close(&dev);
}
END_TEST

/* dl_unscale on CUDA: the CPU's bits (one fp32 multiply) from fp32, fp16 and
 * bf16 sources past the grid's stride, the flag for inf and NaN anywhere,
 * count 0. */
START_TEST(test_unscale_on_device)
{
    OPEN(dev);
    size_t n = ((size_t)1 << 24) + 1000; // more than one grid covers: the stride loop runs
    float *f = randf(n, 12), *c = malloc(n * sizeof *c), *g = malloc(n * sizeof *g);
    dl_half *h = malloc(n * sizeof *h);
    dl_bf16 *bh = malloc(n * sizeof *bh);
    for (size_t i = 0; i < n; i++) {
        h[i] = dl_f2h(f[i] * 1000.0f);
        bh[i] = dl_f2bf(f[i] * 1e30f);
    }
    float *df = to_dev(&dev, f, n), *dd = NULL;
    dl_half *dh = NULL;
    dl_bf16 *db = NULL;
    ck_assert(dl_malloc(&dev, (void **)&dh, n * sizeof *dh) == DL_OK && dl_malloc(&dev, (void **)&dd, n * 4) == DL_OK);
    ck_assert(dl_malloc(&dev, (void **)&db, n * sizeof *db) == DL_OK);
    ck_assert(dl_memcpy_h2d(&dev, dh, h, n * sizeof *dh) == DL_OK);
    ck_assert(dl_memcpy_h2d(&dev, db, bh, n * sizeof *db) == DL_OK);
    const float bad[] = {0.0f, INFINITY, NAN}; // 0: nothing bad
    for (int b = 0; b < 3; b++) {
        size_t at = b == 1 ? n - 1 : n / 3;
        if (b > 0) {
            f[at] = bad[b], h[at] = dl_f2h(bad[b]), bh[at] = dl_f2bf(bad[b]);
            ck_assert(dl_memcpy_h2d(&dev, df + at, f + at, sizeof *f) == DL_OK);
            ck_assert(dl_memcpy_h2d(&dev, dh + at, h + at, sizeof *h) == DL_OK);
            ck_assert(dl_memcpy_h2d(&dev, db + at, bh + at, sizeof *bh) == DL_OK);
        }
        for (int t = 0; t < 3; t++) {
            dl_dtype ty = t == 2 ? DL_BF16 : t ? DL_F16 : DL_F32;
            const void *src = t == 2 ? (const void *)bh : t ? (const void *)h : f;
            const void *dsrc = t == 2 ? (const void *)db : t ? (const void *)dh : df;
            int fc = -1, fg = -1;
            ck_assert(dl_unscale(dl_cpu(), src, ty, c, n, 1.0f / 3.0f, &fc) == DL_OK);
            ck_assert_msg(dl_unscale(&dev, dsrc, ty, dd, n, 1.0f / 3.0f, &fg) == DL_OK, "%s", dl_last_error());
            ck_assert_msg(fc == (b > 0) && fg == fc, "case %d %s: found_inf CPU %d, GPU %d", b, dl_dtype_name(ty), fc,
                          fg);
            ck_assert(dl_memcpy_d2h(&dev, g, dd, n * sizeof *g) == DL_OK);
            size_t i = 0;
            while (i < n && (memcmp(&c[i], &g[i], sizeof *c) == 0 || (isnan(c[i]) && isnan(g[i]))))
                i++;
            ck_assert_msg(i == n, "case %d %s [%zu]: CPU %.9g, GPU %.9g", b, dl_dtype_name(ty), i,
                          (double)c[i < n ? i : 0], (double)g[i < n ? i : 0]);
        }
    }
    int fg = 1;
    ck_assert(dl_unscale(&dev, NULL, DL_F16, NULL, 0, 1.0f, &fg) == DL_OK && fg == 0);
    ck_assert(dl_unscale(&dev, f, DL_F32, dd, 4, 1.0f, &fg) == DL_ERR_ARG); // a host source
    ck_assert(dl_unscale(&dev, NULL, DL_BF16, NULL, 0, 1.0f, &fg) == DL_OK && fg == 0);
    dl_free(&dev, df), dl_free(&dev, dh), dl_free(&dev, dd), dl_free(&dev, db);
    free(f), free(c), free(g), free(h), free(bh);
    dl_device_close(&dev);
}
END_TEST

/* Element i of a host array of t (DL_F32, DL_F16 or DL_BF16) as a double. */
static double elem(const void *p, size_t i, dl_dtype t)
{
    if (dl_lowp(t))
        return dl_lowp_get(p, i, t);
    float f;
    memcpy(&f, (const char *)p + i * sizeof f, sizeof f);
    return f;
}

/* Runs dl_add on the CPU and on dev over the same inputs (count elements of
 * t, esz bytes each); in_place adds dst to itself. Returns the first index
 * where the bits differ (NaN == NaN), or count. */
static size_t add_cpu_vs_gpu(const dl_device *dev, const void *dst, const void *src, size_t count, dl_dtype t,
                             int in_place)
{
    size_t esz = dl_dtype_size(t), bytes = count * esz;
    unsigned char *c = malloc(bytes), *g = malloc(bytes);
    void *dd = NULL, *ds = NULL;
    memcpy(c, dst, bytes);
    ck_assert(dl_malloc(dev, &dd, bytes) == DL_OK && dl_malloc(dev, &ds, bytes) == DL_OK);
    ck_assert(dl_memcpy_h2d(dev, dd, dst, bytes) == DL_OK && dl_memcpy_h2d(dev, ds, src, bytes) == DL_OK);
    ck_assert(dl_add(dl_cpu(), c, in_place ? (const void *)c : src, count, t) == DL_OK);
    ck_assert_msg(dl_add(dev, dd, in_place ? dd : ds, count, t) == DL_OK, "%s", dl_last_error());
    ck_assert(dl_memcpy_d2h(dev, g, dd, bytes) == DL_OK);
    size_t i = 0;
    for (; i < count; i++) {
        if (memcmp(c + i * esz, g + i * esz, esz) == 0)
            continue;
        if (!(isnan(elem(c, i, t)) && isnan(elem(g, i, t))))
            break;
    }
    dl_free(dev, dd), dl_free(dev, ds);
    free(c), free(g);
    return i;
}

/* dl_add on CUDA gives the CPU's bits: fp32 over random values of many
 * binades, fp16 and bf16 over every 16-bit value against spread sources
 * (ties, subnormals, overflow included), in place too, and past the grid's
 * stride. */
START_TEST(test_add_matches_cpu_bitwise)
{
    OPEN(dev);
    size_t n = (size_t)1 << 24; // more elements than one grid covers: the stride loop runs
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    dl_rng r;
    dl_rng_seed(&r, 11, 3);
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)((dl_rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)(dl_rng_uniform(&r) * 100) - 50));
        b[i] = (float)((dl_rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)(dl_rng_uniform(&r) * 100) - 50));
    }
    a[0] = 1e-45f, b[0] = 1e-45f; // subnormals are kept on the GPU too (no flush to zero)
    size_t k = add_cpu_vs_gpu(&dev, a, b, n, DL_F32, 0);
    ck_assert_msg(k == n, "f32: CPU and GPU differ at [%zu] (%.9g + %.9g)", k, (double)a[k], (double)b[k]);
    k = add_cpu_vs_gpu(&dev, a, b, n, DL_F32, 1);
    ck_assert_msg(k == n, "f32 in place: CPU and GPU differ at [%zu]", k);
    size_t m = 65536 * 64;
    dl_half *h = malloc(m * sizeof *h), *g = malloc(m * sizeof *g);
    for (size_t i = 0; i < m; i++) {
        h[i] = dl_half_from_bits((uint16_t)(i & 0xffff));
        g[i] = dl_half_from_bits((uint16_t)((i >> 16) * 1031 + (i >> 16 & 1) * 0x8000));
    }
    k = add_cpu_vs_gpu(&dev, h, g, m, DL_F16, 0);
    ck_assert_msg(k == m, "f16: CPU and GPU differ at [%zu]: 0x%04x + 0x%04x", k, k < m ? dl_half_bits(h[k]) : 0,
                  k < m ? dl_half_bits(g[k]) : 0);
    k = add_cpu_vs_gpu(&dev, h, g, m, DL_F16, 1);
    ck_assert_msg(k == m, "f16 in place: CPU and GPU differ at [%zu]", k);
    // bf16: the same patterns read as bf16 (every value, ties, subnormals, overflow)
    k = add_cpu_vs_gpu(&dev, h, g, m, DL_BF16, 0);
    ck_assert_msg(k == m, "bf16: CPU and GPU differ at [%zu]: 0x%04x + 0x%04x", k, k < m ? dl_half_bits(h[k]) : 0,
                  k < m ? dl_half_bits(g[k]) : 0);
    k = add_cpu_vs_gpu(&dev, h, g, m, DL_BF16, 1);
    ck_assert_msg(k == m, "bf16 in place: CPU and GPU differ at [%zu]", k);
    // a host pointer on the GPU is refused before any kernel runs
    ck_assert(dl_add(&dev, a, b, 4, DL_F32) == DL_ERR_ARG);
    free(a), free(b), free(h), free(g);
    dl_device_close(&dev);
}
END_TEST

/* dl_cast on CUDA gives the CPU's bits (a NaN: any NaN) for every pair of
 * f32, f16 and bf16: fp32 bit patterns over the whole range (subnormals,
 * ties, overflow, NaN) and every 16-bit pattern. */
START_TEST(test_cast_matches_cpu_bitwise)
{
    OPEN(dev);
    size_t n = (size_t)1 << 22;
    uint32_t *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i & 0xffff); // low bits near ties too
    uint16_t *h = malloc(65536 * sizeof *h);
    for (size_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    const dl_dtype types[3] = {DL_F32, DL_F16, DL_BF16};
    for (int s = 0; s < 3; s++) {
        const void *src = s == 0 ? (const void *)f : (const void *)h;
        size_t count = s == 0 ? n : 65536, ssz = dl_dtype_size(types[s]);
        void *ds = NULL;
        ck_assert(dl_malloc(&dev, &ds, count * ssz) == DL_OK);
        ck_assert(dl_memcpy_h2d(&dev, ds, src, count * ssz) == DL_OK);
        for (int d = 0; d < 3; d++) {
            if (d == s)
                continue;
            size_t dsz = dl_dtype_size(types[d]);
            unsigned char *c = malloc(count * dsz), *g = malloc(count * dsz);
            void *dd = NULL;
            ck_assert(dl_malloc(&dev, &dd, count * dsz) == DL_OK);
            ck_assert(dl_cast(dl_cpu(), c, types[d], src, types[s], count) == DL_OK);
            ck_assert_msg(dl_cast(&dev, dd, types[d], ds, types[s], count) == DL_OK, "%s", dl_last_error());
            ck_assert(dl_memcpy_d2h(&dev, g, dd, count * dsz) == DL_OK);
            size_t i = 0;
            while (i < count && (memcmp(c + i * dsz, g + i * dsz, dsz) == 0 ||
                                 (isnan(elem(c, i, types[d])) && isnan(elem(g, i, types[d])))))
                i++;
            ck_assert_msg(i == count, "%s -> %s [%zu]: CPU %.9g, GPU %.9g", dl_dtype_name(types[s]),
                          dl_dtype_name(types[d]), i, elem(c, i < count ? i : 0, types[d]),
                          elem(g, i < count ? i : 0, types[d]));
            dl_free(&dev, dd);
            free(c), free(g);
        }
        dl_free(&dev, ds);
    }
    free(f), free(h);
    dl_device_close(&dev);
}
END_TEST

START_TEST(test_copy_on_device)
{
    OPEN(dev);
    size_t n = 1000;
    float *h = randf(n, 95), *back = malloc(n * sizeof *back);
    float *d = to_dev(&dev, h, n), *e = NULL;
    ck_assert(dl_malloc(&dev, (void **)&e, n * sizeof *e) == DL_OK);
    ck_assert(dl_copy(&dev, e, d, n, DL_F32) == DL_OK);
    ck_assert(dl_memcpy_d2h(&dev, back, e, n * sizeof *back) == DL_OK);
    ck_assert(memcmp(h, back, n * sizeof *h) == 0);
    ck_assert(dl_copy(&dev, d, d, n, DL_F32) == DL_OK);
    ck_assert(dl_copy(&dev, d + 1, d, n - 1, DL_F32) == DL_ERR_ARG); // overlap: refused on CUDA
    dl_free(&dev, d), dl_free(&dev, e);
    free(h), free(back);
    dl_device_close(&dev);
}
END_TEST

/* A communicator of this process alone, whatever launched the test. */
static dl_comm *world_of_one(void)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c = NULL;
    ck_assert(dl_comm_init(NULL, NULL, &c) == DL_OK);
    return c;
}

/* A world of one with device buffers: isendrecv to itself is a copy on the
 * device (queued on the compute stream), completed by dl_comm_wait. */
START_TEST(test_isendrecv_self_on_device)
{
    OPEN(dev);
    dl_comm *c = world_of_one();
    ck_assert(dl_comm_use_device(c, &dev) == DL_OK);
    size_t n = (size_t)1 << 18; // 1 MiB of floats
    float *h = randf(n, 90), *back = malloc(n * sizeof *back);
    float *d_send = to_dev(&dev, h, n), *d_recv = NULL;
    ck_assert(dl_malloc(&dev, (void **)&d_recv, n * sizeof *d_recv) == DL_OK);
    ck_assert(dl_memset0(&dev, d_recv, n * sizeof *d_recv) == DL_OK);
    dl_comm_req *r[2];
    ck_assert(dl_comm_isendrecv(c, d_send, n - 5, 0, d_recv, n - 5, 0, DL_F32, &r[0]) == DL_OK);
    ck_assert(dl_comm_isendrecv(c, NULL, 0, 0, NULL, 0, 0, DL_F32, &r[1]) == DL_OK);
    ck_assert(dl_comm_wait(c, r[1]) == DL_OK);
    ck_assert(dl_comm_wait(c, r[0]) == DL_OK);
    ck_assert(dl_memcpy_d2h(&dev, back, d_recv, n * sizeof *back) == DL_OK);
    ck_assert_msg(memcmp(back, h, (n - 5) * sizeof *h) == 0, "isendrecv to itself changed the data");
    for (size_t i = n - 5; i < n; i++)
        ck_assert_msg(back[i] == 0.0f, "isendrecv wrote past its count at %zu", i);
    dl_comm_stats st;
    dl_comm_stats_get(c, &st);
    ck_assert_uint_eq(st.calls[DL_OP_SENDRECV], 2);
    ck_assert_uint_eq(st.bytes[DL_OP_SENDRECV], (n - 5) * sizeof(float));
    ck_assert_uint_eq(st.messages, 1);
    dl_free(&dev, d_send), dl_free(&dev, d_recv);
    free(h), free(back);
    dl_comm_finalize(c);
    dl_device_close(&dev);
}
END_TEST

/* The trace on the device: a forward and a blocking allreduce recorded with
 * CUDA events, the allreduce first on the compute stream, then on a stream
 * of its own (as NCCL's comm stream). Device times: ordered within a span,
 * the allreduce after the forward it waits for (the GPU ran the forward
 * after the host returned), never before the host issued the work, and
 * inside the host's [start, read] window. */
START_TEST(test_trace_device_times)
{
    OPEN(dev);
    dl_comm *c = world_of_one();
    ck_assert(dl_comm_use_device(c, &dev) == DL_OK);
    const size_t sizes[] = {512, 1024, 1024, 10}, n = 4096;
    dl_mlp m;
    ck_assert(dl_mlp_create(&m, &dev, sizes, 4, n, 7) == DL_OK);
    float *h = randf(n * sizes[0], 91), *X = to_dev(&dev, h, n * sizes[0]);
    dl_stream side = NULL;
    ck_assert(dl_stream_create(&dev, &side) == DL_OK);
    for (int round = 0; round < 2; round++) {
        dl_trace_use_device(&dev, round ? side : NULL);
        dl_trace_clear();
        double start = dl_now();
        dl_trace_start(0);
        ck_assert(dl_mlp_forward(&m, X, n) == DL_OK);
        ck_assert(dl_comm_allreduce(c, m.grads, m.n_params, DL_F32, DL_RED_AVG) == DL_OK);
        dl_trace_stop();
        size_t ne = 0;
        const dl_span *e = dl_trace_events(&ne);
        double window = dl_now() - start; // the trace's origin is after start
        ck_assert_uint_eq(ne, 2);
        ck_assert(e[0].kind == DL_EV_FORWARD && e[1].kind == DL_EV_ALLREDUCE);
        for (size_t k = 0; k < ne; k++) {
            ck_assert_msg(e[k].device == 1, "round %d, span %zu kept host times", round, k);
            ck_assert_msg(0 <= e[k].t0 && e[k].t0 <= e[k].t1 && e[k].t1 <= window,
                          "round %d, span %zu: device %g..%g s outside [0, %g]", round, k, e[k].t0, e[k].t1, window);
            ck_assert_msg(e[k].t0 >= e[k].host_t0 && e[k].host_t1 >= e[k].host_t0,
                          "round %d, span %zu: device start %g before the host issued it at %g", round, k, e[k].t0,
                          e[k].host_t0);
        }
        ck_assert_msg(e[1].t0 >= e[0].t1, "round %d: the allreduce began at %g, before the forward ended at %g", round,
                      e[1].t0, e[0].t1);
        printf("trace on %s, round %d: forward issued in %.1f us, ran %.1f us; allreduce at +%.1f us\n",
               dl_device_describe(&dev), round, 1e6 * (e[0].host_t1 - e[0].host_t0), 1e6 * (e[0].t1 - e[0].t0),
               1e6 * (e[1].t0 - e[0].t1));
    }
    dl_trace_use_device(NULL, NULL);
    dl_trace_clear();
    dl_stream_destroy(&dev, side);
    dl_free(&dev, X);
    free(h);
    dl_mlp_free(&m);
    dl_comm_finalize(c);
    dl_device_close(&dev);
}
END_TEST

/* dl_batch on CUDA: gathered rows and a range land on the device as the
 * CPU stages them (the CPU tier checks the CPU side itself). */
START_TEST(test_batch_on_device)
{
    OPEN(dev);
    dl_dataset ds;
    ck_assert(dl_dataset_alloc(&ds, 9, 5, 3) == DL_OK);
    for (size_t i = 0; i < 9 * 5; i++)
        ds.X[i] = (float)i;
    for (size_t i = 0; i < 9; i++)
        ds.y[i] = (int32_t)(i % 3);
    dl_batch b;
    ck_assert(dl_batch_create(&b, &dev, 4, 5) == DL_OK);
    const size_t idx[3] = {8, 0, 4};
    float X[4 * 5];
    int32_t y[4];
    ck_assert(dl_batch_gather(&b, &ds, idx, 3) == DL_OK);
    ck_assert(b.X == b.dX && b.y == b.dy); // the model reads the device copy
    ck_assert(dl_memcpy_d2h(&dev, X, b.X, 3 * 5 * sizeof *X) == DL_OK);
    ck_assert(dl_memcpy_d2h(&dev, y, b.y, 3 * sizeof *y) == DL_OK);
    for (size_t k = 0; k < 3; k++) {
        ck_assert(memcmp(X + k * 5, ds.X + idx[k] * 5, 5 * sizeof *X) == 0);
        ck_assert_int_eq(y[k], ds.y[idx[k]]);
    }
    ck_assert(dl_batch_range(&b, &ds, 5, 4) == DL_OK); // rows 5..8, copied, not a view
    ck_assert(b.X == b.dX && b.n == 4);
    ck_assert(dl_memcpy_d2h(&dev, X, b.X, 4 * 5 * sizeof *X) == DL_OK);
    ck_assert(memcmp(X, ds.X + 25, 4 * 5 * sizeof *X) == 0);
    dl_batch_free(&b);
    dl_dataset_free(&ds);
    dl_device_close(&dev);
}
END_TEST

/* Evaluation on CUDA (the set resident on the device, the right predictions
 * counted there) scores the same model as the CPU does, within a near-tie's
 * row, and reads one number back. */
START_TEST(test_eval_matches_cpu)
{
    OPEN(dev);
    dl_comm *c = world_of_one();
    size_t n = 300, d = 20;
    float *x = randf(n * d, 77);
    dl_dataset set;
    ck_assert(dl_dataset_alloc(&set, n, d, 4) == DL_OK);
    memcpy(set.X, x, n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        set.y[i] = (int32_t)((set.X[i * d] > 0) + 2 * (set.X[i * d + 1] > 0));
    const size_t sizes[] = {20, 16, 4};
    dl_mlp mg, mc;
    ck_assert(dl_mlp_create(&mg, &dev, sizes, 3, 64, 3) == DL_OK);
    ck_assert(dl_mlp_create(&mc, dl_cpu(), sizes, 3, 64, 3) == DL_OK);
    dl_devset sg, sc;
    ck_assert(dl_devset_make(&sg, &dev, &set, 0, n) == DL_OK);
    ck_assert(dl_devset_make(&sc, dl_cpu(), &set, 0, n) == DL_OK);
    double ag = -1, ac = -1;
    dl_dev_stats before, after;
    dl_dev_stats_get(&before);
    ck_assert(dl_eval_accuracy(c, &mg, &sg, 64, &ag) == DL_OK);
    dl_dev_stats_get(&after);
    ck_assert_uint_eq(after.d2h_bytes - before.d2h_bytes, sizeof(double));
    ck_assert(dl_eval_accuracy(c, &mc, &sc, 64, &ac) == DL_OK);
    ck_assert_msg(fabs(ag - ac) <= 1.0 / n, "accuracy %g on the GPU, %g on the CPU", ag, ac);
    dl_devset_free(&sg), dl_devset_free(&sc);
    dl_mlp_free(&mg), dl_mlp_free(&mc);
    dl_dataset_free(&set);
    free(x);
    dl_comm_finalize(c);
    dl_device_close(&dev);
}
END_TEST

#ifdef DL_CUDA_EMU
/* The kit's own kernels under the emulated device's checked launches
 * (common/emu/README.md), with EMU_CHECK_REPRO, the kit's contract that a
 * run gives the same bits every time: each launch of a training step in
 * fp32, fp16 and bf16 (forward, the loss and its device accumulator,
 * backward, unscale with an overflow to find, SGD), the ops (add, cast),
 * the device gather of a batch and evaluation's count runs in five thread
 * and block orders, and every one gives the same bits, reaches the same
 * barriers and stays inside its memory. A finding fails the test with the
 * emulator's words (kind, kernel, launch site, what changed). The results
 * are the CPU's as the other tests check them; here only the checks count. */
START_TEST(test_kit_kernels_checked)
{
    OPEN(dev);
    const unsigned want = EMU_CHECK_ORDERS | EMU_CHECK_REPRO;
    emu_findings_clear();
    int quiet = emu_set_quiet(1); // (listed below, with the test's failure)
    unsigned before = emu_check_set(want);
    ck_assert_uint_eq(emu_check_get(), want);
    size_t n = 96, d = 40, sizes[] = {40, 64, 33, 10};
    dl_dataset set;
    ck_assert(dl_dataset_alloc(&set, n, d, 10) == DL_OK);
    float *x = randf(n * d, 82);
    memcpy(set.X, x, n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        set.y[i] = (int32_t)(i * 7 % 10);
    dl_devset s;
    dl_batch b;
    ck_assert(dl_devset_make(&s, &dev, &set, 0, n) == DL_OK && dl_batch_create(&b, &dev, n, d) == DL_OK);
    size_t idx[96];
    for (size_t i = 0; i < n; i++)
        idx[i] = (i * 37) % n;
    ck_assert_msg(dl_batch_take_idx(&b, &s, idx, n) == DL_OK, "%s", dl_last_error()); // the device gather
    const dl_dtype types[3] = {DL_F32, DL_F16, DL_BF16};
    for (int k = 0; k < 3; k++) {
        dl_mlp m;
        ck_assert(dl_mlp_create(&m, &dev, sizes, 4, n, 5) == DL_OK);
        if (types[k] != DL_F32) {
            ck_assert(dl_mlp_set_precision(&m, types[k]) == DL_OK && dl_mlp_set_loss_scale(&m, 1024.0f) == DL_OK);
            ck_assert(dl_cast(&dev, m.params16, types[k], m.params, DL_F32, m.n_params) == DL_OK);
        }
        double loss = 0;
        int found = -1;
        ck_assert_msg(dl_mlp_forward(&m, b.X, n) == DL_OK && dl_mlp_loss(&m, b.y, n, &loss) == DL_OK, "%s",
                      dl_last_error());
        ck_assert_msg(dl_mlp_backward(&m, b.X, n, 0, NULL, NULL) == DL_OK, "%s", dl_last_error());
        if (types[k] != DL_F32) {
            ck_assert(dl_unscale(&dev, m.grads16, types[k], m.grads, m.n_params, 1.0f / 1024.0f, &found) == DL_OK);
            ck_assert_int_eq(found, 0);
        }
        ck_assert(dl_mlp_sgd(&m, 0.1f, 0.9f, 1e-3f) == DL_OK);
        dl_mlp_free(&m);
    }
    // the ops, an overflow for unscale to find, and evaluation's count of right predictions
    float *d1 = to_dev(&dev, x, n * d), *d2 = to_dev(&dev, x + 1, n * d - 1), inf = INFINITY;
    ck_assert(dl_add(&dev, d1, d2, n * d - 1, DL_F32) == DL_OK);
    uint16_t *h16 = NULL;
    ck_assert(dl_malloc(&dev, (void **)&h16, n * d * sizeof *h16) == DL_OK);
    ck_assert(dl_cast(&dev, h16, DL_F16, d1, DL_F32, n * d) == DL_OK);
    ck_assert(dl_memcpy_h2d(&dev, d1 + 5, &inf, sizeof inf) == DL_OK);
    int found = 0;
    ck_assert(dl_unscale(&dev, d1, DL_F32, d2, n * d - 1, 0.5f, &found) == DL_OK && found == 1);
    dl_comm *c = world_of_one();
    dl_mlp m;
    double acc = -1;
    ck_assert(dl_mlp_create(&m, &dev, sizes, 4, 32, 6) == DL_OK);
    ck_assert(dl_eval_accuracy(c, &m, &s, 32, &acc) == DL_OK && acc >= 0 && acc <= 1);
    emu_check_set(before);
    emu_set_quiet(quiet);
    int nf = emu_finding_count();
    for (int i = 0; i < nf && i < 5; i++) {
        emu_finding f;
        if (emu_finding_get(i, &f) == 0)
            printf("checked launch finding %d: %s: %s\n", i, emu_kind_name(f.kind), f.text);
    }
    emu_finding f0 = {0};
    emu_finding_get(0, &f0);
    ck_assert_msg(nf == 0, "%d finding(s) in the kit's kernels under checked launches, the first: %s: %s", nf,
                  emu_kind_name(f0.kind), f0.text);
    dl_mlp_free(&m);
    dl_comm_finalize(c);
    dl_free(&dev, d1), dl_free(&dev, d2), dl_free(&dev, h16);
    dl_batch_free(&b), dl_devset_free(&s), dl_dataset_free(&set);
    free(x);
    dl_device_close(&dev);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("cuda_vs_cpu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_device_memory_events);
    tcase_add_test(tc, test_gemm_matches_cpu);
    tcase_add_test(tc, test_gemv_matches_cpu);
    tcase_add_loop_test(tc, test_gemm_f16_matches_cpu, 0, 2); // fp16, bf16
    tcase_add_test(tc, test_bad_calls_are_errors);
    tcase_add_test(tc, test_mlp_matches_cpu);
    tcase_add_loop_test(tc, test_mlp_f16_matches_cpu, 0, 2); // fp16, bf16
    tcase_add_test(tc, test_unscale_on_device);
    tcase_add_test(tc, test_isendrecv_self_on_device);
    tcase_add_test(tc, test_trace_device_times);
    tcase_add_test(tc, test_add_matches_cpu_bitwise);
    tcase_add_test(tc, test_cast_matches_cpu_bitwise);
    tcase_add_test(tc, test_copy_on_device);
    tcase_add_test(tc, test_batch_on_device);
    tcase_add_test(tc, test_eval_matches_cpu);
#ifdef DL_CUDA_EMU
    tcase_add_test(tc, test_kit_kernels_checked);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
