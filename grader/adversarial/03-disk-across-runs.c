// attack: the disk filled across driver runs: rank 0 of every run leaves 12 MiB in its run folder (far under the file size limit and the job's disk budget), until the grading's disk budget (32 MiB here) is spent: the third run (one2, of equivalence) keeps nothing and fails
// lab: 03
// base: reference
// file: dscaler.c
// override: ddp_scaler_fit
// env: GR_BUDGET_MEMORY=1536M GR_BUDGET_DISK=32M
// lose: equivalence accuracy accounting speedup_projected
// expect: over-budget.*grading's disk budget
#include <stdlib.h> // malloc
#include <string.h> // memset
#include "dl/fs.h" // dl_tmp_create
dl_status ddp_scaler_fit(dl_comm *c, const float *X, size_t n_local, size_t d, float *mean, float *scale)
{
    if (dl_comm_rank(c) == 0) {
        char tmp[256];
        FILE *f = dl_tmp_create("fill.bin", tmp, sizeof tmp, "w");
        char *block = malloc((size_t)1 << 20);
        if (f != NULL && block != NULL) {
            memset(block, 'x', ((size_t)1 << 20) - 1);
            block[((size_t)1 << 20) - 1] = '\0';
            for (int k = 0; k < 12; k++)
                fputs(block, f);
            fflush(f);
        }
        free(block);
    }
    return ddplab_overridden_ddp_scaler_fit(c, X, n_local, d, mean, scale);
}
