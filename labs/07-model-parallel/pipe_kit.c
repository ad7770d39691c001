/* pipe_kit.c — lab 07's pipeline kit (pipe_kit.h) and the kit's calls of
 * pipe.h. Not a student file. */
#include "pipe_kit.h"

#include <math.h> // NAN
#include <stdlib.h> // calloc, malloc, free
#include <string.h> // memset

#include "dl/layer.h" // dl_layer_forward, dl_layer_backward, dl_layer_sgd, dl_layer_xent
#include "dl/ops.h" // dl_add, dl_scale
#include "dl/timer.h" // dl_now
#include "kit.h" // kit_alloc, kit_max_diff

dl_status pp_kit_init(pp_stage *st, dl_comm *c, const dl_device *dev, const dl_mlp *whole, int first, int last, int m,
                      size_t n)
{
    memset(st, 0, sizeof *st);
    int P = dl_comm_size(c), s = dl_comm_rank(c), L = whole->n_layers;
    if (!(first >= 0 && first < last && last <= L))
        return dl_error_set(DL_ERR_ARG,
                            "stage %d of %d: layers %d .. %d of a model of %d layers: expected a run of "
                            "at least one, 0 <= first < last <= %d",
                            s, P, first, last - 1, L, L);
    if (m < 1 || m > PP_MAX_M || n < 1)
        return dl_error_set(DL_ERR_ARG, "%d micro-batches of %zu rows: expected 1 to %d of at least one", m, n,
                            PP_MAX_M);
    pp_kit *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dl_error_set(DL_ERR_NOMEM, "a stage");
    *st = (pp_stage){.comm = c,
                     .dev = dev,
                     .s = s,
                     .P = P,
                     .m = m,
                     .n = n,
                     .in = whole->layer[first].in,
                     .out = whole->layer[last - 1].out,
                     .first = first,
                     .last = last,
                     .kit = k};
    k->L = L;
    size_t widest = 0, biggest = 0;
    dl_status st_ = DL_OK;
    k->slot_floats = n * st->in;
    for (int l = first; l < last && st_ == DL_OK; l++) {
        const dl_mlp_layer *w = &whole->layer[l];
        dl_mlp_layer *o = &k->layer[l];
        *o = (dl_mlp_layer){.in = w->in, .out = w->out};
        st_ = kit_alloc(dev, &o->W, w->in * w->out);
        st_ = st_ == DL_OK ? kit_alloc(dev, &o->b, w->out) : st_;
        st_ = st_ == DL_OK ? kit_alloc(dev, &o->gW, w->in * w->out) : st_;
        st_ = st_ == DL_OK ? kit_alloc(dev, &o->gb, w->out) : st_;
        st_ = st_ == DL_OK ? kit_alloc(dev, &k->vW[l], w->in * w->out) : st_;
        st_ = st_ == DL_OK ? kit_alloc(dev, &k->vb[l], w->out) : st_;
        st_ = st_ == DL_OK ? dl_memcpy_d2d(dev, o->W, w->W, w->in * w->out * sizeof *o->W) : st_;
        st_ = st_ == DL_OK ? dl_memcpy_d2d(dev, o->b, w->b, w->out * sizeof *o->b) : st_;
        widest = w->in > widest ? w->in : widest;
        widest = w->out > widest ? w->out : widest;
        biggest = w->in * w->out > biggest ? w->in * w->out : biggest;
        k->slot_floats += n * w->out;
    }
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->tW, biggest) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->tb, widest) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->dout, n * st->out) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->din, n * st->in) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->d[0], n * widest) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->d[1], n * widest) : st_;
    st_ = st_ == DL_OK ? kit_alloc(dev, &k->ones, n) : st_;
    st_ = st_ == DL_OK ? dl_layer_loss_init(&k->xent, dev, n) : st_;
    float *ones = st_ == DL_OK ? malloc(n * sizeof *ones) : NULL;
    if (st_ == DL_OK && ones == NULL)
        st_ = dl_error_set(DL_ERR_NOMEM, "a stage's %zu ones", n);
    for (size_t i = 0; st_ == DL_OK && i < n; i++)
        ones[i] = 1.0f;
    st_ = st_ == DL_OK ? dl_memcpy_h2d(dev, k->ones, ones, n * sizeof *ones) : st_;
    free(ones);
    if (st_ != DL_OK)
        pp_kit_free(st);
    return st_;
}

void pp_kit_free(pp_stage *st)
{
    pp_kit *k = st->kit;
    if (k != NULL) {
        const dl_device *dev = st->dev;
        for (int l = st->first; l < st->last; l++) {
            dl_free(dev, k->layer[l].W), dl_free(dev, k->layer[l].b), dl_free(dev, k->layer[l].gW);
            dl_free(dev, k->layer[l].gb), dl_free(dev, k->vW[l]), dl_free(dev, k->vb[l]);
        }
        float *bufs[] = {k->tW, k->tb, k->dout, k->din, k->d[0], k->d[1], k->ones};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            dl_free(dev, bufs[i]);
        for (int i = 0; i < PP_MAX_M; i++)
            dl_free(dev, k->slot[i]);
        dl_layer_loss_free(&k->xent);
        free(k);
    }
    memset(st, 0, sizeof *st);
}

dl_status pp_kit_begin(pp_stage *st, const float *X, const int32_t *y)
{
    pp_kit *k = st->kit;
    for (int l = st->first; l < st->last; l++) {
        DL_TRY(dl_memset0(st->dev, k->layer[l].gW, k->layer[l].in * k->layer[l].out * sizeof(float)));
        DL_TRY(dl_memset0(st->dev, k->layer[l].gb, k->layer[l].out * sizeof(float)));
    }
    k->X = X, k->y = y, k->n_ops = 0, k->peak = k->held, k->loss = 0;
    memset(k->done, 0, sizeof k->done);
    return DL_OK;
}

/* The record of one kit call. */
static void record(pp_kit *k, int kind, int i, double t0)
{
    if (k->n_ops < 2 * PP_MAX_M) {
        k->ops[k->n_ops] = PP_OP(kind, i);
        k->t0[k->n_ops] = t0;
        k->t1[k->n_ops++] = dl_now();
    }
}

static int bad_i(const pp_stage *st, int i, const char *what)
{
    if (st == NULL || st->kit == NULL) {
        dl_error_set(DL_ERR_ARG, "%s: no stage", what);
        return 1;
    }
    if (i < 0 || i >= st->m) {
        dl_error_set(DL_ERR_ARG, "%s(%d): stage %d has micro-batches 0 .. %d", what, i, st->s, st->m - 1);
        return 1;
    }
    return 0;
}

/* Layer l's output in slot i (n × out_l); the input is the slot's first n × in floats. */
static float *act(pp_stage *st, int i, int l)
{
    pp_kit *k = st->kit;
    float *p = k->slot[i] + st->n * st->in;
    for (int j = st->first; j < l; j++)
        p += st->n * k->layer[j].out;
    return p;
}

float *pp_in(pp_stage *st, int i)
{
    if (bad_i(st, i, "pp_in"))
        return NULL;
    pp_kit *k = st->kit;
    if (k->state[i] != 0 || k->done[i]) {
        dl_error_set(DL_ERR_ARG, "pp_in(%d): stage %d already took micro-batch %d's slot this step", i, st->s, i);
        return NULL;
    }
    if (kit_alloc(st->dev, &k->slot[i], k->slot_floats) != DL_OK)
        return NULL;
    k->state[i] = 1;
    k->held++;
    k->peak = k->held > k->peak ? k->held : k->peak;
    if (st->s == 0 &&
        dl_memcpy_d2d(st->dev, k->slot[i], k->X + (size_t)i * st->n * st->in, st->n * st->in * sizeof(float)) != DL_OK)
        return NULL;
    return k->slot[i];
}

dl_status pp_forward(pp_stage *st, int i)
{
    if (bad_i(st, i, "pp_forward"))
        return DL_ERR_ARG;
    pp_kit *k = st->kit;
    if (k->state[i] != 1)
        return dl_error_set(DL_ERR_ARG, "pp_forward(%d): stage %d %s", i, st->s,
                            k->state[i] == 0 ? "has no input for it: pp_in takes its slot first"
                                             : "ran its forward already this step");
    double t0 = dl_now();
    const float *x = k->slot[i];
    for (int l = st->first; l < st->last; l++) {
        float *y = act(st, i, l);
        DL_TRY(
            dl_layer_forward(st->dev, &k->layer[l], x, st->n, DL_LAYER_BIAS | (l < k->L - 1 ? DL_LAYER_RELU : 0), y));
        x = y;
    }
    if (st->last == k->L) { // the loss of i's rows; its gradient at the logits replaces them in i's slot
        double loss;
        DL_TRY(dl_layer_xent(&k->xent, act(st, i, st->last - 1), k->y + (size_t)i * st->n, st->n, st->out,
                             1.0f / (float)st->n, &loss));
        k->loss += loss;
    }
    k->state[i] = 2;
    record(k, PP_F, i, t0);
    return DL_OK;
}

float *pp_out(pp_stage *st, int i)
{
    if (bad_i(st, i, "pp_out"))
        return NULL;
    if (st->kit->state[i] != 2) {
        dl_error_set(DL_ERR_ARG, "pp_out(%d): stage %d holds no output of micro-batch %d (not forwarded, or released)",
                     i, st->s, i);
        return NULL;
    }
    return act(st, i, st->last - 1);
}

float *pp_dout(pp_stage *st, int i)
{
    return bad_i(st, i, "pp_dout") ? NULL : st->kit->dout;
}

dl_status pp_backward(pp_stage *st, int i, float scale)
{
    if (bad_i(st, i, "pp_backward"))
        return DL_ERR_ARG;
    pp_kit *k = st->kit;
    if (k->state[i] != 2)
        return dl_error_set(DL_ERR_ARG, "pp_backward(%d): stage %d %s", i, st->s,
                            k->done[i]    ? "ran it already this step"
                            : k->state[i] ? "has not run its forward"
                                          : "no longer holds micro-batch's activations: released before its "
                                            "backward (or never taken)");
    double t0 = dl_now();
    size_t n = st->n;
    float *d = k->d[0];
    DL_TRY(dl_copy(st->dev, d, st->last == k->L ? act(st, i, st->last - 1) : k->dout, n * st->out, DL_F32));
    if (st->last == k->L) // the gradient starts here: i's loss weighs scale of the step's
        DL_TRY(dl_scale(st->dev, d, n * st->out, DL_F32, scale));
    for (int l = st->last - 1; l >= st->first; l--) {
        dl_mlp_layer *L = &k->layer[l], t = *L;
        if (l < k->L - 1) // through the ReLU after layer l
            DL_TRY(dl_layer_relu_mask(st->dev, d, act(st, i, l), n * L->out));
        const float *x = l > st->first ? act(st, i, l - 1) : k->slot[i];
        float *dx = l > st->first ? k->d[d == k->d[0]] : k->din;
        t.gW = k->tW, t.gb = k->tb;
        DL_TRY(dl_layer_backward(st->dev, &t, x, n, d, k->ones, dx));
        DL_TRY(dl_add(st->dev, L->gW, k->tW, L->in * L->out, DL_F32));
        DL_TRY(dl_add(st->dev, L->gb, k->tb, L->out, DL_F32));
        d = dx;
    }
    k->state[i] = 3;
    k->done[i] = 1;
    record(k, PP_B, i, t0);
    return DL_OK;
}

float *pp_din(pp_stage *st, int i)
{
    return bad_i(st, i, "pp_din") ? NULL : st->kit->din;
}

void pp_release(pp_stage *st, int i)
{
    if (bad_i(st, i, "pp_release") || st->kit->state[i] == 0)
        return;
    pp_kit *k = st->kit;
    dl_free(st->dev, k->slot[i]);
    k->slot[i] = NULL;
    k->state[i] = 0;
    k->held--;
}

dl_status pp_kit_end(pp_stage *st, float lr, float mu, float wd, double *loss)
{
    pp_kit *k = st->kit;
    for (int i = 0; i < st->m; i++) {
        if (!k->done[i])
            return dl_error_set(DL_ERR_ARG,
                                "stage %d: micro-batch %d had no backward this step (every one goes "
                                "forward and backward once)",
                                st->s, i);
        if (k->state[i] != 0)
            return dl_error_set(DL_ERR_ARG, "stage %d: micro-batch %d's slot was not given back (pp_release)", st->s,
                                i);
    }
    for (int l = st->first; l < st->last; l++) {
        dl_mlp_layer *L = &k->layer[l];
        DL_TRY(dl_layer_sgd(st->dev, L->W, L->gW, k->vW[l], L->in * L->out, lr, mu, wd));
        DL_TRY(dl_layer_sgd(st->dev, L->b, L->gb, k->vb[l], L->out, lr, mu, 0));
    }
    *loss = st->last == k->L ? k->loss / st->m : NAN;
    return DL_OK;
}

dl_status pp_kit_diff(pp_stage *st, const dl_mlp *ref, double *diff)
{
    double d = 0;
    for (int l = st->first; l < st->last; l++) {
        const dl_mlp_layer *a = &st->kit->layer[l], *b = &ref->layer[l];
        DL_TRY(kit_max_diff(st->dev, a->W, b->W, a->in * a->out, &d));
        DL_TRY(kit_max_diff(st->dev, a->b, b->b, a->out, &d));
    }
    DL_TRY(dl_comm_allreduce(st->comm, &d, 1, DL_F64, DL_RED_MAX));
    *diff = d;
    return DL_OK;
}

dl_status pp_sim(const int *ops, int P, int m, double tF, double tB, double *start, double *end, double *T)
{
    int n = 2 * m, *next = calloc((size_t)P, sizeof *next);
    double *fin = malloc((size_t)P * n * sizeof *fin), *free_at = calloc((size_t)P, sizeof *free_at);
    dl_status st = next == NULL || fin == NULL || free_at == NULL ? dl_error_set(DL_ERR_NOMEM, "the schedule") : DL_OK;
    // fin[s·2m + kind·m + i]: when op (kind, i) of stage s ended (−1: not yet)
    for (int k = 0; st == DL_OK && k < P * n; k++)
        fin[k] = -1;
    for (int done = 0, progress = 1; st == DL_OK && done < P * n && progress;) {
        progress = 0;
        for (int s = 0; s < P; s++) {
            if (next[s] >= n)
                continue;
            int op = ops[s * n + next[s]], kind = op / PP_MAX_M, i = op % PP_MAX_M;
            if (kind > PP_B || i >= m || fin[s * n + kind * m + i] >= 0) {
                st = dl_error_set(DL_ERR_ARG,
                                  "stage %d's op %d is not one of %d micro-batches' forward or backward, "
                                  "once each",
                                  s, next[s], m);
                break;
            }
            double ready = free_at[s];
            double dep = kind == PP_F ? (s > 0 ? fin[(s - 1) * n + i] : 0)
                                      : (s < P - 1 ? fin[(s + 1) * n + m + i] : fin[s * n + i]);
            if (kind == PP_B && fin[s * n + i] < 0)
                dep = -1; // its own forward first
            if (dep < 0)
                continue; // waits
            double t0 = ready > dep ? ready : dep, t1 = t0 + (kind == PP_F ? tF : tB);
            if (start != NULL)
                start[s * n + next[s]] = t0, end[s * n + next[s]] = t1;
            fin[s * n + kind * m + i] = t1;
            free_at[s] = t1;
            next[s]++, done++, progress = 1;
        }
        if (st == DL_OK && !progress && done < P * n)
            st = dl_error_set(DL_ERR_ARG, "the stages' orders cannot all finish: each waits for another's op that "
                                          "comes later in that stage's order (a deadlock)");
    }
    double t = 0;
    for (int s = 0; st == DL_OK && s < P; s++)
        t = free_at[s] > t ? free_at[s] : t;
    *T = t;
    free(next), free(fin), free(free_at);
    return st;
}
