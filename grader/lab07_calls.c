/* lab07_calls.c — lab 07's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). The shard
 * is checked in-process; forward and backward run in the driver's --dump,
 * on real ranks, and are wrapped here for completeness (what they leave is
 * their output). */
#define _POSIX_C_SOURCE 200809L
#include "replay.h"
#include "pipe.h"
#include "planner.h"
#include "tp.h"

#define OUT(c, b, p, n) gr_out_dev(c, (b)->dev, p, (p) != NULL ? (n) * sizeof(float) : 0)

GR_DECLARE(tp_shard);
dl_status GR_FN(tp_shard)(tp_block *b, const dl_mlp_layer *first, const dl_mlp_layer *second)
{
    gr_call c;
    gr_call_begin(&c, "tp_shard", "lab07 task 1");
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(tp_shard)(b, first, second);
    OUT(&c, b, b->col.W, b->h * b->in);
    OUT(&c, b, b->col.b, b->h);
    OUT(&c, b, b->row.W, b->out * b->h);
    OUT(&c, b, b->row.b, b->out);
    return gr_call_end(&c, st);
}

GR_DECLARE(tp_forward);
dl_status GR_FN(tp_forward)(tp_block *b, const float *X, size_t n, float *Y)
{
    gr_call c;
    gr_call_begin(&c, "tp_forward", "lab07 task 2");
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(tp_forward)(b, X, n, Y);
    OUT(&c, b, Y, n * b->out);
    return gr_call_end(&c, st);
}

GR_DECLARE(tp_backward);
dl_status GR_FN(tp_backward)(tp_block *b, const float *X, size_t n, const float *dY, float *dX)
{
    gr_call c;
    gr_call_begin(&c, "tp_backward", "lab07 task 3");
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(tp_backward)(b, X, n, dY, dX);
    OUT(&c, b, b->col.gW, b->h * b->in);
    OUT(&c, b, b->col.gb, b->h);
    OUT(&c, b, b->row.gW, b->out * b->h);
    OUT(&c, b, b->row.gb, b->out);
    OUT(&c, b, dX, n * b->in);
    return gr_call_end(&c, st);
}

GR_DECLARE(pp_layers);
dl_status GR_FN(pp_layers)(int L, int P, int s, int *first, int *last)
{
    gr_call c;
    gr_call_begin(&c, "pp_layers", "lab07 task 4");
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(pp_layers)(L, P, s, first, last);
    gr_out(&c, first, first != NULL ? sizeof *first : 0);
    gr_out(&c, last, last != NULL ? sizeof *last : 0);
    return gr_call_end(&c, st);
}

GR_DECLARE(pp_gpipe);
dl_status GR_FN(pp_gpipe)(pp_stage *st)
{
    gr_call c;
    gr_call_begin(&c, "pp_gpipe", "lab07 task 5");
    dl_status s = DL_OK;
    if (gr_call_live(&c))
        s = GR_REAL(pp_gpipe)(st);
    return gr_call_end(&c, s);
}

GR_DECLARE(pp_1f1b);
dl_status GR_FN(pp_1f1b)(pp_stage *st)
{
    gr_call c;
    gr_call_begin(&c, "pp_1f1b", "lab07 task 6");
    dl_status s = DL_OK;
    if (gr_call_live(&c))
        s = GR_REAL(pp_1f1b)(st);
    return gr_call_end(&c, s);
}

GR_DECLARE(plan_memory);
dl_status GR_FN(plan_memory)(const plan_model *model, const plan_machine *mc, plan_layout *l)
{
    gr_call c;
    gr_call_begin(&c, "plan_memory", "lab07 task 7");
    dl_status s = DL_OK;
    if (gr_call_live(&c))
        s = GR_REAL(plan_memory)(model, mc, l);
    gr_out(&c, l, l != NULL ? sizeof *l : 0);
    return gr_call_end(&c, s);
}

GR_DECLARE(plan_time);
dl_status GR_FN(plan_time)(const plan_model *model, const plan_machine *mc, plan_layout *l)
{
    gr_call c;
    gr_call_begin(&c, "plan_time", "lab07 task 8");
    dl_status s = DL_OK;
    if (gr_call_live(&c))
        s = GR_REAL(plan_time)(model, mc, l);
    gr_out(&c, l, l != NULL ? sizeof *l : 0);
    return gr_call_end(&c, s);
}

GR_DECLARE(plan_best);
dl_status GR_FN(plan_best)(const plan_model *model, const plan_machine *mc, plan_layout *out, int max, int *n,
                           int *best)
{
    gr_call c;
    gr_call_begin(&c, "plan_best", "lab07 task 9");
    dl_status s = DL_OK;
    if (gr_call_live(&c))
        s = GR_REAL(plan_best)(model, mc, out, max, n, best);
    gr_out(&c, n, n != NULL ? sizeof *n : 0);
    gr_out(&c, best, best != NULL ? sizeof *best : 0);
    int k = n != NULL && *n > 0 ? (*n < max ? *n : max) : 0;
    gr_out(&c, out, out != NULL ? (size_t)k * sizeof *out : 0);
    return gr_call_end(&c, s);
}
