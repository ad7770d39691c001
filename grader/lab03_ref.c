/* lab03_ref.c — lab 03's references: the grader's own sampler and learning
 * rate, written from their contracts (see lab03_ref.h). Their code answers
 * tasks 1 and 5, so no student release holds this source, only its object
 * (LAB_03_JUDGE_ANSWERS). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // cos
#include <stdlib.h> // malloc, free
#include <string.h> // memcpy

#include "dl/rng.h" // dl_rng_seed, dl_rng_permutation, dl_rng_shuffle
#include "lab03_ref.h"

/* The grader's sampler. The epoch's order L is the permutation of seed + epoch
 * (0..n-1 without shuffle), stably sorted by class when stratified (that is
 * the deal: its pos-th row goes to rank pos mod P). *dealt: how many
 * positions r, r+P, ... lie before L's end (0 for a rank r >= n). */
void gr3_ref_indices(const ddp_sampler *s, size_t *out, size_t *per_out, size_t *dealt)
{
    size_t n = s->n, P = (size_t)s->world, r = (size_t)s->rank;
    size_t per = s->drop_last ? n / P : (n + P - 1) / P;
    size_t *perm = malloc(n * sizeof *perm), *L = malloc(n * sizeof *L);
    dl_rng g;
    if (s->shuffle) {
        dl_rng_seed(&g, s->seed + (uint64_t)s->epoch, DDP_SAMPLER_STREAM);
        dl_rng_permutation(&g, perm, n);
    } else {
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
    }
    size_t m = 0;
    if (s->labels == NULL) {
        memcpy(L, perm, n * sizeof *L);
    } else {
        for (int c = 0; c < s->C; c++)
            for (size_t i = 0; i < n; i++)
                if (s->labels[perm[i]] == c)
                    L[m++] = perm[i];
    }
    *dealt = r < n ? (n - r + P - 1) / P : 0;
    for (size_t k = 0; k < per; k++) {
        if (s->labels == NULL || *dealt == 0) // wrap round to the order's start
            out[k] = L[(r + k * P) % n];
        else // a stratified rank repeats its own rows from its first
            out[k] = L[r + (k % *dealt) * P];
    }
    if (s->labels != NULL && s->shuffle) {
        dl_rng_seed(&g, s->seed + (uint64_t)s->epoch, DDP_SAMPLER_STREAM + 1 + r);
        dl_rng_shuffle(&g, out, per);
    }
    *per_out = per;
    free(perm), free(L);
}

double gr3_ref_lr(const ddp_lr_config *c, long t)
{
    double peak = c->base_lr * (double)c->global_batch / (double)c->base_batch;
    if (t < c->warmup_steps)
        return peak * (double)(t + 1) / (double)c->warmup_steps;
    if (!c->cosine)
        return peak;
    if (t >= c->total_steps)
        return 0.0;
    return peak * 0.5 *
           (1.0 +
            cos(3.14159265358979323846 * (double)(t - c->warmup_steps) / (double)(c->total_steps - c->warmup_steps)));
}
