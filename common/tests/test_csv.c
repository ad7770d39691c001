/* test_csv.c — the CSV reader (and dl_dataset helpers): values, missing data,
 * line endings, and an exact location and reason for every rejected file. */
#include "tests.h"

#include <math.h> // isnan
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free

#include "dl/data.h" // dl_read_csv, dl_dataset_*

static dl_dataset read_ok(const char *name, const char *text, const dl_csv_options *opt)
{
    const char *p = tpath(name);
    write_text(p, text);
    dl_dataset ds;
    ck_assert_st(dl_read_csv(p, opt, &ds), DL_OK);
    return ds;
}

/* Reads text as a CSV that must fail with want, at "path<where>", giving reason. */
static void read_bad(const char *name, const char *text, const dl_csv_options *opt, dl_status want, const char *where,
                     const char *reason)
{
    const char *p = tpath(name);
    write_text(p, text);
    dl_dataset ds, zero;
    memset(&ds, 0xab, sizeof ds);
    memset(&zero, 0, sizeof zero);
    dl_status st = dl_read_csv(p, opt, &ds);
    ck_assert_msg(st == want, "%s: got %s, expected %s (%s)", name, dl_status_name(st), dl_status_name(want),
                  dl_last_error());
    char loc[4400];
    snprintf(loc, sizeof loc, "%s%s", p, where);
    ck_assert_has(dl_last_error(), loc);
    ck_assert_has(dl_last_error(), reason);
    ck_assert_msg(memcmp(&ds, &zero, sizeof ds) == 0, "%s: the dataset is not zeroed", name);
}

START_TEST(reads_values_and_names)
{
    dl_dataset ds = read_ok("a.csv", "alpha,beta,label\n1.5,-2,0\n3e2,4,2\n0,0.25,1\n", NULL);
    ck_assert_uint_eq(ds.n, 3);
    ck_assert_uint_eq(ds.d, 2);
    ck_assert_int_eq(ds.n_classes, 3);
    ck_assert_ptr_nonnull(ds.feature_names);
    ck_assert_str_eq(ds.feature_names[0], "alpha");
    ck_assert_str_eq(ds.feature_names[1], "beta");
    const float X[6] = {1.5f, -2.0f, 300.0f, 4.0f, 0.0f, 0.25f};
    const int32_t y[3] = {0, 2, 1};
    ck_assert_mem_eq(ds.X, X, sizeof X);
    ck_assert_mem_eq(ds.y, y, sizeof y);
    dl_dataset_free(&ds);
    ck_assert_ptr_null(ds.X);
    ck_assert_uint_eq(ds.n, 0);
    dl_dataset_free(&ds); // a zeroed set frees fine
}
END_TEST

START_TEST(label_column_by_name)
{
    dl_csv_options opt = {"kind", 0};
    dl_dataset ds = read_ok("b.csv", "x,kind,z\n1,1,2\n3,0,4\n", &opt);
    ck_assert_uint_eq(ds.d, 2);
    ck_assert_str_eq(ds.feature_names[0], "x");
    ck_assert_str_eq(ds.feature_names[1], "z");
    const float X[4] = {1, 2, 3, 4};
    ck_assert_mem_eq(ds.X, X, sizeof X);
    ck_assert_int_eq(ds.y[0], 1);
    ck_assert_int_eq(ds.y[1], 0);
    ck_assert_int_eq(ds.n_classes, 2);
    dl_dataset_free(&ds);
    // n_classes from the options may exceed the largest label.
    dl_csv_options three = {NULL, 3};
    ds = read_ok("c.csv", "x,y\n1,0\n2,1\n", &three);
    ck_assert_int_eq(ds.n_classes, 3);
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(missing_values_are_nan)
{
    dl_dataset ds = read_ok("m.csv", "a,b,c,d,e,y\n,nan,NaN,NA,7,1\n1,2,3,4,5,0\n", NULL);
    ck_assert_uint_eq(ds.n, 2);
    ck_assert_uint_eq(ds.d, 5);
    for (int j = 0; j < 4; j++)
        ck_assert_msg(isnan(ds.X[j]), "column %d is not missing", j);
    ck_assert_float_eq(ds.X[4], 7.0f);
    for (int j = 5; j < 10; j++)
        ck_assert_float_eq(ds.X[j], (float)(j - 4));
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(crlf_blank_lines_and_blanks)
{
    dl_dataset ds = read_ok("w.csv", "\r\n\na , \"b\",y\r\n1, 2 ,0\r\n\r\n   \r\n3,4,1\r\n\n", NULL);
    ck_assert_uint_eq(ds.n, 2);
    ck_assert_uint_eq(ds.d, 2);
    ck_assert_str_eq(ds.feature_names[0], "a");
    ck_assert_str_eq(ds.feature_names[1], "b");
    const float X[4] = {1, 2, 3, 4};
    ck_assert_mem_eq(ds.X, X, sizeof X);
    ck_assert_int_eq(ds.y[1], 1);
    dl_dataset_free(&ds);
    ds = read_ok("nonl.csv", "a,y\n5,1", NULL); // no final newline
    ck_assert_uint_eq(ds.n, 1);
    ck_assert_float_eq(ds.X[0], 5.0f);
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(many_rows)
{
    const int n = 5000;
    char *text = malloc((size_t)n * 32 + 32);
    int k = sprintf(text, "f,g,y\n");
    for (int i = 0; i < n; i++)
        k += sprintf(text + k, "%d,%d.5,%d\n", i, -i, i % 4);
    dl_dataset ds = read_ok("big.csv", text, NULL);
    free(text);
    ck_assert_uint_eq(ds.n, (size_t)n);
    ck_assert_int_eq(ds.n_classes, 4);
    ck_assert_float_eq(ds.X[2 * (n - 1)], (float)(n - 1));
    ck_assert_float_eq(ds.X[2 * (n - 1) + 1], -(float)(n - 1) - 0.5f); // "-4999.5"
    ck_assert_int_eq(ds.y[n - 1], (n - 1) % 4);
    size_t counts[4];
    dl_dataset_class_counts(&ds, counts);
    for (int c = 0; c < 4; c++)
        ck_assert_uint_eq(counts[c], (size_t)n / 4);
    dl_dataset_free(&ds);
}
END_TEST

START_TEST(rejects_with_location_and_reason)
{
    read_bad("ragged.csv", "a,b,y\n1,2,0\n1,2\n", NULL, DL_ERR_FORMAT, ":3:", "ragged row: 2 fields, expected 3");
    read_bad("wide.csv", "a,b,y\n1,2,0,9\n", NULL, DL_ERR_FORMAT, ":2:", "ragged row: 4 fields");
    read_bad("word.csv", "a,b,y\n1,2,0\n\n3,abc,1\n", NULL, DL_ERR_FORMAT, ":4:2:", "'abc' is not a number");
    read_bad("inf.csv", "a,b,y\n1,inf,0\n", NULL, DL_ERR_FORMAT, ":2:2:", "not a number");
    read_bad("unit.csv", "a,b,y\n1,2kg,0\n", NULL, DL_ERR_FORMAT, ":2:2:", "'2kg' is not a number");
    read_bad("empty.csv", "", NULL, DL_ERR_FORMAT, ": ", "empty file");
    read_bad("blank.csv", "\n  \n\r\n", NULL, DL_ERR_FORMAT, ": ", "empty file");
    read_bad("header.csv", "a,b,y\n", NULL, DL_ERR_FORMAT, ":1:", "no data rows");
    read_bad("header2.csv", "\na,b,y\n\n\n", NULL, DL_ERR_FORMAT, ":2:", "no data rows");
    read_bad("numeric.csv", "1,2,3\n4,5,6\n", NULL, DL_ERR_FORMAT, ":1:", "all numbers");
    read_bad("onecol.csv", "y\n1\n", NULL, DL_ERR_FORMAT, ":1:", "1 column");
    dl_csv_options two = {NULL, 2};
    read_bad("range.csv", "a,y\n1,0\n2,1\n3,2\n", &two, DL_ERR_RANGE, ":4:2:", "label 2 is out of range [0, 2)");
    read_bad("nanlabel.csv", "a,y\n1,0\n2,\n", NULL, DL_ERR_FORMAT, ":3:2:", "missing label");
    read_bad("nanlabel2.csv", "a,y\n1,nan\n", NULL, DL_ERR_FORMAT, ":2:2:", "missing label");
    read_bad("frac.csv", "a,y\n1,0.5\n", NULL, DL_ERR_RANGE, ":2:2:", "expected an integer");
    read_bad("neg.csv", "a,y\n1,-1\n", NULL, DL_ERR_RANGE, ":2:2:", "label -1");
    read_bad("wordlabel.csv", "a,y\n1,cat\n", NULL, DL_ERR_FORMAT, ":2:2:", "'cat' is not a number");
    dl_csv_options named = {"target", 0};
    read_bad("nolabel.csv", "a,y\n1,0\n", &named, DL_ERR_FORMAT, ":1:", "no column named 'target'");
}
END_TEST

START_TEST(missing_file_is_io)
{
    const char *p = tpath("absent.csv");
    dl_dataset ds;
    memset(&ds, 0xab, sizeof ds);
    ck_assert_st(dl_read_csv(p, NULL, &ds), DL_ERR_IO);
    ck_assert_has(dl_last_error(), p);
    ck_assert_has(dl_last_error(), "No such file");
    ck_assert_ptr_null(ds.X);
    ck_assert_uint_eq(ds.n, 0);
}
END_TEST

START_TEST(dataset_helpers)
{
    dl_dataset ds = read_ok("h.csv", "u,v,y\n0,10,0\n1,11,1\n2,12,1\n3,13,2\n", NULL);
    const size_t idx[3] = {3, 0, 3};
    dl_dataset sub;
    ck_assert_st(dl_dataset_subset(&ds, idx, 3, &sub), DL_OK);
    ck_assert_uint_eq(sub.n, 3);
    ck_assert_uint_eq(sub.d, 2);
    const float X[6] = {3, 13, 0, 10, 3, 13};
    ck_assert_mem_eq(sub.X, X, sizeof X);
    ck_assert_int_eq(sub.y[0], 2);
    ck_assert_int_eq(sub.y[1], 0);
    ck_assert_str_eq(sub.feature_names[1], "v");
    ck_assert_ptr_ne(sub.feature_names[1], ds.feature_names[1]); // copied, not shared
    size_t counts[3];
    dl_dataset_class_counts(&sub, counts);
    ck_assert_uint_eq(counts[0], 1);
    ck_assert_uint_eq(counts[1], 0);
    ck_assert_uint_eq(counts[2], 2);
    char buf[32];
    ck_assert_str_eq(dl_dataset_class_name(&sub, 2, buf, sizeof buf), "class 2");
    dl_dataset_free(&sub);
    const size_t bad[2] = {1, 4};
    ck_assert_st(dl_dataset_subset(&ds, bad, 2, &sub), DL_ERR_RANGE);
    ck_assert_has(dl_last_error(), "index 4");
    ck_assert_ptr_null(sub.X);
    dl_dataset_free(&ds);
    ck_assert_st(dl_dataset_alloc(&ds, 4, 3, 2), DL_OK);
    ck_assert_uint_eq(ds.n, 4);
    ck_assert_int_eq(ds.n_classes, 2);
    ck_assert_ptr_null(ds.feature_names);
    dl_dataset_free(&ds);
}
END_TEST

Suite *csv_suite(void)
{
    return suite_of("csv", tcase_with_tmp("csv", 20),
                    TESTS(reads_values_and_names, label_column_by_name, missing_values_are_nan,
                          crlf_blank_lines_and_blanks, many_rows, rejects_with_location_and_reason, missing_file_is_io,
                          dataset_helpers));
}
