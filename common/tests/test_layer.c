/* test_layer.c — dl/layer.h on the CPU: one layer's forward (with and
 * without bias and ReLU) and backward (gW, gb, dX) against sums in double,
 * a layer of the kit's MLP reproduced bit for bit by the same calls, the
 * loss at the logits and the count of right rows, and the refusals. The CUDA path shares the MLP's kernels (tested in the GPU tier). */
#include "tests.h"

#include <math.h> // fabs, exp, log
#include <string.h> // memcpy, memcmp

#include "dl/layer.h"
#include "dl/rng.h" // dl_rng

enum { N = 5, IN = 7, OUT = 3 };

static void fill(float *x, size_t n, uint64_t seed)
{
    dl_rng g;
    dl_rng_seed(&g, seed, 0);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(2 * dl_rng_uniform(&g) - 1);
}

START_TEST(test_forward_backward_vs_double)
{
    float X[N * IN], W[OUT * IN], b[OUT], Y[N * OUT], dY[N * OUT], gW[OUT * IN], gb[OUT], dX[N * IN], ones[N];
    fill(X, N * IN, 1), fill(W, OUT * IN, 2), fill(b, OUT, 3), fill(dY, N * OUT, 4);
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    dl_mlp_layer L = {.in = IN, .out = OUT, .W = W, .b = b, .gW = gW, .gb = gb};
    for (unsigned flags = 0; flags < 4; flags++) {
        ck_assert_int_eq(dl_layer_forward(dl_cpu(), &L, X, N, flags, Y), DL_OK);
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OUT; o++) {
                double z = (flags & DL_LAYER_BIAS) ? b[o] : 0;
                for (int i = 0; i < IN; i++)
                    z += (double)X[n * IN + i] * W[o * IN + i];
                z = (flags & DL_LAYER_RELU) && z < 0 ? 0 : z;
                ck_assert_msg(fabs(Y[n * OUT + o] - z) <= 1e-6, "flags %u: Y[%d][%d] = %g, expected %g", flags, n, o,
                              Y[n * OUT + o], z);
            }
    }
    ck_assert_int_eq(dl_layer_backward(dl_cpu(), &L, X, N, dY, ones, dX), DL_OK);
    for (int o = 0; o < OUT; o++) {
        double sb = 0;
        for (int n = 0; n < N; n++)
            sb += dY[n * OUT + o];
        ck_assert_msg(fabs(gb[o] - sb) <= 1e-6, "gb[%d] = %g, expected %g", o, gb[o], sb);
        for (int i = 0; i < IN; i++) {
            double s = 0;
            for (int n = 0; n < N; n++)
                s += (double)dY[n * OUT + o] * X[n * IN + i];
            ck_assert_msg(fabs(gW[o * IN + i] - s) <= 1e-6, "gW[%d][%d] = %g, expected %g", o, i, gW[o * IN + i], s);
        }
    }
    for (int n = 0; n < N; n++)
        for (int i = 0; i < IN; i++) {
            double s = 0;
            for (int o = 0; o < OUT; o++)
                s += (double)dY[n * OUT + o] * W[o * IN + i];
            ck_assert_msg(fabs(dX[n * IN + i] - s) <= 1e-6, "dX[%d][%d] = %g, expected %g", n, i, dX[n * IN + i], s);
        }
    float A[6] = {1, 0, -2, 3, -0.0f, 5}, d[6] = {1, 1, 1, 1, 1, 1};
    ck_assert_int_eq(dl_layer_relu_mask(dl_cpu(), d, A, 6), DL_OK);
    ck_assert(d[0] == 1 && d[1] == 0 && d[2] == 0 && d[3] == 1 && d[4] == 0 && d[5] == 1);
}
END_TEST

START_TEST(test_same_bits_as_mlp)
{
    size_t sizes[3] = {IN, 4, OUT};
    dl_mlp m;
    float X[N * IN], A[N * 4], Z[N * OUT];
    fill(X, N * IN, 9);
    ck_assert_int_eq(dl_mlp_create(&m, dl_cpu(), sizes, 3, N, 42), DL_OK);
    ck_assert_int_eq(dl_mlp_forward(&m, X, N), DL_OK);
    ck_assert_int_eq(dl_layer_forward(dl_cpu(), &m.layer[0], X, N, DL_LAYER_BIAS | DL_LAYER_RELU, A), DL_OK);
    ck_assert_int_eq(dl_layer_forward(dl_cpu(), &m.layer[1], A, N, DL_LAYER_BIAS, Z), DL_OK);
    for (int k = 0; k < N * 4; k++)
        ck_assert_msg(A[k] == m.act[0][k], "hidden %d: %g, the MLP's %g", k, A[k], m.act[0][k]);
    for (int k = 0; k < N * OUT; k++)
        ck_assert_msg(Z[k] == m.act[1][k], "logit %d: %g, the MLP's %g", k, Z[k], m.act[1][k]);
    dl_mlp_free(&m);
}
END_TEST

START_TEST(test_refusals)
{
    float W[4] = {0}, X[2] = {0}, Y[2], g[4], v[4] = {0};
    dl_mlp_layer L = {.in = 2, .out = 2, .W = W};
    ck_assert_int_eq(dl_layer_forward(dl_cpu(), &L, X, 1, DL_LAYER_BIAS, Y), DL_ERR_ARG); // no b
    ck_assert_int_eq(dl_layer_forward(dl_cpu(), &L, X, 0, 0, Y), DL_ERR_ARG);
    ck_assert_int_eq(dl_layer_backward(dl_cpu(), &L, X, 1, Y, NULL, NULL), DL_ERR_ARG); // no gW
    L.gW = g, L.gb = g;
    ck_assert_int_eq(dl_layer_backward(dl_cpu(), &L, X, 1, Y, NULL, NULL), DL_ERR_ARG); // gb without ones
    ck_assert_int_eq(dl_layer_sgd(dl_cpu(), NULL, g, v, 4, 0.1f, 0.9f, 0), DL_ERR_ARG);
    float p[2] = {1, 1}, gr[2] = {1, 1}, vel[2] = {0, 0};
    ck_assert_int_eq(dl_layer_sgd(dl_cpu(), p, gr, vel, 2, 0.5f, 0.9f, 0.1f), DL_OK);
    ck_assert_msg(fabs(p[0] - (1 - 0.5 * 1.1)) < 1e-7 && vel[0] == 1.1f, "p = %g, v = %g after one step", p[0], vel[0]);
}
END_TEST

/* dl_layer_xent against the closed form in double (loss_i = log Σ_c e^z_c − z_y,
 * gradient (softmax − onehot)·scale) and against dl_mlp_loss on the same
 * logits (the same bits: the same row function, the same sums);
 * dl_layer_right against argmax by brute force; the refusals. */
START_TEST(test_loss_and_right)
{
    size_t sizes[2] = {IN, OUT};
    dl_mlp m;
    float X[N * IN], Z[N * OUT];
    int32_t y[N] = {0, 2, 1, 2, 0};
    fill(X, N * IN, 11);
    ck_assert_int_eq(dl_mlp_create(&m, dl_cpu(), sizes, 2, N, 7), DL_OK);
    ck_assert_int_eq(dl_mlp_forward(&m, X, N), DL_OK);
    memcpy(Z, m.act[0], sizeof Z);
    double want_right = 0;
    for (int i = 0; i < N; i++) {
        int best = 0;
        for (int c = 1; c < OUT; c++)
            best = Z[i * OUT + c] > Z[i * OUT + best] ? c : best;
        want_right += best == y[i];
    }
    dl_layer_loss w;
    ck_assert_int_eq(dl_layer_loss_init(&w, dl_cpu(), N), DL_OK);
    double right = 1; // added to
    ck_assert_int_eq(dl_layer_right(&w, Z, y, N, OUT, &right), DL_OK);
    ck_assert_msg(right == 1 + want_right, "right %g, expected %g", right, 1 + want_right);
    double sum = 0, loss = -1, mlp_loss = -1;
    float G[N * OUT];
    for (int i = 0; i < N; i++) {
        double mx = Z[i * OUT], e = 0;
        for (int c = 1; c < OUT; c++)
            mx = Z[i * OUT + c] > mx ? Z[i * OUT + c] : mx;
        for (int c = 0; c < OUT; c++)
            e += exp(Z[i * OUT + c] - mx);
        sum += mx + log(e) - Z[i * OUT + y[i]];
        for (int c = 0; c < OUT; c++)
            G[i * OUT + c] = (float)((exp(Z[i * OUT + c] - mx) / e - (c == y[i])) / N);
    }
    ck_assert_int_eq(dl_layer_xent(&w, Z, y, N, OUT, 1.0f / N, &loss), DL_OK);
    ck_assert_msg(fabs(loss - sum / N) <= 1e-6, "loss %.9g, expected %.9g", loss, sum / N);
    for (int k = 0; k < N * OUT; k++)
        ck_assert_msg(fabs(Z[k] - G[k]) <= 1e-7, "gradient %d: %g, expected %g", k, Z[k], G[k]);
    ck_assert_int_eq(dl_mlp_loss(&m, y, N, &mlp_loss), DL_OK);
    ck_assert_msg(loss == mlp_loss, "loss %.17g, dl_mlp_loss's %.17g", loss, mlp_loss);
    ck_assert_msg(memcmp(Z, m.act[0], sizeof Z) == 0, "the gradient differs from dl_mlp_loss's");
    y[3] = OUT; // a label outside [0, C): the loss refuses, the count does not count it
    ck_assert_int_eq(dl_layer_xent(&w, Z, y, N, OUT, 1.0f / N, &loss), DL_ERR_RANGE);
    ck_assert_has(dl_last_error(), "label 3 of row 3 is outside [0, 3)");
    ck_assert_int_eq(dl_layer_xent(&w, Z, y, N + 1, OUT, 1.0f, &loss), DL_ERR_ARG); // more rows than the scratch's
    ck_assert_int_eq(dl_layer_right(&w, Z, y, 0, OUT, &right), DL_ERR_ARG);
    dl_layer_loss_free(&w);
    ck_assert_int_eq(dl_layer_loss_init(&w, dl_cpu(), 0), DL_ERR_ARG);
    dl_mlp_free(&m);
}
END_TEST

Suite *layer_suite(void)
{
    Suite *s = suite_create("layer");
    TCase *tc = tcase_create("cpu");
    tcase_add_test(tc, test_forward_backward_vs_double);
    tcase_add_test(tc, test_same_bits_as_mlp);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_loss_and_right);
    suite_add_tcase(s, tc);
    return s;
}
