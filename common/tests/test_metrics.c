/* test_metrics.c — metrics.csv: header, rows, non-finite spellings, atomic rename. */
#include "tests.h"

#include <math.h> // NAN, INFINITY
#include <stdlib.h> // free

#include "dl/metrics.h" // dl_csv_open/row/close/abort

START_TEST(header_rows_and_rename)
{
    const char *p = tpath("metrics.csv");
    const char *cols[3] = {"epoch", "train_loss", "val_acc"};
    dl_csv_out c;
    ck_assert_st(dl_csv_open(&c, p, cols, 3), DL_OK);
    const double r1[3] = {1, 0.5, NAN}, r2[3] = {2, INFINITY, -INFINITY};
    const double r3[3] = {3, (double)0.1f, 1e-10}, r4[3] = {4, -123456789.0, 0.125};
    ck_assert_st(dl_csv_row(&c, r1), DL_OK);
    ck_assert_st(dl_csv_row(&c, r2), DL_OK);
    ck_assert_st(dl_csv_row(&c, r3), DL_OK);
    ck_assert_st(dl_csv_row(&c, r4), DL_OK);
    ck_assert(!path_exists(p)); // not under its final name until closed
    ck_assert_int_eq(tmp_entries("metrics.csv.tmp."), 1); // a unique temporary beside it
    ck_assert_st(dl_csv_close(&c), DL_OK);
    ck_assert_int_eq(tmp_entries("metrics.csv.tmp."), 0);
    char *text = slurp(p, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "epoch,train_loss,val_acc\n"
                           "1,0.5,nan\n"
                           "2,inf,-inf\n"
                           "3,0.100000001,1e-10\n"
                           "4,-123456789,0.125\n");
    free(text);
    ck_assert_st(dl_csv_row(&c, r1), DL_ERR_IO); // closed
    ck_assert_st(dl_csv_close(&c), DL_ERR_IO);
}
END_TEST

START_TEST(abort_leaves_nothing)
{
    const char *cols[1] = {"x"};
    const double v[1] = {1};
    dl_csv_out c;
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), cols, 1), DL_OK);
    ck_assert_st(dl_csv_row(&c, v), DL_OK);
    dl_csv_abort(&c);
    ck_assert_int_eq(dir_entries(t_dir), 0);
    dl_csv_abort(&c); // twice is harmless
    // An existing file is replaced only by a completed one.
    write_text(tpath("m.csv"), "old\n");
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), cols, 1), DL_OK);
    ck_assert_st(dl_csv_row(&c, v), DL_OK);
    dl_csv_abort(&c);
    char *text = slurp(tpath("m.csv"), NULL);
    ck_assert_str_eq(text, "old\n");
    free(text);
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), cols, 1), DL_OK);
    ck_assert_st(dl_csv_close(&c), DL_OK);
    text = slurp(tpath("m.csv"), NULL);
    ck_assert_str_eq(text, "x\n");
    free(text);
}
END_TEST

START_TEST(open_errors)
{
    const char *cols[1] = {"x"};
    dl_csv_out c;
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), cols, 0), DL_ERR_ARG);
    ck_assert_st(dl_csv_open(&c, tpath("no/dir/m.csv"), cols, 1), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "no/dir/m.csv: cannot create");
    ck_assert_ptr_null(c.f);
    ck_assert_int_eq(dir_entries(t_dir), 0);
}
END_TEST

START_TEST(whole_table)
{
    const char *cols[2] = {"k", "v"};
    const double rows[6] = {0, 1.5, 1, NAN, 2, -2};
    ck_assert_st(dl_csv_write(t_dir, "t.csv", cols, 2, rows, 3), DL_OK);
    char *text = slurp(tpath("t.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "k,v\n0,1.5\n1,nan\n2,-2\n");
    free(text);
    ck_assert_int_eq(tmp_entries("t.csv.tmp."), 0);
    ck_assert_st(dl_csv_write(t_dir, "none.csv", cols, 2, rows, 0), DL_OK); // header only
    text = slurp(tpath("none.csv"), NULL);
    ck_assert_str_eq(text, "k,v\n");
    free(text);
    ck_assert_st(dl_csv_write(tpath("missing-dir"), "t.csv", cols, 2, rows, 3), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "missing-dir/t.csv: cannot create");
}
END_TEST

Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_with_tmp("metrics", 10);
    tcase_add_test(tc, header_rows_and_rename);
    tcase_add_test(tc, abort_leaves_nothing);
    tcase_add_test(tc, open_errors);
    tcase_add_test(tc, whole_table);
    suite_add_tcase(s, tc);
    return s;
}
