/* test_project.c — the speedup projection: the profile file's checks, and
 * dl_project against the closed-form model computed here by hand. */
#include "tests.h"

#include <math.h> // fabs

#include "dl/project.h"

static const char *good = "# a test target\n"
                          "name = test2\n"
                          "gpus = 2\n"
                          "fp32_peak = 10e12   # comment\n"
                          "fp16_peak = 40e12\n"
                          "mem_bw = 100e9\n"
                          "fp32_efficiency = 0.5\n"
                          "fp16_efficiency = 0.25\n"
                          "mem_efficiency = 0.5\n"
                          "bus_bw = 10e9\n"
                          "hop_latency = 1e-5\n"
                          "launch_overhead = 2e-6\n";

START_TEST(test_profile_load)
{
    dl_profile p;
    write_text(tpath("good.conf"), good);
    ck_assert(dl_profile_load(tpath("good.conf"), &p) == DL_OK);
    ck_assert_str_eq(p.name, "test2");
    ck_assert_int_eq(p.gpus, 2);
    ck_assert(p.fp32_peak == 10e12 && p.bus_bw == 10e9 && p.launch_overhead == 2e-6);
    ck_assert(dl_profile_load(dl_profile_default(), &p) == DL_OK);
    ck_assert_str_eq(p.name, "4xA10-pcie4");
    ck_assert(p.fp32_peak == 31.2e12 && p.gpus == 4);
    write_text(tpath("unknown.conf"), "name = x\ngpus = 4\nwarp = 3\n");
    ck_assert(dl_profile_load(tpath("unknown.conf"), &p) == DL_ERR_FORMAT);
    ck_assert_msg(strstr(dl_last_error(), "unknown.conf:3: unknown key 'warp'"), "%s", dl_last_error());
    write_text(tpath("neg.conf"), "name = x\nbus_bw = -1\n");
    ck_assert(dl_profile_load(tpath("neg.conf"), &p) == DL_ERR_FORMAT);
    ck_assert(strstr(dl_last_error(), "neg.conf:2: bus_bw = -1: expected a positive number"));
    write_text(tpath("eff.conf"), "name = x\nmem_efficiency = 1.5\n");
    ck_assert(dl_profile_load(tpath("eff.conf"), &p) == DL_ERR_FORMAT);
    ck_assert(strstr(dl_last_error(), "at most 1"));
    write_text(tpath("short.conf"), "name = x\ngpus = 2\nfp32_peak = 1e12\n");
    ck_assert(dl_profile_load(tpath("short.conf"), &p) == DL_ERR_FORMAT);
    ck_assert(strstr(dl_last_error(), "missing key 'fp16_peak'"));
    write_text(tpath("junk.conf"), "name = x\nthis is not a line\n");
    ck_assert(dl_profile_load(tpath("junk.conf"), &p) == DL_ERR_FORMAT);
    ck_assert(strstr(dl_last_error(), "junk.conf:2: expected 'key = value'"));
    ck_assert(dl_profile_load(tpath("none.conf"), &p) == DL_ERR_IO);
}
END_TEST

START_TEST(test_projection_closed_form)
{
    dl_profile p;
    write_text(tpath("good.conf"), good);
    ck_assert(dl_profile_load(tpath("good.conf"), &p) == DL_OK);
    // one rank's epoch: 1e12 FLOPs (compute-bound: 0.2 s at 5 TFLOP/s; memory 1e9 B = 0.02 s),
    // 100 launches (2e-4 s), 10 allreduces of 4e6 bytes each, half of 1000 rows
    dl_workload w = {1e12, 0, 1e9, 100, 10, 10, 4e7, 0, 0, 500, 1000, 0};
    dl_projection r;
    ck_assert(dl_project(&p, &w, 2, &r) == DL_OK);
    double compute = 0.2 + 100 * 2e-6;
    double comm = 10 * 2 * (2 - 1) * 1e-5 + 2.0 * (2 - 1) / 2 * 4e7 / 10e9;
    ck_assert_msg(fabs(r.compute_s - compute) < 1e-12, "compute %.12g, expected %.12g", r.compute_s, compute);
    ck_assert_msg(fabs(r.comm_s - comm) < 1e-12, "comm %.12g, expected %.12g", r.comm_s, comm);
    ck_assert(fabs(r.epoch_s - (compute + comm)) < 1e-12);
    ck_assert(fabs(r.single_s - 2 * compute) < 1e-12);
    double ratio = r.speedup; // a closed-form number, not a timing
    ck_assert(fabs(ratio - 2 * compute / (compute + comm)) < 1e-12);
    // one rank: nothing to communicate; the naive run (all rows on each rank) gains nothing
    ck_assert(dl_project(&p, &w, 1, &r) == DL_OK);
    ck_assert(r.comm_s == 0);
    w.samples = 1000;
    w.allreduce_calls = 0, w.allreduce_bytes = 0;
    ck_assert(dl_project(&p, &w, 2, &r) == DL_OK);
    ratio = r.speedup;
    ck_assert_msg(fabs(ratio - 1.0) < 1e-12, "naive ratio %g", ratio);
    // memory-bound, fp16 share, overlap
    dl_workload m = {1e9, 0.5, 1e10, 0, 4, 4, 4e7, 1, 1e6, 250, 1000, 1};
    ck_assert(dl_project(&p, &m, 4, &r) == DL_OK);
    double mc = 1e10 / (100e9 * 0.5);
    double mm = 4 * 2 * 3 * 1e-5 + 2.0 * 3 / 4 * 4e7 / 10e9 + 3 * 1e-5 + 3.0 / 4 * 1e6 / 10e9;
    ck_assert(fabs(r.compute_s - mc) < 1e-12);
    ck_assert_msg(fabs(r.comm_s - mm) < 1e-12, "comm %.12g, expected %.12g", r.comm_s, mm);
    ck_assert_msg(fabs(r.epoch_s - ((mc > mm ? mc : mm) + mm / 4)) < 1e-12, "overlapped epoch %g", r.epoch_s);
    w.samples = 0;
    ck_assert(dl_project(&p, &w, 2, &r) == DL_ERR_ARG);
}
END_TEST

Suite *project_suite(void)
{
    Suite *s = suite_create("project");
    TCase *tc = tcase_with_tmp("project", 10);
    tcase_add_test(tc, test_profile_load);
    tcase_add_test(tc, test_projection_closed_form);
    suite_add_tcase(s, tc);
    return s;
}
