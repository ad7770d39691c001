/* eval.c — accuracy on a held-out set, chunk by chunk over the ranks, counted
 * on the device. See dl/eval.h. */
#include "dl/eval.h"

#include <math.h> // NAN

/* Right predictions in the chunks k with k mod every == mine (every = 1: all
 * of them), counted on the device and read once. */
static dl_status count_right(dl_mlp *m, const dl_devset *set, size_t chunk, size_t every, size_t mine, double *right)
{
    *right = 0;
    if (set->n == 0 || set->d != m->layer[0].in || set->dev == NULL || set->dev->kind != m->dev->kind)
        return dl_error_set(DL_ERR_ARG, "eval: a set of %zu rows of %zu features for a model of %zu inputs on %s",
                            set->n, set->d, m->layer[0].in, dl_device_describe(m->dev));
    if (chunk == 0 || chunk > m->max_batch)
        chunk = m->max_batch;
    dl_status st = DL_OK;
    for (size_t k = mine, first = mine * chunk; st == DL_OK && first < set->n; k += every, first = k * chunk) {
        size_t n = set->n - first < chunk ? set->n - first : chunk;
        st = dl_mlp_count_right(m, set->X + first * set->d, set->y + first, n);
    }
    double r = 0;
    dl_status rd = dl_mlp_take_right(m, &r); // read (and restarted) even after a failure
    if (st == DL_OK && rd == DL_OK)
        *right = r;
    return st != DL_OK ? st : rd;
}

dl_status dl_eval_accuracy(dl_comm *c, dl_mlp *m, const dl_devset *set, size_t chunk, double *acc)
{
    *acc = NAN;
    double right = 0;
    dl_status st = count_right(m, set, chunk, (size_t)dl_comm_size(c), (size_t)dl_comm_rank(c), &right);
    if (st == DL_OK)
        st = dl_comm_allreduce(c, &right, 1, DL_F64, DL_RED_SUM);
    if (st == DL_OK)
        *acc = right / (double)set->n;
    return st;
}

dl_status dl_eval_accuracy_on(dl_comm *c, int root, dl_mlp *m, const dl_devset *set, size_t chunk, double *acc)
{
    *acc = NAN;
    dl_status st = DL_OK;
    if (dl_comm_rank(c) == root) {
        double right = 0;
        st = count_right(m, set, chunk, 1, 0, &right);
        if (st == DL_OK)
            *acc = right / (double)set->n;
    }
    // a root that failed returns before the broadcast; its caller ends the job (dl_rank_exit), which
    // stops the ranks waiting here
    if (st == DL_OK)
        st = dl_comm_broadcast(c, acc, 1, DL_F64, root);
    return st;
}
