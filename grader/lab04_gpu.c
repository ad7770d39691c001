/* lab04_gpu.c — lab 04's GPU tiers' items: the driver's dumps on one GPU and
 * on four (NCCL), judged as the CPU runs are (lab04_dump.c). The table is lab04.c's. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // free
#include <string.h> // memset
#include <unistd.h> // access

#include "dl/fs.h" // dl_home
#include "dl/json.h" // dl_jv
#include "drivers.h" // gr_run_driver, gr_summary
#include "grader.h"
#include "items.h" // gr_code_dir
#include "lab04_dump.h" // gr_get_dump, gr_fail_dump_run
#include "ring.h"

// ---- GPU tiers ----

GR_TEST(test_gpu_one_rank)
{
    int rc = gr_run_driver(1, "gpu1",
                           "--device cuda --dump dump-gpu1 --algo naive,ring,ring-chunked --dtype half "
                           "--data random --counts 1,100003");
    if (rc != 0)
        gr_fail_dump_run("gpu1", rc, "naive,ring,ring-chunked", 0);
    gr_note("one rank on the GPU: the ring is a no-op, and every algorithm ran on device memory\n");
}
END_TEST

GR_TEST(test_gpu4_nccl)
{
    dump d;
    char args[2000];
    snprintf(args, sizeof args,
             "--device cuda --dump '%s/dump' --algo ring --dtype float --data int --counts 0,1,3,4,5,%d",
             gr_path("gpu4"), PRIME);
    memset(&d, 0, sizeof d);
    int rc = gr_run_driver(4, "gpu4", args);
    if (rc != 0)
        gr_fail_dump_run("gpu4", rc, "ring", 0);
    // the speed: yours against the reference's, at 64 MiB, in this run
    const char *bench = "--device cuda -b 64M -e 64M --algo ring,library --iters 10";
    rc = gr_run_driver(4, "gpu4-bench", bench);
    if (rc != 0)
        gr_fail_dump_run("gpu4-bench", rc, "ring,library", 0);
    dl_jv *s = gr_summary("gpu4-bench");
    double yours = dl_jv_num(dl_jv_get(s, "algos.ring.busbw_largest_gbs"), 0), want;
    dl_jv_free(s);
    char ref[1200];
    snprintf(ref, sizeof ref, "%s/build/solutions/lab04", dl_home());
    if (access(ref, X_OK) == 0) {
        char a2[1500];
        snprintf(a2, sizeof a2, "%s --out '%s' --plot none --quiet", bench, gr_path("gpu4-ref"));
        rc = gr_run_program(ref, 4, "gpu4-ref", a2);
        if (rc != 0)
            gr_fail_run("gpu4-ref", rc);
        dl_jv *r = gr_summary("gpu4-ref");
        want = 0.8 * dl_jv_num(dl_jv_get(r, "algos.ring.busbw_largest_gbs"), 0);
        dl_jv_free(r);
    } else {
        s = gr_summary("gpu4-bench");
        want = 0.8 * 0.8 * dl_jv_num(dl_jv_get(s, "algos.library.busbw_largest_gbs"), 0);
        dl_jv_free(s);
    }
    gr_note("busbw at 64 MiB on 4 GPUs: yours %.2f GB/s (needs >= %.2f)\n", yours, want);
    if (!(yours >= want))
        GR_FAIL("your ring's bus bandwidth at 64 MiB on 4 GPUs is %.2f GB/s, below %.2f GB/s", yours, want);
}
END_TEST
