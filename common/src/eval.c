/* eval.c — accuracy on a held-out set, chunk by chunk over the ranks. See dl/eval.h. */
#include "dl/eval.h"

#include <math.h> // NAN
#include <stdlib.h> // malloc, free

/* Right predictions in the chunks k with k mod every == mine (every = 1: all of them). */
static dl_status count_right(dl_mlp *m, dl_batch *b, const dl_dataset *set, size_t every, size_t mine, double *right)
{
    *right = 0;
    if (set->n == 0 || set->d != b->d)
        return dl_error_set(DL_ERR_ARG, "eval: a set of %zu rows of %zu features for a batch of %zu", set->n, set->d,
                            b->d);
    size_t chunk = b->cap < m->max_batch ? b->cap : m->max_batch;
    int32_t *pred = malloc(chunk * sizeof *pred);
    if (pred == NULL)
        return dl_error_set(DL_ERR_NOMEM, "eval: out of memory");
    dl_status st = DL_OK;
    for (size_t k = mine, first = mine * chunk; st == DL_OK && first < set->n; k += every, first = k * chunk) {
        size_t n = set->n - first < chunk ? set->n - first : chunk;
        st = dl_batch_range(b, set, first, n);
        if (st == DL_OK)
            st = dl_mlp_predict(m, b->X, n, pred);
        for (size_t i = 0; st == DL_OK && i < n; i++)
            *right += pred[i] == set->y[first + i];
    }
    free(pred);
    return st;
}

dl_status dl_eval_accuracy(dl_comm *c, dl_mlp *m, dl_batch *b, const dl_dataset *set, double *acc)
{
    *acc = NAN;
    double right = 0;
    dl_status st = count_right(m, b, set, (size_t)dl_comm_size(c), (size_t)dl_comm_rank(c), &right);
    if (st == DL_OK)
        st = dl_comm_allreduce(c, &right, 1, DL_F64, DL_RED_SUM);
    if (st == DL_OK)
        *acc = right / (double)set->n;
    return st;
}

dl_status dl_eval_accuracy_on(dl_comm *c, int root, dl_mlp *m, dl_batch *b, const dl_dataset *set, double *acc)
{
    *acc = NAN;
    dl_status st = DL_OK;
    if (dl_comm_rank(c) == root) {
        double right = 0;
        st = count_right(m, b, set, 1, 0, &right);
        if (st == DL_OK)
            *acc = right / (double)set->n;
    }
    // a root that failed returns before the broadcast; its caller ends the job (dl_rank_exit), which
    // stops the ranks waiting here
    if (st == DL_OK)
        st = dl_comm_broadcast(c, acc, 1, DL_F64, root);
    return st;
}
