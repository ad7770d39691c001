/* test_trace.c — dl/trace.h: the kit records forward, each layer's backward,
 * the optimizer and the allreduces in the order they ran, and writes them as
 * CSV and as a Chrome trace that parses. */
#include "tests.h"

#include <stdio.h> // remove
#include <stdlib.h> // unsetenv, mkdtemp

#include "dl/comm.h"
#include "dl/fs.h" // dl_read_file
#include "dl/json.h"
#include "dl/mlp.h"
#include "dl/trace.h"
#include "dl/trace_chrome.h" // dl_trace_write_chrome

typedef struct launch_ctx {
    dl_comm *c;
    dl_comm_req *req[4];
    int n;
} launch_ctx;

/* Starts an allreduce of each layer's slice as soon as it is ready. */
static void launch(void *ctx, int layer, void *grad, size_t count)
{
    launch_ctx *k = ctx;
    (void)layer;
    ck_assert_st(dl_comm_allreduce_async(k->c, grad, count, DL_F32, DL_RED_SUM, &k->req[k->n++]), DL_OK);
}

START_TEST(test_order_of_a_step)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert_st(dl_comm_init(NULL, NULL, &c), DL_OK);
    const size_t sizes[] = {3, 4, 2};
    dl_mlp m;
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 3, 2, 1), DL_OK);
    float X[6] = {1, 2, 3, -1, 0, 1};
    int32_t y[2] = {0, 1};
    double loss;
    // off: nothing recorded
    ck_assert_st(dl_mlp_forward(&m, X, 2), DL_OK);
    size_t n;
    dl_trace_events(&n);
    ck_assert_uint_eq(n, 0);
    dl_trace_start(0);
    for (long step = 0; step < 2; step++) {
        dl_trace_set_step(step);
        size_t s = dl_trace_begin(DL_EV_STEP, 0, 0, 0);
        launch_ctx k = {.c = c};
        ck_assert_st(dl_mlp_forward(&m, X, 2), DL_OK);
        ck_assert_st(dl_mlp_loss(&m, y, 2, &loss), DL_OK);
        ck_assert_st(dl_mlp_backward(&m, X, 2, 0, launch, &k), DL_OK);
        for (int b = 0; b < k.n; b++)
            ck_assert_st(dl_comm_wait(c, k.req[b]), DL_OK);
        ck_assert_st(dl_comm_allreduce(c, &loss, 1, DL_F64, DL_RED_SUM), DL_OK);
        ck_assert_st(dl_mlp_sgd(&m, 0.1f, 0.9f, 0.0f), DL_OK);
        dl_trace_end(s);
    }
    dl_trace_stop();
    const dl_span *e = dl_trace_events(&n);
    // per step: step, forward, backward 1, allreduce 0 (layer 1), backward 0,
    // allreduce 1 (layer 0), the blocking allreduce 2, optimizer
    const int kinds[] = {DL_EV_STEP,     DL_EV_FORWARD,   DL_EV_BACKWARD,  DL_EV_ALLREDUCE,
                         DL_EV_BACKWARD, DL_EV_ALLREDUCE, DL_EV_ALLREDUCE, DL_EV_OPTIM};
    const int ids[] = {0, 0, 1, 0, 0, 1, 2, 0};
    ck_assert_uint_eq(n, 16);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(e[i].kind == kinds[i % 8] && e[i].id == ids[i % 8], "event %zu: %s %d", i,
                      dl_trace_kind_name(e[i].kind), e[i].id);
        ck_assert_int_eq(e[i].step, (long)(i / 8));
        ck_assert_msg(e[i].t1 >= e[i].t0 && e[i].t0 >= 0, "event %zu: %g..%g", i, e[i].t0, e[i].t1);
    }
    ck_assert(e[3].async == 1 && e[6].async == 0);
    // what each span asked of the device: the forward's two GEMMs and two bias
    // passes; the loss read back (a wait) inside the step; the optimizer's two
    // passes per layer; the step holds all of its spans' work
    ck_assert_msg(e[1].launches == 4 && e[1].syncs == 0, "forward: %g launches, %g syncs", e[1].launches, e[1].syncs);
    ck_assert_msg(e[7].launches == 4 && e[7].syncs == 0, "optimizer: %g launches", e[7].launches);
    ck_assert_msg(e[0].syncs == 1, "step: %g syncs (the loss read back)", e[0].syncs);
    ck_assert(e[0].launches > e[1].launches + e[2].launches + e[4].launches + e[7].launches);
    ck_assert(e[1].flops == 2.0 * 2 * (3 * 4 + 4 * 2) && e[0].flops > e[1].flops);
    ck_assert(e[3].bytes == 4.0 * (4 * 2 + 2) && e[5].bytes == 4.0 * (3 * 4 + 4) && e[6].bytes == 8.0);
    ck_assert(e[0].t1 >= e[7].t1); // the step span holds the rest
    // the files
    char dir[] = "/tmp/dl-trace-XXXXXX", csv[64], json[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/trace.csv", dir);
    snprintf(json, sizeof json, "%s/trace.json", dir);
    ck_assert_st(dl_trace_write_csv(csv), DL_OK);
    ck_assert_st(dl_trace_write_chrome(c, json), DL_OK);
    char *text = NULL;
    ck_assert_st(dl_read_file(csv, &text, NULL), DL_OK);
    ck_assert_has(text, "index,kind,id,step,t0,t1,bytes,async,launches,syncs\n0,step,0,0,");
    ck_assert_has(text, ",1\n1,forward,0,0,"); // the step's one wait, then the forward
    ck_assert_has(text, ",0,4,0\n2,backward,1,0,"); // the forward: not async, 4 launches, no wait
    ck_assert_has(text, "\n3,allreduce,0,0,");
    free(text);
    dl_jv *v;
    ck_assert_st(dl_json_parse_file(json, &v), DL_OK);
    const dl_jv *ev = dl_jv_get(v, "traceEvents");
    ck_assert_ptr_nonnull(ev);
    ck_assert_uint_eq(ev->n, 4 + 16); // names of the process and its three threads, then the spans
    ck_assert_str_eq(dl_jv_str(dl_jv_get(&ev->items[4], "ph"), ""), "X");
    ck_assert_str_eq(dl_jv_str(dl_jv_get(&ev->items[7], "name"), ""), "allreduce 0 (0 KiB)");
    ck_assert(dl_jv_num(dl_jv_get(&ev->items[7], "tid"), -1) == 1);
    dl_jv_free(v);
    remove(csv);
    remove(json);
    remove(dir);
    dl_trace_clear();
    dl_trace_events(&n);
    ck_assert_uint_eq(n, 0);
    dl_mlp_free(&m);
    dl_comm_finalize(c);
}
END_TEST

Suite *trace_suite(void)
{
    return suite_of("trace", tcase_with_timeout("trace", 30), TESTS(test_order_of_a_step));
}
