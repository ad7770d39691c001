/* lab06_ref.c — lab 06's references: the shards' arithmetic and P ranks of
 * ZeRO-1 simulated in the judge, and the comparison with them (see
 * lab06_ref.h). The runs and their readers are lab06_runs.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy, strcmp

#include "dl/compare.h" // dl_allclose_f32
#include "dl/data.h" // dl_data_load
#include "dl/lr.h" // dl_lr_at
#include "dl/mlp.h" // dl_mlp_sgd_slice
#include "dl/sampler.h" // dl_sampler
#include "lab06_ref.h"

#define MAX_P 4

size_t gr6_shard(size_t n, int P, int s, size_t *lo)
{
    size_t base = n / (size_t)P, longer = n % (size_t)P, k = (size_t)s;
    *lo = k * base + (k < longer ? k : longer);
    return base + (k < longer);
}

// ---- the reference: P ranks of ZeRO-1, simulated in the judge ----

float *gr6_reference(int P, long steps, gr6_way way, int rank, float **init, size_t *n_out)
{
    if (P < 1 || P > MAX_P || rank < 0 || rank >= P)
        GR_FAIL("gr6_reference: P = %d, rank %d", P, rank);
    dl_data data;
    GR_OK(dl_data_load(G6_DATA, &data));
    const dl_dataset *tr = &data.train;
    size_t sizes[8] = {tr->d}, ns = 1;
    for (const char *h = G6_HIDDEN; *h; ns++) {
        char *end;
        sizes[ns] = strtoul(h, &end, 10);
        h = *end == ',' ? end + 1 : end;
    }
    sizes[ns++] = (size_t)tr->n_classes;
    dl_mlp m;
    GR_OK(dl_mlp_create(&m, dl_cpu(), sizes, (int)ns, G6_BATCH, G6_SEED));
    size_t n = m.n_params, B = G6_BATCH, d = tr->d;
    // cur: the owners' shards (every rank's after a right step); prev: as they were one update before
    float *cur = malloc(n * sizeof *cur), *prev = malloc(n * sizeof *prev), *vel = calloc(n, sizeof *vel);
    float *view = malloc(n * sizeof *view), *g = malloc(n * sizeof *g), *X = malloc(B * d * sizeof *X);
    double *sum = malloc(n * sizeof *sum);
    int32_t *y = malloc(B * sizeof *y);
    dl_sampler smp[MAX_P];
    size_t *idx[MAX_P], per = 0;
    for (int k = 0; k < P; k++) {
        smp[k] = (dl_sampler){.n = tr->n - G6_VAL_ROWS, .rank = k, .world = P, .seed = G6_SEED, .shuffle = 1};
        per = dl_sampler_num_samples(&smp[k]);
        idx[k] = malloc(per * sizeof *idx[k]);
    }
    size_t spe = per / B;
    if (spe == 0)
        GR_FAIL("the reference's workload has no whole batch of %zu rows per rank (%zu rows each)", B, per);
    dl_lr_config lrc = {
        .base_lr = G6_LR, .base_batch = G6_BASE, .global_batch = B * (size_t)P, .warmup_steps = G6_WARMUP};
    GR_OK(dl_mlp_get_params(&m, cur));
    memcpy(prev, cur, n * sizeof *cur);
    if (init != NULL) {
        *init = malloc(n * sizeof **init);
        memcpy(*init, cur, n * sizeof *cur);
    }
    int epoch = -1;
    for (long s = 0; s < steps; s++) {
        int e = (int)(s / (long)spe);
        size_t at = (size_t)(s % (long)spe) * B;
        if (e != epoch) {
            for (int k = 0; k < P; k++) {
                dl_sampler_set_epoch(&smp[k], e);
                GR_OK(dl_sampler_indices(&smp[k], idx[k]));
            }
            epoch = e;
        }
        for (size_t i = 0; i < n; i++)
            sum[i] = 0;
        for (int k = 0; k < P; k++) { // rank k's gradient, on its rows and the parameters it holds
            for (size_t i = 0; i < B; i++) {
                memcpy(X + i * d, tr->X + idx[k][at + i] * d, d * sizeof *X);
                y[i] = tr->y[idx[k][at + i]];
            }
            size_t lo, cnt = gr6_shard(n, P, k, &lo);
            memcpy(view, way == G6_STALE ? prev : cur, n * sizeof *view);
            memcpy(view + lo, cur + lo, cnt * sizeof *view);
            GR_OK(dl_mlp_set_params(&m, view));
            GR_OK(dl_mlp_forward(&m, X, B));
            GR_OK(dl_mlp_loss(&m, y, B, NULL));
            GR_OK(dl_mlp_backward(&m, X, B, 0, NULL, NULL));
            memcpy(g, m.grads, n * sizeof *g);
            for (size_t i = 0; i < n; i++)
                sum[i] += g[i];
        }
        for (size_t i = 0; i < n; i++)
            g[i] = (float)(way == G6_SUMMED ? sum[i] : sum[i] / P);
        memcpy(prev, cur, n * sizeof *cur); // the all-gather's values, when it comes before the update
        GR_OK(dl_mlp_sgd_slice(&m, 0, n, cur, g, vel, (float)dl_lr_at(&lrc, s), (float)G6_MOMENTUM, (float)G6_WD));
    }
    size_t lo, cnt = gr6_shard(n, P, rank, &lo);
    float *out = malloc(n * sizeof *out);
    memcpy(out, way == G6_STALE ? prev : cur, n * sizeof *out);
    memcpy(out + lo, cur + lo, cnt * sizeof *out);
    for (int k = 0; k < P; k++)
        free(idx[k]);
    free(cur), free(prev), free(vel), free(view), free(g), free(X), free(sum), free(y);
    dl_mlp_free(&m);
    dl_data_free(&data);
    *n_out = n;
    return out;
}

// ---- the comparisons ----

double gr6_excess(const float *got, const float *ref, size_t n)
{
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        double e = fabs((double)got[k] - ref[k]) / (G6_ATOL + G6_RTOL * fabs((double)ref[k]));
        worst = e > worst || e != e ? e : worst;
    }
    return worst;
}

void gr6_check_mean(const char *what, const float *p0, size_t n, int P, int stale, const char *fix)
{
    size_t nref = 0;
    float *init = NULL;
    float *ref = gr6_reference(P, G6_STEPS, G6_MEAN, 0, &init, &nref);
    if (nref != n)
        GR_FAIL("%s: the driver's model has %zu parameters, expected %zu", what, n, nref);
    double e_mean = gr6_excess(p0, ref, n);
    if (e_mean <= 1) {
        gr_note("%s: rank 0's parameters within %.0f%% of the tolerance of the reference's\n", what, 100 * e_mean);
        free(ref), free(init);
        return;
    }
    double *rd = malloc(n * sizeof *rd), up_p = 0, up_1 = 0;
    for (size_t k = 0; k < n; k++) {
        rd[k] = ref[k];
        up_p += fabs((double)p0[k] - init[k]);
        up_1 += fabs((double)ref[k] - init[k]);
    }
    dl_cmp c;
    char buf[1024];
    dl_allclose_f32(p0, rd, n, G6_ATOL, G6_RTOL, &c);
    dl_cmp_format(&c, "parameters", buf, sizeof buf);
    gr_note("%s: the parameters moved %.3f times as far as the reference's\n", what, up_p / up_1);
    float *summed = gr6_reference(P, G6_STEPS, G6_SUMMED, 0, NULL, &nref);
    double e_sum = gr6_excess(p0, summed, n);
    if (e_sum <= 1 || e_sum < 0.1 * e_mean)
        GR_FAIL(GR_DIAG("summed-not-averaged") "%s: rank 0's parameters are those of a step on the sum of the "
                                               "ranks' gradients (moved %.2f times as far as the mean's): %s (%s)",
                what, up_p / up_1, fix, buf);
    if (stale && gr6_excess(p0, gr6_reference(P, G6_STEPS, G6_STALE, 0, NULL, &nref), n) <= 1)
        GR_FAIL(GR_DIAG("stale-shard") "%s: rank 0's parameters are those of shards all-gathered before their "
                                       "owners updated them (every rank computed on copies one update old): "
                                       "all-gather after dl_mlp_sgd_slice (%s)",
                what, buf);
    GR_FAIL("%s vs one rank's steps on every rank's rows (the mean gradient, SGD with momentum %g and weight decay %g "
            "on the weights, each shard updated by its owner): %s",
            what, G6_MOMENTUM, G6_WD, buf);
}
