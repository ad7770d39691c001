/* kit_record.c — lab 06's records of a run (kit.h): the phases of the
 * transport's log, the shards your task 1 cuts, FSDP's layers marked around
 * your hooks, and the dump that writes them beside the ledger's peaks and
 * the final parameters for the grader. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // realloc, free
#include <string.h> // memcpy

#include "dl/data.h" // dl_npy_write_f32
#include "dl/fs.h" // dl_mkdir_p, dl_path_join
#include "dl/p2plog.h" // dl_p2plog_start, dl_p2plog_events: the layers' collectives, started and waited
#include "dl/trace.h" // dl_trace_start, dl_trace_events: backward's spans per layer
#include "kit.h"

// ---- the phases of the transport's log ----

const char *const kit_phase_names[KIT_PHASES] = {"none", "step", "reduce_scatter", "all_gather"};

/* Marks: from record `at` of the log on, phase (kind, id). One rank's, of the process. */
static struct {
    struct mark {
        size_t at;
        kit_phase_kind kind;
        long id;
    } * v;
    size_t n, cap, dropped;
    long step; /* the step the log is in, -1 outside one */
} marks = {.step = -1};

void kit_phase(dl_comm *c, kit_phase_kind kind, long id)
{
    size_t at = 0;
    dl_comm_log(c, &at, NULL);
    marks.step = kind == KIT_PH_STEP ? id : -1;
    if (marks.n == marks.cap) {
        size_t cap = marks.cap ? 2 * marks.cap : 256;
        struct mark *v = realloc(marks.v, cap * sizeof *v);
        if (v == NULL) {
            marks.dropped++;
            return;
        }
        marks.v = v, marks.cap = cap;
    }
    marks.v[marks.n++] = (struct mark){at, (unsigned)kind < KIT_PHASES ? kind : KIT_PH_NONE, kind ? id : -1};
}

dl_status kit_write_log(const char *dir, dl_comm *c)
{
    char path[1200], name[64];
    size_t n = 0, dropped = 0, m = 0;
    const dl_comm_rec *rec = dl_comm_log(c, &n, &dropped);
    if (dropped > 0 || marks.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the transport's log dropped %zu records and %zu phase marks", dropped,
                            marks.dropped);
    snprintf(name, sizeof name, "comm.%d.csv", dl_comm_rank(c));
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_commlog));
    dl_status st = DL_OK;
    kit_phase_kind kind = KIT_PH_NONE;
    long id = -1;
    for (size_t k = 0; k < n && st == DL_OK; k++) {
        for (; m < marks.n && marks.v[m].at <= k; m++)
            kind = marks.v[m].kind, id = marks.v[m].id;
        dl_csv_cell(&f, KIT_C_INDEX, "%zu", k);
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

/* Each buffer noted: what it is, its n, and shard_offset's P + 1 answers (s = P: n, as the contract says). */
#define LAYOUT_MAX 64
static struct {
    struct lay {
        char of[16];
        size_t n;
        int P;
        size_t off[SHARD_MAX_RANKS + 1], cnt[SHARD_MAX_RANKS];
    } v[LAYOUT_MAX];
    int n, dropped;
} lay;

void kit_layout_note(const char *of, size_t n, int P)
{
    if (lay.n >= LAYOUT_MAX || P < 1 || P > SHARD_MAX_RANKS) {
        lay.dropped++;
        return;
    }
    struct lay *L = &lay.v[lay.n++];
    snprintf(L->of, sizeof L->of, "%s", of);
    L->n = n, L->P = P;
    for (int s = 0; s <= P; s++) {
        L->off[s] = shard_offset(n, P, s);
        if (s < P)
            L->cnt[s] = shard_count(n, P, s);
    }
}

void kit_layout_record(const dl_mlp *m, int P)
{
    kit_layout_note("model", m->n_params, P);
    for (int l = 0; l < m->n_layers; l++) {
        char of[16];
        snprintf(of, sizeof of, "layer%d", l);
        kit_layout_note(of, m->layer[l].count, P);
    }
}

dl_status kit_write_layout(const char *dir, int rank)
{
    if (lay.dropped > 0)
        return dl_error_set(DL_ERR_NOMEM, "the shards' layout dropped %d buffers (at most %d)", lay.dropped,
                            LAYOUT_MAX);
    char path[1200], name[64];
    snprintf(name, sizeof name, "layout.%d.csv", rank);
    DL_TRY(dl_path_join(path, sizeof path, dir, name));
    dl_csv_out f;
    DL_TRY(dl_csv_open(&f, path, kit_layout));
    dl_status st = DL_OK;
    for (int k = 0; k < lay.n && st == DL_OK; k++) {
        for (int s = 0; s <= lay.v[k].P && st == DL_OK; s++) { // s = P: where the last shard ends
            dl_csv_cell(&f, KIT_O_OF, "%s", lay.v[k].of);
            dl_csv_cell(&f, KIT_O_N, "%zu", lay.v[k].n);
            dl_csv_cell(&f, KIT_O_SHARD, "%d", s);
            dl_csv_cell(&f, KIT_O_OFFSET, "%zu", lay.v[k].off[s]);
            dl_csv_cell(&f, KIT_O_COUNT, "%zu", s < lay.v[k].P ? lay.v[k].cnt[s] : (size_t)0);
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

static dl_status write_fsdp_record(const char *dir, int rank); // below: FSDP's layers, when recorded

dl_status kit_dump(const char *dir, dl_comm *c, const float *params, size_t n_params)
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
        st = kit_write_log(dir, c);
    if (st == DL_OK)
        st = kit_write_layout(dir, r);
    return st == DL_OK ? write_fsdp_record(dir, r) : st;
}

// ---- FSDP's layers, recorded around the hooks (kit_fsdp_record) ----

/* The student's hooks, called by the kit's own, which note where the kit's
 * records (dl/p2plog.h, dl/trace.h) stand when each layer's compute begins
 * and ends. One rank's, of the process. */
static struct {
    int on; /* recording (kit_fsdp_record) */
    dl_mlp *m;
    const fsdp_state *f;
    float *whole; /* the kit's stand-in for a layer backward found not whole (recording only) */
    dl_mlp_hook_fn pre, post;
    void *ctx;
    struct lmark {
        long step;
        int pass, layer, what; /* pass: dl_mlp_phase; what: KIT_LM_* */
        size_t p2p, span; /* events of the p2p record and of the trace before this point */
    } * v;
    size_t n, cap, dropped;
} hooked;
enum { KIT_LM_ENTER = 0, KIT_LM_COMPUTE, KIT_LM_COMPUTED, KIT_LM_STANDIN, KIT_LMS };
static const char *const lm_names[KIT_LMS] = {"enter", "compute", "computed", "stand-in"};

static void lmark(int pass, int layer, int what)
{
    if (!hooked.on || marks.step < 0) // the steps only, not the evaluation's forwards
        return;
    if (hooked.n == hooked.cap) {
        size_t cap = hooked.cap ? 2 * hooked.cap : 1024;
        struct lmark *v = realloc(hooked.v, cap * sizeof *v);
        if (v == NULL) {
            hooked.dropped++;
            return;
        }
        hooked.v = v, hooked.cap = cap;
    }
    size_t np = 0, nt = 0;
    dl_p2plog_events(&np, NULL);
    dl_trace_events(&nt);
    hooked.v[hooked.n++] = (struct lmark){marks.step, pass, layer, what, np, nt};
}

static dl_status kit_pre(void *ctx, int layer, dl_mlp_phase phase)
{
    (void)ctx;
    kit_mem_phase(phase == DL_MLP_FORWARD ? KIT_MEM_FORWARD : KIT_MEM_BACKWARD, layer);
    lmark(phase, layer, KIT_LM_ENTER);
    dl_status st = hooked.pre != NULL ? hooked.pre(hooked.ctx, layer, phase) : DL_OK;
    if (st != DL_OK)
        return st;
    // what the model reads next must be there: a clear stop, not a crash in the kit's GEMM; but a backward that
    // gathers nothing gets the layer from the kit when recording, so the grader judges the rest of the run
    dl_mlp_layer *L = &hooked.m->layer[layer];
    int back = phase == DL_MLP_BACKWARD;
    if (back && (L->W == NULL || L->b == NULL) && L->gW != NULL && L->gb != NULL && hooked.on && hooked.f != NULL) {
        const fsdp_layer *F = &hooked.f->layer[layer];
        dl_comm *c = hooked.f->comm;
        long step = marks.step;
        lmark(phase, layer, KIT_LM_STANDIN);
        kit_phase(c, KIT_PH_NONE, -1); // the kit's traffic, not the step's
        st = dl_malloc(hooked.m->dev, (void **)&hooked.whole, L->count * sizeof(float));
        if (st == DL_OK)
            st = kit_layer_whole(c, hooked.m->dev, L->count, F->offset, F->count, F->param, hooked.whole);
        kit_phase(c, step >= 0 ? KIT_PH_STEP : KIT_PH_NONE, step);
        DL_TRY(st);
        L->W = hooked.whole;
        L->b = hooked.whole + L->out * L->in;
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
    lmark(phase, layer, KIT_LM_COMPUTE);
    return DL_OK;
}

static dl_status kit_post(void *ctx, int layer, dl_mlp_phase phase)
{
    (void)ctx;
    lmark(phase, layer, KIT_LM_COMPUTED);
    if (phase == DL_MLP_BACKWARD && layer == 0)
        kit_mem_phase(KIT_MEM_AFTER, -1);
    if (hooked.whole != NULL) {
        dl_free(hooked.m->dev, hooked.whole);
        hooked.whole = NULL;
        hooked.m->layer[layer].W = hooked.m->layer[layer].b = NULL;
    }
    return hooked.post != NULL ? hooked.post(hooked.ctx, layer, phase) : DL_OK;
}

void kit_fsdp_record(dl_mlp *m, const fsdp_state *f)
{
    hooked.f = f;
    if (!hooked.on) {
        dl_trace_start(0);
        dl_p2plog_start((size_t)1 << 22);
        hooked.on = 1;
    }
    kit_fsdp_watch(m);
}

void kit_fsdp_watch(dl_mlp *m)
{
    if (m->pre == kit_pre || (m->pre == NULL && m->post == NULL))
        return;
    hooked.m = m;
    hooked.pre = m->pre, hooked.post = m->post, hooked.ctx = m->hook_ctx;
    dl_mlp_set_hooks(m, kit_pre, kit_post, NULL);
}

/* DIR/trace.RANK.csv (dl_trace_write_csv), DIR/p2p.RANK.csv (the kit's
 * record of every operation started and waited: index, kind start|wait|add,
 * op, id, bytes sent) and DIR/layers.RANK.csv (for each step, pass and
 * layer, where those two stood when the layer's pre hook was entered, when
 * its compute began and when it ended: the number of p2p events and trace
 * spans before). Only when kit_fsdp_record started them. */
static dl_status write_fsdp_record(const char *dir, int rank)
{
    if (!hooked.on)
        return DL_OK;
    char path[1200], name[64];
    size_t n = 0, dropped = 0;
    const dl_p2p_ev *ev = dl_p2plog_events(&n, &dropped);
    if (dropped > 0 || hooked.dropped > 0 || dl_trace_dropped() > 0)
        return dl_error_set(DL_ERR_NOMEM, "FSDP's record dropped %zu operations, %zu layer marks and %zu spans",
                            dropped, hooked.dropped, dl_trace_dropped());
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
    for (size_t k = 0; k < hooked.n && st == DL_OK; k++) {
        const struct lmark *m = &hooked.v[k];
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
