/* kit.c — lab 03's provided helpers; see kit.h. Not a student file. */
#include "kit.h"

#include "dl/epoch.h" // dl_epoch_ideal_workload

void ddp_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w)
{
    dl_epoch_ideal_workload(sizes, n_sizes, n, P, b, w);
}

int ddp_projection_sweep(const size_t *sizes, int n_sizes, size_t n, const dl_profile *prof,
                         double (*rows)[LAB03_PROJECTION_NCOLS], int max)
{
    size_t per_rank = (n + (size_t)prof->gpus - 1) / (size_t)prof->gpus;
    int k = 0;
    for (size_t b = 256; b <= per_rank && k < max; b *= 2, k++) {
        dl_workload w, one;
        dl_projection p;
        dl_epoch_ideal_workload(sizes, n_sizes, n, prof->gpus, b, &w);
        dl_epoch_ideal_workload(sizes, n_sizes, n, 1, b, &one);
        if (dl_project_against(prof, &w, prof->gpus, &one, &p) != DL_OK)
            return -1;
        double *r = rows[k];
        r[LAB03_PR_BATCH] = (double)b;
        r[LAB03_PR_SPEEDUP] = p.speedup;
        r[LAB03_PR_COMPUTE_MS] = 1e3 * p.compute_s;
        r[LAB03_PR_COMM_MS] = 1e3 * p.comm_s;
    }
    return k;
}
