/* test_metrics.c — metrics.csv: header, rows, non-finite spellings, atomic rename. */
#include "tests.h"

#include <math.h> // NAN, INFINITY
#include <stdlib.h> // free

#include "dl/metrics.h" // DL_CSV_SCHEMA, dl_csv_open/row/cell/close/abort, dl_csv_drop

START_TEST(header_rows_and_rename)
{
    const char *p = tpath("metrics.csv");
    const char *cols[3] = {"epoch", "train_loss", "val_acc"};
    dl_csv_out c;
    ck_assert_st(dl_csv_open(&c, p, (dl_cols){cols, 3}), DL_OK);
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
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), (dl_cols){cols, 1}), DL_OK);
    ck_assert_st(dl_csv_row(&c, v), DL_OK);
    dl_csv_abort(&c);
    ck_assert_int_eq(dir_entries(t_dir), 0);
    dl_csv_abort(&c); // twice is harmless
    // An existing file is replaced only by a completed one.
    write_text(tpath("m.csv"), "old\n");
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), (dl_cols){cols, 1}), DL_OK);
    ck_assert_st(dl_csv_row(&c, v), DL_OK);
    dl_csv_abort(&c);
    char *text = slurp(tpath("m.csv"), NULL);
    ck_assert_str_eq(text, "old\n");
    free(text);
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), (dl_cols){cols, 1}), DL_OK);
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
    ck_assert_st(dl_csv_open(&c, tpath("m.csv"), (dl_cols){cols, 0}), DL_ERR_ARG);
    ck_assert_st(dl_csv_open(&c, tpath("no/dir/m.csv"), (dl_cols){cols, 1}), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "no/dir/m.csv: cannot create");
    ck_assert_ptr_null(c.f);
    ck_assert_int_eq(dir_entries(t_dir), 0);
}
END_TEST

START_TEST(whole_table)
{
    const char *cols[2] = {"k", "v"};
    const double rows[6] = {0, 1.5, 1, NAN, 2, -2};
    ck_assert_st(dl_csv_write(t_dir, "t.csv", (dl_cols){cols, 2}, rows, 3), DL_OK);
    char *text = slurp(tpath("t.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "k,v\n0,1.5\n1,nan\n2,-2\n");
    free(text);
    ck_assert_int_eq(tmp_entries("t.csv.tmp."), 0);
    ck_assert_st(dl_csv_write(t_dir, "none.csv", (dl_cols){cols, 2}, rows, 0), DL_OK); // header only
    text = slurp(tpath("none.csv"), NULL);
    ck_assert_str_eq(text, "k,v\n");
    free(text);
    ck_assert_st(dl_csv_write(tpath("missing-dir"), "t.csv", (dl_cols){cols, 2}, rows, 3), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "missing-dir/t.csv: cannot create");
    dl_csv_drop(t_dir, "none.csv"); // an earlier run's file: gone, the others kept
    dl_csv_drop(t_dir, "never-written.csv"); // nothing there: nothing to do
    ck_assert_ptr_null(slurp(tpath("none.csv"), NULL));
    text = slurp(tpath("t.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    free(text);
}
END_TEST

START_TEST(named_rows)
{
    const char *cols[3] = {"class", "a", "b"}, *labels[2] = {"T-shirt/top", "say \"hi\""};
    const double rows[4] = {1, 2.5, NAN, 4};
    ck_assert_st(dl_csv_write_named(t_dir, "n.csv", (dl_cols){cols, 3}, labels, rows, 2), DL_OK);
    char *text = slurp(tpath("n.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "class,a,b\n\"T-shirt/top\",1,2.5\n\"say \"\"hi\"\"\",nan,4\n");
    free(text);
    const char *one[1] = {"run"};
    ck_assert_st(dl_csv_write_named(t_dir, "l.csv", (dl_cols){one, 1}, labels, rows, 1), DL_OK); // labels only
    text = slurp(tpath("l.csv"), NULL);
    ck_assert_str_eq(text, "run\n\"T-shirt/top\"\n");
    free(text);
    ck_assert_st(dl_csv_write_named(t_dir, "x.csv", (dl_cols){cols, 3}, NULL, rows, 2), DL_ERR_ARG);
}
END_TEST

START_TEST(table_row_by_row)
{
#define CURVE(X) X(C_EPOCH, "epoch") X(C_LOSS, "loss")
    DL_CSV_SCHEMA(curve, CURVE);
    ck_assert_int_eq(CURVE_NCOLS, 2);
    ck_assert(curve.n == 2 && C_LOSS == 1 && strcmp(curve_names[C_LOSS], "loss") == 0);
    dl_table t;
    dl_table_init(&t, curve);
    ck_assert_ptr_null(dl_table_column(&t, "loss")); // nothing yet
    ck_assert(isnan(dl_table_at(&t, 0, "loss")));
    for (int e = 0; e < 40; e++) { // past the first growth
        double row[CURVE_NCOLS] = {[C_LOSS] = 1.0 / (e + 1), [C_EPOCH] = e + 1}; // by column, in any order
        ck_assert_st(dl_table_add(&t, row), DL_OK);
    }
    ck_assert_int_eq(t.n, 40);
    ck_assert(dl_table_at(&t, 39, "epoch") == 40 && dl_table_at(&t, 3, "loss") == 0.25);
    ck_assert(isnan(dl_table_at(&t, 40, "loss")) && isnan(dl_table_at(&t, -1, "loss")));
    ck_assert(isnan(dl_table_at(&t, 0, "nope")) && dl_table_column(&t, "nope") == NULL);
    const double *loss = dl_table_column(&t, "loss");
    ck_assert(loss[2 * 1] == 0.5); // stride: the number of columns
    ck_assert_st(dl_table_write(&t, t_dir, "m.csv"), DL_OK);
    char *text = slurp(tpath("m.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert(strncmp(text, "epoch,loss\n1,1\n2,0.5\n3,0.333333333\n", 34) == 0);
    free(text);
    dl_table_free(&t);
    ck_assert(t.n == 0 && t.rows == NULL);
}
END_TEST

START_TEST(row_by_cell)
{
#define SPANS(X) X(S_INDEX, "index") X(S_KIND, "kind") X(S_T0, "t0")
    DL_CSV_SCHEMA(spans, SPANS);
    dl_csv_out c;
    ck_assert_st(dl_csv_open(&c, tpath("s.csv"), spans), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_T0, "%.3f", 0.5), DL_OK); // any order
    ck_assert_st(dl_csv_cell(&c, S_KIND, "%s", "step"), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_INDEX, "%d", 0), DL_OK);
    ck_assert_st(dl_csv_end_row(&c), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_INDEX, "%d", 1), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_KIND, "%s", "forward"), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_T0, "%.3f", 1.25), DL_OK);
    ck_assert_st(dl_csv_end_row(&c), DL_OK);
    ck_assert_st(dl_csv_close(&c), DL_OK);
    char *text = slurp(tpath("s.csv"), NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, "index,kind,t0\n0,step,0.500\n1,forward,1.250\n");
    free(text);
    // a cell left unset: the row is refused, naming the column, and no file is written
    ck_assert_st(dl_csv_open(&c, tpath("u.csv"), spans), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_INDEX, "%d", 0), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_T0, "%d", 0), DL_OK);
    ck_assert_st(dl_csv_end_row(&c), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "'kind'");
    ck_assert_st(dl_csv_close(&c), DL_ERR_ARG);
    ck_assert(!path_exists(tpath("u.csv")));
    ck_assert_int_eq(tmp_entries("u.csv.tmp."), 0);
    // no such column, or a cell too long
    ck_assert_st(dl_csv_open(&c, tpath("v.csv"), spans), DL_OK);
    ck_assert_st(dl_csv_cell(&c, SPANS_NCOLS, "%d", 0), DL_ERR_ARG);
    dl_csv_abort(&c);
    ck_assert_st(dl_csv_open(&c, tpath("v.csv"), spans), DL_OK);
    ck_assert_st(dl_csv_cell(&c, S_KIND, "%*s", DL_CSV_CELL_MAX, "x"), DL_ERR_ARG);
    ck_assert_st(dl_csv_close(&c), DL_ERR_ARG);
    ck_assert_int_eq(dir_entries(t_dir), 1); // s.csv only
}
END_TEST

Suite *metrics_suite(void)
{
    return suite_of("metrics", tcase_with_tmp("metrics", 10),
                    TESTS(header_rows_and_rename, abort_leaves_nothing, open_errors, whole_table, named_rows,
                          table_row_by_row, row_by_cell));
}
