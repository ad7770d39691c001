/* outputs.c — lab 06's files, plots and summary.json, from the ledger and
 * the kit's closed forms, once your code no longer runs. See driver.h. */
#include <stdio.h> // snprintf

#include "dl/epoch.h" // dl_steady_seconds
#include "dl/summary.h" // dl_summary_device_io
#include "driver.h"

dl_status lab06_files(dl_engine *E)
{
    lab06_run *R = E->ctx;
    double b[SHARD_KINDS];
    R->model_total = kit_mem_bytes(R->mode, E->sizes, E->n_sizes, R->B, E->P, b);
    if (E->rank != 0)
        return DL_OK;
    DL_TRY(kit_write_memory(E->a.out, E->sizes, E->n_sizes, R->B, R->mode, E->P));
    DL_TRY(kit_write_largest(E->a.out));
    DL_TRY(kit_write_mem_step(E->a.out));
    return kit_write_projection(E->a.out, E->sizes, E->n_sizes, R->B);
}

void lab06_plots(dl_engine *E, dl_plots *p)
{
    const lab06_run *R = E->ctx;
    const char *out = E->a.out, *mode = kit_mode_names[R->mode];
    dl_plots_draw(p, "memory", "data='%s/memory.csv'; P=%d; mode='%s'", out, E->P, mode);
    dl_plots_draw(p, "step_memory", "data='%s/memory_step.csv'; P=%d; mode='%s'", out, E->P, mode);
    dl_plots_draw(p, "projection", "data='%s/projection.csv'; batch=%zu", out, R->B);
    dl_plots_draw(p, "training", "data='%s/metrics.csv'; mode='%s'; P=%d", out, mode, E->P);
}

/* One step on the profile's GPUs in each mode (kit_project_step). */
static void projection(dl_json *j, const dl_engine *E, size_t B)
{
    dl_json_object(j, "projection");
    dl_json_str(j, "profile", E->prof.name);
    dl_json_int(j, "gpus", E->prof.gpus);
    for (int md = 0; md < KIT_MODES; md++) {
        char key[32];
        kit_projection pj = kit_project_step((kit_mode)md, E->sizes, E->n_sizes, B, &E->prof);
        snprintf(key, sizeof key, "%s_step_ms", kit_mode_names[md]);
        dl_json_num(j, key, 1e3 * pj.step_s);
        snprintf(key, sizeof key, "%s_exposed_ms", kit_mode_names[md]);
        dl_json_num(j, key, 1e3 * pj.exposed_s);
    }
    dl_json_end_object(j);
}

/* Rank 0's ledger at its peaks, beside the closed forms. */
static void memory(dl_json *j, const dl_engine *E, const lab06_run *R)
{
    double ddp[SHARD_KINDS], mine[SHARD_KINDS];
    double ddp_total = kit_mem_bytes(KIT_DDP, E->sizes, E->n_sizes, R->B, E->P, ddp);
    double fsdp_total = kit_mem_bytes(KIT_FSDP, E->sizes, E->n_sizes, R->B, E->P, mine);
    dl_json_object(j, "memory");
    for (int k = 0; k < SHARD_KINDS; k++)
        dl_json_num(j, shard_mem_kind_name((shard_mem_kind)k), (double)kit_ledger()->peak[k]);
    dl_json_num(j, "total", (double)kit_ledger()->peak_total);
    dl_json_num(j, "reserved", (double)kit_reserved_peak()); // the ledger's and the blocks kept for reuse
    long rss_peak, rss_now; // the operating system's count of this process: the peak resident set since the set-up
    kit_rss_kib(&rss_peak, &rss_now);
    dl_json_num(j, "rss_peak", 1024.0 * (double)rss_peak);
    dl_json_num(j, "model_total", R->model_total);
    dl_json_num(j, "ddp_total", ddp_total);
    dl_json_num(j, "fsdp_total", fsdp_total);
    dl_json_num(j, "optim_share_of_ddp", (double)kit_ledger()->peak[SHARD_OPTIM] / ddp[SHARD_OPTIM]);
    dl_json_num(j, "saving_vs_ddp", 1.0 - (double)kit_ledger()->peak_total / ddp_total);
    dl_json_end_object(j);
}

/* summary.json's body; the engine ends it with "plots". */
void lab06_summary(dl_json *j, const void *ctx)
{
    const dl_engine *E = ctx;
    const lab06_run *R = E->ctx;
    const dl_table *t = &E->metrics;
    int last = t->n - 1;
    dl_json_str(j, "lab", "06");
    dl_json_str(j, "mode", kit_mode_names[R->mode]);
    dl_json_int(j, "ranks", E->P);
    dl_json_str(j, "device", dl_device_describe(&E->dev));
    dl_json_str(j, "dataset", E->a.data);
    dl_json_int(j, "n_params", (long)R->m.n_params);
    dl_json_int(j, "epochs_run", t->n);
    dl_json_int(j, "steps", R->steps);
    dl_json_num(j, "final_loss", dl_table_at(t, last, "loss"));
    dl_json_num(j, "val_accuracy", dl_table_at(t, last, "val_accuracy"));
    dl_json_num(j, "test_accuracy", R->test_acc);
    dl_json_num(j, "param_diff_across_ranks", R->param_diff);
    dl_json_num(j, "sent_bytes_per_step", dl_table_at(t, last, "sent_bytes_per_step"));
    dl_json_num(j, "ddp_sent_bytes_per_step", kit_sent_bytes(KIT_DDP, R->m.n_params, E->P));
    dl_json_num(j, "fsdp_sent_bytes_per_step", kit_sent_bytes(KIT_FSDP, R->m.n_params, E->P));
    dl_json_num(j, "steady_epoch_s", dl_steady_seconds(dl_table_column(t, "epoch_s"), t->n, LAB06_METRICS_NCOLS));
    projection(j, E, R->B);
    memory(j, E, R);
    dl_summary_device_io(j, &E->io);
}
