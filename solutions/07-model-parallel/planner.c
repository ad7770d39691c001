/* planner.c — lab 07, tasks 7-9: a layout's memory and step time in closed
 * form, and the fastest layout that fits (planner.h has the contract). */
#include "planner.h"

#include <math.h> // fmod

/* DL_OK when l is a layout of the machine for the model, else DL_ERR_ARG naming what is not. */
static dl_status check(const char *what, const plan_model *md, const plan_machine *mc, const plan_layout *l)
{
    if (md == NULL || mc == NULL || mc->gpu == NULL || l == NULL)
        return dl_error_set(DL_ERR_ARG, "%s: a model, a machine with its GPU and a layout", what);
    int N = mc->nodes * mc->gpus_per_node;
    if (md->layers < 1 || md->width < 1 || md->rows < 1 || md->micro_rows < 1 || mc->nodes < 1 ||
        mc->gpus_per_node < 1 || l->d < 1 || l->t < 1 || l->p < 1)
        return dl_error_set(DL_ERR_ARG, "%s: every size at least 1", what);
    if (l->d * l->t * l->p != N)
        return dl_error_set(DL_ERR_ARG, "%s: d x t x p = %d x %d x %d, not the machine's %d GPUs", what, l->d, l->t,
                            l->p, N);
    if (md->layers % l->p != 0)
        return dl_error_set(DL_ERR_ARG, "%s: p = %d does not divide the %d blocks", what, l->p, md->layers);
    if (fmod(md->rows, l->d * md->micro_rows) != 0)
        return dl_error_set(DL_ERR_ARG, "%s: %g rows a step are not micro-batches of %g rows on %d replicas", what,
                            md->rows, md->micro_rows, l->d);
    if (l->zero < 0 || l->zero > 3)
        return dl_error_set(DL_ERR_ARG, "%s: ZeRO stage %d, expected 0 to 3", what, l->zero);
    if (mc->nodes > 1 && !(mc->gpu->nic_bw > 0))
        return dl_error_set(DL_ERR_ARG, "%s: profile %s has no nic_bw: one node only", what, mc->gpu->name);
    return DL_OK;
}

/* BEGIN SOLUTION */
/* The parameters one GPU holds: its stage's blocks, 1/t of each but the second bias. */
static double stage_params(const plan_model *md, const plan_layout *l)
{
    double w = md->width;
    return (double)md->layers / l->p * ((8 * w * w + 4 * w) / l->t + w);
}
/* END SOLUTION */

dl_status plan_memory(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    DL_TRY(check("plan_memory", md, mc, l));
    /* BEGIN SOLUTION */
    double w = md->width, b = md->micro_rows, blocks = (double)md->layers / l->p, d = l->d, t = l->t;
    double m = md->rows / (d * b), held = m < l->p ? m : l->p; // 1F1B on stage 0: min(m, p)
    l->params = stage_params(md, l);
    // bytes a parameter: fp16 weights 2, the two gradients 2 + 4, master weights and momentum 4 + 4
    double kept = l->zero == 0 ? 16 : l->zero == 1 ? 8 + 8 / d : l->zero == 2 ? 2 + 14 / d : 16 / d;
    l->state_bytes = l->params * kept;
    l->act_bytes = 2 * held * blocks * b * (2 * w + 4 * w / t);
    l->mem_bytes = l->state_bytes + l->act_bytes;
    l->fits = l->mem_bytes <= mc->gpu->gpu_mem;
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 7: a layout's bytes on one GPU"); */
}

/* BEGIN SOLUTION */
/* The link of a group spanning span GPUs: inside a node, or between nodes. */
static void link(const plan_machine *mc, int span, double *bw, double *lat)
{
    int inside = span <= mc->gpus_per_node;
    *bw = inside ? mc->gpu->bus_bw : mc->gpu->nic_bw;
    *lat = inside ? mc->gpu->hop_latency : mc->gpu->nic_latency;
}
/* END SOLUTION */

dl_status plan_time(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    DL_TRY(check("plan_time", md, mc, l));
    /* BEGIN SOLUTION */
    const dl_profile *g = mc->gpu;
    double w = md->width, b = md->micro_rows, blocks = (double)md->layers / l->p, bw, lat;
    int d = l->d, t = l->t, p = l->p;
    l->m = md->rows / (d * b);
    l->bubble = (p - 1) / l->m;
    double flops = 6 * 8 * w * w * md->layers * md->rows / ((double)d * t * p);
    l->compute_s = flops / (g->fp16_peak * g->fp16_efficiency) * (1 + l->bubble);
    link(mc, t, &bw, &lat); // the tensor group: t consecutive GPUs
    l->tp_s = l->m * blocks * dl_bw_seconds(DL_BW_ALLREDUCE, t, 2, 2 * (2 * b * w), lat, bw);
    link(mc, d * t * p, &bw, &lat); // stages: t·d apart
    l->pp_s = p > 1 ? 2 * l->m * (2 * b * w / bw + lat) : 0;
    link(mc, d * t, &bw, &lat); // the data group: d replicas, t apart
    l->dp_s = dl_bw_seconds(DL_BW_ALLREDUCE, d, 1, 2 * stage_params(md, l) * (l->zero == 3 ? 1.5 : 1), lat, bw);
    l->step_s = l->compute_s + l->tp_s + l->pp_s + l->dp_s;
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 8: a layout's step time"); */
}

/* BEGIN SOLUTION */
/* 1 when a beats b: a shorter step, or an equal one (within 1e-9) in less memory. */
static int faster(const plan_layout *a, const plan_layout *b)
{
    double tol = 1e-9 * b->step_s;
    if (a->step_s < b->step_s - tol)
        return 1;
    return a->step_s <= b->step_s + tol && a->mem_bytes < b->mem_bytes;
}
/* END SOLUTION */

dl_status plan_best(const plan_model *md, const plan_machine *mc, plan_layout *out, int max, int *n, int *best)
{
    if (md == NULL || mc == NULL || out == NULL || n == NULL || best == NULL || mc->nodes < 1 ||
        mc->gpus_per_node < 1 || md->layers < 1 || md->width < 1 || md->rows < 1 || md->micro_rows < 1)
        return dl_error_set(DL_ERR_ARG, "plan_best: a model and a machine of sizes at least 1, room and two results");
    /* BEGIN SOLUTION */
    int N = mc->nodes * mc->gpus_per_node;
    *n = 0, *best = -1;
    for (int t = 1; t <= N; t++)
        for (int p = 1; t * p <= N && N % t == 0; p++) {
            int d = N / (t * p);
            if (N % (t * p) != 0 || md->layers % p != 0 || fmod(md->rows, d * md->micro_rows) != 0)
                continue;
            for (int z = 0; z <= 3; z++) {
                if (*n >= max)
                    return dl_error_set(DL_ERR_ARG, "plan_best: more than %d layouts", max);
                plan_layout *l = &out[*n];
                *l = (plan_layout){.d = d, .t = t, .p = p, .zero = z};
                DL_TRY(plan_memory(md, mc, l));
                DL_TRY(plan_time(md, mc, l));
                if (l->fits && (*best < 0 || faster(l, &out[*best])))
                    *best = *n;
                (*n)++;
            }
        }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab07 task 9: every layout, and the fastest that fits"); */
}
