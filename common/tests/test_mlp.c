/* test_mlp.c — the kit's MLP: shapes, determinism, the gradient against
 * finite differences of the loss (in double), the ready-callback order,
 * accumulation, SGD with momentum, and error cases. (CUDA against CPU is in
 * the GPU tier, common/tests_gpu.) */
#include "tests.h"

#include <math.h> // fabs
#include <stdlib.h> // malloc

#include "dl/blas.h" // dl_flops
#include "dl/data.h" // dl_npy_read
#include "dl/mlp.h"
#include "dl/rng.h"

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
static void ready(void *ctx, int layer, float *grad, size_t count)
{
    dl_mlp *m = ctx;
    ck_assert(grad == m->grads + m->layer[layer].offset && count == m->layer[layer].count);
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

Suite *mlp_suite(void)
{
    Suite *s = suite_create("mlp");
    TCase *tc = tcase_with_tmp("mlp", 30);
    tcase_add_test(tc, test_shapes_and_init);
    tcase_add_test(tc, test_gradient_finite_differences);
    tcase_add_test(tc, test_sgd_and_training);
    tcase_add_test(tc, test_checkpoint_state_round_trip);
    tcase_add_test(tc, test_step_cost_and_hidden);
    tcase_add_test(tc, test_write_params);
    suite_add_tcase(s, tc);
    return s;
}
