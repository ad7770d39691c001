/* project.c — lab 05's projection: one step of each mode on the target
 * profile's GPUs (dl_project_step) from what this run's trace recorded, the
 * bucket-cap sweep, and one step of the run's mode drawn as the projection
 * times it. See outputs.h. Not a student file. */
#include "outputs.h" // lab05_run, lab05_projected, the CSVs' columns

// ---- the projection ----

/* What one step of this run costs, as the simulation takes it: from the
 * step the trace recorded (kit_sim_recorded: what it launched and moved,
 * AMP's casts and unscale included), else from the model of dl_mlp
 * (kit_sim_layers). */
typedef struct step_cost {
    dl_sim_layer layers[DL_MLP_MAX_LAYERS];
    double optim_bytes, optim_launches;
    int recorded; /* 1: from the trace */
} step_cost;

/* One step of each mode projected on P ranks; speedup against one GPU that
 * trains the same rows (P·accum micro-batches per global step) in the same
 * precision, and (vs32) the bucketed mode's against one fp32 GPU (modelled:
 * an AMP run recorded no fp32 step). *one_s: that one GPU's step. */
static void project_modes(const dl_profile *prof, const dl_mlp *m, const step_cost *c, size_t B, int accum, int P,
                          const dl_sim_bucket *const *bk, const int *nb, double *step_s, double *exposed,
                          double *speedup, double *vs32, double *one_s)
{
    dl_sim_layer layers32[DL_MLP_MAX_LAYERS];
    const dl_sim_layer *layers = c->layers;
    double ob = c->optim_bytes, ol = c->optim_launches, ob32, ol32;
    kit_sim_layers(m, B, 0, layers32);
    kit_sim_optim(m, 0, &ob32, &ol32);
    dl_sim_step one, one32, s;
    dl_project_step(prof, 1, accum, layers, m->n_layers, NULL, 0, ob, ol, &one);
    dl_project_step(prof, 1, accum, layers32, m->n_layers, NULL, 0, ob32, ol32, &one32);
    *vs32 = 0;
    *one_s = one.step_s;
    for (int k = 0; k < LAB05_MODES; k++) {
        step_s[k] = exposed[k] = speedup[k] = 0;
        if (nb[k] < 0 || dl_project_step(prof, P, accum, layers, m->n_layers, bk[k], nb[k], ob, ol, &s) != DL_OK)
            continue;
        step_s[k] = s.step_s;
        exposed[k] = s.step_s > 0 ? s.exposed_s / s.step_s : 0;
        speedup[k] = s.step_s > 0 ? P * one.step_s / s.step_s : 0;
        if (k == 0)
            *vs32 = s.step_s > 0 ? P * one32.step_s / s.step_s : 0;
    }
}

/* The projected step time of the bucketed mode for caps of 1 KiB to 64 MiB
 * (your assignment, each bucket launched as early as it can go): rows of
 * cap_kib, step_ms, buckets into sweep (32 × 3); returns how many. */
static int sweep_caps(const dl_profile *prof, const dl_mlp *m, const step_cost *cost, const size_t *counts,
                      int n_params, size_t esz, size_t first_cap, size_t B, int accum, const dl_sim_bucket *flat,
                      const dl_sim_bucket *pp, double (*sweep)[SWEEP_NCOLS])
{
    int ns = 0;
    for (double kib = 1; kib <= 65536 && ns < 32; kib *= 2) {
        ddp_bucket sb[DDP_MAX_BUCKETS];
        dl_sim_bucket sim[DDP_MAX_BUCKETS];
        int n = 0;
        size_t c = (size_t)(kib * 1024);
        if (ddp_assign_buckets(counts, n_params, esz, c < first_cap ? c : first_cap, c, sb, &n) != DL_OK)
            break;
        double st3[LAB05_MODES], ex3[LAB05_MODES], sp3[LAB05_MODES], v3 = 0, o3 = 0;
        const dl_sim_bucket *one[LAB05_MODES] = {sim, flat, pp};
        int n3[LAB05_MODES] = {kit_structural_buckets(sb, n, esz, sim), -1, -1};
        project_modes(prof, m, cost, B, accum, prof->gpus, one, n3, st3, ex3, sp3, &v3, &o3);
        sweep[ns][SW_CAP_KIB] = kib, sweep[ns][SW_STEP_MS] = st3[0] * 1e3, sweep[ns][SW_BUCKETS] = n;
        ns++;
    }
    return ns;
}

/* The device's times on a GPU: the trace's step spans. */
double lab05_measured_step(const dl_span *ev, size_t nev, long first)
{
    double t[4096];
    size_t k = 0;
    for (size_t i = 0; i < nev && k < sizeof t / sizeof t[0]; i++)
        if (ev[i].kind == DL_EV_STEP && ev[i].step > first && ev[i].t1 >= ev[i].t0)
            t[k++] = ev[i].t1 - ev[i].t0;
    if (k == 0)
        return 0;
    for (size_t i = 1; i < k; i++) // insertion sort: at most a few thousand
        for (size_t j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1], t[j - 1] = x;
        }
    return k % 2 ? t[k / 2] : (t[k / 2 - 1] + t[k / 2]) / 2;
}

/* Appends a row of timeline_projected.csv to p (times in seconds). */
static void tl_row(lab05_projected *p, int kind, int id, double t0, double t1, double bytes)
{
    if (p->ntl >= TP_MAX_ROWS)
        return;
    double *r = p->tl[p->ntl++];
    r[TP_KIND] = kind, r[TP_ID] = id, r[TP_T0_MS] = t0 * 1e3, r[TP_T1_MS] = t1 * 1e3, r[TP_BYTES] = bytes;
}

/* One step of the run's mode (its nb buckets bk) on the profile's GPUs, as
 * dl_project_step times it, into p's timeline rows: each layer's forward
 * and backward timed alone by the same projection (one layer, one rank), so
 * that the compute drawn adds up to the step's and each bucket's start
 * follows its layer's end as the projection has it. */
static void project_timeline(const dl_profile *prof, const dl_mlp *m, const step_cost *c, int accum,
                             const dl_sim_bucket *bk, int nb, lab05_projected *p)
{
    dl_sim_step s, one;
    p->ntl = 0;
    p->backward_end_ms = p->exposed_ms = 0;
    if (nb < 0 || dl_project_step(prof, prof->gpus, accum, c->layers, m->n_layers, bk, nb, c->optim_bytes,
                                  c->optim_launches, &s) != DL_OK)
        return;
    double t = 0, micro = s.forward_s + s.backward_s;
    if (accum > 1 && accum <= 8) {
        for (int k = 0; k < accum - 1; k++, t += micro) {
            tl_row(p, DL_EV_FORWARD, k, t, t + s.forward_s, 0);
            tl_row(p, DL_EV_BACKWARD, -1, t + s.forward_s, t + micro, 0);
        }
    } else if (accum > 8) { // the micro-batches before the last, as one forward and one backward
        tl_row(p, DL_EV_FORWARD, -1, 0, (accum - 1) * s.forward_s, 0);
        tl_row(p, DL_EV_BACKWARD, -1, (accum - 1) * s.forward_s, (accum - 1) * micro, 0);
        t = (accum - 1) * micro;
    }
    tl_row(p, DL_EV_FORWARD, accum - 1, t, t + s.forward_s, 0);
    t += s.forward_s;
    for (int l = m->n_layers - 1; l >= 0; l--) {
        double d = 0;
        if (dl_project_step(prof, 1, 1, &c->layers[l], 1, NULL, 0, 0, 0, &one) == DL_OK)
            d = one.backward_s;
        tl_row(p, DL_EV_BACKWARD, l, t, t + d, 0);
        t += d;
    }
    for (int k = 0; k < nb; k++)
        tl_row(p, DL_EV_ALLREDUCE, k, s.bucket_start_s[k], s.bucket_end_s[k], bk[k].bytes);
    tl_row(p, DL_EV_OPTIM, 0, s.step_s - s.optim_s, s.step_s, 0);
    p->backward_end_ms = s.backward_end_s * 1e3;
    p->exposed_ms = s.exposed_s * 1e3;
}

void lab05_project(const lab05_run *R, const dl_span *ev, size_t nev, long probe, lab05_projected *p)
{
    const dl_mlp *m = &R->m;
    size_t B = (size_t)R->E->a.batch_size, esz = R->esz;
    int accum = R->o.accum;
    dl_sim_bucket rec[DDP_MAX_BUCKETS], flat = {(double)(esz * m->n_params), -1}, pp[DDP_MAX_BUCKETS];
    ddp_bucket ppb[DDP_MAX_BUCKETS];
    // bucketed: the order this run recorded (or, in another mode, the earliest
    // each of your buckets could go); per-param: one bucket per parameter
    int nrec = R->mode == LAB05_BUCKETED ? kit_recorded_buckets(ev, nev, probe, rec, DDP_MAX_BUCKETS)
                                         : kit_structural_buckets(R->assigned, R->na, esz, rec);
    int npp = kit_structural_buckets(ppb, kit_per_param_buckets(m, ppb), esz, pp);
    const dl_sim_bucket *bk[LAB05_MODES] = {rec, &flat, pp};
    int nbk[LAB05_MODES] = {nrec, 1, npp};
    const int ranks[3] = {1, 2, 4};
    step_cost c;
    int fp16 = m->compute != DL_F32; // fp16 or bf16: the same tensor-core peak and 2 bytes
    c.recorded = kit_sim_recorded(ev, nev, probe, m->n_layers, fp16, c.layers, &c.optim_bytes, &c.optim_launches);
    if (!c.recorded) {
        kit_sim_layers(m, B, fp16, c.layers);
        kit_sim_optim(m, fp16, &c.optim_bytes, &c.optim_launches);
    }
    p->recorded = c.recorded;
    for (int k = 0; k < 3; k++) {
        project_modes(&R->E->prof, m, &c, B, accum, ranks[k], bk, nbk, p->step_s, p->exposed, p->speedup, &p->vs32,
                      &p->one_s);
        double *r = p->rows[k];
        r[PR_RANKS] = ranks[k], r[PR_BUCKETED] = p->speedup[0], r[PR_FLAT] = p->speedup[1];
        r[PR_PER_PARAM] = p->speedup[2], r[PR_BUCKETED_EXPOSED] = p->exposed[0], r[PR_FLAT_EXPOSED] = p->exposed[1];
        r[PR_PER_PARAM_EXPOSED] = p->exposed[2];
        r[PR_BUCKETED_MS] = p->step_s[0] * 1e3, r[PR_FLAT_MS] = p->step_s[1] * 1e3;
        r[PR_PER_PARAM_MS] = p->step_s[2] * 1e3;
    }
    project_modes(&R->E->prof, m, &c, B, accum, R->E->prof.gpus, bk, nbk, p->step_s, p->exposed, p->speedup, &p->vs32,
                  &p->one_s);
    project_timeline(&R->E->prof, m, &c, accum, bk[R->mode], nbk[R->mode], p);
    // the bucket-cap sweep (projected; the caps of your assignment)
    p->ns = sweep_caps(&R->E->prof, m, &c, R->counts, R->n_tensors, esz, R->first_cap, B, accum, &flat, pp, p->sweep);
}
