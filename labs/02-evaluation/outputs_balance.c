/* outputs_balance.c — lab 02's random split against the stratified one
 * (each class's share of each part, the rarest class's spread over many
 * seeds) and the drift ranking (see outputs.h). Not a student file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // sqrt
#include <stdlib.h> // calloc, free
#include <string.h> // memset

#include "outputs.h"

// ---- random against stratified ----

/* Share of the rarest class in each part, over many seeds, for a random and
 * a stratified split: the spread the random split leaves. */
static dl_status spread(const dl_dataset *pool, const double frac[3], int seeds, int rare, double *rows /* seeds × 7 */)
{
    for (int s = 0; s < seeds; s++) {
        dl_split sp[2];
        DL_TRY(eval_split_random(pool->n, frac, 1000 + (uint64_t)s, &sp[0]));
        dl_status st = eval_split_stratified(pool->y, pool->n, pool->n_classes, frac, 1000 + (uint64_t)s, &sp[1]);
        if (st != DL_OK) {
            dl_split_free(&sp[0]);
            return st;
        }
        double *row = rows + (size_t)s * SPREAD_NCOLS;
        row[SP_SEED] = s;
        for (int k = 0; k < 2; k++) {
            for (int p = 0; p < 3; p++) {
                size_t m = dl_split_size(&sp[k], p), hits = 0;
                for (size_t i = 0; i < m; i++)
                    hits += pool->y[sp[k].idx[sp[k].offset[p] + i]] == rare;
                row[SP_RANDOM + 3 * k + p] = m ? (double)hits / (double)m : NAN; // random, then stratified
            }
            dl_split_free(&sp[k]);
        }
    }
    return DL_OK;
}

/* Sample std of each spread column; two passes: the stratified shares are all equal. */
static void spread_sd(const double *rows, int seeds, double sd[6])
{
    for (int k = 0; k < 6; k++) {
        double s = 0, s2 = 0;
        int m = 0;
        for (int r = 0; r < seeds; r++) {
            double v = rows[(size_t)r * SPREAD_NCOLS + SP_RANDOM + k];
            if (v == v)
                s += v, m++;
        }
        for (int r = 0; r < seeds && m > 0; r++) {
            double v = rows[(size_t)r * SPREAD_NCOLS + SP_RANDOM + k];
            if (v == v)
                s2 += (v - s / m) * (v - s / m);
        }
        sd[k] = m > 1 ? sqrt(s2 / (m - 1)) : NAN;
    }
}

dl_status lab02_balance_compute(const dl_data *data, const dl_split *rnd, const dl_split *strat, const double frac[3],
                                int seeds, lab02_balance *b)
{
    const dl_dataset *pool = &data->train;
    int C = pool->n_classes;
    size_t C_ = (size_t)C;
    memset(b, 0, sizeof *b);
    b->C = C;
    b->seeds = seeds;
    b->shares = calloc(C_ * (SHARES_NCOLS - 1), sizeof *b->shares);
    b->counts = calloc(C_ * 3, sizeof *b->counts);
    b->spread = calloc((size_t)seeds * SPREAD_NCOLS, sizeof *b->spread);
    size_t *cc = calloc(C_, sizeof *cc);
    if (b->shares == NULL || b->counts == NULL || b->spread == NULL || cc == NULL) {
        free(cc);
        return dl_error_set(DL_ERR_NOMEM, "out of memory");
    }
    dl_dataset_class_counts(pool, cc);
    for (int c = 1; c < C; c++)
        b->rare = cc[c] < cc[b->rare] ? c : b->rare;
    for (int c = 0; c < C && pool->n > 0; c++) // what a part drifts from: the class's share of the pool
        SHARE(b, c, SH_POOL) = (double)cc[c] / (double)pool->n;
    free(cc);
    const dl_split *sp[2] = {rnd, strat};
    for (int k = 0; k < 2; k++) {
        for (int p = 0; p < 3; p++) {
            size_t m = dl_split_size(sp[k], p);
            for (size_t i = 0; i < m; i++) {
                int c = pool->y[sp[k]->idx[sp[k]->offset[p] + i]];
                SHARE(b, c, SH_RANDOM + 3 * k + p) += 1.0 / (double)m; // random, then stratified
                if (k == 1)
                    b->counts[(size_t)c * 3 + p] += 1.0;
            }
        }
    }
    if (data->has_test) { // the official test split is the same for both
        for (size_t i = 0; i < data->test.n; i++)
            b->counts[(size_t)data->test.y[i] * 3 + 2] += 1.0;
        for (int c = 0; c < C; c++)
            SHARE(b, c, SH_RANDOM_TEST) = SHARE(b, c, SH_STRATIFIED_TEST) =
                b->counts[(size_t)c * 3 + 2] / (double)data->test.n;
    }
    DL_TRY(spread(pool, frac, seeds, b->rare, b->spread));
    spread_sd(b->spread, seeds, b->sd);
    return DL_OK;
}

void lab02_balance_free(lab02_balance *b)
{
    free(b->shares);
    free(b->counts);
    free(b->spread);
    memset(b, 0, sizeof *b);
}

// ---- drift ----

void lab02_worst_features(const double *psi, size_t d, size_t *worst, int n)
{
    for (int w = 0; w < n; w++) {
        size_t best = 0;
        int taken = 1;
        for (size_t j = 0; j < d; j++) {
            int used = 0;
            for (int q = 0; q < w; q++)
                used |= worst[q] == j;
            if (!used && (taken || psi[j] > psi[best])) {
                best = j;
                taken = 0;
            }
        }
        worst[w] = best;
    }
}
