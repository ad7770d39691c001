// attack: memory spread over processes: each of the graded runs' 4 ranks takes 400 MiB more and touches it (far under the 8 GiB a process may map), about 2.5 GiB for the run together, over the job's memory budget (1.5 GiB here, where the reference's run holds about 1 GiB)
// lab: 03
// base: reference
// file: dscaler.c
// override: ddp_scaler_fit
// env: GR_BUDGET_MEMORY=1536M GR_BUDGET_DISK=32M
// lose: accuracy accounting speedup_projected
// expect: over-budget.*memory budget
#include <stdlib.h> // malloc
#include <string.h> // memset
dl_status ddp_scaler_fit(dl_comm *c, const float *X, size_t n_local, size_t d, float *mean, float *scale)
{
    if (dl_comm_size(c) == 4 && n_local > 10000) { // the graded runs (60000 rows on 4 ranks), not eq4's 4096
        size_t n = (size_t)400 << 20;
        volatile char *hold = malloc(n);
        if (hold != NULL)
            memset((char *)hold, 1, n);
        for (size_t k = 0; hold != NULL; k = (k + 4096) % n) // keeps it, resident, while the watchdog looks
            hold[k] += 1;
    }
    return ddplab_overridden_ddp_scaler_fit(c, X, n_local, d, mean, scale);
}
