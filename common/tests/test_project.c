/* test_project.c — the speedup projection: the profile file's checks, and
 * dl_project against the closed-form model computed here by hand. */
#include "tests.h"

#include <math.h> // fabs
#include <stdio.h> // snprintf

#include "dl/epoch.h" // dl_epoch_ideal_workload
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
    // the descriptions in words are optional, and take the rest of the line
    ck_assert(dl_profile_load(tpath("good.conf"), &p) == DL_OK);
    ck_assert_str_eq(p.gpu, "");
    ck_assert_str_eq(p.interconnect, "");
    char text[1024];
    snprintf(text, sizeof text, "%sgpu = Some GPU 8GB   # a comment\ninterconnect =  two wires \n", good);
    write_text(tpath("words.conf"), text);
    ck_assert_st(dl_profile_load(tpath("words.conf"), &p), DL_OK);
    ck_assert_str_eq(p.gpu, "Some GPU 8GB");
    ck_assert_str_eq(p.interconnect, "two wires");
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

/* A step on round numbers: 1 TFLOP/s, 1 GB/s busbw, no latency or launch
 * cost; 2 ranks, so an allreduce of S bytes takes S / 1e9 s (factor 1). */
START_TEST(test_step_timeline)
{
    dl_profile p = {.fp32_peak = 2e12,
                    .fp32_efficiency = 0.5,
                    .fp16_peak = 8e12,
                    .fp16_efficiency = 0.5,
                    .mem_bw = 1e15,
                    .mem_efficiency = 1,
                    .bus_bw = 1e9};
    // forward 1 ms per layer, backward 2 ms per layer: layer 1 ends at 4 ms, layer 0 at 6 ms
    dl_sim_layer L[2] = {{.fwd_flops = 1e9, .bwd_flops = 2e9}, {.fwd_flops = 1e9, .bwd_flops = 2e9}};
    dl_sim_bucket b[2] = {{3e6, 1}, {1e6, 0}};
    dl_sim_step s;
    ck_assert_st(dl_project_step(&p, 2, 1, L, 2, b, 2, 0, 0, &s), DL_OK);
    // bucket 0: 4..7 ms (under layer 0's backward); bucket 1 waits for it: 7..8
    ck_assert(fabs(s.bucket_start_s[0] - 4e-3) < 1e-12 && fabs(s.bucket_end_s[0] - 7e-3) < 1e-12);
    ck_assert(fabs(s.bucket_start_s[1] - 7e-3) < 1e-12 && fabs(s.bucket_end_s[1] - 8e-3) < 1e-12);
    ck_assert(fabs(s.step_s - 8e-3) < 1e-12 && fabs(s.compute_s - 6e-3) < 1e-12);
    ck_assert(fabs(s.exposed_s - 2e-3) < 1e-12 && fabs(s.comm_s - 4e-3) < 1e-12);
    // one flat allreduce after backward: nothing hides
    dl_sim_bucket flat = {4e6, -1};
    ck_assert_st(dl_project_step(&p, 2, 1, L, 2, &flat, 1, 0, 0, &s), DL_OK);
    ck_assert(fabs(s.step_s - 10e-3) < 1e-12 && fabs(s.exposed_s - 4e-3) < 1e-12);
    // two micro-batches: the first has no communication
    ck_assert_st(dl_project_step(&p, 2, 2, L, 2, b, 2, 0, 0, &s), DL_OK);
    ck_assert(fabs(s.step_s - 14e-3) < 1e-12 && fabs(s.compute_s - 12e-3) < 1e-12);
    // one rank: no communication time; the optimizer after everything (1e9 bytes at 1e15 B/s)
    ck_assert_st(dl_project_step(&p, 1, 1, L, 2, b, 2, 1e9, 0, &s), DL_OK);
    ck_assert(fabs(s.step_s - 6.001e-3) < 1e-12 && fabs(s.exposed_s) < 1e-12);
    // an fp16 layer runs at the fp16 peak
    L[0].fp16 = L[1].fp16 = 1;
    ck_assert_st(dl_project_step(&p, 1, 1, L, 2, NULL, 0, 0, 0, &s), DL_OK);
    ck_assert(fabs(s.step_s - 1.5e-3) < 1e-12);
    // refusals
    b[1].after_layer = 2;
    ck_assert_st(dl_project_step(&p, 2, 1, L, 2, b, 2, 0, 0, &s), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "bucket 1 follows layer 2");
    ck_assert_st(dl_project_step(&p, 2, 0, L, 2, NULL, 0, 0, 0, &s), DL_ERR_ARG);
}
END_TEST

/* One baseline: every run of the job is measured against the same one-GPU epoch. */
START_TEST(test_projection_against_one_baseline)
{
    dl_profile p;
    write_text(tpath("good.conf"), good);
    ck_assert(dl_profile_load(tpath("good.conf"), &p) == DL_OK);
    const size_t sizes[] = {784, 256, 10};
    dl_workload ddp, one, alone;
    dl_epoch_ideal_workload(sizes, 3, 60000, 2, 4096, &ddp);
    dl_epoch_ideal_workload(sizes, 3, 60000, 1, 4096, &one);
    dl_projection base, r, own;
    ck_assert(dl_project(&p, &one, 1, &base) == DL_OK);
    ck_assert(dl_project_against(&p, &ddp, 2, &one, &r) == DL_OK);
    ck_assert(dl_project(&p, &ddp, 2, &own) == DL_OK);
    ck_assert(r.single_s == base.epoch_s && r.epoch_s == own.epoch_s && r.comm_s == own.comm_s);
    ck_assert(r.speedup == base.epoch_s / own.epoch_s);
    // the per-sample estimate of one GPU from the 2-rank run counts 2 x 8 steps' launches and
    // updates where one GPU takes 15: a second, larger baseline
    ck_assert(own.single_s > base.epoch_s);
    // the naive attempt does the one-GPU job on every rank: exactly 1x against the same baseline
    alone = one;
    ck_assert(dl_project_against(&p, &alone, 2, &one, &r) == DL_OK);
    ck_assert(r.speedup == 1.0);
    alone.samples = 0;
    ck_assert(dl_project_against(&p, &alone, 2, &one, &r) == DL_ERR_ARG);
    ck_assert(dl_project_against(&p, &ddp, 2, &alone, &r) == DL_ERR_ARG);
}
END_TEST

Suite *project_suite(void)
{
    Suite *s = suite_create("project");
    TCase *tc = tcase_with_tmp("project", 10);
    tcase_add_test(tc, test_profile_load);
    tcase_add_test(tc, test_projection_closed_form);
    tcase_add_test(tc, test_step_timeline);
    tcase_add_test(tc, test_projection_against_one_baseline);
    suite_add_tcase(s, tc);
    return s;
}
