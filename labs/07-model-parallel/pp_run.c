/* pp_run.c — lab 07's pipeline runs (driver.h): your stages and schedules
 * for a few steps against the one-rank model trained on the same batches,
 * every rank; the schedule's bubble and memory from the kit's record. Not
 * a student file. */
#include <math.h> // NAN
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free

#include "dl/batch.h" // dl_batch
#include "dl/fs.h" // dl_mkdir_p
#include "dl/rng.h" // dl_rng_permutation
#include "driver.h"
#include "pipe_kit.h"

const char *const pp_sched_names[2] = {"gpipe", "1f1b"};

/* What the grader reads of a run: this stage's layers, its order and its peak. */
static dl_status dump_stage(const pp_stage *st, const char *dir)
{
    DL_TRY(dl_mkdir_p(dir));
    const pp_kit *k = st->kit;
    float ops[2 * PP_MAX_M + 2];
    for (int j = 0; j < k->n_ops; j++)
        ops[j] = (float)k->ops[j];
    DL_TRY(kit_dump(dir, st->s, "ops", NULL, ops, 1, (size_t)k->n_ops));
    float meta[4] = {(float)st->first, (float)st->last, (float)k->peak, (float)k->slot_floats};
    DL_TRY(kit_dump(dir, st->s, "stage", NULL, meta, 1, 4));
    for (int l = st->first; l < st->last; l++) {
        const dl_mlp_layer *L = &k->layer[l];
        float *h = malloc((L->in * L->out + L->out) * sizeof *h);
        if (h == NULL)
            return dl_error_set(DL_ERR_NOMEM, "a layer's dump");
        char name[32];
        dl_status s = dl_memcpy_d2h(st->dev, h, L->W, L->in * L->out * sizeof *h);
        s = s == DL_OK ? dl_memcpy_d2h(st->dev, h + L->in * L->out, L->b, L->out * sizeof *h) : s;
        snprintf(name, sizeof name, "layer%d", l);
        s = s == DL_OK ? kit_dump(dir, st->s, name, NULL, h, 1, L->in * L->out + L->out) : s;
        free(h);
        DL_TRY(s);
    }
    return DL_OK;
}

dl_status pp_run(dl_engine *E, int sched, int m, size_t n, int steps, const char *dir, pp_result *res)
{
    const dl_dataset *tr = &E->data.train;
    size_t B = (size_t)m * n;
    int L = E->n_sizes - 1, first = 0, last = 0;
    *res = (pp_result){.m = m, .bubble_model = (double)(E->P - 1) / (double)(m + E->P - 1)};
    if (B > tr->n)
        return dl_error_set(DL_ERR_ARG,
                            "%d micro-batches of %zu rows: %zu rows a step, more than the %zu the data "
                            "has",
                            m, n, B, tr->n);
    dl_mlp whole = {0}, ref = {0};
    pp_stage st = {0};
    dl_batch batch = {0};
    size_t *order = malloc(tr->n * sizeof *order);
    int *all = malloc((size_t)E->P * 2 * m * sizeof *all), mine[2 * PP_MAX_M], peaks[64] = {0};
    double *t0 = malloc((size_t)E->P * 2 * m * sizeof *t0), *t1 = malloc((size_t)E->P * 2 * m * sizeof *t1);
    dl_status s =
        order == NULL || all == NULL || t0 == NULL || t1 == NULL ? dl_error_set(DL_ERR_NOMEM, "a pipeline run") : DL_OK;
    s = s == DL_OK ? dl_mlp_create(&whole, &E->dev, E->sizes, E->n_sizes, B, E->a.seed) : s;
    s = s == DL_OK ? dl_mlp_create(&ref, &E->dev, E->sizes, E->n_sizes, B, E->a.seed) : s;
    s = s == DL_OK ? pp_layers(L, E->P, E->rank, &first, &last) : s; // yours
    s = s == DL_OK ? pp_kit_init(&st, E->comm, &E->dev, &whole, first, last, m, n) : s;
    s = s == DL_OK ? dl_batch_create(&batch, &E->dev, B, tr->d) : s;
    if (s == DL_OK) {
        dl_rng g;
        dl_rng_seed(&g, E->a.seed, 13); // the same rows on every rank, and for the one-rank model
        dl_rng_permutation(&g, order, tr->n);
    }
    float lr = (float)E->a.lr, mu = (float)E->t.momentum, wd = (float)E->t.weight_decay;
    for (int k = 0; k < steps && s == DL_OK; k++) {
        size_t at = ((size_t)k * B) % (tr->n - B + 1);
        double loss = NAN, diff = 0;
        s = dl_batch_gather(&batch, tr, order + at, B);
        s = s == DL_OK ? pp_kit_begin(&st, batch.X, batch.y) : s;
        s = s == DL_OK ? (sched == 0 ? pp_gpipe(&st) : pp_1f1b(&st)) : s; // yours
        s = s == DL_OK ? pp_kit_end(&st, lr, mu, wd, &loss) : s;
        s = s == DL_OK ? dl_mlp_forward(&ref, batch.X, B) : s;
        s = s == DL_OK ? dl_mlp_loss(&ref, batch.y, B, NULL) : s;
        s = s == DL_OK ? dl_mlp_loss_commit(&ref, 1, 1, NULL) : s;
        s = s == DL_OK ? dl_mlp_backward(&ref, batch.X, B, 0, NULL, NULL) : s;
        s = s == DL_OK ? dl_mlp_sgd(&ref, lr, mu, wd) : s;
        s = s == DL_OK ? pp_kit_diff(&st, &ref, &diff) : s;
        res->max_diff = diff > res->max_diff || diff != diff ? diff : res->max_diff;
    }
    // every stage's order and peak (the last step's), for the schedule's times
    for (int j = 0; s == DL_OK && j < 2 * m; j++)
        mine[j] = j < st.kit->n_ops ? st.kit->ops[j] : -1;
    s = s == DL_OK ? dl_comm_allgather(E->comm, mine, all, (size_t)(2 * m), DL_I32) : s;
    int peak = s == DL_OK ? st.kit->peak : 0;
    double bytes = s == DL_OK ? (double)st.kit->slot_floats * sizeof(float) : 0, slot_bytes[64] = {0};
    s = s == DL_OK && E->P <= 64 ? dl_comm_allgather(E->comm, &peak, peaks, 1, DL_I32) : s;
    s = s == DL_OK && E->P <= 64 ? dl_comm_allgather(E->comm, &bytes, slot_bytes, 1, DL_F64) : s;
    double T = 0;
    s = s == DL_OK ? pp_sim(all, E->P, m, 1.0, 2.0, t0, t1, &T) : s;
    if (s == DL_OK) {
        res->bubble = 1.0 - (double)m * 3.0 / T;
        for (int q = 0; q < E->P && q < 64; q++) {
            res->peak_slots[q] = peaks[q];
            res->peak_bytes[q] = peaks[q] * slot_bytes[q];
            res->peak_slots_max = peaks[q] > res->peak_slots_max ? peaks[q] : res->peak_slots_max;
            res->peak_bytes_max = res->peak_bytes[q] > res->peak_bytes_max ? res->peak_bytes[q] : res->peak_bytes_max;
        }
        res->n_ops = 2 * m;
        res->ops = all, res->start = t0, res->end = t1;
        all = NULL, t0 = t1 = NULL; // the caller's now
    }
    if (s == DL_OK && dir != NULL)
        s = dump_stage(&st, dir);
    dl_batch_free(&batch);
    pp_kit_free(&st);
    dl_mlp_free(&whole);
    dl_mlp_free(&ref);
    free(order), free(all), free(t0), free(t1);
    return s;
}

void pp_result_free(pp_result *r)
{
    free(r->ops), free(r->start), free(r->end);
    r->ops = NULL, r->start = r->end = NULL;
}
