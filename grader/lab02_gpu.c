/* lab02_gpu.c — lab 02's gpu1 items: task 5's softmax loss and gradient on
 * the GPU against the double reference (lab02_ref.c), and training there
 * against the CPU's, the device's ties broken as the CPU breaks them. The
 * table that names them is lab02.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free

#include "dl/data.h" // dl_data_load
#include "dl/device.h" // dl_device_open, dl_malloc, dl_memcpy_h2d
#include "eval.h"
#include "gpu.h" // gr_gpu_device, gr_gpu_schedule, gr_gpu_settle
#include "grader.h"
#include "lab02_ref.h" // gr_ref_softmax, gr_make_sproblem

/* Both are correctness: the emulated device may grade them where no GPU answers (gpu.h). */
const char *const gr_emulated_items[] = {"gpu_softmax", "gpu_train", NULL};

#define MAX_RUNS 8

GR_TEST(test_gpu_softmax)
{
    dl_device dev;
    GR_OK(dl_device_open(gr_gpu_device(), &dev));
    const struct {
        size_t n, d;
        int C;
        double ws;
    } cases[] = {{1, 3, 2, 1.0}, {257, 20, 10, 0.3}, {1000, 784, 10, 0.05}, {300, 2, 5, 2000.0}};
    int runs = gr_gpu_schedules();
    if (runs > MAX_RUNS)
        runs = MAX_RUNS;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sproblem p = gr_make_sproblem(50 + k, cases[k].n, cases[k].d, cases[k].C, 0.01f, cases[k].ws);
        size_t n = p.n, d = p.d, C = (size_t)p.C, wd = C * d;
        float *dX, *dW, *db, *dgW, *dgb, *dwork;
        int32_t *dy;
        double *dloss;
        GR_OK(dl_malloc(&dev, (void **)&dX, n * d * 4));
        GR_OK(dl_malloc(&dev, (void **)&dy, n * 4));
        GR_OK(dl_malloc(&dev, (void **)&dW, wd * 4));
        GR_OK(dl_malloc(&dev, (void **)&db, C * 4));
        GR_OK(dl_malloc(&dev, (void **)&dgW, wd * 4));
        GR_OK(dl_malloc(&dev, (void **)&dgb, C * 4));
        GR_OK(dl_malloc(&dev, (void **)&dloss, sizeof *dloss));
        GR_OK(dl_malloc(&dev, (void **)&dwork, softmax_cuda_work_floats(n, p.C) * 4));
        GR_OK(dl_memcpy_h2d(&dev, dX, p.X, n * d * 4));
        GR_OK(dl_memcpy_h2d(&dev, dy, p.y, n * 4));
        GR_OK(dl_memcpy_h2d(&dev, dW, p.W, wd * 4));
        GR_OK(dl_memcpy_h2d(&dev, db, p.b, C * 4));
        double loss[MAX_RUNS];
        float *gW[MAX_RUNS], *gb[MAX_RUNS];
        char what[128], settled[1600], differ[200] = "";
        const char *diag;
        snprintf(what, sizeof what, "n=%zu d=%zu C=%zu", n, d, C);
        // the same call in each schedule of the device (gpu.h): run 0 is checked against the
        // reference, the others must give its bits
        for (int run = 0; run < runs; run++) {
            const char *sched = gr_gpu_schedule(run);
            gW[run] = malloc(wd * 4);
            gb[run] = malloc(C * 4);
            GR_OK(softmax_loss_grad_cuda(&dev, dX, dy, n, d, p.C, dW, db, p.lambda, dgW, dgb, dloss, dwork));
            if (gr_softmax_cuda_waits > 0)
                GR_FAIL(GR_DIAG("loss-read-back") "%s: softmax_loss_grad_cuda made the host wait for the device %llu "
                                                  "time(s) (a copy back of partial sums?); finish the loss on the "
                                                  "device and return without waiting: the engine reads gW, gb and "
                                                  "the loss back together, once per step",
                        what, (unsigned long long)gr_softmax_cuda_waits);
            if (gr_gpu_settle(&dev, "lab02 task 5", settled, sizeof settled, &diag) != GR_GPU_WELL)
                GR_FAIL("[diagnosis: %s] %s, %s: the device failed after softmax_loss_grad_cuda: %s", diag, what, sched,
                        settled);
            GR_OK(dl_memcpy_d2h(&dev, &loss[run], dloss, sizeof *dloss));
            GR_OK(dl_memcpy_d2h(&dev, gW[run], dgW, wd * 4));
            GR_OK(dl_memcpy_d2h(&dev, gb[run], dgb, C * 4));
        }
        gr_gpu_schedule(-1);
        // the emulated device: the call once more under checked launches, for the kernel and the line
        // of what the schedules show (the verdict rests on the schedules' bits, compared here)
        gr_gpu_check checked;
        if (gr_gpu_check_begin(&checked)) {
            GR_OK(softmax_loss_grad_cuda(&dev, dX, dy, n, d, p.C, dW, db, p.lambda, dgW, dgb, dloss, dwork));
            gr_gpu_check_end(&checked, &dev, "lab02 task 5");
        }
        for (int run = 1; run < runs; run++) {
            if (memcmp(&loss[0], &loss[run], sizeof loss[0]) != 0)
                snprintf(differ, sizeof differ, "the loss %.17g, then %.17g", loss[0], loss[run]);
            for (size_t c = 0; c < C && !differ[0]; c++)
                if (memcmp(&gb[0][c], &gb[run][c], 4) != 0)
                    snprintf(differ, sizeof differ, "gb[%zu] %.9g, then %.9g", c, (double)gb[0][c], (double)gb[run][c]);
            for (size_t j = 0; j < wd && !differ[0]; j++)
                if (memcmp(&gW[0][j], &gW[run][j], 4) != 0)
                    snprintf(differ, sizeof differ, "gW[%zu] %.9g, then %.9g", j, (double)gW[0][j], (double)gW[run][j]);
            if (differ[0])
                GR_FAIL("[diagnosis: %s] %s: %s (%s, then %s): %s.%s", gr_gpu_schedule_diag(run), what,
                        gr_gpu_schedule_why(run), gr_gpu_schedule(0), gr_gpu_schedule(run), differ,
                        gr_gpu_check_note(&checked));
        }
        if (checked.state != GR_GPU_WELL)
            GR_FAIL("[diagnosis: %s] %s: under checked launches (five thread and block orders): %s", checked.diag, what,
                    checked.msg);
        double *rgW = malloc(wd * sizeof *rgW), *rgb = malloc(C * sizeof *rgb);
        double rl = gr_ref_softmax(p.X, p.y, n, d, p.C, p.W, p.b, p.lambda, rgW, rgb);
        char w2[160];
        snprintf(w2, sizeof w2, "%s: CUDA gW", what);
        GR_ALLCLOSE_F32(w2, gW[0], rgW, wd, 1e-5, 1e-4, "");
        snprintf(w2, sizeof w2, "%s: CUDA gb", what);
        GR_ALLCLOSE_F32(w2, gb[0], rgb, C, 1e-5, 1e-4, "");
        if (!(fabs(loss[0] - rl) <= 1e-5 + 1e-5 * fabs(rl)))
            GR_FAIL("%s: CUDA loss %.9g (read from *dloss on the device), expected %.9g", what, loss[0], rl);
        dl_free(&dev, dX), dl_free(&dev, dy), dl_free(&dev, dW), dl_free(&dev, db);
        dl_free(&dev, dgW), dl_free(&dev, dgb), dl_free(&dev, dloss), dl_free(&dev, dwork);
        for (int run = 0; run < runs; run++)
            free(gW[run]), free(gb[run]);
        free(rgW), free(rgb);
        gr_free_sproblem(&p);
    }
    dl_device_close(&dev);
}
END_TEST

/* The engine's predictions on the device (kit code) against the first-maximum
 * rule, on models whose logits tie exactly: W = 0 with the bias b. */
static void check_device_ties(softmax_engine *e, const dl_dataset *rows)
{
    softmax_model m;
    GR_OK(softmax_model_alloc(&m, rows->d, 10));
    int32_t *pred = malloc(rows->n * sizeof *pred);
    const float tie[10] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0}; // classes 2 and 5 tie above the rest
    for (int k = 0; k < 2; k++) {
        for (int c = 0; c < 10; c++)
            m.b[c] = k ? tie[c] : 0.0f;
        GR_OK(softmax_engine_predict(e, rows->X, rows->n, &m, pred));
        int want = k ? 2 : 0;
        for (size_t i = 0; i < rows->n; i++) {
            if (pred[i] != want)
                GR_FAIL("the engine predicted class %d on the GPU for row %zu of a model whose logits tie (%s); "
                        "the first of equal maxima is class %d (a kit bug: please report it)",
                        pred[i], i, k ? "classes 2 and 5 on top" : "all zero", want);
        }
    }
    free(pred);
    softmax_model_free(&m);
}

GR_TEST(test_gpu_train)
{
    dl_device dev;
    GR_OK(dl_device_open(gr_gpu_device(), &dev));
    dl_data data;
    GR_OK(dl_data_load("fashion_mnist:train=20000", &data));
    size_t n = data.train.n, d = data.train.d, nt = data.test.n;
    softmax_config cfg = {0.2, 0.0, 3, 128, 1};
    double acc[2];
    int32_t *pred = malloc(nt * sizeof *pred), *host = malloc(nt * sizeof *host);
    for (int k = 0; k < 2; k++) {
        softmax_engine e;
        GR_OK(softmax_engine_init(&e, k ? &dev : dl_cpu(), data.train.X, data.train.y, n, d, 10));
        GR_OK(softmax_engine_hold(&e, data.test.X, data.test.y, nt));
        softmax_model m;
        GR_OK(softmax_model_alloc(&m, d, 10));
        GR_OK(softmax_train(&e, &cfg, &m, NULL));
        // the driver's predictions: where the model computes (on the GPU, the test rows held there)
        GR_OK(softmax_engine_predict(&e, data.test.X, nt, &m, pred));
        size_t right = 0;
        for (size_t i = 0; i < nt; i++)
            right += pred[i] == data.test.y[i];
        acc[k] = (double)right / (double)nt;
        if (k == 1) { // the GPU's argmax against your softmax_predict, for the same model
            GR_OK(softmax_predict(data.test.X, nt, &m, host));
            size_t differ = 0;
            for (size_t i = 0; i < nt; i++)
                differ += pred[i] != host[i];
            gr_note("the GPU's predictions differ from softmax_predict's on %zu of %zu rows\n", differ, nt);
            if (differ > nt / 1000)
                GR_FAIL("the same model predicts %zu of %zu test rows differently on the GPU (the engine) and in "
                        "softmax_predict; only near ties may differ (the sums' order): is the argmax the first "
                        "of the largest x_i·W_c + b_c?",
                        differ, nt);
            const dl_dataset test = {.n = nt, .d = d, .X = data.test.X, .y = data.test.y, .n_classes = 10};
            check_device_ties(&e, &test);
        }
        softmax_model_free(&m);
        softmax_engine_free(&e);
    }
    gr_note("test accuracy after 3 epochs: CPU %.4f, GPU %.4f\n", acc[0], acc[1]);
    if (fabs(acc[0] - acc[1]) > 0.005)
        GR_FAIL("the same training reaches test accuracy %.4f on the CPU but %.4f on the GPU", acc[0], acc[1]);
    free(pred), free(host);
    dl_data_free(&data);
    dl_device_close(&dev);
}
END_TEST
