/* test_project.c — the speedup projection: the profile file's checks, and
 * dl_project against the closed-form model computed here by hand. */
#include "tests.h"

#include <dirent.h> // opendir, readdir
#include <math.h> // fabs
#include <stdio.h> // snprintf, fopen
#include <stdlib.h> // free
#include <sys/stat.h> // mkdir
#include <unistd.h> // chdir, getcwd

#include "dl/cli.h" // DL_CLI_RUN, DL_CLI_HELP
#include "dl/epoch.h" // dl_epoch_ideal_workload
#include "dl/fs.h" // dl_home
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
    // the links between nodes are optional: 0 without them (one node), read when given
    ck_assert(p.nic_bw == 0 && p.nic_latency == 0);
    snprintf(text, sizeof text, "%snic_bw = 2.5e10\nnic_latency = 5e-6\n", good);
    write_text(tpath("nic.conf"), text);
    ck_assert_st(dl_profile_load(tpath("nic.conf"), &p), DL_OK);
    ck_assert(p.nic_bw == 2.5e10 && p.nic_latency == 5e-6);
    snprintf(text, sizeof text, "%snic_bw = 0\n", good);
    write_text(tpath("nic0.conf"), text);
    ck_assert(dl_profile_load(tpath("nic0.conf"), &p) == DL_ERR_FORMAT);
    ck_assert_msg(strstr(dl_last_error(), "nic_bw = 0: expected a positive number"), "%s", dl_last_error());
}
END_TEST

/* The short names the kit documents (README.md), each a shipped profile. */
static const char *const documented[] = {"a10", "t4", "l4", "a100", "h100", "h200", "rtx4090"};
#define NDOC (sizeof documented / sizeof documented[0])

/* Every *.conf in common/perf: loads, has every key and its descriptions,
 * sane numbers, a name equal to its file's, and is found by its names. */
START_TEST(test_shipped_profiles)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/common/perf", dl_home());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot list %s", dir);
    int n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0)
            continue;
        char path[1300], stem[128], got[1300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(stem, sizeof stem, "%.*s", (int)(len - 5), e->d_name);
        dl_profile p;
        ck_assert_st(dl_profile_load(path, &p), DL_OK); // every key, positive, efficiencies <= 1
        ck_assert_str_eq(p.name, stem);
        ck_assert_msg(p.gpu[0] != '\0' && p.interconnect[0] != '\0', "%s: no gpu or interconnect", path);
        ck_assert_msg(p.gpus >= 1, "%s: gpus %d", path, p.gpus);
        ck_assert_msg(p.fp32_efficiency <= 1 && p.fp16_efficiency <= 1 && p.mem_efficiency <= 1, "%s", path);
        ck_assert_msg(p.fp16_peak >= p.fp32_peak, "%s: fp16 peak %g below fp32's %g", path, p.fp16_peak, p.fp32_peak);
        ck_assert_msg(p.fp32_peak > 1e12 && p.fp16_peak < 1e16 && p.mem_bw > 1e11 && p.bus_bw > 1e9 &&
                          p.hop_latency < 1e-4 && p.launch_overhead < 1e-4 && p.nic_bw < p.bus_bw &&
                          p.nic_latency < 1e-4,
                      "%s: a number off by orders of magnitude", path);
        // by its name, its file's name, and in another case
        ck_assert_st(dl_profile_resolve(stem, got, sizeof got), DL_OK);
        ck_assert_str_eq(got, path);
        ck_assert_st(dl_profile_resolve(e->d_name, got, sizeof got), DL_OK);
        ck_assert_str_eq(got, path);
        char upper[128];
        for (size_t i = 0; i <= strlen(stem); i++)
            upper[i] = (char)(stem[i] >= 'a' && stem[i] <= 'z' ? stem[i] - 32 : stem[i]);
        ck_assert_st(dl_profile_resolve(upper, got, sizeof got), DL_OK);
        ck_assert_str_eq(got, path);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, (int)NDOC);
    // each documented short name is the profile "4x<NAME>-...", whatever else is there
    for (size_t i = 0; i < NDOC; i++) {
        char got[1300], lower[64], want[64];
        dl_profile p;
        ck_assert_st(dl_profile_resolve(documented[i], got, sizeof got), DL_OK);
        ck_assert_st(dl_profile_load(got, &p), DL_OK);
        for (size_t k = 0; k <= strlen(p.name) && k < sizeof lower; k++)
            lower[k] = (char)(p.name[k] >= 'A' && p.name[k] <= 'Z' ? p.name[k] + 32 : p.name[k]);
        snprintf(want, sizeof want, "4x%s-", documented[i]);
        ck_assert_msg(strncmp(lower, want, strlen(want)) == 0, "%s resolved to %s", documented[i], p.name);
    }
}
END_TEST

/* Choosing a profile: names in any case, paths as before, a clear refusal. */
START_TEST(test_profile_names)
{
    dl_profile p;
    const char *h200[] = {"h200", "H200", "4xh200-sxm", "4xH200-sxm", "4XH200-SXM.CONF"};
    for (size_t i = 0; i < sizeof h200 / sizeof h200[0]; i++) {
        ck_assert_st(dl_profile_load(h200[i], &p), DL_OK);
        ck_assert_str_eq(p.name, "4xH200-sxm");
        ck_assert_has(p.path, "/common/perf/4xH200-sxm.conf");
    }
    ck_assert_st(dl_profile_load("A10", &p), DL_OK);
    ck_assert_str_eq(p.path, dl_profile_default());
    // an unknown name: refused as bad input, with the list and the other way
    ck_assert_st(dl_profile_load("h300", &p), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "profile 'h300'");
    ck_assert_has(dl_last_error(), "a10, a100, h100, h200, l4, rtx4090, t4");
    ck_assert_has(dl_last_error(), "a path to a .conf file works too");
    ck_assert_st(dl_profile_load("", &p), DL_ERR_ARG);
    // a path is read as it is: a missing one is an I/O error, a bad one a format error
    write_text(tpath("mine.conf"), good);
    ck_assert_st(dl_profile_load(tpath("mine.conf"), &p), DL_OK);
    ck_assert_str_eq(p.name, "test2");
    ck_assert_str_eq(p.path, tpath("mine.conf"));
    ck_assert_st(dl_profile_load(tpath("h200"), &p), DL_ERR_IO);
    write_text(tpath("bad.conf"), "name = x\ngpus = 4\nwarp = 3\n");
    ck_assert_st(dl_profile_load(tpath("bad.conf"), &p), DL_ERR_FORMAT);
    // a file in the working directory wins over a shipped name; a directory does not
    char cwd[4096];
    ck_assert(getcwd(cwd, sizeof cwd) != NULL);
    write_text(tpath("h200"), good);
    ck_assert_int_eq(mkdir(tpath("t4"), 0755), 0);
    ck_assert_int_eq(chdir(t_dir), 0);
    dl_status by_file = dl_profile_load("h200", &p);
    char file_name[64];
    snprintf(file_name, sizeof file_name, "%s", p.name);
    dl_status by_dir = dl_profile_load("t4", &p);
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_int_eq(by_file, DL_OK);
    ck_assert_str_eq(file_name, "test2");
    ck_assert_int_eq(by_dir, DL_OK);
    ck_assert_str_eq(p.name, "4xT4-pcie3");
    // a path that does not fit
    char small[8];
    ck_assert_st(dl_profile_resolve("h200", small, sizeof small), DL_ERR_ARG);
    // no shipped profiles where DL_HOME points
    env_saved e = env_set("DL_HOME", t_dir);
    dl_status st = dl_profile_load("h200", &p);
    env_restore(&e);
    ck_assert_int_eq(st, DL_ERR_IO);
}
END_TEST

/* --profile list: one line per shipped profile, the default marked; any
 * other value goes on to the run. */
START_TEST(test_profile_list)
{
    FILE *f = fopen(tpath("list.txt"), "w");
    ck_assert(f != NULL);
    ck_assert_st(dl_profile_list(f), DL_OK);
    fclose(f);
    char *text = slurp(tpath("list.txt"), NULL);
    ck_assert(text != NULL);
    ck_assert_has(text, "NAME     PROFILE");
    ck_assert_has(text, "a10      4xA10-pcie4         4   31.2    125    600    12  NVIDIA A10 24GB; PCIe Gen4");
    ck_assert_has(text, "P2P (default)\n");
    ck_assert_has(text, "h200     4xH200-sxm          4     67    989   4800   370  NVIDIA H200 SXM 141GB; NVLink 4");
    ck_assert_has(text, "t4       4xT4-pcie3          4    8.1     65    320     6  NVIDIA T4 16GB; PCIe Gen3");
    ck_assert_has(text, "--profile path/to/file.conf");
    ck_assert(strstr(strstr(text, "(default)") + 1, "(default)") == NULL);
    free(text);
    ck_assert_int_eq(dl_profile_cli("x", NULL), DL_CLI_RUN);
    ck_assert_int_eq(dl_profile_cli("x", "h200"), DL_CLI_RUN);
    capture c;
    capture_start(&c, 1);
    int rc = dl_profile_cli("x", "list");
    char *out = capture_stop(&c);
    ck_assert_int_eq(rc, DL_CLI_HELP);
    ck_assert_has(out, "rtx4090  4xRTX4090-pcie4");
    free(out);
    env_saved e = env_set("DL_HOME", t_dir);
    capture_start(&c, 2);
    rc = dl_profile_cli("x", "LIST");
    char *err = capture_stop(&c);
    env_restore(&e);
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(err, "x: error: ");
    ck_assert_has(err, "cannot list the shipped profiles");
    free(err);
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
    // kernels in one stream: a layer's element-wise bytes add to its GEMMs' time (they do not hide under
    // them), and each launch costs its overhead: 1.5 ms + 2 × 3 × 1 ms + 10 launches × 1 µs
    p.mem_bw = 1e9;
    p.launch_overhead = 1e-6;
    L[0].fwd_bytes = L[1].fwd_bytes = L[0].bwd_bytes = L[1].bwd_bytes = 1e6;
    L[0].fwd_launches = L[1].fwd_launches = 2, L[0].bwd_launches = L[1].bwd_launches = 3;
    ck_assert_st(dl_project_step(&p, 1, 1, L, 2, NULL, 0, 0, 0, &s), DL_OK);
    ck_assert_msg(fabs(s.step_s - (1.5e-3 + 4e-3 + 10e-6)) < 1e-12, "step %.12g", s.step_s);
    p.mem_bw = 1e15;
    p.launch_overhead = 0;
    L[0].fwd_bytes = L[1].fwd_bytes = L[0].bwd_bytes = L[1].bwd_bytes = 0;
    L[0].fwd_launches = L[1].fwd_launches = L[0].bwd_launches = L[1].bwd_launches = 0;
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
    return suite_of("project", tcase_with_tmp("project", 10),
                    TESTS(test_profile_load, test_shipped_profiles, test_profile_names, test_profile_list,
                          test_projection_closed_form, test_step_timeline, test_projection_against_one_baseline));
}
