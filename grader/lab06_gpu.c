/* lab06_gpu.c — lab 06's GPU tier: ZeRO-1 and FSDP on one GPU, the same code
 * on device pointers (the ledger's blocks, the views FSDP's hooks point the
 * model at, the pairwise exchange's buffers), judged as the CPU runs are
 * against the one-rank reference. The table is lab06.c's.
 *
 * Tolerance: 1e-5 + 1e-4·|ref| after 20 steps, as lab 05's one-GPU item:
 * cuBLAS sums a GEMM's products in another order than the CPU's BLAS, and
 * 20 steps of momentum carry those roundings along. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // free, malloc

#include "drivers.h" // gr_run_driver, gr_fail_run
#include "grader.h"
#include "lab06_ref.h" // gr6_reference, gr6_dumped, the workload

/* One run of mode on one GPU (no launcher: a world of one), its parameters against the reference's. */
static void one_gpu(const char *mode)
{
    char name[32], args[1200];
    snprintf(name, sizeof name, "gpu1-%s", mode);
    snprintf(args, sizeof args,
             "--device cuda --mode %s --data %s --hidden %s --batch-size %d --max-steps %d --epochs 50 --lr %g "
             "--base-batch %d --warmup %d --momentum %g --weight-decay %g --seed %d --dump '%s/dump'",
             mode, G6_DATA, G6_HIDDEN, G6_BATCH, G6_STEPS, G6_LR, G6_BASE, G6_WARMUP, G6_MOMENTUM, G6_WD, G6_SEED,
             gr_path(name));
    int rc = gr_run_driver(0, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
    size_t n = 0, nref = 0;
    float *p = gr6_dumped(name, "params.0.npy", &n);
    float *ref = gr6_reference(1, G6_STEPS, G6_MEAN, 0, NULL, &nref);
    if (n != nref)
        GR_FAIL("%s on one GPU: %zu parameters dumped, expected the model's %zu", mode, n, nref);
    double *rd = malloc(nref * sizeof *rd);
    for (size_t k = 0; k < nref; k++)
        rd[k] = ref[k];
    char what[96];
    snprintf(what, sizeof what, "%s: the parameters after %d steps on one GPU vs the CPU reference", mode, G6_STEPS);
    GR_ALLCLOSE_F32(what, p, rd, n, 1e-5, 1e-4, "");
    gr_note("%s on one GPU: %d steps equal the CPU reference's\n", mode, G6_STEPS);
    free(p), free(ref), free(rd);
}

GR_TEST(test_gpu_one_rank)
{
    one_gpu("zero1");
    one_gpu("fsdp");
}
END_TEST

/* Four GPUs, one a rank (NCCL's point-to-point calls on device memory):
 * ZeRO-1 and FSDP for 20 steps, every rank's parameters (FSDP's put together
 * by the kit) against the four-rank reference, within the same tolerance. */
static void four_gpus(const char *mode)
{
    char name[32], args[1200];
    snprintf(name, sizeof name, "gpu4-%s", mode);
    snprintf(args, sizeof args,
             "--device cuda --mode %s --data %s --hidden %s --batch-size %d --max-steps %d --epochs 50 --lr %g "
             "--base-batch %d --warmup %d --momentum %g --weight-decay %g --seed %d --dump '%s/dump'",
             mode, G6_DATA, G6_HIDDEN, G6_BATCH, G6_STEPS, G6_LR, G6_BASE, G6_WARMUP, G6_MOMENTUM, G6_WD, G6_SEED,
             gr_path(name));
    int rc = gr_run_driver(4, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
    size_t nref = 0;
    float *ref = gr6_reference(4, G6_STEPS, G6_MEAN, 0, NULL, &nref);
    double *rd = malloc(nref * sizeof *rd);
    for (size_t k = 0; k < nref; k++)
        rd[k] = ref[k];
    for (int r = 0; r < 4; r++) {
        char file[32], what[96];
        size_t n = 0;
        snprintf(file, sizeof file, "params.%d.npy", r);
        float *p = gr6_dumped(name, file, &n);
        if (n != nref)
            GR_FAIL("%s on four GPUs: rank %d dumped %zu parameters, expected the model's %zu", mode, r, n, nref);
        snprintf(what, sizeof what, "%s: rank %d's parameters after %d steps on four GPUs vs the reference", mode, r,
                 G6_STEPS);
        GR_ALLCLOSE_F32(what, p, rd, n, 1e-5, 1e-4, "");
        free(p);
    }
    gr_note("%s on four GPUs: %d steps equal the four-rank reference's on every rank\n", mode, G6_STEPS);
    free(ref), free(rd);
}

GR_TEST(test_gpu4_ranks)
{
    four_gpus("zero1");
    four_gpus("fsdp");
}
END_TEST
