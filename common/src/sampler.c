/* sampler.c — the kit's distributed sampler. See dl/sampler.h. */
#include "dl/sampler.h"

#include <stdlib.h> // malloc, free

#include "dl/rng.h" // dl_rng

void dl_sampler_set_epoch(dl_sampler *s, int epoch)
{
    s->epoch = epoch;
}

size_t dl_sampler_num_samples(const dl_sampler *s)
{
    if (s == NULL || s->world < 1)
        return 0;
    size_t P = (size_t)s->world;
    return s->drop_last ? s->n / P : (s->n + P - 1) / P;
}

/* A rank's list of m rows brought to exactly want rows: repeated from its start, or cut. */
static void fit_length(const size_t *list, size_t m, size_t want, size_t *out)
{
    for (size_t k = 0; k < want; k++)
        out[k] = list[m > 0 ? k % m : 0];
}

/* The rows of class 0, 1, ... of perm dealt round-robin; this rank's into out. */
static dl_status stratify(const dl_sampler *s, const size_t *perm, size_t per, size_t *out)
{
    size_t n = s->n, P = (size_t)s->world, r = (size_t)s->rank;
    // with n < P, rank r >= n is dealt nothing: the deal goes round again and
    // gives it position r mod n (r mod n = r when n >= P), as lab 03's does
    size_t *mine = malloc((n / P + 2) * sizeof *mine), m = 0, pos = 0, take = r % n;
    if (mine == NULL)
        return dl_error_set(DL_ERR_NOMEM, "dl_sampler_indices: out of memory");
    for (int c = 0; c < s->C; c++) {
        for (size_t i = 0; i < n; i++) {
            int32_t y = s->labels[perm[i]];
            if (y < 0 || y >= s->C) {
                free(mine);
                return dl_error_set(DL_ERR_RANGE, "dl_sampler_indices: label %d of row %zu is outside [0, %d)", y,
                                    perm[i], s->C);
            }
            if (y != c)
                continue;
            if (pos % P == take)
                mine[m++] = perm[i];
            pos++;
        }
    }
    fit_length(mine, m, per, out);
    if (s->shuffle) { // the rows of a shard must not come sorted by class
        dl_rng rng;
        dl_rng_seed(&rng, s->seed + (uint64_t)s->epoch, DL_SAMPLER_STREAM + 1 + r);
        dl_rng_shuffle(&rng, out, per);
    }
    free(mine);
    return DL_OK;
}

dl_status dl_sampler_indices(const dl_sampler *s, size_t *out)
{
    if (s == NULL || out == NULL || s->world < 1 || s->rank < 0 || s->rank >= s->world || s->n == 0)
        return dl_error_set(DL_ERR_ARG, "dl_sampler_indices: need n > 0 and 0 <= rank < world");
    if (s->labels != NULL && s->C < 1)
        return dl_error_set(DL_ERR_ARG, "dl_sampler_indices: stratified shards need C >= 1");
    size_t n = s->n, P = (size_t)s->world, r = (size_t)s->rank;
    size_t per = dl_sampler_num_samples(s);
    size_t *perm = malloc(n * sizeof *perm);
    if (perm == NULL)
        return dl_error_set(DL_ERR_NOMEM, "dl_sampler_indices: out of memory");
    if (s->shuffle) {
        dl_rng rng;
        dl_rng_seed(&rng, s->seed + (uint64_t)s->epoch, DL_SAMPLER_STREAM);
        dl_rng_permutation(&rng, perm, n);
    } else {
        for (size_t i = 0; i < n; i++)
            perm[i] = i;
    }
    dl_status st = DL_OK;
    if (s->labels != NULL) {
        st = stratify(s, perm, per, out);
    } else {
        // padded (or cut) to per·P, then every P-th position from this rank's
        for (size_t k = 0; k < per; k++)
            out[k] = perm[(r + k * P) % n];
    }
    free(perm);
    return st;
}
