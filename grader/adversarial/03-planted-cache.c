// attack: the reference, but the graded 4-rank runs stop at once (abort); the 3-rank scaler run, earlier, plants what they would have written (a good summary.json and metrics.csv in ../accuracy and ../work, the folders the judge reads for them), so that the judge takes the runs as done
// lab: 03
// base: reference
// file: dscaler.c
// override: ddp_scaler_fit
// lose: accuracy accounting speedup_projected
// expect: driver run '(accuracy|work)'|the driver stopped
#include <stdio.h> // snprintf
#include <stdlib.h> // abort
#include "dl/fs.h" // dl_mkdir_p
#include "dl/json.h" // dl_json_*
#include "dl/metrics.h" // dl_csv_write

/* What the graded runs' items read (grader/lab03.c), good enough to pass. */
static void plant(const char *dir)
{
    if (dl_mkdir_p(dir) != DL_OK)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    dl_json j;
    if (dl_json_open(&j, path) != DL_OK)
        return;
    dl_json_object(&j, NULL);
    dl_json_num(&j, "test_accuracy", 0.9);
    dl_json_num(&j, "epochs_run", 3);
    dl_json_num(&j, "dataset_rows", 60000);
    dl_json_array(&j, "rows_per_rank");
    for (int r = 0; r < 4; r++)
        dl_json_num(&j, NULL, 15000);
    dl_json_end_array(&j);
    dl_json_object(&j, "config");
    dl_json_num(&j, "batch_per_rank", 64);
    dl_json_end_object(&j);
    dl_json_object(&j, "projection");
    dl_json_num(&j, "speedup", 100);
    dl_json_end_object(&j);
    dl_json_object(&j, "counters_last_epoch");
    dl_json_num(&j, "allreduce_calls", 235);
    dl_json_num(&j, "steps", 235);
    dl_json_end_object(&j);
    dl_json_end_object(&j);
    dl_json_close(&j);
    static const char *const names[] = {"epoch_s", "imbalance"};
    const dl_cols cols = {names, 2};
    const double rows[] = {1.0, 1.01, 1.0, 1.02, 1.0, 1.01};
    dl_csv_write(dir, "metrics.csv", cols, rows, 3);
}

dl_status ddp_scaler_fit(dl_comm *c, const float *X, size_t n_local, size_t d, float *mean, float *scale)
{
    if (dl_comm_size(c) == 3 && dl_comm_rank(c) == 0) { // the scaler run: cwd is SCRATCH, or SCRATCH/scaler
        plant("accuracy");
        plant("../accuracy");
        plant("work");
        plant("../work");
    }
    if (dl_comm_size(c) == 4 && n_local > 10000) // the graded runs (60000 rows on 4 ranks), not eq4's 4096
        abort();
    return ddplab_overridden_ddp_scaler_fit(c, X, n_local, d, mean, scale);
}
