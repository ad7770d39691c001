/* dataset.c — dl_dataset memory, subsets, class counts. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // calloc, free
#include <string.h> // memcpy, strdup
#include <sys/mman.h> // munmap

#include "dl/data.h"

dl_status dl_dataset_alloc(dl_dataset *ds, size_t n, size_t d, int n_classes)
{
    memset(ds, 0, sizeof *ds);
    if (d > 0 && n > ((size_t)1 << 40) / d)
        return dl_error_set(DL_ERR_ARG, "dataset of %zu x %zu is too large", n, d);
    ds->X = malloc((n * d > 0 ? n * d : 1) * sizeof *ds->X);
    ds->y = malloc((n ? n : 1) * sizeof *ds->y);
    if (ds->X == NULL || ds->y == NULL) {
        dl_dataset_free(ds);
        return dl_error_set(DL_ERR_NOMEM, "out of memory for a %zu x %zu dataset", n, d);
    }
    ds->n = n;
    ds->d = d;
    ds->n_classes = n_classes;
    return DL_OK;
}

static void free_names(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void dl_dataset_free(dl_dataset *ds)
{
    if (ds->map != NULL)
        munmap(ds->map, ds->map_len);
    else
        free(ds->X);
    free(ds->y);
    free_names(ds->feature_names, ds->d);
    free_names(ds->class_names, (size_t)(ds->n_classes > 0 ? ds->n_classes : 0));
    memset(ds, 0, sizeof *ds);
}

static char **copy_names(char *const *names, size_t n)
{
    if (names == NULL)
        return NULL;
    char **out = calloc(n ? n : 1, sizeof *out);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = strdup(names[i] ? names[i] : "");
    return out;
}

dl_status dl_dataset_subset(const dl_dataset *src, const size_t *idx, size_t m, dl_dataset *out)
{
    DL_TRY(dl_dataset_alloc(out, m, src->d, src->n_classes));
    for (size_t i = 0; i < m; i++) {
        if (idx[i] >= src->n) {
            dl_dataset_free(out);
            return dl_error_set(DL_ERR_RANGE, "subset index %zu is out of range [0, %zu)", idx[i], src->n);
        }
        memcpy(out->X + i * src->d, src->X + idx[i] * src->d, src->d * sizeof *out->X);
        out->y[i] = src->y[idx[i]];
    }
    out->feature_names = copy_names(src->feature_names, src->d);
    out->class_names = copy_names(src->class_names, (size_t)src->n_classes);
    return DL_OK;
}

void dl_dataset_class_counts(const dl_dataset *ds, size_t *counts)
{
    for (int c = 0; c < ds->n_classes; c++)
        counts[c] = 0;
    for (size_t i = 0; i < ds->n; i++) {
        if (ds->y[i] >= 0 && ds->y[i] < ds->n_classes)
            counts[ds->y[i]]++;
    }
}

const char *dl_dataset_class_name(const dl_dataset *ds, int c, char *buf, size_t len)
{
    if (ds->class_names != NULL && c >= 0 && c < ds->n_classes)
        return ds->class_names[c];
    snprintf(buf, len, "class %d", c);
    return buf;
}

void dl_dataset_standardise(dl_dataset *ds, const float *mean, const float *scale)
{
    for (size_t i = 0; i < ds->n; i++)
        for (size_t j = 0; j < ds->d; j++)
            ds->X[i * ds->d + j] = (ds->X[i * ds->d + j] - mean[j]) / scale[j];
}
