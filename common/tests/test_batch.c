/* test_batch.c — the batch staging object on the CPU: gathered rows and
 * labels in index order, ranges as views of the set, and every refused call
 * leaving nothing that looks staged. (CUDA staging is in the GPU tier.) */
#include "tests.h"

#include "dl/batch.h"

/* A 7 × 3 set whose row i holds i·10 + j and label i % 3. */
static dl_dataset rows7(void)
{
    dl_dataset ds;
    ck_assert_st(dl_dataset_alloc(&ds, 7, 3, 3), DL_OK);
    for (size_t i = 0; i < 7; i++) {
        for (size_t j = 0; j < 3; j++)
            ds.X[i * 3 + j] = (float)(i * 10 + j);
        ds.y[i] = (int32_t)(i % 3);
    }
    return ds;
}

START_TEST(gather_in_index_order)
{
    dl_dataset ds = rows7();
    dl_batch b;
    ck_assert_st(dl_batch_create(&b, dl_cpu(), 4, 3), DL_OK);
    ck_assert(b.n == 0 && b.X == NULL && b.dX == NULL);
    const size_t idx[4] = {6, 0, 3, 6}; // repeats allowed (a padded shard)
    ck_assert_st(dl_batch_gather(&b, &ds, idx, 4), DL_OK);
    ck_assert_uint_eq(b.n, 4);
    ck_assert(b.X == b.hX && b.y == b.hy); // the CPU reads the staging itself
    for (size_t k = 0; k < 4; k++) {
        for (size_t j = 0; j < 3; j++)
            ck_assert_msg(b.X[k * 3 + j] == (float)(idx[k] * 10 + j), "batch row %zu, feature %zu: %g", k, j,
                          b.X[k * 3 + j]);
        ck_assert_int_eq(b.y[k], (int32_t)(idx[k] % 3));
    }
    // a smaller batch (the last one of an epoch) replaces it
    const size_t last[1] = {2};
    ck_assert_st(dl_batch_gather(&b, &ds, last, 1), DL_OK);
    ck_assert(b.n == 1 && b.X[0] == 20.0f && b.X[2] == 22.0f && b.y[0] == 2);
    dl_batch_free(&b);
    ck_assert(b.hX == NULL && b.cap == 0);
    dl_batch_free(&b); // a zeroed batch may be freed again
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(range_is_a_view_on_the_cpu)
{
    dl_dataset ds = rows7();
    dl_batch b;
    ck_assert_st(dl_batch_create(&b, dl_cpu(), 3, 3), DL_OK);
    ck_assert_st(dl_batch_range(&b, &ds, 4, 3), DL_OK); // rows 4, 5, 6: to the end
    ck_assert(b.n == 3 && b.X == ds.X + 12 && b.y == ds.y + 4);
    ck_assert_st(dl_batch_range(&b, &ds, 0, 2), DL_OK);
    ck_assert(b.n == 2 && b.X == ds.X && b.X[5] == 12.0f);
    dl_batch_free(&b);
    dl_dataset_free(&ds);
}
END_TEST

/* A refused call leaves no staged rows behind. */
static void expect_refused(dl_batch *b, dl_status got, dl_status want, const char *msg)
{
    ck_assert_st(got, want);
    ck_assert_has(dl_last_error(), msg);
    ck_assert_msg(b->n == 0 && b->X == NULL && b->y == NULL, "a refused call left %zu rows staged", b->n);
}

START_TEST(refused_calls)
{
    dl_dataset ds = rows7(), wide;
    ck_assert_st(dl_dataset_alloc(&wide, 2, 4, 2), DL_OK);
    dl_batch b;
    ck_assert_st(dl_batch_create(&b, dl_cpu(), 0, 3), DL_ERR_ARG);
    ck_assert(b.hX == NULL);
    ck_assert_st(dl_batch_create(&b, dl_cpu(), 2, 0), DL_ERR_ARG);
    ck_assert_st(dl_batch_create(&b, NULL, 2, 3), DL_ERR_ARG);
    ck_assert_st(dl_batch_create(&b, dl_cpu(), 2, 3), DL_OK);
    const size_t idx[3] = {1, 7, 2}, ok[2] = {1, 2};
    ck_assert_st(dl_batch_gather(&b, &ds, ok, 2), DL_OK);
    expect_refused(&b, dl_batch_gather(&b, &ds, idx, 3), DL_ERR_ARG, "3 rows; expected 1 to 2");
    ck_assert_st(dl_batch_gather(&b, &ds, ok, 2), DL_OK);
    expect_refused(&b, dl_batch_gather(&b, &ds, idx, 2), DL_ERR_RANGE, "index 7 at position 1 is outside the 7 rows");
    expect_refused(&b, dl_batch_gather(&b, &ds, idx, 0), DL_ERR_ARG, "0 rows");
    expect_refused(&b, dl_batch_gather(&b, &wide, ok, 1), DL_ERR_ARG, "rows of 4 features into a batch of 3");
    expect_refused(&b, dl_batch_range(&b, &ds, 6, 2), DL_ERR_ARG, "rows 6 to 7 of a set of 7");
    expect_refused(&b, dl_batch_range(&b, &ds, 9, 1), DL_ERR_ARG, "of a set of 7");
    dl_batch_free(&b);
    dl_dataset_free(&ds), dl_dataset_free(&wide);
}
END_TEST

/* The device path on the CPU backend: a devset made resident (counted as its
 * upload, no copy), an epoch's order uploaded once, batches gathered by it
 * or by per-step indices — the same rows as dl_batch_gather, and no step
 * waits for the device or moves rows from the host. */
START_TEST(resident_rows_gathered_on_the_device)
{
    dl_dataset ds = rows7();
    dl_devset s;
    dl_dev_stats a, b;
    dl_dev_stats_get(&a);
    ck_assert_st(dl_devset_make(&s, dl_cpu(), &ds, 0, 7), DL_OK);
    dl_dev_stats_get(&b);
    ck_assert_uint_eq(b.h2d_bytes - a.h2d_bytes, 7 * 3 * sizeof(float) + 7 * sizeof(int32_t)); // the upload
    ck_assert_ptr_eq(s.X, ds.X); // on the CPU the rows are where they are
    dl_batch want, got;
    ck_assert_st(dl_batch_create(&want, dl_cpu(), 4, 3), DL_OK);
    ck_assert_st(dl_batch_create(&got, dl_cpu(), 4, 3), DL_OK);
    const size_t order[7] = {6, 2, 0, 5, 1, 3, 4};
    ck_assert_st(dl_devset_order(&s, order, 7), DL_OK);
    dl_dev_stats_get(&a);
    ck_assert_st(dl_batch_take(&got, &s, 3, 4), DL_OK); // positions 3..6 of the order
    ck_assert_st(dl_batch_gather(&want, &ds, order + 3, 4), DL_OK);
    ck_assert_int_eq(memcmp(got.X, want.X, 4 * 3 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(got.y, want.y, 4 * sizeof(int32_t)), 0);
    dl_dev_stats_get(&b);
    ck_assert_uint_eq(b.syncs - a.syncs, 0); // take: no wait, no upload; gather (the host path) copied
    const size_t idx[3] = {4, 4, 0};
    dl_dev_stats_get(&a);
    ck_assert_st(dl_batch_take_idx(&got, &s, idx, 3), DL_OK);
    dl_dev_stats_get(&b);
    ck_assert_uint_eq(b.h2d_bytes - a.h2d_bytes, 3 * sizeof(int32_t)); // the indices only, without a wait
    ck_assert_uint_eq(b.syncs - a.syncs, 0);
    ck_assert_st(dl_batch_gather(&want, &ds, idx, 3), DL_OK);
    ck_assert_int_eq(memcmp(got.X, want.X, 3 * 3 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(got.y, want.y, 3 * sizeof(int32_t)), 0);
    ck_assert_st(dl_batch_take_idx(&got, &s, idx, 3), DL_OK); // again: the staging is reused
    // refusals leave nothing staged
    const size_t bad[2] = {1, 7};
    ck_assert_st(dl_batch_take_idx(&got, &s, bad, 2), DL_ERR_RANGE);
    ck_assert(got.n == 0 && got.X == NULL);
    ck_assert_has(dl_last_error(), "index 7 at position 1");
    ck_assert_st(dl_batch_take(&got, &s, 5, 3), DL_ERR_ARG); // past the order's end
    ck_assert_st(dl_devset_order(&s, bad, 2), DL_ERR_RANGE);
    ck_assert_st(dl_batch_rows(&got, &s, 2, 3), DL_OK); // a view
    ck_assert_ptr_eq(got.X, ds.X + 2 * 3);
    dl_batch_free(&want), dl_batch_free(&got);
    dl_devset_free(&s);
    dl_devset_free(&s); // a zeroed devset may be freed again
    dl_dataset_free(&ds);
}
END_TEST

Suite *batch_suite(void)
{
    return suite_of(
        "batch", tcase_with_timeout("batch", 10),
        TESTS(gather_in_index_order, range_is_a_view_on_the_cpu, refused_calls, resident_rows_gathered_on_the_device));
}
