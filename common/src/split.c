/* split.c — the kit's seeded stratified split (largest remainder per class). */
#include "dl/split.h"

#include <math.h> // floor, fabs
#include <stdlib.h> // malloc, free
#include <string.h> // memset

#include "dl/rng.h" // dl_rng

dl_status dl_split_stratified(const int32_t *y, size_t n, int n_classes, const double *fractions, int n_parts,
                              uint64_t seed, dl_split *out)
{
    memset(out, 0, sizeof *out);
    if (n_parts < 1 || n_parts > DL_SPLIT_MAX_PARTS)
        return dl_error_set(DL_ERR_ARG, "split: %d parts, expected 1 to %d", n_parts, DL_SPLIT_MAX_PARTS);
    double sum = 0.0;
    for (int p = 0; p < n_parts; p++) {
        if (!(fractions[p] >= 0.0 && fractions[p] <= 1.0))
            return dl_error_set(DL_ERR_ARG, "split: fraction %d is %g, expected 0 to 1", p, fractions[p]);
        sum += fractions[p];
    }
    if (fabs(sum - 1.0) > 1e-9)
        return dl_error_set(DL_ERR_ARG, "split: fractions sum to %.12g, expected 1", sum);
    for (size_t i = 0; i < n; i++) {
        if (y[i] < 0 || y[i] >= n_classes)
            return dl_error_set(DL_ERR_RANGE, "split: label %d of row %zu is out of range [0, %d)", y[i], i, n_classes);
    }
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    size_t *members = malloc((n ? n : 1) * sizeof *members);
    size_t *fill = calloc((size_t)n_parts, sizeof *fill);
    if (idx == NULL || members == NULL || fill == NULL) {
        free(idx), free(members), free(fill);
        return dl_error_set(DL_ERR_NOMEM, "split: out of memory");
    }
    dl_rng r;
    dl_rng_seed(&r, seed, 0x5b1e);
    // Pass 1: per class, sizes per part; sum them for the offsets.
    size_t *take = calloc((size_t)n_classes * (size_t)n_parts, sizeof *take);
    if (take == NULL) {
        free(idx), free(members), free(fill);
        return dl_error_set(DL_ERR_NOMEM, "split: out of memory");
    }
    for (int c = 0; c < n_classes; c++) {
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++)
            cnt += y[i] == c;
        size_t *t = take + (size_t)c * n_parts;
        double rem[DL_SPLIT_MAX_PARTS];
        size_t given = 0;
        for (int p = 0; p < n_parts; p++) {
            double exact = (double)cnt * fractions[p];
            t[p] = (size_t)floor(exact + 1e-9);
            rem[p] = exact - (double)t[p];
            given += t[p];
        }
        while (given < cnt) {
            int best = 0;
            for (int p = 1; p < n_parts; p++) {
                if (rem[p] > rem[best] + 1e-9) // 8·0.7 and 8·0.2 tie exactly, not in doubles
                    best = p;
            }
            t[best]++;
            rem[best] = -1.0;
            given++;
        }
    }
    out->n_parts = n_parts;
    out->offset[0] = 0;
    for (int p = 0; p < n_parts; p++) {
        size_t sz = 0;
        for (int c = 0; c < n_classes; c++)
            sz += take[(size_t)c * n_parts + p];
        out->offset[p + 1] = out->offset[p] + sz;
    }
    // Pass 2: permute each class's rows and deal them out part by part.
    for (int c = 0; c < n_classes; c++) {
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++) {
            if (y[i] == c)
                members[cnt++] = i;
        }
        dl_rng_shuffle(&r, members, cnt);
        size_t k = 0;
        for (int p = 0; p < n_parts; p++) {
            for (size_t m = 0; m < take[(size_t)c * n_parts + p]; m++)
                idx[out->offset[p] + fill[p]++] = members[k++];
        }
    }
    // Rows of a part are grouped by class so far: shuffle each part.
    for (int p = 0; p < n_parts; p++)
        dl_rng_shuffle(&r, idx + out->offset[p], dl_split_size(out, p));
    out->idx = idx;
    free(members), free(fill), free(take);
    return DL_OK;
}

void dl_split_free(dl_split *s)
{
    free(s->idx);
    memset(s, 0, sizeof *s);
}

dl_status dl_split_hold_out(const dl_dataset *src, double fraction, uint64_t seed, dl_dataset *held, dl_dataset *rest)
{
    memset(held, 0, sizeof *held);
    memset(rest, 0, sizeof *rest);
    const double f[2] = {fraction, 1.0 - fraction};
    dl_split sp;
    DL_TRY(dl_split_stratified(src->y, src->n, src->n_classes, f, 2, seed, &sp));
    dl_status st = DL_OK;
    if (dl_split_size(&sp, 0) == 0 || dl_split_size(&sp, 1) == 0)
        st = dl_error_set(DL_ERR_ARG, "split: holding out %g of %zu rows leaves a part empty (%zu and %zu rows)",
                          fraction, src->n, dl_split_size(&sp, 0), dl_split_size(&sp, 1));
    if (st == DL_OK)
        st = dl_dataset_subset(src, sp.idx + sp.offset[0], dl_split_size(&sp, 0), held);
    if (st == DL_OK)
        st = dl_dataset_subset(src, sp.idx + sp.offset[1], dl_split_size(&sp, 1), rest);
    if (st != DL_OK) {
        dl_dataset_free(held);
        dl_dataset_free(rest);
    }
    dl_split_free(&sp);
    return st;
}
