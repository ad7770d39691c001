/* test_mlp.c — the kit's MLP: shapes, determinism, the gradient against
 * finite differences of the loss (in double), the ready-callback order,
 * accumulation, SGD with momentum, and error cases; the 16-bit paths (fp16
 * and bf16, each test run for both) against a reference in double that rounds
 * each stored value to the 16-bit type, loss-scale underflow in fp16 and its
 * absence in bf16, and the arguments. (CUDA against CPU is in the GPU tier,
 * common/tests_gpu.) */
#include "tests.h"

#include <math.h> // fabs
#include <stdlib.h> // malloc

#include "dl/blas.h" // dl_flops
#include "dl/data.h" // dl_npy_read
#include "dl/bf16.h" // dl_f2bf, dl_bf2f
#include "dl/half.h" // dl_f2h, dl_h2f
#include "dl/lowp.h" // dl_lowp_get, dl_lowp_put
#include "dl/mlp.h"
#include "dl/ops.h" // dl_cast, dl_unscale
#include "dl/rng.h"
#include "dl/trace.h" // dl_trace_start, dl_trace_events

static void data(size_t n, size_t d, int C, float **X, int32_t **y)
{
    dl_rng r;
    dl_rng_seed(&r, 3, 3);
    *X = malloc(n * d * sizeof **X);
    *y = malloc(n * sizeof **y);
    for (size_t i = 0; i < n * d; i++)
        (*X)[i] = (float)dl_rng_normal(&r);
    for (size_t i = 0; i < n; i++)
        (*y)[i] = (int32_t)dl_rng_below(&r, (uint64_t)C);
}

static double loss_at(dl_mlp *m, const float *X, const int32_t *y, size_t n)
{
    double loss = 0;
    ck_assert(dl_mlp_forward(m, X, n) == DL_OK);
    ck_assert(dl_mlp_loss(m, y, n, &loss) == DL_OK);
    return loss;
}

START_TEST(test_shapes_and_init)
{
    dl_mlp m, m2;
    const size_t sizes[] = {5, 7, 3};
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 3, 16, 42) == DL_OK);
    ck_assert_int_eq(m.n_layers, 2);
    ck_assert_uint_eq(m.n_params, 7 * 5 + 7 + 3 * 7 + 3);
    ck_assert_uint_eq(m.layer[1].offset, 7 * 5 + 7);
    ck_assert(m.layer[1].W == m.params + 42 && m.layer[1].gb == m.grads + 42 + 21);
    ck_assert(dl_mlp_create(&m2, dl_cpu(), sizes, 3, 16, 42) == DL_OK);
    ck_assert_msg(memcmp(m.params, m2.params, m.n_params * sizeof(float)) == 0, "same seed, different init");
    double bound = sqrt(6.0 / 5.0);
    for (size_t k = 0; k < 35; k++)
        ck_assert_msg(fabs(m.params[k]) <= bound, "W0[%zu] = %g outside the Kaiming bound %g", k, m.params[k], bound);
    for (size_t k = 35; k < 42; k++)
        ck_assert(m.params[k] == 0.0f);
    dl_mlp_free(&m2);
    ck_assert(dl_mlp_create(&m2, dl_cpu(), sizes, 3, 16, 43) == DL_OK);
    ck_assert_msg(memcmp(m.params, m2.params, 35 * sizeof(float)) != 0, "another seed, the same init");
    dl_mlp_free(&m), dl_mlp_free(&m2);
    const size_t bad[] = {5, 0, 3}, one_class[] = {5, 1};
    ck_assert(dl_mlp_create(&m, dl_cpu(), bad, 3, 16, 1) == DL_ERR_ARG);
    ck_assert(dl_mlp_create(&m, dl_cpu(), one_class, 2, 16, 1) == DL_ERR_ARG);
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 1, 16, 1) == DL_ERR_ARG);
}
END_TEST

static int order[DL_MLP_MAX_LAYERS], n_ready;
static void ready(void *ctx, int layer, void *grad, size_t count)
{
    dl_mlp *m = ctx;
    ck_assert(grad == (void *)(m->grads + m->layer[layer].offset) && count == m->layer[layer].count);
    order[n_ready++] = layer;
}

START_TEST(test_gradient_finite_differences)
{
    size_t n = 9, d = 4;
    float *X;
    int32_t *y;
    data(n, d, 3, &X, &y);
    dl_mlp m;
    const size_t sizes[] = {4, 6, 5, 3};
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 4, 16, 7) == DL_OK);
    for (size_t k = 0; k < m.n_params; k++) // nonzero biases too
        m.params[k] += 0.05f * (float)((int)(k % 7) - 3);
    loss_at(&m, X, y, n);
    n_ready = 0;
    ck_assert(dl_mlp_backward(&m, X, n, 0, ready, &m) == DL_OK);
    ck_assert_int_eq(n_ready, 3);
    ck_assert_msg(order[0] == 2 && order[1] == 1 && order[2] == 0, "ready order %d %d %d, expected 2 1 0", order[0],
                  order[1], order[2]);
    float *g = malloc(m.n_params * sizeof *g);
    memcpy(g, m.grads, m.n_params * sizeof *g);
    int bad = 0;
    double worst = 0;
    for (size_t k = 0; k < m.n_params; k++) {
        float keep = m.params[k], h = 1e-2f;
        m.params[k] = keep + h;
        double lp = loss_at(&m, X, y, n);
        m.params[k] = keep - h;
        double lm = loss_at(&m, X, y, n);
        m.params[k] = keep;
        double fd = (lp - lm) / ((double)(keep + h) - (double)(keep - h));
        double err = fabs(fd - g[k]);
        worst = err > worst ? err : worst;
        bad += !(err <= 2e-3 + 2e-2 * fabs(fd)); // ReLU kinks and float loss: a few 1e-4 at most; NaN fails
    }
    ck_assert_msg(bad == 0, "%d of %zu gradient entries disagree with finite differences (worst %g)", bad, m.n_params,
                  worst);
    // accumulate adds, overwrite replaces
    loss_at(&m, X, y, n);
    ck_assert(dl_mlp_backward(&m, X, n, 1, NULL, NULL) == DL_OK);
    for (size_t k = 0; k < m.n_params; k++)
        ck_assert_msg(fabs(m.grads[k] - 2 * g[k]) <= 1e-6 + 1e-5 * fabs(g[k]),
                      "accumulated grad [%zu]: %g, expected 2 x %g", k, m.grads[k], g[k]);
    free(g), free(X), free(y);
    dl_mlp_free(&m);
}
END_TEST

START_TEST(test_sgd_and_training)
{
    size_t n = 64, d = 6;
    float *X;
    int32_t *y;
    data(n, d, 2, &X, &y);
    for (size_t i = 0; i < n; i++) // a separable rule
        y[i] = X[i * d] + X[i * d + 1] > 0;
    dl_mlp m;
    const size_t sizes[] = {6, 16, 2};
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 3, 64, 1) == DL_OK);
    // one step by hand: v = g + wd p (weights), p -= lr v
    loss_at(&m, X, y, n);
    ck_assert(dl_mlp_backward(&m, X, n, 0, NULL, NULL) == DL_OK);
    float *p0 = malloc(m.n_params * sizeof *p0);
    memcpy(p0, m.params, m.n_params * sizeof *p0);
    ck_assert(dl_mlp_sgd(&m, 0.1f, 0.9f, 0.01f) == DL_OK);
    for (size_t k = 0; k < m.n_params; k++) {
        int is_bias = (k >= 96 && k < 112) || k >= 112 + 32;
        float want = p0[k] - 0.1f * (m.grads[k] + (is_bias ? 0.0f : 0.01f * p0[k]));
        ck_assert_msg(fabs(m.params[k] - want) < 1e-6, "sgd param %zu: %g, expected %g", k, m.params[k], want);
    }
    double first = loss_at(&m, X, y, n), last = first;
    for (int it = 0; it < 200; it++) {
        last = loss_at(&m, X, y, n);
        ck_assert(dl_mlp_backward(&m, X, n, 0, NULL, NULL) == DL_OK);
        ck_assert(dl_mlp_sgd(&m, 0.1f, 0.9f, 0.0f) == DL_OK);
    }
    ck_assert_msg(last < 0.2 * first, "200 steps took the loss from %g only to %g", first, last);
    int32_t *pred = malloc(n * sizeof *pred);
    ck_assert(dl_mlp_predict(&m, X, n, pred) == DL_OK);
    size_t right = 0;
    for (size_t i = 0; i < n; i++)
        right += pred[i] == y[i];
    ck_assert_msg(right >= 60, "%zu of %zu right on a separable rule after training", right, n);
    // flops: exactly what one step's GEMMs count
    dl_flops_reset();
    loss_at(&m, X, y, n);
    ck_assert(dl_mlp_backward(&m, X, n, 0, NULL, NULL) == DL_OK);
    ck_assert_msg((double)dl_flops() == dl_mlp_step_flops(&m, n), "counted %llu flops, step_flops says %g",
                  (unsigned long long)dl_flops(), dl_mlp_step_flops(&m, n));
    // errors
    ck_assert(dl_mlp_forward(&m, X, 65) == DL_ERR_ARG);
    y[3] = 5;
    double loss;
    ck_assert(dl_mlp_forward(&m, X, n) == DL_OK);
    ck_assert(dl_mlp_loss(&m, y, n, &loss) == DL_ERR_RANGE);
    ck_assert(strstr(dl_last_error(), "row 3") != NULL);
    free(p0), free(pred), free(X), free(y);
    dl_mlp_free(&m);
}
END_TEST

/* One step of m on the batch: forward, loss, backward, SGD with momentum. */
static void train_step(dl_mlp *m, const float *X, const int32_t *y, size_t n)
{
    loss_at(m, X, y, n);
    ck_assert_st(dl_mlp_backward(m, X, n, 0, NULL, NULL), DL_OK);
    ck_assert_st(dl_mlp_sgd(m, 0.05f, 0.9f, 0.01f), DL_OK);
}

START_TEST(test_checkpoint_state_round_trip)
{
    size_t n = 12;
    float *X;
    int32_t *y;
    data(n, 4, 3, &X, &y);
    const size_t sizes[] = {4, 6, 3};
    dl_mlp a, b;
    ck_assert_st(dl_mlp_create(&a, dl_cpu(), sizes, 3, 16, 1), DL_OK);
    ck_assert_st(dl_mlp_create(&b, dl_cpu(), sizes, 3, 16, 2), DL_OK);
    float *p = malloc(a.n_params * sizeof *p), *v = malloc(a.n_params * sizeof *v);
    ck_assert_int_eq(dl_mlp_steps(&a), 0);
    ck_assert_st(dl_mlp_get_velocity(&a, v), DL_OK);
    for (size_t k = 0; k < a.n_params; k++)
        ck_assert_msg(v[k] == 0.0f, "velocity[%zu] = %g after create", k, v[k]);
    for (int t = 0; t < 3; t++)
        train_step(&a, X, y, n);
    ck_assert_int_eq(dl_mlp_steps(&a), 3);
    // a's state into b (another init): the next step of both must be the same, bit for bit
    ck_assert_st(dl_mlp_get_params(&a, p), DL_OK);
    ck_assert_st(dl_mlp_get_velocity(&a, v), DL_OK);
    ck_assert_msg(memcmp(v, a.velocity, a.n_params * sizeof *v) == 0, "get_velocity is not the velocity");
    ck_assert_st(dl_mlp_set_params(&b, p), DL_OK);
    ck_assert_st(dl_mlp_set_velocity(&b, v), DL_OK);
    ck_assert_st(dl_mlp_set_steps(&b, dl_mlp_steps(&a)), DL_OK);
    train_step(&a, X, y, n);
    train_step(&b, X, y, n);
    ck_assert_msg(memcmp(a.params, b.params, a.n_params * sizeof(float)) == 0, "restored model stepped elsewhere");
    ck_assert_msg(memcmp(a.velocity, b.velocity, a.n_params * sizeof(float)) == 0, "restored velocity differs");
    ck_assert_int_eq(dl_mlp_steps(&b), 4);
    // without the velocity the step differs: momentum is part of the state
    ck_assert_st(dl_mlp_set_params(&b, p), DL_OK);
    memset(v, 0, a.n_params * sizeof *v);
    ck_assert_st(dl_mlp_set_velocity(&b, v), DL_OK);
    train_step(&b, X, y, n);
    ck_assert_msg(memcmp(a.params, b.params, a.n_params * sizeof(float)) != 0, "velocity made no difference");
    ck_assert_st(dl_mlp_set_steps(&b, -1), DL_ERR_ARG);
    ck_assert_int_eq(dl_mlp_steps(&b), 5);
    free(p), free(v), free(X), free(y);
    dl_mlp_free(&a), dl_mlp_free(&b);
}
END_TEST

START_TEST(test_step_cost_and_hidden)
{
    const size_t sizes[] = {784, 256, 10};
    dl_mlp_cost c;
    dl_mlp_step_cost(sizes, 3, 4096, &c);
    // by hand: 4·784·256 + 2·256 + 6·256·10 + 2·10 FLOPs a row
    ck_assert(c.flops == 4096.0 * (4.0 * 784 * 256 + 2 * 256 + 6.0 * 256 * 10 + 2 * 10));
    ck_assert(c.params == 784 * 256 + 256 + 256 * 10 + 10);
    // bias + ReLU 2·4·B·(256 + 10), mask 3·4·B·256, loss 2·4·B·10, SGD 16·params
    ck_assert(c.mem_bytes == 8.0 * 4096 * 266 + 12.0 * 4096 * 256 + 8.0 * 4096 * 10 + 16.0 * c.params);
    ck_assert(c.launches == 4 + 1 + 4 + 2 + 4);
    dl_mlp m;
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 3, 8, 1) == DL_OK);
    dl_mlp_step_cost(sizes, 3, 7, &c);
    ck_assert(dl_mlp_step_flops(&m, 7) == c.flops);
    dl_mlp_free(&m);
    size_t s[DL_MLP_MAX_LAYERS + 1];
    int n = -1;
    ck_assert_st(dl_mlp_parse_hidden("--hidden", "256", s, &n), DL_OK);
    ck_assert(n == 3 && s[1] == 256);
    ck_assert_st(dl_mlp_parse_hidden("--hidden", "512,64,8", s, &n), DL_OK);
    ck_assert(n == 5 && s[1] == 512 && s[2] == 64 && s[3] == 8);
    ck_assert_st(dl_mlp_parse_hidden("--hidden", "1,2,3,4,5,6,7", s, &n), DL_OK); // the most there is room for
    ck_assert_int_eq(n, DL_MLP_MAX_LAYERS + 1);
    const char *bad[] = {"0", "", "12x", "65537", "3,,4", "-5", "1,2,3,4,5,6,7,8"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_st(dl_mlp_parse_hidden("--hidden", bad[k], s, &n), DL_ERR_ARG);
        ck_assert_int_eq(n, 0);
    }
    ck_assert_has(dl_last_error(), "--hidden '1,2,3,4,5,6,7,8': expected 1 to 7 widths from 1 to 65536");
}
END_TEST

START_TEST(test_write_params)
{
    dl_mlp m;
    const size_t sizes[] = {3, 4, 2};
    ck_assert(dl_mlp_create(&m, dl_cpu(), sizes, 3, 4, 5) == DL_OK);
    ck_assert_st(dl_mlp_write_params(&m, tpath("p.npy")), DL_OK);
    dl_npy a;
    ck_assert_st(dl_npy_read(tpath("p.npy"), &a), DL_OK);
    ck_assert(a.is_float && a.ndim == 1 && a.shape[0] == m.n_params);
    ck_assert(memcmp(a.data, m.params, m.n_params * sizeof(float)) == 0);
    dl_npy_free(&a);
    ck_assert_st(dl_mlp_write_params(&m, tpath("no/such/dir/p.npy")), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "no/such/dir/p.npy");
    dl_mlp_free(&m);
}
END_TEST

// ---- the 16-bit paths (the loop tests run _i = 0: fp16, 1: bf16) ----

static const dl_dtype lowp_types[2] = {DL_F16, DL_BF16};

/* x stored as t, as a double: the reference's one rounding per stored value.
 * The sums reach it as floats, as the model's fp32 accumulators do. */
static double r16(dl_dtype t, double x)
{
    uint16_t v;
    dl_lowp_put(&v, 0, t, (float)x);
    return (double)dl_lowp_get(&v, 0, t);
}

/* The bits of element k of an array of a 16-bit type. */
static uint16_t bits16(const void *p, size_t k)
{
    uint16_t u;
    memcpy(&u, (const char *)p + 2 * k, sizeof u);
    return u;
}

/* Distance in ulps of t between element k of p and ref rounded to t
 * (adjacent values are 1 apart; ±0 are equal). Both formats order their
 * bits as sign-magnitude integers. */
static int ulps16(dl_dtype t, const void *p, size_t k, double ref)
{
    uint16_t u = bits16(p, k), v;
    dl_lowp_put(&v, 0, t, (float)ref);
    int x = u & 0x8000 ? -(int)(u & 0x7fff) : (int)u;
    int y = v & 0x8000 ? -(int)(v & 0x7fff) : (int)v;
    return abs(x - y);
}

#define RMAX 8 /* the reference's widths and rows */

/* The reference of a {5, 4, 3} net on n <= RMAX rows, all in double; every
 * stored value (X16, weights, activations, dY, gradients) rounded by r16. */
typedef struct ref_net {
    dl_dtype t;
    int L;
    size_t in[2], out[2];
    double W[2][RMAX][RMAX], b[2][RMAX]; /* the 16-bit weights */
    double A[3][RMAX][RMAX]; /* A[0] = X16, A[l + 1] = layer l's output */
    int sure[3][RMAX][RMAX]; /* 1: any fp32 summation order rounds to A */
    double gW[2][RMAX][RMAX], gb[2][RMAX];
    double loss;
} ref_net;

static void ref_forward(ref_net *r, const dl_mlp *m, const float *X, size_t n)
{
    dl_dtype t = r->t = m->compute;
    r->L = m->n_layers;
    for (int l = 0; l < r->L; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        r->in[l] = L->in, r->out[l] = L->out;
        for (size_t j = 0; j < L->out; j++) {
            for (size_t k = 0; k < L->in; k++)
                r->W[l][j][k] = r16(t, L->W[j * L->in + k]);
            r->b[l][j] = r16(t, L->b[j]);
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r->in[0]; k++)
            r->A[0][i][k] = r16(t, X[i * r->in[0] + k]);
    for (int l = 0; l < r->L; l++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < r->out[l]; j++) {
                double z = 0, za = fabs(r->b[l][j]);
                for (size_t k = 0; k < r->in[l]; k++) {
                    z += r->A[l][i][k] * r->W[l][j][k];
                    za += fabs(r->A[l][i][k] * r->W[l][j][k]);
                }
                z = (double)(float)z + r->b[l][j];
                int relu = l + 1 < r->L;
                r->A[l + 1][i][j] = r16(t, relu && z < 0 ? 0.0 : z);
                // fp32 sums are within 2^-18·Σ|terms| of z: far enough from a midpoint, the rounding is certain
                double lo = z - ldexp(za, -18), hi = z + ldexp(za, -18);
                r->sure[l + 1][i][j] = r16(t, relu && lo < 0 ? 0.0 : lo) == r16(t, relu && hi < 0 ? 0.0 : hi);
            }
}

/* Loss and backward at loss scale S; gradients overwrite (acc = 0) or add. */
static void ref_backward(ref_net *r, const int32_t *y, size_t n, double S, int acc)
{
    int L = r->L;
    dl_dtype t = r->t;
    size_t C = r->out[L - 1];
    double dY[RMAX][RMAX], dX[RMAX][RMAX];
    r->loss = 0;
    for (size_t i = 0; i < n; i++) {
        const double *z = r->A[L][i];
        double mx = z[0], s = 0;
        for (size_t c = 1; c < C; c++)
            mx = z[c] > mx ? z[c] : mx;
        for (size_t c = 0; c < C; c++)
            s += exp(z[c] - mx);
        // cppcheck-suppress invalidFunctionArg ; s >= 1: the max term is exp(0)
        double lse = mx + log(s);
        r->loss += (lse - z[y[i]]) / (double)n;
        for (size_t c = 0; c < C; c++)
            dY[i][c] = r16(t, (exp(z[c] - lse) - (c == (size_t)y[i])) / (double)n * S);
    }
    for (int l = L - 1; l >= 0; l--) {
        for (size_t j = 0; j < r->out[l]; j++) {
            double sb = 0;
            for (size_t i = 0; i < n; i++)
                sb += dY[i][j];
            r->gb[l][j] = r16(t, (acc ? r->gb[l][j] : 0) + sb);
            for (size_t k = 0; k < r->in[l]; k++) {
                double sw = 0;
                for (size_t i = 0; i < n; i++)
                    sw += dY[i][j] * r->A[l][i][k];
                r->gW[l][j][k] = r16(t, (acc ? r->gW[l][j][k] : 0) + sw);
            }
        }
        if (l == 0)
            break;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < r->in[l]; k++) {
                double s = 0;
                for (size_t j = 0; j < r->out[l]; j++)
                    s += dY[i][j] * r->W[l][j][k];
                dX[i][k] = r->A[l][i][k] > 0 ? r16(t, s) : 0.0;
            }
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < r->in[l]; k++)
                dY[i][k] = dX[i][k];
    }
}

/* The worst ulp distance of grads16 from the reference's gradients. */
static int worst_grad_ulps(const dl_mlp *m, const ref_net *r, size_t *where)
{
    int worst = 0;
    for (int l = 0; l < m->n_layers; l++) {
        const dl_mlp_layer *L = &m->layer[l];
        for (size_t k = 0; k < L->count; k++) {
            size_t j = k / L->in, c = k % L->in;
            double ref = k < L->out * L->in ? r->gW[l][j][c] : r->gb[l][k - L->out * L->in];
            int u = ulps16(m->compute, L->gW16, k, ref);
            if (u > worst)
                worst = u, *where = L->offset + k;
        }
    }
    return worst;
}

static void f16_model(dl_mlp *m, const size_t *sizes, int n_sizes, dl_dtype t)
{
    ck_assert_st(dl_mlp_create(m, dl_cpu(), sizes, n_sizes, RMAX, 7), DL_OK);
    for (size_t k = 0; k < m->n_params; k++) // nonzero biases too
        m->params[k] += 0.05f * (float)((int)(k % 7) - 3);
    ck_assert_st(dl_mlp_set_precision(m, t), DL_OK);
    ck_assert_st(dl_cast(dl_cpu(), m->params16, t, m->params, DL_F32, m->n_params), DL_OK);
}

/* 16-bit forward against the reference: bit for bit wherever the reference
 * is sure (the sum is farther than 2^-18·Σ|terms| from a midpoint of the
 * 16-bit type, more than any fp32 summation order errs by), else within one
 * ulp: there the model's fp32 sum and the double may round to neighbours. */
START_TEST(test_lowp_forward_matches_reference)
{
    dl_dtype t = lowp_types[_i];
    size_t n = 3;
    float *X;
    int32_t *y;
    data(n, 5, 3, &X, &y);
    const size_t sizes[] = {5, 4, 3};
    dl_mlp m;
    f16_model(&m, sizes, 3, t);
    ck_assert_int_eq(m.compute, t);
    ck_assert(m.loss_scale == 1.0f);
    ref_net r;
    ref_forward(&r, &m, X, n);
    ck_assert_st(dl_mlp_forward(&m, X, n), DL_OK);
    int sure = 0, total = 0;
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < sizes[l + 1]; j++) {
                size_t k = i * sizes[l + 1] + j;
                int u = ulps16(t, m.act16[l], k, r.A[l + 1][i][j]);
                ck_assert_msg(u <= !r.sure[l + 1][i][j], "%s layer %d row %zu out %zu: %.9g, reference %.9g (%d ulps)",
                              dl_dtype_name(t), l, i, j, (double)dl_lowp_get(m.act16[l], k, t), r.A[l + 1][i][j], u);
                sure += r.sure[l + 1][i][j], total++;
            }
    ck_assert_msg(sure >= total - 2, "only %d of %d outputs decided: a weak test", sure, total);
    // the loss: the fp32 definition on the 16-bit logits
    double loss = 0;
    ck_assert_st(dl_mlp_loss(&m, y, n, &loss), DL_OK);
    ref_backward(&r, y, n, 1.0, 0);
    ck_assert_msg(fabs(loss - r.loss) <= 1e-6 * fabs(r.loss), "loss %.9g, reference %.9g", loss, r.loss);
    // predict takes the 16-bit path: zero 16-bit weights give class 0 everywhere
    int32_t pred[3];
    memset(m.params16, 0, m.n_params * sizeof(uint16_t));
    ck_assert_st(dl_mlp_predict(&m, X, n, pred), DL_OK);
    ck_assert(pred[0] == 0 && pred[1] == 0 && pred[2] == 0);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F32), DL_OK); // fp32 weights: not all class 0 on this data
    ck_assert_st(dl_mlp_predict(&m, X, n, pred), DL_OK);
    ck_assert_msg(pred[0] + pred[1] + pred[2] > 0, "fp32 predictions are all 0 too");
    free(X), free(y);
    dl_mlp_free(&m);
}
END_TEST

static int order16[DL_MLP_MAX_LAYERS], n_ready16;
static void ready16(void *ctx, int layer, void *grad, size_t count)
{
    dl_mlp *m = ctx;
    ck_assert(grad == (void *)(m->grads16 + m->layer[layer].offset) && count == m->layer[layer].count);
    order16[n_ready16++] = layer;
}

/* 16-bit backward against the reference at loss scales 1 and 1024: within
 * one ulp (see the forward test; dY is the one rounding of the fp32 softmax
 * gradient times the scale, and each gradient one rounding of an fp32 sum). */
START_TEST(test_lowp_backward_matches_reference)
{
    dl_dtype t = lowp_types[_i];
    size_t n = 3;
    float *X;
    int32_t *y;
    data(n, 5, 3, &X, &y);
    const size_t sizes[] = {5, 4, 3};
    const float scales[] = {1.0f, 1024.0f};
    for (int s = 0; s < 2; s++) {
        dl_mlp m;
        f16_model(&m, sizes, 3, t);
        ck_assert_st(dl_mlp_set_loss_scale(&m, scales[s]), DL_OK);
        for (size_t k = 0; k < m.n_params; k++)
            m.grads[k] = 7.0f;
        ref_net r;
        ref_forward(&r, &m, X, n);
        ref_backward(&r, y, n, scales[s], 0);
        double loss;
        dl_flops_reset();
        ck_assert_st(dl_mlp_forward(&m, X, n), DL_OK);
        ck_assert_st(dl_mlp_loss(&m, y, n, &loss), DL_OK);
        n_ready16 = 0;
        ck_assert_st(dl_mlp_backward(&m, X, n, 0, ready16, &m), DL_OK);
        ck_assert_msg((double)dl_flops() == dl_mlp_step_flops(&m, n), "16-bit step counted %llu flops, expected %g",
                      (unsigned long long)dl_flops(), dl_mlp_step_flops(&m, n));
        ck_assert_msg(n_ready16 == 2 && order16[0] == 1 && order16[1] == 0, "16-bit ready order wrong (%d calls)",
                      n_ready16);
        size_t where = 0;
        int u = worst_grad_ulps(&m, &r, &where);
        ck_assert_msg(u <= 1, "%s scale %g: grads16[%zu] = %g is %d ulps from the reference", dl_dtype_name(t),
                      (double)scales[s], where, (double)dl_lowp_get(m.grads16, where, t), u);
        for (size_t k = 0; k < m.n_params; k++)
            ck_assert_msg(m.grads[k] == 7.0f, "16-bit backward wrote grads[%zu]", k);
        // accumulate = 1: round16(g + g) is exactly 2g here (the fp32 sum is within half an ulp of 2g)
        uint16_t *g = malloc(m.n_params * sizeof *g);
        memcpy(g, m.grads16, m.n_params * sizeof *g);
        ck_assert_st(dl_mlp_backward(&m, X, n, 1, NULL, NULL), DL_OK);
        ref_backward(&r, y, n, scales[s], 1);
        ck_assert_int_le(worst_grad_ulps(&m, &r, &where), 1);
        for (size_t k = 0; k < m.n_params; k++)
            ck_assert_msg(dl_lowp_get(m.grads16, k, t) == 2.0f * dl_lowp_get(g, k, t),
                          "accumulated grads16[%zu]: %g, expected 2 x %g", k, (double)dl_lowp_get(m.grads16, k, t),
                          (double)dl_lowp_get(g, k, t));
        free(g);
        dl_mlp_free(&m);
    }
    free(X), free(y);
}
END_TEST

/* v rounded to bf16, then to fp16: a value of both formats (for |v| above
 * fp16's normals, where every bf16 is an fp16). */
static float both16(float v)
{
    return dl_h2f(dl_f2h(dl_bf2f(dl_f2bf(v))));
}

/* The model of the underflow tests: {5, 4, 3}, X and the weights values of
 * both fp16 and bf16 (so the fp32, fp16 and bf16 models start from the same
 * numbers; checked), positive hidden units, logits
 * equal to the biases (9, -9, -9) and every label 0. *g32 gets the fp32
 * model's gradient, idx the 10 gradients of the unlikely classes (rows 1 and
 * 2 of layer 1: gW and gb); the model is left in fp32. */
static void underflow_model(dl_mlp *m, float **X, int32_t **y, float **g32, size_t idx[10])
{
    size_t n = 3;
    data(n, 5, 3, X, y);
    for (size_t k = 0; k < n * 5; k++)
        (*X)[k] = both16((*X)[k]);
    const size_t sizes[] = {5, 4, 3};
    ck_assert_st(dl_mlp_create(m, dl_cpu(), sizes, 3, RMAX, 7), DL_OK);
    dl_mlp_layer *L0 = &m->layer[0], *L1 = &m->layer[1];
    for (size_t k = 0; k < 20; k++)
        L0->W[k] = both16(0.25f * L0->W[k]);
    for (size_t k = 0; k < 20; k++)
        ck_assert(both16(L0->W[k]) == L0->W[k] && dl_bf2f(dl_f2bf(L0->W[k])) == L0->W[k]);
    for (size_t k = 0; k < n * 5; k++)
        ck_assert(dl_bf2f(dl_f2bf((*X)[k])) == (*X)[k]);
    for (size_t j = 0; j < 4; j++)
        L0->b[j] = 2.0f; // positive hidden units
    for (size_t k = 0; k < 12; k++)
        L1->W[k] = 0.0f; // the logits are the biases, exact in every precision
    L1->b[0] = 9.0f, L1->b[1] = -9.0f, L1->b[2] = -9.0f;
    for (size_t i = 0; i < n; i++)
        (*y)[i] = 0;
    double loss;
    ck_assert_st(dl_mlp_forward(m, *X, n), DL_OK);
    ck_assert_st(dl_mlp_loss(m, *y, n, &loss), DL_OK);
    ck_assert_st(dl_mlp_backward(m, *X, n, 0, NULL, NULL), DL_OK);
    *g32 = malloc(m->n_params * sizeof **g32);
    memcpy(*g32, m->grads, m->n_params * sizeof **g32);
    size_t ni = 0;
    for (size_t c = 1; c < 3; c++) {
        for (size_t k = 0; k < 4; k++)
            idx[ni++] = L1->offset + c * 4 + k;
        idx[ni++] = L1->offset + 12 + c;
    }
    for (size_t q = 0; q < ni; q++)
        ck_assert_msg((*g32)[idx[q]] > 0.0f, "fp32 grad[%zu] = %g, expected > 0", idx[q], (double)(*g32)[idx[q]]);
}

/* One 16-bit step (forward, loss, backward) in precision t at the current
 * loss scale, from params16 cast afresh from params. */
static void step16(dl_mlp *m, dl_dtype t, const float *X, const int32_t *y)
{
    double loss;
    ck_assert_st(dl_mlp_set_precision(m, t), DL_OK);
    ck_assert_st(dl_cast(dl_cpu(), m->params16, t, m->params, DL_F32, m->n_params), DL_OK);
    ck_assert_st(dl_mlp_forward(m, X, 3), DL_OK);
    ck_assert_st(dl_mlp_loss(m, y, 3, &loss), DL_OK);
    ck_assert_st(dl_mlp_backward(m, X, 3, 0, NULL, NULL), DL_OK);
}

/* Without a scale the logits' gradient of the unlikely classes (e^-18 / 3,
 * about 5e-9, under half of binary16's smallest subnormal 2^-24) rounds to 0
 * in fp16, and so does the last layer's gradient of those classes, which
 * fp32 keeps (1e-8 to 1e-7); at 65536 it is normal in fp16 and, unscaled,
 * within 2^-9 relative of the fp32 gradient: three roundings (the hidden
 * activation, dY, the sum) of at most 2^-11 each. */
START_TEST(test_f16_underflow_without_loss_scale)
{
    dl_mlp m;
    float *X, *g32;
    int32_t *y;
    size_t idx[10], ni = 10;
    underflow_model(&m, &X, &y, &g32, idx);
    float *g = malloc(m.n_params * sizeof *g);
    // scale 1: underflow to exactly zero
    step16(&m, DL_F16, X, y);
    for (size_t q = 0; q < ni; q++)
        ck_assert_msg(bits16(m.grads16, idx[q]) == 0, "scale 1: grads16[%zu] = %g, expected +0", idx[q],
                      (double)dl_lowp_get(m.grads16, idx[q], DL_F16));
    // scale 65536, then unscaled
    ck_assert_st(dl_mlp_set_loss_scale(&m, 65536.0f), DL_OK);
    ck_assert_st(dl_mlp_backward(&m, X, 3, 0, NULL, NULL), DL_OK);
    int inf = -1;
    ck_assert_st(dl_unscale(dl_cpu(), m.grads16, DL_F16, g, m.n_params, 1.0f / 65536.0f, &inf), DL_OK);
    ck_assert_int_eq(inf, 0);
    for (size_t q = 0; q < ni; q++) {
        size_t k = idx[q];
        double v = dl_lowp_get(m.grads16, k, DL_F16);
        ck_assert_msg(fabs(v) >= DL_HALF_MIN_NORMAL, "scaled grads16[%zu] = %g is not normal", k, v);
        ck_assert_msg(fabs((double)g[k] - g32[k]) <= ldexp(fabs(g32[k]), -9), "unscaled grad[%zu] %.9g, fp32 %.9g", k,
                      (double)g[k], (double)g32[k]);
    }
    free(g32), free(g), free(X), free(y);
    dl_mlp_free(&m);
}
END_TEST

/* The same model in bf16 at scale 1: the gradients that are +0 in fp16 are
 * normal bf16 numbers (fp32's exponent range), within 2^-6 relative of the
 * fp32 gradient (three roundings of at most 2^-8 each: the hidden activation,
 * dY, the sum), and unscaling them at 1 raises no flag. Switching the model
 * from fp16 to bf16 zeroes params16 and grads16 first. */
START_TEST(test_bf16_does_not_underflow)
{
    dl_mlp m;
    float *X, *g32;
    int32_t *y;
    size_t idx[10], ni = 10;
    underflow_model(&m, &X, &y, &g32, idx);
    step16(&m, DL_F16, X, y);
    for (size_t q = 0; q < ni; q++)
        ck_assert_msg(bits16(m.grads16, idx[q]) == 0, "fp16: grads16[%zu] is not +0", idx[q]);
    ck_assert_st(dl_mlp_set_precision(&m, DL_BF16), DL_OK);
    for (size_t k = 0; k < m.n_params; k++)
        ck_assert_msg(bits16(m.params16, k) == 0 && bits16(m.grads16, k) == 0, "fp16 bits left at %zu", k);
    step16(&m, DL_BF16, X, y);
    ck_assert(m.loss_scale == 1.0f);
    float *g = malloc(m.n_params * sizeof *g);
    int inf = -1;
    ck_assert_st(dl_unscale(dl_cpu(), m.grads16, DL_BF16, g, m.n_params, 1.0f, &inf), DL_OK);
    ck_assert_int_eq(inf, 0);
    for (size_t q = 0; q < ni; q++) {
        size_t k = idx[q];
        ck_assert_msg(g[k] >= DL_BF16_MIN_NORMAL, "bf16 grads16[%zu] = %g: underflowed", k, (double)g[k]);
        ck_assert_msg(fabs((double)g[k] - g32[k]) <= ldexp(fabs(g32[k]), -6), "bf16 grad[%zu] %.9g, fp32 %.9g", k,
                      (double)g[k], (double)g32[k]);
    }
    free(g32), free(g), free(X), free(y);
    dl_mlp_free(&m);
}
END_TEST

START_TEST(test_f16_arguments)
{
    const size_t sizes[] = {5, 4, 3};
    dl_mlp m, fresh;
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 3, 4, 7), DL_OK);
    ck_assert(m.compute == DL_F32 && m.loss_scale == 1.0f && m.params16 == NULL);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F64), DL_ERR_ARG);
    ck_assert_st(dl_mlp_set_precision(&m, (dl_dtype)99), DL_ERR_ARG);
    ck_assert(m.compute == DL_F32 && m.params16 == NULL);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F16), DL_OK);
    uint16_t *p16 = m.params16, *g16 = m.grads16;
    ck_assert(p16 != NULL && g16 != NULL && m.layer[1].W16 == p16 + m.layer[1].offset);
    ck_assert(m.layer[1].gb16 == g16 + m.layer[1].offset + 12);
    for (size_t k = 0; k < m.n_params; k++)
        ck_assert(p16[k] == 0 && g16[k] == 0);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F32), DL_OK);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F16), DL_OK);
    ck_assert(m.params16 == p16 && m.grads16 == g16); // allocated once
    // bf16 reuses them; a change of 16-bit format zeroes them, a return to f32 does not
    p16[3] = 0x3c00, g16[4] = 0x3c00;
    ck_assert_st(dl_mlp_set_precision(&m, DL_BF16), DL_OK);
    ck_assert(m.compute == DL_BF16 && m.params16 == p16 && m.grads16 == g16 && p16[3] == 0 && g16[4] == 0);
    p16[3] = 0x3f80;
    ck_assert_st(dl_mlp_set_precision(&m, DL_F32), DL_OK);
    ck_assert_st(dl_mlp_set_precision(&m, DL_BF16), DL_OK);
    ck_assert(p16[3] == 0x3f80);
    ck_assert_st(dl_mlp_set_precision(&m, DL_F16), DL_OK);
    ck_assert(p16[3] == 0);
    const float bad[] = {0.0f, -1.0f, -0.0f, INFINITY, NAN};
    for (size_t k = 0; k < 5; k++)
        ck_assert_st(dl_mlp_set_loss_scale(&m, bad[k]), DL_ERR_ARG);
    ck_assert(m.loss_scale == 1.0f);
    ck_assert_st(dl_mlp_set_loss_scale(&m, 0.5f), DL_OK);
    ck_assert(m.loss_scale == 0.5f);
    // back in fp32, the fp32 path is that of a model that never saw fp16 or bf16
    ck_assert_st(dl_mlp_set_precision(&m, DL_F32), DL_OK);
    ck_assert_st(dl_mlp_create(&fresh, dl_cpu(), sizes, 3, 4, 7), DL_OK);
    float X[10] = {0.5f, -1, 2, 0.25f, 1, -0.5f, 1, 3, -2, 0.125f};
    ck_assert_st(dl_mlp_forward(&m, X, 2), DL_OK);
    ck_assert_st(dl_mlp_forward(&fresh, X, 2), DL_OK);
    ck_assert(memcmp(m.act[1], fresh.act[1], 6 * sizeof(float)) == 0);
    dl_mlp_free(&m), dl_mlp_free(&fresh);
}
END_TEST

/* Slices of the flat vector updated by dl_mlp_sgd_slice from their own
 * buffers, as a shard's owner does, make dl_mlp_sgd's step bit for bit:
 * cuts inside a layer's weights, at a weight/bias border and in the biases. */
START_TEST(test_sgd_slices_make_one_step)
{
    size_t n = 32, d = 6;
    float *X;
    int32_t *y;
    data(n, d, 3, &X, &y);
    dl_mlp whole, sliced;
    const size_t sizes[] = {6, 16, 3}; // layer 0: 96 weights at 0, 16 biases at 96; layer 1: 48 + 3 at 112
    ck_assert_st(dl_mlp_create(&whole, dl_cpu(), sizes, 3, n, 5), DL_OK);
    ck_assert_st(dl_mlp_create(&sliced, dl_cpu(), sizes, 3, n, 5), DL_OK);
    size_t np = whole.n_params;
    ck_assert_uint_eq(np, 163);
    const size_t cuts[] = {0, 41, 96, 100, 112, 150, 160, 163}; // every kind of border
    float *v = calloc(np, sizeof *v);
    for (int step = 0; step < 3; step++) {
        loss_at(&whole, X, y, n);
        ck_assert_st(dl_mlp_backward(&whole, X, n, 0, NULL, NULL), DL_OK);
        ck_assert_st(dl_mlp_sgd(&whole, 0.1f, 0.9f, 0.01f), DL_OK);
        loss_at(&sliced, X, y, n);
        ck_assert_st(dl_mlp_backward(&sliced, X, n, 0, NULL, NULL), DL_OK);
        for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
            size_t a = cuts[c], k = cuts[c + 1] - a;
            float *p = malloc(k * sizeof *p), *g = malloc(k * sizeof *g); // the shard's own copies
            memcpy(p, sliced.params + a, k * sizeof *p);
            memcpy(g, sliced.grads + a, k * sizeof *g);
            ck_assert_st(dl_mlp_sgd_slice(&sliced, a, k, p, g, v + a, 0.1f, 0.9f, 0.01f), DL_OK);
            memcpy(sliced.params + a, p, k * sizeof *p);
            free(p), free(g);
        }
        ck_assert_msg(memcmp(whole.params, sliced.params, np * sizeof(float)) == 0, "step %d: slices differ", step);
    }
    ck_assert_int_eq(sliced.steps, 0); // a slice does not count a step
    float one = 1;
    ck_assert_st(dl_mlp_sgd_slice(&sliced, 160, 4, &one, &one, &one, 0.1f, 0.9f, 0), DL_ERR_ARG);
    ck_assert_st(dl_mlp_sgd_slice(&sliced, 0, 1, NULL, &one, &one, 0.1f, 0.9f, 0), DL_ERR_ARG);
    ck_assert_st(dl_mlp_sgd_slice(&sliced, 163, 0, NULL, NULL, NULL, 0.1f, 0.9f, 0), DL_OK);
    ck_assert(one == 1);
    free(v), free(X), free(y);
    dl_mlp_free(&whole), dl_mlp_free(&sliced);
}
END_TEST

/* The per-layer hooks, as FSDP uses them: each layer's weights and
 * gradients live in buffers of the hook's own only between its pre and post
 * calls (copied in from params, and the gradient copied out at ready); the
 * passes give the plain model's logits and gradients bit for bit, the calls
 * come in order, and a failing hook stops the pass with its status. */
typedef struct hooked {
    dl_mlp *m;
    float *src; /* the values the layer's weights are copied from */
    float *W[4], *gW[4]; /* the layer's own buffers while in use, else NULL */
    float *gout; /* (n_params,) gradients as ready saw them */
    char calls[64];
    int n_calls, fail_at;
} hooked;

static dl_status hook_pre(void *ctx, int l, dl_mlp_phase ph)
{
    hooked *h = ctx;
    dl_mlp_layer *L = &h->m->layer[l];
    h->calls[h->n_calls++] = ph == DL_MLP_FORWARD ? 'f' : 'b';
    h->calls[h->n_calls++] = (char)('0' + l);
    if (h->n_calls / 2 == h->fail_at)
        return dl_error_set(DL_ERR_IO, "hook: told to fail");
    ck_assert_ptr_null(h->W[l]);
    h->W[l] = malloc(L->count * sizeof(float));
    memcpy(h->W[l], h->src + L->offset, L->count * sizeof(float));
    L->W = h->W[l], L->b = h->W[l] + L->out * L->in;
    if (ph == DL_MLP_BACKWARD) {
        h->gW[l] = malloc(L->count * sizeof(float));
        L->gW = h->gW[l], L->gb = h->gW[l] + L->out * L->in;
    }
    return DL_OK;
}

static dl_status hook_post(void *ctx, int l, dl_mlp_phase ph)
{
    hooked *h = ctx;
    dl_mlp_layer *L = &h->m->layer[l];
    h->calls[h->n_calls++] = ph == DL_MLP_FORWARD ? 'F' : 'B';
    h->calls[h->n_calls++] = (char)('0' + l);
    free(h->W[l]), free(h->gW[l]);
    h->W[l] = h->gW[l] = NULL;
    L->W = L->b = L->gW = L->gb = NULL; // gone: a pass that read them now would crash
    return DL_OK;
}

static void hook_ready(void *ctx, int l, void *grad, size_t count)
{
    hooked *h = ctx;
    ck_assert_ptr_eq(grad, h->gW[l]);
    memcpy(h->gout + h->m->layer[l].offset, grad, count * sizeof(float));
}

START_TEST(test_hooks_move_layers)
{
    size_t n = 16, d = 5;
    float *X;
    int32_t *y;
    data(n, d, 3, &X, &y);
    const size_t sizes[] = {5, 8, 6, 3};
    dl_mlp plain, m;
    ck_assert_st(dl_mlp_create(&plain, dl_cpu(), sizes, 4, n, 9), DL_OK);
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 4, n, 9), DL_OK);
    hooked h = {.m = &m, .fail_at = -1};
    h.src = malloc(m.n_params * sizeof(float));
    h.gout = calloc(m.n_params, sizeof(float));
    memcpy(h.src, m.params, m.n_params * sizeof(float));
    memset(m.params, 0xff, m.n_params * sizeof(float)); // NaN: a pass that read params itself would show it
    ck_assert_st(dl_mlp_set_hooks(&m, hook_pre, hook_post, &h), DL_OK);
    double lp = loss_at(&plain, X, y, n), lh = loss_at(&m, X, y, n);
    ck_assert(lp == lh);
    ck_assert(memcmp(plain.act[2], m.act[2], n * 3 * sizeof(float)) == 0);
    ck_assert_st(dl_mlp_backward(&plain, X, n, 0, NULL, NULL), DL_OK);
    ck_assert_st(dl_mlp_backward(&m, X, n, 0, hook_ready, &h), DL_OK);
    ck_assert_msg(memcmp(plain.grads, h.gout, m.n_params * sizeof(float)) == 0, "gradients differ");
    h.calls[h.n_calls] = '\0';
    ck_assert_str_eq(h.calls, "f0F0f1F1f2F2b2B2b1B1b0B0");
    ck_assert_st(dl_mlp_set_precision(&m, DL_F16), DL_ERR_ARG); // hooks are fp32's
    h.n_calls = 0, h.fail_at = 3; // the third call, layer 1's pre, fails
    dl_trace_clear();
    dl_trace_start(0);
    ck_assert_st(dl_mlp_forward(&m, X, n), DL_ERR_IO);
    dl_trace_stop();
    ck_assert_int_eq(h.n_calls, 6); // f0 F0 f1, and no more
    size_t ns = 0;
    const dl_span *sp = dl_trace_events(&ns);
    ck_assert_uint_eq(ns, 1);
    ck_assert_msg(sp[0].kind == DL_EV_FORWARD && sp[0].t1 >= 0, "the failed forward left its span open");
    dl_trace_clear();
    free(h.W[1]), free(h.src), free(h.gout), free(X), free(y);
    dl_mlp_free(&plain);
    ck_assert_st(dl_mlp_set_hooks(&m, NULL, NULL, NULL), DL_OK);
    dl_mlp_free(&m);
}
END_TEST

Suite *mlp_suite(void)
{
    TCase *tc = tcase_of(tcase_with_tmp("mlp", 30),
                         TESTS(test_shapes_and_init, test_gradient_finite_differences, test_sgd_and_training,
                               test_sgd_slices_make_one_step, test_hooks_move_layers, test_checkpoint_state_round_trip,
                               test_step_cost_and_hidden, test_write_params));
    tcase_add_loop_test(tc, test_lowp_forward_matches_reference, 0, 2); // fp16, bf16
    tcase_add_loop_test(tc, test_lowp_backward_matches_reference, 0, 2);
    tcase_of(tc, TESTS(test_f16_underflow_without_loss_scale, test_bf16_does_not_underflow, test_f16_arguments));
    return suite_of("mlp", tc, NULL);
}
