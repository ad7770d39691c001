/* lab06_mem.c — lab 06's memory measured from outside (lab06_ref.h): the
 * ledger's peaks a run dumped, and the operating system's count of the
 * memory workload's runs held against the kit's closed forms, DDP's run of
 * the same grading (no student code: main.c) as the yardstick.
 *
 * What the OS counts is each rank's peak resident set, from the set-up's
 * end (kit_rss_restart) to the rank's; the judge reads the largest of the
 * run's processes from the kernel when it reaps them (lab06_runs.c). Above
 * the ledger it holds the libraries, the data, MPI's and the BLAS's
 * buffers: the same in every mode of one workload, to within about 1.5 MiB
 * here (measured: DDP, ZeRO-1 and FSDP of the reference, 2 ranks). So a
 * run may hold what DDP's held above its ledger, plus an allowance of n
 * bytes (a quarter of the model's 4n, 4.8 MiB for the memory workload):
 * the momentum of the whole model kept outside the ledger on 2 ranks is
 * twice that, whole gradients kept through a step more. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <string.h> // strcmp

#include "drivers.h" // gr_csv
#include "kit.h" // kit_mem_bytes, the dump's schemas
#include "lab06_ref.h"

double gr6_peak(const char *name, int r, const char *kind)
{
    char file[400];
    snprintf(file, sizeof file, "%s/dump/memory.%d.csv", name, r);
    gr_csv t;
    gr_csv_load(&t, gr6_path(file));
    int c_kind = gr_csv_col(&t, kit_peak_names[KIT_P_KIND]), c_peak = gr_csv_col(&t, kit_peak_names[KIT_P_PEAK]);
    double v = -1;
    for (size_t k = 0; k < t.nrows; k++)
        if (strcmp(gr_csv_str(&t, k, c_kind), kind) == 0)
            v = gr_csv_num(&t, k, c_peak);
    gr_csv_free(&t);
    if (v < 0)
        GR_FAIL("the run '%s' dumped no ledger row for %s on rank %d", name, kind, r);
    return v;
}

#define MIB (1024.0 * 1024.0)

void gr6_check_os(const char *mode, double excused)
{
    int fsdp = strcmp(mode, "fsdp") == 0;
    gr6_result d = gr6_mem_run("ddp"), m = gr6_mem_run(mode);
    if (!gr6_rss_restartable()) {
        gr_note("this kernel cannot restart a process's peak resident set (/proc/self/clear_refs): the OS's count "
                "of the memory is left out here, and the ledger alone judged\n");
        return;
    }
    size_t sizes[8];
    int ns = gr6_mem_sizes(sizes);
    double b[SHARD_KINDS], n = 0, shards = 0, pair = 0, prev = 0;
    double cd = kit_mem_bytes(KIT_DDP, sizes, ns, G6M_BATCH, G6M_P, b);
    double cm = kit_mem_bytes(fsdp ? KIT_FSDP : KIT_ZERO1, sizes, ns, G6M_BATCH, G6M_P, b);
    for (int l = 0; l + 1 < ns; l++) {
        double nl = (double)(sizes[l] * sizes[l + 1] + sizes[l + 1]);
        n += nl;
        shards += floor((nl + G6M_P - 1) / G6M_P);
        pair = fmax(pair, nl + prev);
        prev = nl;
    }
    if (!fsdp)
        shards = floor((n + G6M_P - 1) / G6M_P);
    if (d.rss <= cd || m.rss <= 0 || d.rss <= d.judge_rss + cd / 2 || m.rss <= m.judge_rss) {
        gr_note("the OS's count of the runs could not be read here (DDP's run: %.1f MiB, its ledger %.1f MiB; %s's "
                "%.1f MiB; the judge's own %.1f MiB): the ledger alone judged\n",
                d.rss / MIB, cd / MIB, mode, m.rss / MIB, m.judge_rss / MIB);
        return;
    }
    double base = d.rss - cd, extra = m.rss - (base + cm) - excused, allow = n;
    gr_note("the OS saw %s's ranks peak at %.1f MiB, DDP's at %.1f MiB (%.1f MiB above its ledger): %.1f MiB above "
            "what the ledger's closed form leaves room for (allowed: %.1f MiB)\n",
            mode, m.rss / MIB, d.rss / MIB, base / MIB, extra / MIB, allow / MIB);
    if (extra <= allow)
        return;
    // ZeRO-1: about the momentum of the whole model (less the shard's, where that one is the ledger's) names
    // itself; FSDP's whole layers of momentum and of gradients are too close in size to tell apart
    double replicated = 4.0 * (n - shards);
    if (!fsdp && extra >= replicated - allow && extra <= 4.0 * n + allow)
        GR_FAIL(GR_DIAG("optimizer-replicated") "%s on %d ranks of the memory workload (%.0f parameters): the "
                                                "operating system saw each rank hold %.1f MiB more than DDP's run "
                                                "beside it less what the ledger's closed form saves, about the "
                                                "momentum of the whole model (%.1f MiB less this rank's shard, %.1f "
                                                "with it), while the ledger shows the shard's alone: momentum kept "
                                                "where shard_alloc does not count it, or the ledger's counts changed. "
                                                "The OS's count is the one that counts",
                mode, G6M_P, n, extra / MIB, replicated / MIB, 4.0 * n / MIB);
    char sizes_of[200] = "";
    if (fsdp)
        snprintf(sizes_of, sizeof sizes_of,
                 " (the momentum of whole layers would be about %.1f MiB, every layer's whole gradient kept through "
                 "backward about %.1f MiB)",
                 4.0 * (n - shards) / MIB, 4.0 * (n - pair) / MIB);
    GR_FAIL(GR_DIAG("memory-outside-ledger") "%s on %d ranks of the memory workload (%.0f parameters): the operating "
                                             "system saw each rank hold %.1f MiB more than DDP's run beside it less "
                                             "what the ledger's closed form saves (allowed: %.1f MiB for the "
                                             "allocator and the runtime): memory your code holds where shard_alloc "
                                             "does not count it (or the ledger's counts changed). The OS's count is "
                                             "the one that counts%s",
            mode, G6M_P, n, extra / MIB, allow / MIB, sizes_of);
}
