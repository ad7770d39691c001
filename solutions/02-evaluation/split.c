/* split.c — lab 02, tasks 1 and 2: the stratified split and stratified k-fold. */
#include <math.h>   // floor, fabs
#include <stdlib.h> // malloc, calloc, free
#include <string.h> // memset

#include "dl/rng.h" // dl_rng
#include "eval.h"

// ---- task 1: the stratified split ----

dl_status eval_approximate_mode(const size_t *counts, int C, size_t n_draws, dl_rng *r, size_t *out)
{
    if (counts == NULL || r == NULL || out == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_approximate_mode: NULL argument or C < 1");
    size_t total = 0;
    for (int c = 0; c < C; c++)
        total += counts[c];
    if (n_draws > total)
        return dl_error_set(DL_ERR_ARG, "eval_approximate_mode: %zu draws from only %zu rows", n_draws, total);
    /* BEGIN SOLUTION */
    double *rem = malloc((size_t)C * sizeof *rem);
    int *pick = malloc((size_t)C * sizeof *pick);
    if (rem == NULL || pick == NULL) {
        free(rem), free(pick);
        return dl_error_set(DL_ERR_NOMEM, "eval_approximate_mode: out of memory");
    }
    size_t given = 0;
    for (int c = 0; c < C; c++) {
        double exact = total > 0 ? (double)counts[c] * (double)n_draws / (double)total : 0.0;
        out[c] = (size_t)floor(exact);
        rem[c] = exact - (double)out[c];
        given += out[c];
    }
    // Leftover draws: to the largest remainders; a tie group is drawn from at random.
    size_t need = n_draws - given;
    while (need > 0) {
        double best = -1.0;
        for (int c = 0; c < C; c++) {
            if (rem[c] > best)
                best = rem[c];
        }
        int k = 0; // the classes tied at the best remainder
        for (int c = 0; c < C; c++) {
            if (rem[c] == best)
                pick[k++] = c;
        }
        for (int i = k; i > 1; i--) { // Fisher–Yates: a random order of the tie group
            int j = (int)dl_rng_below(r, (uint64_t)i);
            int t = pick[i - 1];
            pick[i - 1] = pick[j];
            pick[j] = t;
        }
        for (int i = 0; i < k && need > 0; i++) {
            out[pick[i]]++;
            need--;
        }
        for (int i = 0; i < k; i++)
            rem[pick[i]] = -2.0; // done with this value
    }
    free(rem), free(pick);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 1: scikit-learn's approximate mode (floors, then largest remainders)"); */
}

dl_status eval_split_stratified(const int32_t *y, size_t n, int C, const double frac[3],
                                uint64_t seed, dl_split *out)
{
    if (y == NULL || frac == NULL || out == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_split_stratified: NULL argument or C < 1");
    memset(out, 0, sizeof *out);
    /* BEGIN SOLUTION */
    size_t sizes[3];
    DL_TRY(eval_part_sizes(n, frac, sizes));
    size_t *counts = calloc((size_t)C, sizeof *counts);
    size_t *take = calloc(3 * (size_t)C, sizeof *take); // take[p·C + c]
    size_t *left = calloc((size_t)C, sizeof *left);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    size_t *members = malloc((n ? n : 1) * sizeof *members);
    dl_status st = DL_OK;
    if (!counts || !take || !left || !idx || !members) {
        st = dl_error_set(DL_ERR_NOMEM, "eval_split_stratified: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= C) {
            st = dl_error_set(DL_ERR_RANGE, "eval_split_stratified: label %d of row %zu is outside [0, %d)", y[i],
                              i, C);
            goto done;
        }
        counts[y[i]]++;
    }
    int parts = (sizes[0] > 0) + (sizes[1] > 0) + (sizes[2] > 0);
    for (int c = 0; c < C; c++) {
        if (counts[c] > 0 && counts[c] < (size_t)parts) {
            st = dl_error_set(DL_ERR_ARG, "eval_split_stratified: class %d has %zu row(s), fewer than the %d "
                              "non-empty parts: it cannot appear in each", c, counts[c], parts);
            goto done;
        }
    }
    for (int p = 0; p < 3; p++) {
        if (sizes[p] > 0 && sizes[p] < (size_t)C) {
            st = dl_error_set(DL_ERR_ARG, "eval_split_stratified: the %s part has %zu rows, fewer than the %d "
                              "classes", p == 0 ? "train" : p == 1 ? "val" : "test", sizes[p], C);
            goto done;
        }
    }
    dl_rng r;
    dl_rng_seed(&r, seed, 0x57a7);
    memcpy(left, counts, (size_t)C * sizeof *left);
    for (int p = 0; p < 3; p++) { // train from all rows, then val and test from what is left
        st = eval_approximate_mode(left, C, sizes[p], &r, take + (size_t)p * C);
        if (st != DL_OK)
            goto done;
        for (int c = 0; c < C; c++)
            left[c] -= take[(size_t)p * C + c];
    }
    out->n_parts = 3;
    out->offset[0] = 0;
    for (int p = 0; p < 3; p++)
        out->offset[p + 1] = out->offset[p] + sizes[p];
    size_t fill[3] = {0, 0, 0};
    for (int c = 0; c < C; c++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (y[i] == c)
                members[m++] = i;
        }
        dl_rng_shuffle(&r, members, m); // which rows of the class go where: random
        size_t k = 0;
        for (int p = 0; p < 3; p++) {
            for (size_t t = 0; t < take[(size_t)p * C + c]; t++)
                idx[out->offset[p] + fill[p]++] = members[k++];
        }
    }
    for (int p = 0; p < 3; p++) // a part must not be sorted by class
        dl_rng_shuffle(&r, idx + out->offset[p], sizes[p]);
    out->idx = idx;
    idx = NULL;
done:
    free(counts), free(take), free(left), free(idx), free(members);
    if (st != DL_OK)
        memset(out, 0, sizeof *out);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 1: the stratified train/val/test split"); */
}

// ---- task 2: stratified k-fold ----

dl_status eval_kfold_stratified(const int32_t *y, size_t n, int C, int k, uint64_t seed, int32_t *fold)
{
    if (y == NULL || fold == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_kfold_stratified: NULL argument or C < 1");
    if (k < 2)
        return dl_error_set(DL_ERR_ARG, "eval_kfold_stratified: k = %d, expected at least 2", k);
    /* BEGIN SOLUTION */
    size_t *counts = calloc((size_t)C, sizeof *counts);
    size_t *members = malloc((n ? n : 1) * sizeof *members);
    if (counts == NULL || members == NULL) {
        free(counts), free(members);
        return dl_error_set(DL_ERR_NOMEM, "eval_kfold_stratified: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= C) {
            free(counts), free(members);
            return dl_error_set(DL_ERR_RANGE, "eval_kfold_stratified: label %d of row %zu is outside [0, %d)", y[i],
                                i, C);
        }
        counts[y[i]]++;
    }
    for (int c = 0; c < C; c++) {
        if (counts[c] > 0 && counts[c] < (size_t)k) {
            size_t have = counts[c];
            free(counts), free(members);
            return dl_error_set(DL_ERR_ARG, "eval_kfold_stratified: k = %d exceeds class %d's %zu row(s): some "
                                "fold would miss the class", k, c, have);
        }
    }
    dl_rng r;
    dl_rng_seed(&r, seed, 0xf01d);
    size_t next = 0; // dealing continues across classes, so fold sizes stay even too
    for (int c = 0; c < C; c++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (y[i] == c)
                members[m++] = i;
        }
        dl_rng_shuffle(&r, members, m);
        for (size_t t = 0; t < m; t++)
            fold[members[t]] = (int32_t)((next + t) % (size_t)k);
        next = (next + m) % (size_t)k;
    }
    free(counts), free(members);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 2: stratified k-fold, per class counts differing by at most one"); */
}
