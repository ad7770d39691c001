/* epoch.c — one epoch's sums, counters and clock. See dl/epoch.h. */
#include "dl/epoch.h"

#include <math.h> // NAN, isfinite, log
#include <stdlib.h> // malloc, free, qsort
#include <string.h> // memset

#include "dl/blas.h" // dl_flops, dl_flops_reset
#include "dl/mlp.h" // dl_mlp_step_cost

// ---- counting ----

void dl_epoch_begin(dl_epoch *e, dl_comm *c)
{
    memset(e, 0, sizeof *e);
    e->comm = c;
    dl_timer_reset(&e->compute);
    dl_comm_stats_reset(c);
    dl_flops_reset();
}

void dl_epoch_step(dl_epoch *e, size_t rows, double loss)
{
    e->loss_sum += loss * (double)rows;
    e->rows += (double)rows;
    e->steps += 1;
}

void dl_epoch_stop(dl_epoch *e)
{
    dl_comm_stats_get(e->comm, &e->traffic);
    e->flops = (double)dl_flops();
}

dl_status dl_epoch_reduce(const dl_epoch *e, double step_bytes, double step_launches, double dataset_rows,
                          dl_epoch_sums *out)
{
    const dl_comm_stats *cs = &e->traffic;
    dl_workload *w = &out->w;
    memset(out, 0, sizeof *out);
    w->flops = e->flops;
    w->steps = e->steps;
    w->mem_bytes = step_bytes * e->steps;
    w->launches = step_launches * e->steps;
    w->allreduce_calls = (double)(cs->calls[DL_OP_ALLREDUCE] + cs->calls[DL_OP_ALLREDUCE_ASYNC]);
    w->allreduce_bytes = (double)(cs->bytes[DL_OP_ALLREDUCE] + cs->bytes[DL_OP_ALLREDUCE_ASYNC]);
    w->bcast_calls = (double)(cs->calls[DL_OP_BROADCAST] + cs->calls[DL_OP_ALLGATHER]);
    w->bcast_bytes = (double)(cs->bytes[DL_OP_BROADCAST] + cs->bytes[DL_OP_ALLGATHER]);
    w->samples = e->rows;
    w->dataset = dataset_rows;
    double tot[3] = {e->loss_sum, e->rows, e->steps};
    double rmin = e->rows, fmax = e->flops;
    double rmax = rmin;
    DL_TRY(dl_comm_allreduce(e->comm, tot, 3, DL_F64, DL_RED_SUM));
    DL_TRY(dl_comm_allreduce(e->comm, &rmin, 1, DL_F64, DL_RED_MIN));
    DL_TRY(dl_comm_allreduce(e->comm, &rmax, 1, DL_F64, DL_RED_MAX));
    DL_TRY(dl_comm_allreduce(e->comm, &fmax, 1, DL_F64, DL_RED_MAX));
    if (w->flops < fmax) { // the slowest rank sets the pace: project its work
        w->samples *= fmax / (w->flops > 0 ? w->flops : 1);
        w->flops = fmax;
    }
    out->rows_min = rmin;
    out->rows_max = rmax;
    out->loss = tot[1] > 0 ? tot[0] / tot[1] : NAN;
    out->local_loss = e->rows > 0 ? e->loss_sum / e->rows : NAN;
    return DL_OK;
}

// ---- the kit's epoch clock ----

dl_status dl_epoch_clock_begin(dl_comm *c, double *t0)
{
    DL_TRY(dl_comm_barrier(c)); // everyone starts together
    *t0 = dl_now();
    return DL_OK;
}

dl_status dl_epoch_clock_end(dl_comm *c, double t0, double compute_s, double *per_rank, double *epoch_s,
                             double *imbalance)
{
    DL_TRY(dl_comm_barrier(c)); // the epoch ends when the slowest rank ends
    double epoch = dl_now() - t0;
    DL_TRY(dl_comm_allreduce(c, &epoch, 1, DL_F64, DL_RED_MAX));
    int P = dl_comm_size(c);
    double *all = per_rank != NULL ? per_rank : malloc((size_t)P * sizeof *all);
    if (all == NULL)
        return dl_error_set(DL_ERR_NOMEM, "epoch clock: out of memory");
    dl_status st = dl_comm_allgather(c, &compute_s, all, 1, DL_F64);
    double mx = 0, sum = 0;
    for (int r = 0; st == DL_OK && r < P; r++) {
        mx = all[r] > mx ? all[r] : mx;
        sum += all[r];
    }
    if (all != per_rank)
        free(all);
    if (st == DL_OK) {
        *epoch_s = epoch;
        *imbalance = sum > 0 ? mx / (sum / P) : 1.0;
    }
    return st;
}

// ---- summaries ----

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double dl_steady_seconds(const double *t, int n, size_t stride)
{
    if (n < 1)
        return NAN;
    if (n == 1)
        return t[0];
    int m = n - 1;
    double *s = malloc((size_t)m * sizeof *s);
    if (s == NULL)
        return t[(size_t)m * stride]; // no room to sort: the last epoch, also one after the warm-up
    for (int k = 0; k < m; k++)
        s[k] = t[(size_t)(k + 1) * stride];
    qsort(s, (size_t)m, sizeof *s, by_value);
    double med = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    free(s);
    return med;
}

int dl_loss_exploded(double loss, double best, int classes)
{
    if (!isfinite(loss))
        return 1;
    if (classes > 1 && loss > 2 * log((double)classes))
        return 1;
    return loss > 2 * best; // false while best is NAN
}

void dl_epoch_ideal_workload(const size_t *sizes, int n_sizes, size_t n, int P, size_t b, dl_workload *w)
{
    memset(w, 0, sizeof *w);
    size_t per = (n + (size_t)P - 1) / (size_t)P;
    double steps = (double)((per + b - 1) / b);
    dl_mlp_cost rows, step;
    dl_mlp_step_cost(sizes, n_sizes, per, &rows); // FLOPs scale with the rows
    dl_mlp_step_cost(sizes, n_sizes, b, &step); // element-wise bytes with full batches
    w->flops = rows.flops;
    w->mem_bytes = step.mem_bytes * steps;
    w->launches = step.launches * steps;
    w->steps = steps;
    w->allreduce_calls = P > 1 ? steps : 0;
    w->allreduce_bytes = P > 1 ? steps * 4 * step.params : 0;
    w->samples = (double)per;
    w->dataset = (double)n;
}
