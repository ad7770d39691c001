/* test_train.c — the shared training layer in a world of one: the
 * cross-rank check (dl/replica.h), evaluation in chunks (dl/eval.h), an
 * epoch's sums, counters and clock (dl/epoch.h) and summary.json
 * (dl/summary.h). Several ranks are tested under mpirun by
 * common/tests_mpi/test_comm.c (tools/test-comm.sh). */
#include "tests.h"

#include <math.h> // isnan, log, NAN, INFINITY
#include <stdlib.h> // malloc, free

#include "dl/blas.h" // dl_flops_add
#include "dl/epoch.h"
#include "dl/eval.h"
#include "dl/json.h" // dl_json_parse_file
#include "dl/replica.h"
#include "dl/rng.h"
#include "dl/summary.h"
#include "dl/trainopt.h"

static dl_comm *world_of_one(void)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    dl_comm *c;
    ck_assert_st(dl_comm_init(NULL, NULL, &c), DL_OK);
    return c;
}

/* n rows of d features in 3 classes, random. */
static dl_dataset random_set(size_t n, size_t d, uint64_t seed)
{
    dl_dataset ds;
    dl_rng r;
    dl_rng_seed(&r, seed, 1);
    ck_assert_st(dl_dataset_alloc(&ds, n, d, 3), DL_OK);
    for (size_t i = 0; i < n * d; i++)
        ds.X[i] = (float)dl_rng_normal(&r);
    for (size_t i = 0; i < n; i++)
        ds.y[i] = (int32_t)dl_rng_below(&r, 3);
    return ds;
}

// ---- replica ----

START_TEST(replica_in_a_world_of_one)
{
    dl_comm *c = world_of_one();
    const float x[3] = {1, NAN, 3};
    double diff = -1;
    ck_assert_st(dl_replica_diff(c, x, 3, &diff), DL_OK);
    ck_assert(diff == 0); // rank 0 is everyone
    dl_mlp m;
    const size_t sizes[] = {4, 3};
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 2, 8, 1), DL_OK);
    diff = -1;
    ck_assert_st(dl_replica_mlp_diff(c, &m, &diff), DL_OK);
    ck_assert(diff == 0);
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    ck_assert_uint_eq(s.calls[DL_OP_BROADCAST] + s.calls[DL_OP_ALLREDUCE], 0); // nothing to ask anyone
    dl_mlp_free(&m);
    dl_comm_finalize(c);
}
END_TEST

// ---- eval ----

/* Right predictions of m on set, counted here with one dl_mlp_predict per row. */
static double reference_accuracy(dl_mlp *m, const dl_dataset *set)
{
    size_t right = 0;
    for (size_t i = 0; i < set->n; i++) {
        int32_t p;
        ck_assert_st(dl_mlp_predict(m, set->X + i * set->d, 1, &p), DL_OK);
        right += p == set->y[i];
    }
    return (double)right / (double)set->n;
}

START_TEST(eval_in_chunks)
{
    dl_comm *c = world_of_one();
    dl_dataset set = random_set(23, 5, 4);
    dl_mlp m;
    const size_t sizes[] = {5, 8, 3};
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 3, 16, 9), DL_OK);
    double want = reference_accuracy(&m, &set), acc = -1;
    ck_assert(want > 0 && want < 1); // a test that can tell right from wrong
    dl_devset s;
    ck_assert_st(dl_devset_make(&s, dl_cpu(), &set, 0, set.n), DL_OK);
    dl_dev_stats before, after;
    dl_dev_stats_get(&before);
    ck_assert_st(dl_eval_accuracy(c, &m, &s, 5, &acc), DL_OK); // 23 rows: chunks of 5, the last of 3
    ck_assert_msg(acc == want, "accuracy %.17g, expected %.17g", acc, want);
    dl_dev_stats_get(&after); // counted on the device, read once; nothing uploaded
    ck_assert_uint_eq(after.syncs - before.syncs, 1);
    ck_assert_uint_eq(after.h2d_bytes - before.h2d_bytes, 0);
    ck_assert_uint_eq(after.d2h_bytes - before.d2h_bytes, sizeof(double));
    acc = -1;
    ck_assert_st(dl_eval_accuracy_on(c, 0, &m, &s, 5, &acc), DL_OK);
    ck_assert(acc == want);
    ck_assert_st(dl_eval_accuracy(c, &m, &s, 64, &acc), DL_OK); // more than the model takes: chunks of max_batch
    ck_assert(acc == want);
    ck_assert_st(dl_eval_accuracy(c, &m, &s, 0, &acc), DL_OK);
    ck_assert(acc == want);
    // the model's count is read and restarted by every evaluation: none is left behind
    double left = -1;
    ck_assert_st(dl_mlp_take_right(&m, &left), DL_OK);
    ck_assert(left == 0);
    ck_assert_st(dl_mlp_count_right(&m, set.X, set.y, 16), DL_OK); // counts add up until read
    ck_assert_st(dl_mlp_count_right(&m, set.X + 16 * set.d, set.y + 16, 7), DL_OK);
    ck_assert_st(dl_mlp_take_right(&m, &left), DL_OK);
    ck_assert(left == want * (double)set.n);
    // refused: a set of another width
    dl_dataset wide = random_set(4, 6, 5);
    dl_devset w;
    ck_assert_st(dl_devset_make(&w, dl_cpu(), &wide, 0, wide.n), DL_OK);
    ck_assert_st(dl_eval_accuracy(c, &m, &w, 5, &acc), DL_ERR_ARG);
    ck_assert(isnan(acc));
    ck_assert_has(dl_last_error(), "4 rows of 6 features for a model of 5 inputs");
    ck_assert_st(dl_eval_accuracy_on(c, 0, &m, &w, 5, &acc), DL_ERR_ARG);
    ck_assert(isnan(acc));
    dl_devset_free(&s), dl_devset_free(&w);
    dl_mlp_free(&m);
    dl_dataset_free(&set), dl_dataset_free(&wide);
    dl_comm_finalize(c);
}
END_TEST

// ---- epoch ----

START_TEST(epoch_sums_and_counters)
{
    dl_comm *c = world_of_one();
    float g[6] = {1, 2, 3, 4, 5, 6};
    ck_assert_st(dl_comm_barrier(c), DL_OK); // before the epoch: not counted
    dl_flops_add(99);
    dl_epoch e;
    dl_epoch_begin(&e, c);
    dl_flops_add(1000);
    ck_assert_st(dl_comm_allreduce(c, g, 6, DL_F32, DL_RED_AVG), DL_OK);
    dl_epoch_step(&e, 4, 2.0);
    dl_flops_add(500);
    ck_assert_st(dl_comm_allreduce(c, g, 6, DL_F32, DL_RED_AVG), DL_OK);
    dl_epoch_step(&e, 2, 0.5);
    dl_epoch_stop(&e);
    ck_assert_st(dl_comm_barrier(c), DL_OK); // after the stop: not counted either
    dl_epoch_sums s;
    ck_assert_st(dl_epoch_reduce(&e, 100, 7, 12, &s), DL_OK);
    ck_assert(s.loss == (4 * 2.0 + 2 * 0.5) / 6 && s.local_loss == s.loss);
    ck_assert(s.rows_min == 6 && s.rows_max == 6);
    ck_assert(s.w.flops == 1500 && s.w.steps == 2 && s.w.samples == 6 && s.w.dataset == 12);
    ck_assert(s.w.mem_bytes == 200 && s.w.launches == 14);
    ck_assert(s.w.allreduce_calls == 2 && s.w.allreduce_bytes == 48 && s.w.bcast_calls == 0);
    dl_epoch_begin(&e, c); // an epoch without steps: no loss to report
    dl_epoch_stop(&e);
    ck_assert_st(dl_epoch_reduce(&e, 100, 7, 12, &s), DL_OK);
    ck_assert(isnan(s.loss) && isnan(s.local_loss) && s.w.steps == 0 && s.w.flops == 0);
    dl_comm_finalize(c);
}
END_TEST

START_TEST(epoch_clock_of_one)
{
    dl_comm *c = world_of_one();
    double t0 = -1, epoch = -1, imb = -1, per[1] = {-1};
    ck_assert_st(dl_epoch_clock_begin(c, &t0), DL_OK);
    ck_assert(t0 > 0);
    ck_assert_st(dl_epoch_clock_end(c, t0, 0.25, per, &epoch, &imb), DL_OK);
    ck_assert(epoch >= 0 && per[0] == 0.25 && imb == 1.0); // no bound on time: speed belongs in make bench
    ck_assert_st(dl_epoch_clock_end(c, t0, 0.0, NULL, &epoch, &imb), DL_OK); // no compute: balanced
    ck_assert(imb == 1.0);
    dl_comm_stats s;
    dl_comm_stats_get(c, &s);
    ck_assert_uint_eq(s.calls[DL_OP_BARRIER], 3); // one to start, one to end each epoch
    dl_comm_finalize(c);
}
END_TEST

START_TEST(steady_and_exploded)
{
    const double one[1] = {9}, two[2] = {9, 2}, t[5] = {9, 3, 1, 2, 7};
    ck_assert(isnan(dl_steady_seconds(one, 0, 1)));
    ck_assert(dl_steady_seconds(one, 1, 1) == 9); // the only epoch
    ck_assert(dl_steady_seconds(two, 2, 1) == 2); // the warm-up epoch is left out
    ck_assert(dl_steady_seconds(t, 5, 1) == 2.5); // median of 3, 1, 2, 7
    ck_assert(dl_steady_seconds(t, 4, 1) == 2); // median of 3, 1, 2
    const double table[6] = {1, 9, 2, 4, 3, 6}; // a column of a 2-wide table: 9, 4, 6
    ck_assert(dl_steady_seconds(table + 1, 3, 2) == 5);
    double ln10 = log(10.0);
    ck_assert(!dl_loss_exploded(2.32, NAN, 10)); // above ln 10, below twice it: a first epoch
    ck_assert(dl_loss_exploded(2 * ln10 + 0.01, NAN, 10));
    ck_assert(dl_loss_exploded(NAN, 1, 10) && dl_loss_exploded(INFINITY, 1, 10));
    ck_assert(!dl_loss_exploded(1.13, 1.0, 10)); // a bump
    ck_assert(dl_loss_exploded(2.18 * 2, 2.18, 10) == 0 && dl_loss_exploded(4.37, 2.18, 10)); // twice the best
}
END_TEST

/* The ideal workload against what the counters count on a real epoch. */
START_TEST(ideal_workload_is_what_is_counted)
{
    const size_t sizes[] = {6, 5, 4, 3};
    size_t n = 40, P = 3, b = 4, per = (n + P - 1) / P; // 14 rows a rank: steps of 4, 4, 4, 2
    dl_workload w;
    dl_epoch_ideal_workload(sizes, 4, n, (int)P, b, &w);
    dl_mlp_cost step;
    dl_mlp_step_cost(sizes, 4, b, &step);
    ck_assert(w.steps == 4 && w.samples == 14 && w.dataset == 40);
    ck_assert(w.mem_bytes == 4 * step.mem_bytes && w.launches == 4 * step.launches);
    ck_assert(w.allreduce_calls == 4 && w.allreduce_bytes == 4 * 4 * step.params &&
              step.params == (6 * 5 + 5) + (5 * 4 + 4) + (4 * 3 + 3));
    // one rank's counted epoch on the same rows: the same FLOPs
    dl_mlp m;
    ck_assert_st(dl_mlp_create(&m, dl_cpu(), sizes, 4, b, 2), DL_OK);
    dl_dataset set = random_set(per, 6, 8);
    dl_flops_reset();
    for (size_t start = 0; start < per; start += b) {
        size_t k = per - start < b ? per - start : b;
        double loss;
        ck_assert_st(dl_mlp_forward(&m, set.X + start * 6, k), DL_OK);
        ck_assert_st(dl_mlp_loss(&m, set.y + start, k, &loss), DL_OK);
        ck_assert_st(dl_mlp_backward(&m, set.X + start * 6, k, 0, NULL, NULL), DL_OK);
    }
    ck_assert_msg((double)dl_flops() == w.flops, "counted %g FLOPs, the model says %g", (double)dl_flops(), w.flops);
    dl_workload one;
    dl_epoch_ideal_workload(sizes, 4, n, 1, b, &one); // the job on one GPU: all rows, no communication
    ck_assert(one.samples == 40 && one.steps == 10 && one.allreduce_calls == 0 && one.allreduce_bytes == 0);
    dl_mlp_free(&m);
    dl_dataset_free(&set);
}
END_TEST

// ---- summary ----

static void body(dl_json *j, const void *ctx)
{
    const dl_workload *w = ctx;
    dl_summary_workload(j, "counters", w);
    dl_profile prof = {"test-gpu", 4};
    dl_projection p = {4, 0.002, 0.001, 0.003, 0.009, 3.0};
    dl_summary_projection(j, "projection", &prof, 4, &p, NULL);
    dl_summary_projection(j, "none", &prof, 1, &p, "one rank communicates nothing");
}

START_TEST(summary_files)
{
    const char *dir = tpath("out/run");
    ck_assert_st(dl_summary_prepare(dir), DL_OK); // creates the folders
    write_text(tpath("out/run/summary.json"), "{\"stale\": true}");
    ck_assert_st(dl_summary_prepare(dir), DL_OK);
    ck_assert(!path_exists(tpath("out/run/summary.json"))); // a stale summary is gone
    dl_workload w = {1e9, 0, 2e6, 45, 3, 3, 12, 0, 0, 1000, 4000, 1};
    ck_assert_st(dl_summary_write(dir, tpath("copy.json"), body, &w), DL_OK);
    char *a = slurp(tpath("out/run/summary.json"), NULL), *b = slurp(tpath("copy.json"), NULL);
    ck_assert(a != NULL && b != NULL);
    ck_assert_str_eq(a, b); // --json gets the same document
    dl_jv *v = NULL;
    ck_assert_st(dl_json_parse_file(tpath("copy.json"), &v), DL_OK);
    ck_assert(dl_jv_num(dl_jv_get(v, "counters.flops"), 0) == 1e9);
    ck_assert(dl_jv_num(dl_jv_get(v, "counters.launches"), 0) == 45);
    ck_assert(dl_jv_num(dl_jv_get(v, "counters.overlapped"), 0) == 1);
    ck_assert(dl_jv_num(dl_jv_get(v, "projection.speedup"), 0) == 3.0);
    ck_assert(dl_jv_num(dl_jv_get(v, "projection.single_gpu_ms"), 0) == 9.0);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "projection.profile"), ""), "test-gpu");
    ck_assert(dl_jv_num(dl_jv_get(v, "none.projected"), 1) == 0);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "none.omitted"), ""), "one rank communicates nothing");
    ck_assert(dl_jv_get(v, "none.speedup") == NULL); // an omitted projection leaves no number to misread
    dl_jv_free(v);
    free(a), free(b);
    ck_assert_st(dl_summary_write(tpath("missing"), NULL, body, &w), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "missing/summary.json");
}
END_TEST

static void training_body(dl_json *j, const void *ctx)
{
    dl_summary_training(j, ctx);
}

START_TEST(summary_of_a_training_run)
{
    static const double rows[2] = {30000, 30000};
    static const float mean[2] = {0.5f, 0.25f}, sd[2] = {1, 2};
    dl_profile prof = {"test-gpu", 4};
    dl_train_report r = {3, 45, 1000, 0.5, 0.875, NAN, 0, 0, 0, 0, rows, 2, 60000, 9.5, 3.0, NAN, 1.25, NULL};
    r.prof = &prof;
    r.why_not = "one rank communicates nothing";
    ck_assert_st(dl_summary_write(t_dir, NULL, training_body, &r), DL_OK);
    dl_jv *v = NULL;
    ck_assert_st(dl_json_parse_file(tpath("summary.json"), &v), DL_OK);
    ck_assert(dl_jv_num(dl_jv_get(v, "steps"), 0) == 45 && dl_jv_num(dl_jv_get(v, "test_accuracy"), 0) == 0.875);
    ck_assert(dl_jv_num(dl_jv_get(v, "rows_per_rank"), 0) == 0 && dl_jv_get(v, "rows_per_rank")->n == 2);
    // what this run did not have is not written: no validation split, no steady epoch, no scaler
    ck_assert(dl_jv_get(v, "val_accuracy") == NULL && dl_jv_get(v, "steady_epoch_seconds") == NULL);
    ck_assert(dl_jv_get(v, "scaler") == NULL && dl_jv_get(v, "projection.speedup") == NULL);
    dl_jv_free(v);
    r.val_accuracy = 0.75, r.val_rows = 5000, r.test_rows = 5000, r.steady_epoch_seconds = 2.5;
    r.mean = mean, r.std = sd, r.d = 2, r.why_not = NULL, r.proj.speedup = 2.5;
    ck_assert_st(dl_summary_write(t_dir, NULL, training_body, &r), DL_OK);
    ck_assert_st(dl_json_parse_file(tpath("summary.json"), &v), DL_OK);
    ck_assert(dl_jv_num(dl_jv_get(v, "val_accuracy"), 0) == 0.75 && dl_jv_num(dl_jv_get(v, "val_rows"), 0) == 5000);
    ck_assert(dl_jv_num(dl_jv_get(v, "steady_epoch_seconds"), 0) == 2.5);
    ck_assert(dl_jv_get(v, "scaler.std")->n == 2 && dl_jv_num(dl_jv_get(v, "projection.speedup"), 0) == 2.5);
    dl_jv_free(v);
}
END_TEST

START_TEST(shared_training_flags)
{
    dl_args a;
    dl_args_defaults(&a);
    dl_train_opts t;
    dl_train_opts_defaults(&t);
    ck_assert_str_eq(t.hidden, "256");
    ck_assert(t.momentum == 0.9 && t.weight_decay == 5e-4 && t.base_batch == 4096 && t.warmup == 10);
    ck_assert(!t.cosine && !t.stratified && !t.drop_last && t.max_steps == 0 && t.profile == NULL);
    dl_opt opts[DL_TRAIN_OPTS + 1];
    int n = dl_train_opts_table(&t, opts);
    ck_assert_int_eq(n, DL_TRAIN_OPTS);
    char *ok[] = {"labX",          "--hidden", "64,32",          "--cosine", "--max-steps", "7",
                  "--dump-params", "p.npy",    "--momentum=0.5", "--out",    t_dir};
    ck_assert_int_eq(dl_cli_parse(11, ok, "labX", "a test", &a, opts, (size_t)n), DL_CLI_RUN);
    ck_assert_str_eq(t.hidden, "64,32");
    ck_assert(t.cosine == 1 && t.max_steps == 7 && t.momentum == 0.5);
    ck_assert_str_eq(t.dump_params, "p.npy");
    ck_assert(!dl_train_stop(&t, 6) && dl_train_stop(&t, 7));
    t.max_steps = 0;
    ck_assert(!dl_train_stop(&t, 1000000)); // no limit
    char *bad[] = {"labX", "--momentum", "1.5", "--out", t_dir};
    capture cap;
    capture_start(&cap, 2);
    int rc = dl_cli_parse(5, bad, "labX", "a test", &a, opts, (size_t)n);
    char *err = capture_stop(&cap);
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(err, "--momentum");
    free(err);
    // a driver's pick: only those flags, in the table's order, whatever the order asked
    dl_opt some[DL_TRAIN_OPTS];
    ck_assert_int_eq(dl_train_opts_pick(&t, "profile,hidden,warmup", some), 3);
    ck_assert_str_eq(some[0].name, "hidden");
    ck_assert_str_eq(some[1].name, "warmup");
    ck_assert_str_eq(some[2].name, "profile");
    ck_assert(some[0].dst == &t.hidden && some[2].dst == &t.profile);
    ck_assert_int_eq(dl_train_opts_pick(&t, "hidden,cosine-decay", some), -1); // not one of them
    ck_assert_int_eq(dl_train_opts_pick(&t, "hidden,hidden", some), -1); // twice
    char *no_cosine[] = {"labX", "--cosine", "--out", t_dir}; // a flag the driver did not pick is unknown
    ck_assert_int_eq(dl_train_opts_pick(&t, "profile,hidden,warmup", some), 3);
    capture_start(&cap, 2);
    rc = dl_cli_parse(4, no_cosine, "labX", "a test", &a, some, 3);
    err = capture_stop(&cap);
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(err, "--cosine");
    free(err);
}
END_TEST

Suite *train_suite(void)
{
    return suite_of("train", tcase_with_tmp("train", 30),
                    TESTS(replica_in_a_world_of_one, eval_in_chunks, epoch_sums_and_counters, epoch_clock_of_one,
                          steady_and_exploded, ideal_workload_is_what_is_counted, summary_files,
                          summary_of_a_training_run, shared_training_flags));
}
