/* step.c (bench) — one training step of the kit's MLP on the CPU, phase by
 * phase: what lab 05's (and lab 03's and 06's) step costs this machine.
 *
 *   build/bench/step [--hidden 512,512,512,512] [--batch 4096] [--steps 12]
 *                    [--threads N] [--json FILE]
 *
 * The model is lab 05's (784 inputs, the hidden widths, 10 classes; SGD with
 * momentum 0.9 and weight decay 5e-4), on random inputs, fp32. The first two
 * steps warm up; the medians of the others are printed, each phase's and the
 * whole step's, with the step's GEMM rate (FLOPs as dl_gemm counts them).
 * Before it, the BLAS's rate on one of the step's GEMMs (4096 x 512 x 512,
 * best of 5) beside the peak the CPU's features and clock allow (dl/cpu.h).
 * --threads sets the BLAS's threads (default: as the BLAS starts, one per
 * core). grader/bench/vs-torch.sh runs it beside PyTorch's same step. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // printf
#include <stdlib.h> // malloc, qsort
#include <string.h> // strcmp

#include "args.h" // bench_args
#include "dl/blas.h" // dl_blas_set_threads, dl_blas_describe, dl_gemm
#include "dl/cpu.h" // dl_cpu_peak_gflops, dl_cpu_features
#include "dl/device.h" // dl_cpu
#include "dl/json.h" // dl_json
#include "dl/mlp.h" // dl_mlp
#include "dl/rng.h" // dl_rng
#include "dl/timer.h" // dl_now

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* GFLOP/s of the CPU BLAS on (M, N, K) = (4096, 512, 512), C = A·Bᵀ: best of 5 after one. */
static double gemm_rate(void)
{
    size_t M = 4096, N = 512, K = 512;
    float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B), *C = malloc(M * N * sizeof *C);
    double best = 1e30;
    if (A == NULL || B == NULL || C == NULL) {
        free(A), free(B), free(C);
        return 0.0;
    }
    for (size_t i = 0; i < M * K; i++)
        A[i] = (float)(i % 13) * 0.01f;
    for (size_t i = 0; i < N * K; i++)
        B[i] = (float)(i % 7) * 0.01f;
    for (int r = 0; r < 6; r++) {
        double t0 = dl_now();
        dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);
        double t = dl_now() - t0;
        if (r > 0 && t < best)
            best = t;
    }
    free(A), free(B), free(C);
    return 2.0 * M * N * K / best / 1e9;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    const char *hidden = "512,512,512,512", *json = NULL;
    size_t batch = 4096;
    int steps = 12, threads = 0;
    const bench_opt opts[] = {
        {"hidden", 's', &hidden, 0, "the MLP's widths (784 in, 10 out around them)"},
        {"batch", 'z', &batch, 1, "rows a step"},
        {"steps", 'i', &steps, 3, "steps timed (the median is kept)"},
        {"threads", 'i', &threads, 0, "BLAS threads (0: the library's choice)"},
        {"json", 's', &json, 0, "where the times go as JSON"},
    };
    int rc = bench_args(argc, argv, "bench step", "One training step of the kit's MLP, timed (make bench).", opts,
                        (int)(sizeof opts / sizeof opts[0]));
    if (rc >= 0) // --help, or a flag refused
        return rc;
    size_t sizes[16];
    int n_sizes = 0;
    if (dl_mlp_parse_hidden("--hidden", hidden, sizes, &n_sizes) != DL_OK) {
        fprintf(stderr, "bench step: %s\n", dl_last_error());
        return 2;
    }
    sizes[0] = 784;
    sizes[n_sizes - 1] = 10;
    if (threads > 0)
        dl_blas_set_threads(threads);
    dl_mlp m;
    if (dl_mlp_create(&m, dl_cpu(), sizes, n_sizes, batch, 1) != DL_OK) {
        fprintf(stderr, "bench step: %s\n", dl_last_error());
        return 1;
    }
    float *X = malloc(batch * 784 * sizeof *X);
    int32_t *y = malloc(batch * sizeof *y);
    double *t[5];
    for (int k = 0; k < 5; k++)
        t[k] = malloc((size_t)steps * sizeof *t[k]);
    if (X == NULL || y == NULL || t[4] == NULL) {
        fprintf(stderr, "bench step: out of memory\n");
        return 1;
    }
    dl_rng r;
    dl_rng_seed(&r, 3, 3);
    for (size_t i = 0; i < batch * 784; i++)
        X[i] = (float)dl_rng_uniform(&r);
    for (size_t i = 0; i < batch; i++)
        y[i] = (int32_t)(dl_rng_uniform(&r) * 10.0) % 10;
    double flops = dl_mlp_step_flops(&m, batch);
    dl_blas_info b;
    dl_blas_describe(&b);
    double rate = gemm_rate(), peak = dl_cpu_peak_gflops(b.threads);
    printf("sgemm 4096x512x512 on %d thread(s): %.1f GFLOP/s; the vector units' fp32 peak at the reported %.2f GHz: "
           "%.1f GFLOP/s (%s; a core may run above the reported clock)\n",
           b.threads, rate, dl_cpu_clock_ghz(), peak, dl_cpu_features());
    int kept = 0;
    for (int s = 0; s < steps; s++) {
        double t0 = dl_now();
        dl_status st = dl_mlp_forward(&m, X, batch);
        double t1 = dl_now();
        if (st == DL_OK)
            st = dl_mlp_loss(&m, y, batch, NULL);
        double t2 = dl_now();
        if (st == DL_OK)
            st = dl_mlp_backward(&m, X, batch, 0, NULL, NULL);
        double t3 = dl_now();
        if (st == DL_OK)
            st = dl_mlp_sgd(&m, 0.02f, 0.9f, 5e-4f);
        double t4 = dl_now();
        if (st == DL_OK)
            st = dl_mlp_loss_commit(&m, 1, 1, NULL);
        if (st != DL_OK) {
            fprintf(stderr, "bench step: %s\n", dl_last_error());
            return 1;
        }
        if (s < 2)
            continue; // warm-up
        t[0][kept] = t1 - t0, t[1][kept] = t2 - t1, t[2][kept] = t3 - t2, t[3][kept] = t4 - t3, t[4][kept] = t4 - t0;
        kept++;
    }
    static const char *const names[5] = {"forward", "loss", "backward", "sgd", "step"};
    double med[5];
    for (int k = 0; k < 5; k++)
        med[k] = median(t[k], kept);
    printf("step of 784-%s-10, batch %zu, %s %s (%s kernels), %d BLAS thread(s): %.1f ms, %.1f GFLOP/s\n", hidden,
           batch, b.library, b.version, b.core, b.threads, 1e3 * med[4], flops / med[4] / 1e9);
    for (int k = 0; k < 4; k++)
        printf("  %-8s %7.2f ms\n", names[k], 1e3 * med[k]);
    if (json != NULL) {
        dl_json j;
        if (dl_json_open(&j, json) != DL_OK) {
            fprintf(stderr, "bench step: %s\n", dl_last_error());
            return 2;
        }
        dl_json_object(&j, NULL);
        dl_json_str(&j, "hidden", hidden);
        dl_json_int(&j, "batch", (long long)batch);
        dl_json_int(&j, "threads", b.threads);
        for (int k = 0; k < 5; k++) {
            char key[32];
            snprintf(key, sizeof key, "%s_ms", names[k]);
            dl_json_num(&j, key, 1e3 * med[k]);
        }
        dl_json_num(&j, "GFLOPs", flops / med[4] / 1e9);
        dl_json_num(&j, "sgemm_GFLOPs", rate);
        dl_json_num(&j, "peak_GFLOPs", peak);
        dl_json_str(&j, "blas", b.library);
        dl_json_str(&j, "blas_version", b.version);
        dl_json_str(&j, "blas_core", b.core);
        dl_json_end_object(&j);
        if (dl_json_close(&j) != DL_OK) {
            fprintf(stderr, "bench step: %s\n", dl_last_error());
            return 2;
        }
    }
    dl_mlp_free(&m);
    return 0;
}
