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

#include "grader.h"
#include "lab06_ref.h" // gr6_reference, gr6_dumped, the workload

/* One run of mode on P GPUs, one a rank (P = 0: one GPU, no launcher, a
 * world of one), every rank's parameters (FSDP's put together by the kit)
 * against the reference on as many ranks. */
static void on_gpus(const char *mode, int P)
{
    int ranks = P > 0 ? P : 1;
    char name[32], args[1200];
    snprintf(name, sizeof name, "gpu%d-%s", ranks, mode);
    gr6_workload_args(args, sizeof args, mode, "cuda");
    gr6_result run = gr6_run(name, P, args);
    if (run.rc != 0)
        gr6_fail_run(name, &run);
    size_t nref = 0;
    float *ref = gr6_reference(ranks, G6_STEPS, G6_MEAN, 0, NULL, &nref);
    double *rd = malloc(nref * sizeof *rd);
    for (size_t k = 0; k < nref; k++)
        rd[k] = ref[k];
    for (int r = 0; r < ranks; r++) {
        char file[32], what[112];
        size_t n = 0;
        snprintf(file, sizeof file, "params.%d.npy", r);
        float *p = gr6_dumped(name, file, &n);
        if (n != nref)
            GR_FAIL("%s on %d GPU(s): rank %d dumped %zu parameters, expected the model's %zu", mode, ranks, r, n,
                    nref);
        snprintf(what, sizeof what, "%s: rank %d's parameters after %d steps on %d GPU(s) vs the reference", mode, r,
                 G6_STEPS, ranks);
        GR_ALLCLOSE_F32(what, p, rd, n, 1e-5, 1e-4, "");
        free(p);
    }
    gr_note("%s on %d GPU(s): %d steps equal the %d-rank reference's on every rank\n", mode, ranks, G6_STEPS, ranks);
    free(ref), free(rd);
}

GR_TEST(test_gpu_one_rank)
{
    on_gpus("zero1", 0);
    on_gpus("fsdp", 0);
}
END_TEST

/* Four GPUs, one a rank: NCCL's point-to-point calls on device memory. */
GR_TEST(test_gpu4_ranks)
{
    on_gpus("zero1", 4);
    on_gpus("fsdp", 4);
}
END_TEST
