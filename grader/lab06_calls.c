/* lab06_calls.c — lab 06's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). Most of lab
 * 06 is judged from the driver's dumps; the in-process items call these on
 * a world of one. */
#define _POSIX_C_SOURCE 200809L
#include "lab06_ref.h" // gr6_shard
#include "replay.h"
#include "shard.h"

#define T1 "lab06 task 1"
#define T2 "lab06 task 2"
#define T3 "lab06 task 3"

/* Where the shards lie (task 1): the value is the output (replay.h). */
GR_SEGMENT_FN(shard_offset, T1)
GR_SEGMENT_FN(shard_count, T1)

/* The collectives (task 2): what they leave in buf (on dev) is the output. */
GR_DECLARE(shard_reduce_scatter);
dl_status GR_FN(shard_reduce_scatter)(dl_comm *cm, const dl_device *dev, float *buf, size_t n, float *scratch)
{
    gr_call c;
    gr_call_begin(&c, "shard_reduce_scatter", T2);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(shard_reduce_scatter)(cm, dev, buf, n, scratch);
    gr_out_dev(&c, dev, buf, buf != NULL && dev != NULL ? n * sizeof *buf : 0);
    return gr_call_end(&c, st);
}

GR_DECLARE(shard_all_gather);
dl_status GR_FN(shard_all_gather)(dl_comm *cm, const dl_device *dev, float *buf, size_t n)
{
    gr_call c;
    gr_call_begin(&c, "shard_all_gather", T2);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(shard_all_gather)(cm, dev, buf, n);
    gr_out_dev(&c, dev, buf, buf != NULL && dev != NULL ? n * sizeof *buf : 0);
    return gr_call_end(&c, st);
}

/* ZeRO-1 (task 3): the shard zero_init chose, and the model's parameters after a step. */
GR_DECLARE(zero_init);
dl_status GR_FN(zero_init)(zero_state *z)
{
    gr_call c;
    gr_call_begin(&c, "zero_init", T3);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(zero_init)(z);
    size_t where[2] = {z != NULL ? z->offset : 0, z != NULL ? z->count : 0};
    gr_out(&c, where, sizeof where);
    if (z != NULL) {
        z->offset = where[0];
        z->count = where[1];
    }
    return gr_call_end(&c, st);
}

GR_DECLARE(zero_step);
dl_status GR_FN(zero_step)(zero_state *z, const float *X, const int32_t *y, size_t n, const shard_sgd *opt)
{
    gr_call c;
    gr_call_begin(&c, "zero_step", T3);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(zero_step)(z, X, y, n, opt);
    dl_mlp *m = z != NULL ? z->model : NULL;
    gr_out_dev(&c, m != NULL ? m->dev : NULL, m != NULL ? m->params : NULL,
               m != NULL && m->dev != NULL ? m->n_params * sizeof(float) : 0);
    return gr_call_end(&c, st);
}

GR_DECLARE(zero_free);
void GR_FN(zero_free)(zero_state *z)
{
    gr_call c;
    gr_call_begin(&c, "zero_free", T3);
    if (gr_call_live(&c))
        GR_REAL(zero_free)(z);
    gr_call_end(&c, DL_OK);
}

/* The collectives started without waiting (task 4): run by the driver's
 * --selftest start (kit_selftest.c calls them, so the judge links them); no item calls
 * them in-process. The pending record is the output; what the buffers hold
 * comes at shard_wait. */
#define T4 "lab06 task 4"

GR_DECLARE(shard_all_gather_start);
dl_status GR_FN(shard_all_gather_start)(dl_comm *cm, const dl_device *dev, float *buf, size_t n, shard_pending *p)
{
    gr_call c;
    gr_call_begin(&c, "shard_all_gather_start", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(shard_all_gather_start)(cm, dev, buf, n, p);
    gr_out(&c, p, p != NULL ? sizeof *p : 0);
    return gr_call_end(&c, st);
}

GR_DECLARE(shard_reduce_scatter_start);
dl_status GR_FN(shard_reduce_scatter_start)(dl_comm *cm, const dl_device *dev, const float *grad, size_t n, float *out,
                                            float *scratch, shard_pending *p)
{
    gr_call c;
    gr_call_begin(&c, "shard_reduce_scatter_start", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(shard_reduce_scatter_start)(cm, dev, grad, n, out, scratch, p);
    gr_out(&c, p, p != NULL ? sizeof *p : 0);
    return gr_call_end(&c, st);
}

GR_DECLARE(shard_wait);
dl_status GR_FN(shard_wait)(dl_comm *cm, const dl_device *dev, shard_pending *p)
{
    gr_call c;
    gr_call_begin(&c, "shard_wait", T4);
    float *out = p != NULL ? p->out : NULL;
    size_t count = 0; // a reduce-scatter's shard of the mean, by the grader's arithmetic (not the student's)
    if (out != NULL && cm != NULL) {
        size_t lo;
        count = gr6_shard(p->n_elems, dl_comm_size(cm), dl_comm_rank(cm), &lo) * sizeof *out;
    }
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(shard_wait)(cm, dev, p);
    gr_out_dev(&c, dev, out, dev != NULL ? count : 0);
    return gr_call_end(&c, st);
}
