/* lab01_gpu.c — lab 01 task 5, the gpu1 tier's items: the CUDA loss and
 * gradient against the double reference, the same bits in every schedule of
 * the device (gpu.h: on the emulated device, the warps', lanes' and blocks'
 * orders), and training on the GPU against the CPU's learning curve and
 * Newton's optimum (lab01_ref.c). The table is lab01.c's; both items are
 * correctness, so the emulated device may grade them where no GPU answers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs, NAN
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free
#include <string.h> // memcmp

#include "dl/device.h" // dl_device_open, dl_malloc, dl_memcpy_h2d
#include "gpu.h" // gr_gpu_device, gr_gpu_schedule, gr_gpu_settle
#include "grader.h"
#include "lab01_ref.h" // gr_ref_objective, gr_make_problem, gr_bc_load, gr_train_on
#include "logreg.h"

// ---- task 5: CUDA (gpu1 tier) ----

const char *const gr_emulated_items[] = {"gpu_loss_grad", "gpu_train", NULL};

/* The first difference between two runs' outputs (the same bits expected), or 0. */
static int runs_differ(const float *ga, const float *gb, float gba, float gbb, double la, double lb, const float *ra,
                       const float *rb, size_t n, size_t d, char *out, size_t len)
{
    if (memcmp(&la, &lb, sizeof la) != 0)
        return snprintf(out, len, "the loss %.17g, then %.17g", la, lb), 1;
    if (memcmp(&gba, &gbb, sizeof gba) != 0)
        return snprintf(out, len, "grad_b %.9g, then %.9g", (double)gba, (double)gbb), 1;
    for (size_t j = 0; j < d; j++)
        if (memcmp(&ga[j], &gb[j], sizeof ga[j]) != 0)
            return snprintf(out, len, "grad_w[%zu] %.9g, then %.9g", j, (double)ga[j], (double)gb[j]), 1;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&ra[i], &rb[i], sizeof ra[i]) != 0)
            return snprintf(out, len, "r[%zu] (dwork) %.9g, then %.9g", i, (double)ra[i], (double)rb[i]), 1;
    return 0;
}

#define MAX_RUNS 8

GR_TEST(test_gpu_loss_grad)
{
    dl_device dev;
    GR_OK(dl_device_open(gr_gpu_device(), &dev));
    const struct {
        size_t n, d;
        float lambda;
        double wscale;
    } cases[] = {
        {1, 1, 0.1f, 1.0},        {257, 1, 0.0f, 1.0},   {1000, 30, 0.01f, 0.5},
        {4097, 7, 0.1f, 0.3},     {300, 3, 0.0f, 400.0}, // logits in the hundreds and thousands
        {320, 1500, 0.01f, 0.05}, // wide rows: more features than a one-pass kernel may keep in shared memory
    };
    int runs = gr_gpu_schedules();
    if (runs > MAX_RUNS)
        runs = MAX_RUNS;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        problem p = gr_make_problem(40 + k, cases[k].n, cases[k].d, cases[k].lambda, cases[k].wscale);
        size_t n = p.n, d = p.d;
        float *dX, *dy, *dw, *dg, *dgb, *dwork, gb_gpu[MAX_RUNS], gb_cpu = NAN;
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
        double loss_gpu[MAX_RUNS], loss_cpu = NAN;
        float *g_gpu[MAX_RUNS], *r_gpu[MAX_RUNS];
        char settled[1600], what[160];
        const char *diag;
        // the same call in each schedule of the device (gpu.h): run 0 is checked against the reference,
        // the others must give its bits
        for (int run = 0; run < runs; run++) {
            const char *sched = gr_gpu_schedule(run);
            g_gpu[run] = malloc(d * sizeof(float));
            r_gpu[run] = malloc(n * sizeof(float));
            GR_OK(logreg_loss_grad_cuda(&dev, dX, dy, n, d, dw, p.b, p.lambda, dg, dgb, dloss, dwork));
            if (gr_logreg_cuda_waits > 0)
                GR_FAIL(
                    GR_DIAG("loss-read-back") "n=%zu d=%zu: logreg_loss_grad_cuda made the host wait for the device "
                                              "%llu time(s) (a copy back of block sums?); finish grad_b and the loss "
                                              "on the device and return without waiting: the engine reads them back "
                                              "with grad_w, once per step",
                    n, d, (unsigned long long)gr_logreg_cuda_waits);
            if (gr_gpu_settle(&dev, "lab01 task 5", settled, sizeof settled, &diag) != GR_GPU_WELL)
                GR_FAIL("[diagnosis: %s] n=%zu d=%zu, %s: the device failed after logreg_loss_grad_cuda: %s", diag, n,
                        d, sched, settled);
            GR_OK(dl_memcpy_d2h(&dev, g_gpu[run], dg, d * sizeof(float)));
            GR_OK(dl_memcpy_d2h(&dev, &gb_gpu[run], dgb, sizeof(float)));
            GR_OK(dl_memcpy_d2h(&dev, &loss_gpu[run], dloss, sizeof(double)));
            GR_OK(dl_memcpy_d2h(&dev, r_gpu[run], dwork, n * sizeof(float))); // r, which the engine counts from
        }
        gr_gpu_schedule(-1);
        // the emulated device: the call once more under checked launches, for the kernel and the line
        // of what the schedules show (the verdict rests on the schedules' bits, compared here)
        gr_gpu_check checked;
        if (gr_gpu_check_begin(&checked)) {
            GR_OK(logreg_loss_grad_cuda(&dev, dX, dy, n, d, dw, p.b, p.lambda, dg, dgb, dloss, dwork));
            gr_gpu_check_end(&checked, &dev, "lab01 task 5");
        }
        for (int run = 1; run < runs; run++) {
            if (runs_differ(g_gpu[0], g_gpu[run], gb_gpu[0], gb_gpu[run], loss_gpu[0], loss_gpu[run], r_gpu[0],
                            r_gpu[run], n, d, what, sizeof what))
                GR_FAIL("[diagnosis: %s] n=%zu d=%zu: %s (%s, then %s): %s.%s", gr_gpu_schedule_diag(run), n, d,
                        gr_gpu_schedule_why(run), gr_gpu_schedule(0), gr_gpu_schedule(run), what,
                        gr_gpu_check_note(&checked));
        }
        if (checked.state != GR_GPU_WELL)
            GR_FAIL("[diagnosis: %s] n=%zu d=%zu: under checked launches (five thread and block orders): %s",
                    checked.diag, n, d, checked.msg);
        float *work = malloc(n * sizeof(float)), *g_cpu = malloc(d * sizeof(float));
        double *wd = malloc(d * sizeof *wd), *rg = malloc(d * sizeof *rg), rgb;
        for (size_t j = 0; j < d; j++)
            wd[j] = p.w[j];
        double rl = gr_ref_objective(p.X, p.y, n, d, wd, p.b, p.lambda, rg, &rgb);
        GR_OK(logreg_loss_grad_cpu(p.X, p.y, n, d, p.w, p.b, p.lambda, g_cpu, &gb_cpu, &loss_cpu, work));
        snprintf(what, sizeof what, "n=%zu d=%zu: CUDA grad_w vs double reference", n, d);
        GR_ALLCLOSE_F32(what, g_gpu[0], rg, d, 1e-6, 1e-5, "");
        if (fabs(loss_gpu[0] - rl) > 1e-6 + 1e-5 * fabs(rl) || fabs(gb_gpu[0] - rgb) > 1e-6 + 1e-5 * fabs(rgb))
            GR_FAIL("n=%zu d=%zu: CUDA loss %.9g grad_b %.9g, expected %.9g and %.9g (CPU: %.9g, %.9g)", n, d,
                    loss_gpu[0], (double)gb_gpu[0], rl, rgb, loss_cpu, (double)gb_cpu);
        // the residuals left in dwork (the engine's accuracy counts from them)
        double *r_ref = malloc(n * sizeof *r_ref);
        for (size_t i = 0; i < n; i++) {
            double z = p.b;
            for (size_t j = 0; j < d; j++)
                z += (double)p.X[i * d + j] * p.w[j];
            r_ref[i] = (z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z))) - p.y[i];
        }
        snprintf(what, sizeof what, "n=%zu d=%zu: dwork[0..n) after the call (r_i = sigmoid(x_i.w + b) - y_i)", n, d);
        GR_ALLCLOSE_F32(what, r_gpu[0], r_ref, n, 1e-5, 1e-4, "");
        for (int run = 0; run < runs; run++)
            free(g_gpu[run]), free(r_gpu[run]);
        free(r_ref);
        dl_free(&dev, dX), dl_free(&dev, dy), dl_free(&dev, dw), dl_free(&dev, dg), dl_free(&dev, dwork);
        dl_free(&dev, dgb), dl_free(&dev, dloss);
        free(g_cpu), free(work), free(wd), free(rg);
        gr_free_problem(&p);
    }
    dl_device_close(&dev);
}
END_TEST

GR_TEST(test_gpu_train)
{
    dl_device dev;
    GR_OK(dl_device_open(gr_gpu_device(), &dev));
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
