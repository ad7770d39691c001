/* main.c — runs every unit suite of libddplab.
 *
 * Fork mode by default (a crash fails one test, not the runner); CK_FORK=no
 * runs in one process for gdb. Exits non-zero when any test fails. */
#include "tests.h"

#include <stdlib.h> // EXIT_SUCCESS, EXIT_FAILURE

/* Every suite, in the order they run; a weak one that is not linked in is NULL. */
static Suite *(*const suites[])(void) = {
    status_suite,  rng_suite,     half_suite,     bf16_suite,      blas_suite,     device_suite, csv_suite,
    idx_suite,     npy_suite,     registry_suite, synth_suite,     split_suite,    cli_suite,    json_suite,
    metrics_suite, compare_suite, plot_suite,     fs_suite,        progress_suite, mlp_suite,    comm_suite,
    project_suite, ops_suite,     layer_suite,    bandwidth_suite, fmt_suite,
    sampler_suite, // absent from a release staged for lab 03 or earlier
    lr_suite,      trace_suite,   batch_suite,    train_suite,     par_suite,      engine_suite,
};

int main(void)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t k = 0; k < sizeof suites / sizeof suites[0]; k++)
        if (suites[k] != NULL)
            srunner_add_suite(sr, suites[k]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
