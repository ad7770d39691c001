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
    return DL_TODO("lab02 task 1: scikit-learn's approximate mode (floors, then largest remainders)");
}

dl_status eval_split_stratified(const int32_t *y, size_t n, int C, const double frac[3],
                                uint64_t seed, dl_split *out)
{
    if (y == NULL || frac == NULL || out == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_split_stratified: NULL argument or C < 1");
    memset(out, 0, sizeof *out);
    return DL_TODO("lab02 task 1: the stratified train/val/test split");
}

// ---- task 2: stratified k-fold ----

dl_status eval_kfold_stratified(const int32_t *y, size_t n, int C, int k, uint64_t seed, int32_t *fold)
{
    if (y == NULL || fold == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_kfold_stratified: NULL argument or C < 1");
    if (k < 2)
        return dl_error_set(DL_ERR_ARG, "eval_kfold_stratified: k = %d, expected at least 2", k);
    return DL_TODO("lab02 task 2: stratified k-fold, per class counts differing by at most one");
}
