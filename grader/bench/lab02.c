/* lab02.c (bench) — a softmax-regression epoch on Fashion-MNIST against the
 * machine's single-thread sgemm rate, measured side by side in one run.
 *
 * An epoch's arithmetic is two GEMMs per step (Z = X Wᵀ and gW = (P − Y)ᵀ X,
 * 2·n·C·d FLOPs each), counted by dl_flops. Its rate divided by a large square
 * sgemm's rate on the same thread says how GEMM-bound the epoch is; the rest
 * is the batch gather, the per-row softmax and the update. Batch sizes from
 * 128 (the default) up to 4096 show where the time goes. One thread
 * throughout. Writes JSON, CSV and a plot into --out. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // printf
#include <stdlib.h> // malloc
#include <string.h> // strcmp

#include "args.h" // bench_args
#include "dl/blas.h" // dl_gemm, dl_flops, dl_blas_set_threads
#include "dl/data.h" // dl_data_load
#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // dl_json
#include "dl/plot.h" // dl_plot
#include "dl/rng.h" // dl_rng
#include "dl/timer.h" // dl_now
#include "eval.h"

static double sgemm_gflops(int reps)
{
    size_t n = 1024;
    float *A = malloc(n * n * sizeof *A), *B = malloc(n * n * sizeof *B), *C = malloc(n * n * sizeof *C);
    dl_rng r;
    dl_rng_seed(&r, 1, 1);
    for (size_t i = 0; i < n * n; i++) {
        A[i] = (float)dl_rng_uniform(&r);
        B[i] = (float)dl_rng_uniform(&r);
    }
    double best = 1e30;
    for (int k = 0; k < reps + 1; k++) {
        double t0 = dl_now();
        dl_gemm(dl_cpu(), DL_NO_TRANS, DL_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        double t = dl_now() - t0;
        if (k > 0 && t < best)
            best = t;
    }
    free(A), free(B), free(C);
    return 2.0 * n * n * n / best / 1e9;
}

/* The epoch's two GEMM shapes alone, over the same rows in batches of bs. */
static double gemms_gflops(const float *X, size_t n, size_t d, size_t bs)
{
    size_t C = 10;
    float *W = calloc(C * d, sizeof *W), *Z = calloc(bs * C, sizeof *Z), *G = calloc(C * d, sizeof *G);
    double t0 = dl_now();
    for (size_t s = 0; s + bs <= n; s += bs) {
        dl_gemm(dl_cpu(), DL_NO_TRANS, DL_TRANS, bs, C, d, 1.0f, X + s * d, d, W, d, 0.0f, Z, C);
        dl_gemm(dl_cpu(), DL_TRANS, DL_NO_TRANS, C, d, bs, 1.0f, Z, C, X + s * d, d, 0.0f, G, d);
    }
    double t = dl_now() - t0;
    free(W), free(Z), free(G);
    return 4.0 * (double)(n / bs * bs) * C * d / t / 1e9;
}

int main(int argc, char **argv)
{
    const char *out = "build/bench";
    int reps = 3;
    const bench_opt opts[] = {
        {"reps", 'i', &reps, 1, "repetitions of each batch size (the best is kept)"},
        {"out", 's', &out, 0, "where lab02.json and the plot go"},
    };
    int rc = bench_args(argc, argv, "bench lab02",
                        "Lab 02's softmax epochs against the machine's GEMM rate, by batch size (make bench).", opts,
                        (int)(sizeof opts / sizeof opts[0]));
    if (rc >= 0) // --help, or a flag refused
        return rc;
    dl_blas_set_threads(1);
    if (dl_mkdir_p(out) != DL_OK) {
        fprintf(stderr, "bench lab02: %s\n", dl_last_error());
        return 2;
    }
    dl_data data;
    if (dl_data_load("fashion_mnist", &data) != DL_OK) {
        fprintf(stderr, "bench lab02: %s\n", dl_last_error());
        return 1;
    }
    size_t n = data.train.n, d = data.train.d;
    const size_t batches[4] = {128, 512, 2048, 4096};
    double rate[4], secs[4], frac[4], gem[4];
    double peak = 0;
    for (int b = 0; b < 4; b++) {
        double p = sgemm_gflops(1); // side by side: the reference rate next to each measurement
        peak = p > peak ? p : peak;
        softmax_engine e;
        softmax_model m;
        softmax_engine_init(&e, dl_cpu(), data.train.X, data.train.y, n, d, 10);
        softmax_model_alloc(&m, d, 10);
        softmax_config cfg = {0.2, 0.0, 1, batches[b], 1};
        double best = 1e30;
        uint64_t flops = 0;
        for (int k = 0; k < reps; k++) {
            dl_flops_reset();
            double t0 = dl_now();
            softmax_train(&e, &cfg, &m, NULL);
            double t = dl_now() - t0;
            flops = dl_flops();
            best = t < best ? t : best;
        }
        secs[b] = best;
        gem[b] = gemms_gflops(data.train.X, n, d, batches[b]);
        rate[b] = (double)flops / best / 1e9;
        softmax_model_free(&m);
        softmax_engine_free(&e);
    }
    for (int b = 0; b < 4; b++)
        frac[b] = rate[b] / peak;
    printf("lab02 bench (one thread, %s)\n", dl_blas_name());
    printf("  sgemm 1024^3: %.1f GFLOP/s (best of the runs beside each epoch)\n", peak);
    for (int b = 0; b < 4; b++)
        printf("  epoch, batch %4zu: %.3f s, %5.1f GFLOP/s = %3.0f%% of sgemm%s; its two GEMMs alone %5.1f GFLOP/s = "
               "%3.0f%%\n",
               batches[b], secs[b], rate[b], dl_pct(frac[b], 0), b == 0 ? " (target >= 50%)" : "                ",
               gem[b], dl_pct(gem[b] / peak, 0));
    printf("  (the GEMMs have one side of C = 10: about C/2 FLOPs per byte of X, so they stream X from memory\n"
           "   rather than run at the square-sgemm rate; the epoch adds the batch gather and the softmax rows)\n");
    char path[1100];
    snprintf(path, sizeof path, "%s/lab02_epoch.csv", out);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "batch,epoch_seconds,GFLOPs,fraction_of_sgemm,gemm_only_GFLOPs\n");
        for (int b = 0; b < 4; b++)
            fprintf(f, "%zu,%.6f,%.4f,%.4f,%.4f\n", batches[b], secs[b], rate[b], frac[b], gem[b]);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/lab02.json", out);
    dl_json j;
    if (dl_json_open(&j, path) == DL_OK) {
        dl_json_object(&j, NULL);
        dl_json_str(&j, "bench", "lab02 softmax-regression epoch vs single-thread sgemm");
        dl_json_str(&j, "blas", dl_blas_name());
        dl_json_num(&j, "sgemm_GFLOPs", peak);
        dl_json_array(&j, "epochs");
        for (int b = 0; b < 4; b++) {
            dl_json_object(&j, NULL);
            dl_json_int(&j, "batch", (long long)batches[b]);
            dl_json_num(&j, "seconds", secs[b]);
            dl_json_num(&j, "GFLOPs", rate[b]);
            dl_json_num(&j, "fraction_of_sgemm", frac[b]);
            dl_json_num(&j, "gemm_only_GFLOPs", gem[b]);
            dl_json_end_object(&j);
        }
        dl_json_end_array(&j);
        dl_json_num(&j, "target_fraction", 0.5);
        dl_json_bool(&j, "meets_target", frac[0] >= 0.5);
        dl_json_end_object(&j);
        if (dl_json_close(&j) != DL_OK)
            fprintf(stderr, "bench lab02: %s\n", dl_last_error());
    }
    char base[1100], vars[1300];
    snprintf(base, sizeof base, "%s/lab02_epoch", out);
    snprintf(vars, sizeof vars, "data='%s/lab02_epoch.csv'; peak=%g", out, peak);
    if (dl_plot("common/plot/bench_epoch.gp", "png", base, vars) != DL_OK && dl_plot_available())
        fprintf(stderr, "bench lab02: plot: %s\n", dl_last_error());
    printf("  wrote %s/lab02.json, lab02_epoch.csv, lab02_epoch.png\n", out);
    dl_data_free(&data);
    return 0;
}
