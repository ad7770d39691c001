/* lab01_gpu.c — lab 01 task 5, the gpu1 tier's items: the CUDA loss and
 * gradient against the double reference, and training on the GPU against the
 * CPU's learning curve and Newton's optimum (lab01_ref.c). The table is lab01.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, NAN
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcmp

#include "dl/device.h" // dl_device_open, dl_malloc, dl_memcpy_h2d
#include "grader.h"
#include "lab01_ref.h" // gr_ref_objective, gr_make_problem, gr_bc_load, gr_train_on
#include "logreg.h"

// ---- task 5: CUDA (gpu1 tier) ----

GR_TEST(test_gpu_loss_grad)
{
    dl_device dev;
    GR_OK(dl_device_open("cuda", &dev));
    const struct {
        size_t n, d;
        float lambda;
        double wscale;
    } cases[] = {
        {1, 1, 0.1f, 1.0},        {257, 1, 0.0f, 1.0},   {1000, 30, 0.01f, 0.5},
        {4097, 7, 0.1f, 0.3},     {300, 3, 0.0f, 400.0}, // logits in the hundreds and thousands
        {200, 1500, 0.01f, 0.05}, // wide rows: more features than a one-pass kernel may keep in shared memory
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        problem p = gr_make_problem(40 + k, cases[k].n, cases[k].d, cases[k].lambda, cases[k].wscale);
        size_t n = p.n, d = p.d;
        float *dX, *dy, *dw, *dg, *dgb, *dwork, gb_gpu = NAN, gb_cpu = NAN;
        double *dloss;
        GR_OK(dl_malloc(&dev, (void **)&dX, n * d * sizeof(float)));
        GR_OK(dl_malloc(&dev, (void **)&dy, n * sizeof(float)));
        GR_OK(dl_malloc(&dev, (void **)&dw, d * sizeof(float)));
        GR_OK(dl_malloc(&dev, (void **)&dg, d * sizeof(float)));
        GR_OK(dl_malloc(&dev, (void **)&dgb, sizeof(float)));
        GR_OK(dl_malloc(&dev, (void **)&dloss, sizeof(double)));
        GR_OK(dl_malloc(&dev, (void **)&dwork, logreg_cuda_work_floats(n, d) * sizeof(float)));
        GR_OK(dl_memcpy_h2d(&dev, dX, p.X, n * d * sizeof(float)));
        GR_OK(dl_memcpy_h2d(&dev, dy, p.y, n * sizeof(float)));
        GR_OK(dl_memcpy_h2d(&dev, dw, p.w, d * sizeof(float)));
        double loss_gpu = NAN, loss_cpu = NAN;
        GR_OK(logreg_loss_grad_cuda(&dev, dX, dy, n, d, dw, p.b, p.lambda, dg, dgb, dloss, dwork));
        if (gr_logreg_cuda_waits > 0)
            GR_FAIL(
                GR_DIAG("loss-read-back") "n=%zu d=%zu: logreg_loss_grad_cuda made the host wait for the device %llu "
                                          "time(s) (a copy back of block sums?); finish grad_b and the loss on "
                                          "the device and return without waiting: the engine reads them back "
                                          "with grad_w, once per step",
                n, d, (unsigned long long)gr_logreg_cuda_waits);
        float *g_gpu = malloc(d * sizeof(float)), *g_cpu = malloc(d * sizeof(float)), *work = malloc(n * sizeof(float));
        GR_OK(dl_memcpy_d2h(&dev, g_gpu, dg, d * sizeof(float)));
        GR_OK(dl_memcpy_d2h(&dev, &gb_gpu, dgb, sizeof gb_gpu));
        GR_OK(dl_memcpy_d2h(&dev, &loss_gpu, dloss, sizeof loss_gpu));
        double *wd = malloc(d * sizeof *wd), *rg = malloc(d * sizeof *rg), rgb;
        for (size_t j = 0; j < d; j++)
            wd[j] = p.w[j];
        double rl = gr_ref_objective(p.X, p.y, n, d, wd, p.b, p.lambda, rg, &rgb);
        GR_OK(logreg_loss_grad_cpu(p.X, p.y, n, d, p.w, p.b, p.lambda, g_cpu, &gb_cpu, &loss_cpu, work));
        char what[128];
        snprintf(what, sizeof what, "n=%zu d=%zu: CUDA grad_w vs double reference", n, d);
        GR_ALLCLOSE_F32(what, g_gpu, rg, d, 1e-6, 1e-5, "");
        if (fabs(loss_gpu - rl) > 1e-6 + 1e-5 * fabs(rl) || fabs(gb_gpu - rgb) > 1e-6 + 1e-5 * fabs(rgb))
            GR_FAIL("n=%zu d=%zu: CUDA loss %.9g grad_b %.9g, expected %.9g and %.9g (CPU: %.9g, %.9g)", n, d, loss_gpu,
                    (double)gb_gpu, rl, rgb, loss_cpu, (double)gb_cpu);
        // the residuals left in dwork (the engine's accuracy counts from them)
        float *r_gpu = malloc(n * sizeof *r_gpu);
        double *r_ref = malloc(n * sizeof *r_ref);
        GR_OK(dl_memcpy_d2h(&dev, r_gpu, dwork, n * sizeof *r_gpu));
        for (size_t i = 0; i < n; i++) {
            double z = p.b;
            for (size_t j = 0; j < d; j++)
                z += (double)p.X[i * d + j] * p.w[j];
            r_ref[i] = (z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z))) - p.y[i];
        }
        snprintf(what, sizeof what, "n=%zu d=%zu: dwork[0..n) after the call (r_i = sigmoid(x_i.w + b) - y_i)", n, d);
        GR_ALLCLOSE_F32(what, r_gpu, r_ref, n, 1e-5, 1e-4, "");
        // the same inputs again: the same bits (the block sums added in a fixed order)
        float gb_again = NAN, *g_again = malloc(d * sizeof(float));
        double loss_again = NAN;
        GR_OK(logreg_loss_grad_cuda(&dev, dX, dy, n, d, dw, p.b, p.lambda, dg, dgb, dloss, dwork));
        if (gr_logreg_cuda_waits > 0)
            GR_FAIL(GR_DIAG("loss-read-back") "n=%zu d=%zu: the second call made the host wait for the device %llu "
                                              "time(s); neither call may",
                    n, d, (unsigned long long)gr_logreg_cuda_waits);
        GR_OK(dl_memcpy_d2h(&dev, g_again, dg, d * sizeof(float)));
        GR_OK(dl_memcpy_d2h(&dev, &gb_again, dgb, sizeof gb_again));
        GR_OK(dl_memcpy_d2h(&dev, &loss_again, dloss, sizeof loss_again));
        if (memcmp(&loss_again, &loss_gpu, sizeof loss_gpu) != 0 || memcmp(&gb_again, &gb_gpu, sizeof gb_gpu) != 0)
            GR_FAIL("n=%zu d=%zu: the same call twice gave loss %.17g then %.17g, grad_b %.9g then %.9g: add the "
                    "block sums in a fixed order (atomicAdd adds them in whatever order the blocks finish)",
                    n, d, loss_gpu, loss_again, (double)gb_gpu, (double)gb_again);
        for (size_t j = 0; j < d; j++) {
            if (memcmp(&g_again[j], &g_gpu[j], sizeof g_gpu[j]) != 0)
                GR_FAIL("n=%zu d=%zu: the same call twice gave grad_w[%zu] = %.9g then %.9g: sum X^T r in a fixed "
                        "order (dl_gemv does; atomicAdd adds in whatever order the threads finish)",
                        n, d, j, (double)g_gpu[j], (double)g_again[j]);
        }
        free(g_again);
        free(r_gpu), free(r_ref);
        dl_free(&dev, dX), dl_free(&dev, dy), dl_free(&dev, dw), dl_free(&dev, dg), dl_free(&dev, dwork);
        dl_free(&dev, dgb), dl_free(&dev, dloss);
        free(g_gpu), free(g_cpu), free(work), free(wd), free(rg);
        gr_free_problem(&p);
    }
    dl_device_close(&dev);
}
END_TEST

GR_TEST(test_gpu_train)
{
    dl_device dev;
    GR_OK(dl_device_open("cuda", &dev));
    bc_data bc;
    gr_bc_load(&bc);
    size_t d = bc.d, n = bc.n[0];
    logreg_config cfg = gr_default_config();
    logreg_model mg, mc;
    logreg_curve cg, cc;
    gr_train_on(&dev, bc.scaled[0], bc.y[0], n, d, bc.scaled[1], bc.y[1], bc.n[1], &cfg, &mg, &cg, NULL);
    gr_train_on(dl_cpu(), bc.scaled[0], bc.y[0], n, d, bc.scaled[1], bc.y[1], bc.n[1], &cfg, &mc, &cc, NULL);
    int k_max = cg.n < cc.n ? cg.n : cc.n;
    for (int k = 0; k < k_max; k++) {
        if (fabs(cg.train_loss[k] - cc.train_loss[k]) > 1e-4 * cc.train_loss[k])
            GR_FAIL("epoch %d: GPU train_loss %.9g, CPU %.9g: the curves must agree within 1e-4 relative", k,
                    cg.train_loss[k], cc.train_loss[k]);
    }
    double *wopt = malloc(d * sizeof *wopt), bopt;
    double fopt = gr_ref_optimum(bc.scaled[0], bc.y[0], n, d, cfg.lambda, wopt, &bopt);
    double f = gr_ref_objective_f(bc.scaled[0], bc.y[0], n, d, mg.w, mg.b, cfg.lambda);
    if (!((f - fopt) / fopt <= 1e-4))
        GR_FAIL("GPU training ended at objective %.9g, %.3g relative above the optimum %.9g", f, (f - fopt) / fopt,
                fopt);
    gr_note("GPU: %d epochs, CPU: %d epochs, objective %.9g (optimum %.9g)\n", cg.n - 1, cc.n - 1, f, fopt);
    free(wopt);
    logreg_model_free(&mg), logreg_model_free(&mc);
    logreg_curve_free(&cg), logreg_curve_free(&cc);
    // mini-batches gathered on the device by index: the CPU's rows in the CPU's order
    cfg.batch_size = 32;
    cfg.epochs = 20;
    cfg.tol = 0;
    cfg.lr = 0.1;
    gr_train_on(&dev, bc.scaled[0], bc.y[0], n, d, bc.scaled[1], bc.y[1], bc.n[1], &cfg, &mg, &cg, NULL);
    gr_train_on(dl_cpu(), bc.scaled[0], bc.y[0], n, d, bc.scaled[1], bc.y[1], bc.n[1], &cfg, &mc, &cc, NULL);
    for (int k = 0; k < cc.n; k++) {
        if (k >= cg.n || fabs(cg.train_loss[k] - cc.train_loss[k]) > 1e-4 * cc.train_loss[k])
            GR_FAIL("batch 32, lr 0.1, epoch %d: GPU train_loss %.9g, CPU %.9g: the curves must agree within 1e-4 "
                    "relative (the same rows in the same order on both devices)",
                    k, k < cg.n ? cg.train_loss[k] : NAN, cc.train_loss[k]);
    }
    logreg_model_free(&mg), logreg_model_free(&mc);
    logreg_curve_free(&cg), logreg_curve_free(&cc);
    gr_bc_free(&bc);
    dl_device_close(&dev);
}
END_TEST
