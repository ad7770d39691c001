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


dl_status plan_memory(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    DL_TRY(check("plan_memory", md, mc, l));
    return DL_TODO("lab07 task 7: a layout's bytes on one GPU");
}


dl_status plan_time(const plan_model *md, const plan_machine *mc, plan_layout *l)
{
    DL_TRY(check("plan_time", md, mc, l));
    return DL_TODO("lab07 task 8: a layout's step time");
}


dl_status plan_best(const plan_model *md, const plan_machine *mc, plan_layout *out, int max, int *n, int *best)
{
    if (md == NULL || mc == NULL || out == NULL || n == NULL || best == NULL || mc->nodes < 1 ||
        mc->gpus_per_node < 1 || md->layers < 1 || md->width < 1 || md->rows < 1 || md->micro_rows < 1)
        return dl_error_set(DL_ERR_ARG, "plan_best: a model and a machine of sizes at least 1, room and two results");
    return DL_TODO("lab07 task 9: every layout, and the fastest that fits");
}
