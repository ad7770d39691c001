/* kit_record.c — lab 06's records of a run (kit.h: kit_record, the driver's
 * to own): the phases of the transport's log, the shards your task 1 cuts,
 * FSDP's layers marked around your hooks, and the dump that writes them
 * beside the ledger's peaks and the final parameters for the grader. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // realloc, free
#include <string.h> // memcpy, memset

#include "dl/data.h" // dl_npy_write_f32
#include "dl/fs.h" // dl_mkdir_p, dl_path_join
#include "dl/p2plog.h" // dl_p2plog_start, dl_p2plog_events: the layers' collectives, started and waited
#include "dl/trace.h" // dl_trace_start, dl_trace_events: backward's spans per layer
#include "kit.h"

// ---- the phases of the transport's log ----

const char *const kit_phase_names[KIT_PHASES] = {"none", "step", "reduce_scatter", "all_gather"};

void kit_record_init(kit_record *R)
{
    memset(R, 0, sizeof *R);
    R->marks.step = -1;
}

void kit_phase(kit_record *R, dl_comm *c, kit_phase_kind kind, long id)
{
    size_t at = 0;
    dl_comm_log(c, &at, NULL);
    R->marks.step = kind == KIT_PH_STEP ? id : -1;
    if (R->marks.n == R->marks.cap) {
        size_t cap = R->marks.cap ? 2 * R->marks.cap : 256;
        struct kit_mark *v = realloc(R->marks.v, cap * sizeof *v);
        if (v == NULL) {
            R->marks.dropped++;
            return;
        }
        R->marks.v = v, R->marks.cap = cap;
    }
    R->marks.v[R->marks.n++] = (struct kit_mark){at, (unsigned)kind < KIT_PHASES ? kind : KIT_PH_NONE, kind ? id : -1};
}

dl_status kit_write_log(const kit_record *R, const char *dir, dl_comm *c)
{
    char path[1200], name[64];
    size_t n = 0, dropped = 0, m = 0;
    const dl_comm_rec *rec = dl_comm_log(c, &n, &dropped);
    if (dropped > 0 || R->marks.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the transport's log dropped %zu records and %zu phase marks", dropped,
                            R->marks.dropped);
    snprintf(name, sizeof name, "comm.%d.csv", dl_comm_rank(c));
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_commlog));
    dl_status st = DL_OK;
    kit_phase_kind kind = KIT_PH_NONE;
    long id = -1;
    for (size_t k = R->marks.from; k < n && st == DL_OK; k++) {
        for (; m < R->marks.n && R->marks.v[m].at <= k; m++)
            kind = R->marks.v[m].kind, id = R->marks.v[m].id;
        dl_csv_cell(&f, KIT_C_INDEX, "%zu", k - R->marks.from);
        dl_csv_cell(&f, KIT_C_OP, "%s", dl_comm_op_name(rec[k].op));
        dl_csv_cell(&f, KIT_C_COUNT, "%zu", rec[k].count);
        dl_csv_cell(&f, KIT_C_DTYPE, "%s", dl_dtype_name(rec[k].t));
        dl_csv_cell(&f, KIT_C_PHASE, "%s", kit_phase_names[kind]);
        dl_csv_cell(&f, KIT_C_PHASE_ID, "%ld", id);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

// ---- the shards your code cuts ----

void kit_layout_note(kit_record *R, const char *of, size_t n, int P)
{
    if (R->lay.n >= KIT_LAYOUT_MAX || P < 1 || P > SHARD_MAX_RANKS) {
        R->lay.dropped++;
        return;
    }
    struct kit_lay *L = &R->lay.v[R->lay.n++];
    snprintf(L->of, sizeof L->of, "%s", of);
    L->n = n, L->P = P;
    for (int s = 0; s <= P; s++) {
        L->off[s] = shard_offset(n, P, s);
        if (s < P)
            L->cnt[s] = shard_count(n, P, s);
    }
}

void kit_layout_record(kit_record *R, const dl_mlp *m, int P)
{
    kit_layout_note(R, "model", m->n_params, P);
    for (int l = 0; l < m->n_layers; l++) {
        char of[16];
        snprintf(of, sizeof of, "layer%d", l);
        kit_layout_note(R, of, m->layer[l].count, P);
    }
}

dl_status kit_write_layout(const kit_record *R, const char *dir, int rank)
{
    if (R->lay.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the shards' layout dropped %d buffers (at most %d)", R->lay.dropped,
                            KIT_LAYOUT_MAX);
    char path[1200], name[64];
    snprintf(name, sizeof name, "layout.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_layout));
    dl_status st = DL_OK;
    for (int k = 0; k < R->lay.n && st == DL_OK; k++) {
        for (int s = 0; s <= R->lay.v[k].P && st == DL_OK; s++) { // s = P: where the last shard ends
            dl_csv_cell(&f, KIT_O_OF, "%s", R->lay.v[k].of);
            dl_csv_cell(&f, KIT_O_N, "%zu", R->lay.v[k].n);
            dl_csv_cell(&f, KIT_O_SHARD, "%d", s);
            dl_csv_cell(&f, KIT_O_OFFSET, "%zu", R->lay.v[k].off[s]);
            dl_csv_cell(&f, KIT_O_COUNT, "%zu", s < R->lay.v[k].P ? R->lay.v[k].cnt[s] : (size_t)0);
            st = dl_csv_end_row(&f);
        }
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}

// ---- the dump ----

static dl_status write_fsdp_record(const kit_record *R, const char *dir,
                                   int rank); // below: FSDP's layers, when recorded

dl_status kit_dump(const kit_record *R, const char *dir, dl_comm *c, const float *params, size_t n_params)
{
    int r = dl_comm_rank(c);
    char path[1200], name[64];
    const shard_mem *led = kit_ledger();
    DL_TRY(dl_mkdir_p(dir));
    snprintf(name, sizeof name, "params.%d.npy", r);
    dl_status st = dl_path_join(path, sizeof path, dir, name);
    if (st == DL_OK)
        st = dl_npy_write_f32(path, params, 1, n_params);
    dl_csv_out f;
    snprintf(name, sizeof name, "memory.%d.csv", r);
    if (st == DL_OK)
        st = dl_path_join(path, sizeof path, dir, name);
    if (st == DL_OK)
        st = dl_csv_open(&f, path, kit_peak);
    for (int k = 0; k <= SHARD_KINDS && st == DL_OK; k++) {
        dl_csv_cell(&f, KIT_P_KIND, "%s", k < SHARD_KINDS ? shard_mem_kind_name((shard_mem_kind)k) : "total");
        dl_csv_cell(&f, KIT_P_PEAK, "%zu", k < SHARD_KINDS ? led->peak[k] : led->peak_total);
        dl_csv_cell(&f, KIT_P_NOW, "%zu", k < SHARD_KINDS ? led->now[k] : led->now_total);
        st = dl_csv_end_row(&f);
        if (st != DL_OK)
            dl_csv_abort(&f);
    }
    if (st == DL_OK)
        st = dl_csv_close(&f);
    if (st == DL_OK)
        st = kit_write_log(R, dir, c);
    if (st == DL_OK)
        st = kit_write_layout(R, dir, r);
    return st == DL_OK ? write_fsdp_record(R, dir, r) : st;
}

// ---- FSDP's layers, recorded around the hooks (kit_fsdp_record) ----

static const char *const lm_names[KIT_LMS] = {"enter", "compute", "computed", "stand-in"};

static void lmark(kit_record *R, int pass, int layer, int what)
{
    if (!R->hooked.on || R->marks.step < 0) // the steps only, not the evaluation's forwards
        return;
    if (R->hooked.n == R->hooked.cap) {
        size_t cap = R->hooked.cap ? 2 * R->hooked.cap : 1024;
        struct kit_lmark *v = realloc(R->hooked.v, cap * sizeof *v);
        if (v == NULL) {
            R->hooked.dropped++;
            return;
        }
        R->hooked.v = v, R->hooked.cap = cap;
    }
    size_t np = 0, nt = 0;
    dl_p2plog_events(&np, NULL);
    dl_trace_events(&nt);
    R->hooked.v[R->hooked.n++] = (struct kit_lmark){R->marks.step, pass, layer, what, np, nt};
}

static dl_status kit_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    kit_record *R = ctx;
    kit_mem_phase(phase == DL_MLP_FORWARD ? KIT_MEM_FORWARD : KIT_MEM_BACKWARD, layer);
    lmark(R, phase, layer, KIT_LM_ENTER);
    dl_status st = R->hooked.pre != NULL ? R->hooked.pre(R->hooked.ctx, layer, phase) : DL_OK;
    if (st != DL_OK)
        return st;
    // what the model reads next must be there: a clear stop, not a crash in the kit's GEMM; but a backward that
    // gathers nothing gets the layer from the kit when recording, so the grader judges the rest of the run
    dl_mlp_layer *L = &R->hooked.m->layer[layer];
    int back = phase == DL_MLP_BACKWARD;
    if (back && (L->W == NULL || L->b == NULL) && L->gW != NULL && L->gb != NULL && R->hooked.on &&
        R->hooked.f != NULL) {
        const fsdp_layer *F = &R->hooked.f->layer[layer];
        dl_comm *c = R->hooked.f->comm;
        long step = R->marks.step;
        lmark(R, phase, layer, KIT_LM_STANDIN);
        kit_phase(R, c, KIT_PH_NONE, -1); // the kit's traffic, not the step's
        st = dl_malloc(R->hooked.m->dev, (void **)&R->hooked.whole, L->count * sizeof(float));
        if (st == DL_OK)
            st = kit_layer_whole(c, R->hooked.m->dev, L->count, F->offset, F->count, F->param, R->hooked.whole);
        kit_phase(R, c, step >= 0 ? KIT_PH_STEP : KIT_PH_NONE, step);
        DL_TRY(st);
        L->W = R->hooked.whole;
        L->b = R->hooked.whole + L->out * L->in;
    }
    if (L->W == NULL || L->b == NULL || (back && (L->gW == NULL || L->gb == NULL)))
        return dl_error_set(DL_ERR_ARG,
                            "FSDP: when fsdp_pre(%d, %s) returned, layer %d's %s view was NULL: the layer "
                            "is not whole for its %s%s",
                            layer, back ? "backward" : "forward", layer,
                            L->W == NULL    ? "W"
                            : L->b == NULL  ? "b"
                            : L->gW == NULL ? "gW"
                                            : "gb",
                            back ? "backward" : "forward",
                            back && (L->W == NULL || L->b == NULL) ? " (backward gathers nothing?)" : "");
    lmark(R, phase, layer, KIT_LM_COMPUTE);
    return DL_OK;
}

static dl_status kit_post(void *ctx, int layer, dl_mlp_phase phase)
{
    kit_record *R = ctx;
    lmark(R, phase, layer, KIT_LM_COMPUTED);
    if (phase == DL_MLP_BACKWARD && layer == 0)
        kit_mem_phase(KIT_MEM_AFTER, -1);
    if (R->hooked.whole != NULL) {
        dl_free(R->hooked.m->dev, R->hooked.whole);
        R->hooked.whole = NULL;
        R->hooked.m->layer[layer].W = R->hooked.m->layer[layer].b = NULL;
    }
    return R->hooked.post != NULL ? R->hooked.post(R->hooked.ctx, layer, phase) : DL_OK;
}

void kit_fsdp_record(kit_record *R, dl_mlp *m, const fsdp_state *f)
{
    R->hooked.f = f;
    if (!R->hooked.on) {
        dl_trace_start(0);
        dl_p2plog_start((size_t)1 << 22);
        R->hooked.on = 1;
    }
    kit_fsdp_watch(R, m);
}

void kit_fsdp_watch(kit_record *R, dl_mlp *m)
{
    if (m->pre == kit_pre || (m->pre == NULL && m->post == NULL))
        return;
    R->hooked.m = m;
    R->hooked.pre = m->pre, R->hooked.post = m->post, R->hooked.ctx = m->hook_ctx;
    dl_mlp_set_hooks(m, kit_pre, kit_post, R);
}

/* DIR/trace.RANK.csv (dl_trace_write_csv), DIR/p2p.RANK.csv (the kit's
 * record of every operation started and waited: index, kind start|wait|add,
 * op, id, bytes sent) and DIR/layers.RANK.csv (for each step, pass and
 * layer, where those two stood when the layer's pre hook was entered, when
 * its compute began and when it ended: the number of p2p events and trace
 * spans before). Only when kit_fsdp_record started them. */
static dl_status write_fsdp_record(const kit_record *R, const char *dir, int rank)
{
    if (!R->hooked.on)
        return DL_OK;
    char path[1200], name[64];
    size_t n = 0, dropped = 0;
    const dl_p2p_ev *ev = dl_p2plog_events(&n, &dropped);
    if (dropped > 0 || R->hooked.dropped > 0 || dl_trace_dropped() > 0)
        return dl_error_set(DL_ERR_NOMEM, "FSDP's record dropped %zu operations, %zu layer marks and %zu spans",
                            dropped, R->hooked.dropped, dl_trace_dropped());
    snprintf(name, sizeof name, "trace.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    DL_TRY(dl_trace_write_csv(path));
    snprintf(name, sizeof name, "p2p.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_p2p));
    dl_status st = DL_OK;
    for (size_t k = 0; k < n && st == DL_OK; k++) {
        dl_csv_cell(&f, KIT_X_INDEX, "%zu", k);
        dl_csv_cell(&f, KIT_X_KIND, "%s", dl_p2plog_kind_name(ev[k].kind));
        dl_csv_cell(&f, KIT_X_OP, "%s", ev[k].op >= 0 ? dl_comm_op_name((dl_comm_op)ev[k].op) : "none");
        dl_csv_cell(&f, KIT_X_ID, "%ld", ev[k].id);
        dl_csv_cell(&f, KIT_X_BYTES, "%zu", ev[k].kind == DL_P2P_START ? ev[k].a_bytes : (size_t)0);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    DL_TRY(dl_csv_close(&f));
    snprintf(name, sizeof name, "layers.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    DL_TRY(dl_csv_open(&f, path, kit_layers));
    for (size_t k = 0; k < R->hooked.n && st == DL_OK; k++) {
        const struct kit_lmark *m = &R->hooked.v[k];
        dl_csv_cell(&f, KIT_Y_STEP, "%ld", m->step);
        dl_csv_cell(&f, KIT_Y_PASS, "%s", m->pass == DL_MLP_FORWARD ? "forward" : "backward");
        dl_csv_cell(&f, KIT_Y_LAYER, "%d", m->layer);
        dl_csv_cell(&f, KIT_Y_MARK, "%s", lm_names[m->what]);
        dl_csv_cell(&f, KIT_Y_P2P, "%zu", m->p2p);
        dl_csv_cell(&f, KIT_Y_SPAN, "%zu", m->span);
        st = dl_csv_end_row(&f);
    }
    if (st != DL_OK) {
        dl_csv_abort(&f);
        return st;
    }
    return dl_csv_close(&f);
}
