/* summary.c — summary.json of a training driver. See dl/summary.h. */
#define _POSIX_C_SOURCE 200809L
#include "dl/summary.h"

#include <errno.h> // errno, ENOENT
#include <math.h> // isnan
#include <stdio.h> // snprintf, remove
#include <string.h> // strerror

#include "dl/blas.h" // dl_blas_describe
#include "dl/fs.h" // dl_mkdir_p

static dl_status summary_path(const char *out_dir, char *path, size_t len)
{
    if (snprintf(path, len, "%s/summary.json", out_dir) >= (int)len)
        return dl_error_set(DL_ERR_ARG, "%s/summary.json: path too long", out_dir);
    return DL_OK;
}

dl_status dl_summary_prepare(const char *out_dir)
{
    char path[1100];
    DL_TRY(summary_path(out_dir, path, sizeof path));
    DL_TRY(dl_mkdir_p(out_dir));
    if (remove(path) != 0 && errno != ENOENT)
        return dl_error_set(DL_ERR_IO, "%s: cannot remove the last run's summary: %s", path, strerror(errno));
    return DL_OK;
}

static dl_status write_one(const char *path, dl_summary_fn body, const void *ctx)
{
    dl_json j;
    DL_TRY(dl_json_open(&j, path));
    dl_json_object(&j, NULL);
    body(&j, ctx);
    dl_summary_blas(&j);
    dl_json_end_object(&j);
    return dl_json_close(&j);
}

dl_status dl_summary_write(const char *out_dir, const char *json_path, dl_summary_fn body, const void *ctx)
{
    char path[1100];
    DL_TRY(summary_path(out_dir, path, sizeof path));
    DL_TRY(write_one(path, body, ctx));
    return json_path != NULL ? write_one(json_path, body, ctx) : DL_OK;
}

void dl_summary_blas(dl_json *j)
{
    dl_blas_info b;
    dl_blas_describe(&b);
    dl_json_object(j, "blas");
    dl_json_str(j, "library", b.library);
    dl_json_str(j, "version", b.version);
    dl_json_str(j, "core", b.core);
    dl_json_str(j, "chosen_by", b.chosen_by);
    dl_json_int(j, "threads", b.threads);
    dl_json_bool(j, "flushes_subnormals", b.flushes_subnormals);
    dl_json_end_object(j);
}

void dl_summary_run(dl_json *j, const char *lab, const char *mode, dl_comm *c, const dl_device *dev,
                    const char *dataset)
{
    dl_json_str(j, "lab", lab);
    dl_json_str(j, "mode", mode);
    dl_json_int(j, "ranks", dl_comm_size(c));
    dl_json_str(j, "backend", dl_comm_backend(c));
    dl_json_str(j, "device", dl_device_describe(dev));
    dl_json_str(j, "device_kind", dl_device_kind_name(dev));
    dl_json_str(j, "dataset", dataset);
}

void dl_summary_workload(dl_json *j, const char *key, const dl_workload *w)
{
    dl_json_object(j, key);
    dl_json_num(j, "flops", w->flops);
    dl_json_num(j, "steps", w->steps);
    dl_json_num(j, "allreduce_calls", w->allreduce_calls);
    dl_json_num(j, "allreduce_bytes", w->allreduce_bytes);
    dl_json_num(j, "samples", w->samples);
    dl_json_num(j, "fp16_share", w->fp16_share);
    dl_json_num(j, "mem_bytes", w->mem_bytes);
    dl_json_num(j, "launches", w->launches);
    dl_json_num(j, "bcast_calls", w->bcast_calls);
    dl_json_num(j, "bcast_bytes", w->bcast_bytes);
    dl_json_num(j, "dataset", w->dataset);
    dl_json_bool(j, "overlapped", w->overlapped);
    dl_json_end_object(j);
}

void dl_summary_device_io(dl_json *j, const dl_run_io *io)
{
    const dl_dev_stats *a = &io->start, *r = &io->resident, *e = &io->end;
    double ep = io->epochs > 0 ? io->epochs : 1;
    dl_json_object(j, "device_io");
    dl_json_object(j, "setup");
    dl_json_num(j, "h2d_bytes", (double)(r->h2d_bytes - a->h2d_bytes));
    dl_json_end_object(j);
    dl_json_object(j, "per_epoch");
    dl_json_num(j, "h2d_bytes", (double)(e->h2d_bytes - r->h2d_bytes) / ep);
    dl_json_num(j, "d2h_bytes", (double)(e->d2h_bytes - r->d2h_bytes) / ep);
    dl_json_num(j, "syncs", (double)(e->syncs - r->syncs) / ep);
    dl_json_end_object(j);
    if (io->steps > 0) {
        double n = (double)io->steps;
        dl_json_object(j, "per_step");
        dl_json_num(j, "syncs", io->syncs / n);
        dl_json_num(j, "launches", io->launches / n);
        dl_json_num(j, "allocs", io->allocs / n);
        dl_json_num(j, "h2d_bytes", io->h2d_bytes / n);
        dl_json_num(j, "d2h_bytes", io->d2h_bytes / n);
        dl_json_end_object(j);
    }
    dl_json_end_object(j);
}

void dl_run_io_steps(dl_run_io *io, const dl_dev_stats *before, const dl_dev_stats *after, long steps)
{
    io->steps += steps;
    io->syncs += (double)(after->syncs - before->syncs);
    io->launches += (double)(after->launches - before->launches);
    io->allocs += (double)(after->allocs - before->allocs);
    io->h2d_bytes += (double)(after->h2d_bytes - before->h2d_bytes);
    io->d2h_bytes += (double)(after->d2h_bytes - before->d2h_bytes);
}

void dl_run_io_spans(dl_run_io *io, const dl_span *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const dl_span *e = &ev[i];
        if (e->kind != DL_EV_STEP || e->host_t1 < 0) // a span still open counts nothing yet
            continue;
        io->steps++;
        io->syncs += e->syncs, io->launches += e->launches, io->allocs += e->allocs;
        io->h2d_bytes += e->h2d_bytes, io->d2h_bytes += e->d2h_bytes;
    }
}

void dl_summary_projection(dl_json *j, const char *key, const dl_profile *prof, int ranks, const dl_projection *p,
                           const char *omitted)
{
    dl_json_object(j, key);
    dl_json_str(j, "profile", prof->name);
    dl_json_int(j, "gpus", ranks);
    if (omitted == NULL) {
        dl_json_num(j, "epoch_ms", 1e3 * p->epoch_s);
        dl_json_num(j, "compute_ms", 1e3 * p->compute_s);
        dl_json_num(j, "comm_ms", 1e3 * p->comm_s);
        dl_json_num(j, "single_gpu_ms", 1e3 * p->single_s);
        dl_json_num(j, "speedup", p->speedup);
        dl_json_bool(j, "projected", 1);
    } else {
        dl_json_bool(j, "projected", 0);
        dl_json_str(j, "omitted", omitted);
    }
    dl_json_end_object(j);
}

void dl_summary_training(dl_json *j, const dl_train_report *r)
{
    dl_json_int(j, "epochs_run", r->epochs_run);
    dl_json_int(j, "steps", r->steps);
    dl_json_int(j, "n_params", (long long)r->n_params);
    dl_json_num(j, "final_loss", r->final_loss);
    dl_json_num(j, "test_accuracy", r->test_accuracy);
    if (r->val_rows > 0) {
        dl_json_num(j, "val_accuracy", r->val_accuracy);
        dl_json_int(j, "val_rows", (long long)r->val_rows);
        dl_json_int(j, "test_rows", (long long)r->test_rows);
    }
    dl_json_num(j, "param_diff_across_ranks", r->param_diff);
    dl_json_num(j, "param_diff_after_broadcast", r->init_diff);
    dl_json_f64s(j, "rows_per_rank", r->rows_per_rank, (size_t)r->ranks);
    dl_json_int(j, "dataset_rows", (long long)r->dataset_rows);
    dl_json_num(j, "train_seconds", r->train_seconds);
    dl_json_num(j, "epoch_seconds", r->epoch_seconds);
    if (!isnan(r->steady_epoch_seconds))
        dl_json_num(j, "steady_epoch_seconds", r->steady_epoch_seconds);
    dl_json_num(j, "imbalance", r->imbalance);
    if (r->mean != NULL) {
        dl_json_object(j, "scaler");
        dl_json_f32s(j, "mean", r->mean, r->d);
        dl_json_f32s(j, "std", r->std, r->d);
        dl_json_num(j, "max_diff_across_ranks", r->scaler_diff);
        dl_json_end_object(j);
    }
    dl_summary_workload(j, "counters_last_epoch", &r->counters);
    dl_summary_projection(j, "projection", r->prof, r->ranks, &r->proj, r->why_not);
}
