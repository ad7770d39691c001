/* synth.c — the seeded synthetic classification generator. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // pow, floor, NAN
#include <stdio.h> // snprintf
#include <stdlib.h> // strtod, malloc
#include <string.h> // strncmp

#include "dl/data.h"
#include "dl/rng.h" // dl_rng

void dl_synth_defaults(dl_synth_params *p)
{
    p->n = 1000;
    p->d = 8;
    p->classes = 2;
    p->imbalance = 0.0;
    p->scale_spread = 0.0;
    p->missing = 0.0;
    p->separation = 1.5;
    p->seed = 1;
}

typedef struct key {
    const char *name;
    double min, max;
    int integer;
} key;

static const key keys[] = {
    {"n", 1, 1e8, 1},           {"d", 1, 1e5, 1},        {"classes", 2, 1000, 1}, {"imbalance", 0, 0.999, 0},
    {"scale_spread", 0, 12, 0}, {"missing", 0, 0.99, 0}, {"sep", 0, 100, 0},      {"seed", 0, 1.8e19, 1},
};

dl_status dl_synth_parse(const char *kv, dl_synth_params *p)
{
    const char *s = kv;
    while (*s) {
        size_t len = strcspn(s, ",");
        char item[128];
        if (len == 0) {
            s++;
            continue;
        }
        if (len >= sizeof item)
            return dl_error_set(DL_ERR_ARG, "synthetic: '%.*s' is too long", (int)len, s);
        memcpy(item, s, len);
        item[len] = '\0';
        s += len + (s[len] == ',');
        char *eq = strchr(item, '=');
        if (eq == NULL)
            return dl_error_set(DL_ERR_ARG, "synthetic: '%s' is not key=value", item);
        *eq = '\0';
        const key *k = NULL;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            if (strcmp(keys[i].name, item) == 0)
                k = &keys[i];
        }
        if (k == NULL)
            return dl_error_set(DL_ERR_ARG,
                                "synthetic: unknown key '%s' (expected n, d, classes, "
                                "imbalance, scale_spread, missing, sep, seed)",
                                item);
        char *end = NULL;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != '\0' || (k->integer && v != floor(v)) || !(v >= k->min && v <= k->max))
            return dl_error_set(DL_ERR_ARG, "synthetic: %s=%s: expected %s from %g to %g", item, eq + 1,
                                k->integer ? "an integer" : "a number", k->min, k->max);
        if (strcmp(item, "n") == 0)
            p->n = (size_t)v;
        else if (strcmp(item, "d") == 0)
            p->d = (size_t)v;
        else if (strcmp(item, "classes") == 0)
            p->classes = (int)v;
        else if (strcmp(item, "imbalance") == 0)
            p->imbalance = v;
        else if (strcmp(item, "scale_spread") == 0)
            p->scale_spread = v;
        else if (strcmp(item, "missing") == 0)
            p->missing = v;
        else if (strcmp(item, "sep") == 0)
            p->separation = v;
        else
            p->seed = (uint64_t)strtoull(eq + 1, NULL, 10);
    }
    return DL_OK;
}

/* Exact class counts: floors of n·share, the rest by largest remainder. */
static void class_counts(const dl_synth_params *p, size_t *counts)
{
    int C = p->classes;
    double rem[1000];
    size_t given = 0;
    for (int c = 0; c < C; c++) {
        double share = p->imbalance > 0 ? (c == C - 1 ? p->imbalance : (1.0 - p->imbalance) / (C - 1)) : 1.0 / C;
        double exact = share * (double)p->n;
        counts[c] = (size_t)floor(exact);
        rem[c] = exact - floor(exact);
        given += counts[c];
    }
    while (given < p->n) {
        int best = 0;
        for (int c = 1; c < C; c++) {
            if (rem[c] > rem[best])
                best = c;
        }
        counts[best]++;
        rem[best] = -1.0;
        given++;
    }
}

dl_status dl_synthetic(const dl_synth_params *p, dl_dataset *out)
{
    if (p->classes < 2 || p->classes > 1000 || p->n < 1 || p->d < 1)
        return dl_error_set(DL_ERR_ARG, "synthetic: need n >= 1, d >= 1 and 2..1000 classes");
    DL_TRY(dl_dataset_alloc(out, p->n, p->d, p->classes));
    size_t C = (size_t)p->classes, d = p->d;
    size_t *counts = malloc(C * sizeof *counts);
    double *mu = malloc(C * d * sizeof *mu);
    double *scale = malloc(d * sizeof *scale);
    if (counts == NULL || mu == NULL || scale == NULL) {
        free(counts), free(mu), free(scale);
        dl_dataset_free(out);
        return dl_error_set(DL_ERR_NOMEM, "synthetic: out of memory");
    }
    dl_rng r;
    dl_rng_seed(&r, p->seed, 0x5e17);
    class_counts(p, counts);
    size_t k = 0;
    for (size_t c = 0; c < C; c++) {
        for (size_t i = 0; i < counts[c]; i++)
            out->y[k++] = (int32_t)c;
    }
    for (size_t i = p->n; i > 1; i--) { // Fisher–Yates on the sorted labels
        size_t j = (size_t)dl_rng_below(&r, i);
        int32_t t = out->y[i - 1];
        out->y[i - 1] = out->y[j];
        out->y[j] = t;
    }
    for (size_t i = 0; i < C * d; i++)
        mu[i] = p->separation * dl_rng_normal(&r);
    for (size_t j = 0; j < d; j++)
        scale[j] = d > 1 ? pow(10.0, p->scale_spread * ((double)j / (double)(d - 1) - 0.5)) : 1.0;
    for (size_t i = 0; i < p->n; i++) {
        const double *m = mu + (size_t)out->y[i] * d;
        for (size_t j = 0; j < d; j++) {
            double x = scale[j] * (m[j] + dl_rng_normal(&r) + 2.0);
            if (p->missing > 0 && dl_rng_uniform(&r) < p->missing)
                x = NAN;
            out->X[i * d + j] = (float)x;
        }
    }
    free(counts), free(mu), free(scale);
    return DL_OK;
}
