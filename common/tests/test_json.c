/* test_json.c — the summary.json writer (atomic, escaped, NaN as null) and the reader. */
#include "tests.h"

#include <math.h> // NAN, INFINITY
#include <stdio.h> // tmpfile
#include <stdlib.h> // free

#include "dl/json.h" // dl_json_* writer, dl_json_parse, dl_jv_*

static const char *const TRICKY = "lab \"01\"\nline 2\ttab \\ back/slash \x01 caf\xc3\xa9 \xe2\x82\xac";

START_TEST(writer_round_trips_through_reader)
{
    const char *p = tpath("summary.json");
    dl_json j;
    ck_assert_st(dl_json_open(&j, p), DL_OK);
    dl_json_object(&j, NULL);
    dl_json_str(&j, "name", TRICKY);
    dl_json_num(&j, "third", 1.0 / 3.0);
    dl_json_num(&j, "tiny", 1e-300);
    dl_json_num(&j, "nan", NAN);
    dl_json_num(&j, "inf", -INFINITY);
    dl_json_int(&j, "big", 123456789012LL);
    dl_json_bool(&j, "yes", 1);
    dl_json_bool(&j, "no", 0);
    dl_json_null(&j, "nothing");
    dl_json_str(&j, "null_str", NULL);
    dl_json_object(&j, "nested");
    dl_json_object(&j, "deeper");
    dl_json_int(&j, "k", -7);
    dl_json_end_object(&j);
    dl_json_array(&j, "empty");
    dl_json_end_array(&j);
    dl_json_end_object(&j);
    dl_json_array(&j, "list");
    dl_json_num(&j, NULL, 1.5);
    dl_json_str(&j, NULL, "two");
    dl_json_object(&j, NULL);
    dl_json_int(&j, "x", 1);
    dl_json_end_object(&j);
    dl_json_array(&j, NULL);
    dl_json_end_array(&j);
    dl_json_end_array(&j);
    const float f32[3] = {0.1f, NAN, -2.0f};
    const double f64[3] = {0.1, INFINITY, -1e300};
    dl_json_f32s(&j, "f32", f32, 3);
    dl_json_f64s(&j, "f64", f64, 3);
    dl_json_object(&j, "empty_obj");
    dl_json_end_object(&j);
    dl_json_end_object(&j);
    ck_assert(!path_exists(p)); // nothing visible under the final name before close
    ck_assert_int_eq(tmp_entries("summary.json.tmp."), 1);
    ck_assert_st(dl_json_close(&j), DL_OK);
    ck_assert(path_exists(p));
    ck_assert_int_eq(tmp_entries("summary.json.tmp."), 0);

    char *text = slurp(p, NULL);
    ck_assert_has(text, "\"nan\": null");
    ck_assert_has(text, "\"inf\": null");
    ck_assert_has(text, "\\\"01\\\"\\nline 2\\ttab \\\\ back/slash \\u0001");
    ck_assert_has(text, "\"big\": 123456789012");
    free(text);

    dl_jv *v = NULL;
    ck_assert_st(dl_json_parse_file(p, &v), DL_OK);
    ck_assert_int_eq(v->type, DL_JOBJ);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "name"), ""), TRICKY);
    ck_assert(dl_jv_num(dl_jv_get(v, "third"), 0) == 1.0 / 3.0); // %.17g round-trips
    ck_assert(dl_jv_num(dl_jv_get(v, "tiny"), 0) == 1e-300);
    ck_assert_int_eq(dl_jv_get(v, "nan")->type, DL_JNULL);
    ck_assert_int_eq(dl_jv_get(v, "inf")->type, DL_JNULL);
    ck_assert_double_eq(dl_jv_num(dl_jv_get(v, "big"), 0), 123456789012.0);
    ck_assert_int_eq(dl_jv_get(v, "yes")->type, DL_JBOOL);
    ck_assert_double_eq(dl_jv_num(dl_jv_get(v, "yes"), 5), 1.0);
    ck_assert_double_eq(dl_jv_num(dl_jv_get(v, "no"), 5), 0.0);
    ck_assert_int_eq(dl_jv_get(v, "nothing")->type, DL_JNULL);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "null_str"), "x"), "");
    ck_assert_double_eq(dl_jv_num(dl_jv_get(v, "nested.deeper.k"), 0), -7.0);
    const dl_jv *empty = dl_jv_get(v, "nested.empty");
    ck_assert_int_eq(empty->type, DL_JARR);
    ck_assert_uint_eq(empty->n, 0);
    const dl_jv *list = dl_jv_get(v, "list");
    ck_assert_int_eq(list->type, DL_JARR);
    ck_assert_uint_eq(list->n, 4);
    ck_assert_double_eq(list->items[0].num, 1.5);
    ck_assert_str_eq(list->items[1].str, "two");
    ck_assert_double_eq(dl_jv_num(dl_jv_get(&list->items[2], "x"), 0), 1.0);
    ck_assert_int_eq(list->items[3].type, DL_JARR);
    const dl_jv *a = dl_jv_get(v, "f32");
    ck_assert_uint_eq(a->n, 3);
    ck_assert((float)a->items[0].num == 0.1f); // %.9g round-trips float32
    ck_assert_int_eq(a->items[1].type, DL_JNULL);
    ck_assert_double_eq(a->items[2].num, -2.0);
    const dl_jv *b = dl_jv_get(v, "f64");
    ck_assert(b->items[0].num == 0.1);
    ck_assert_int_eq(b->items[1].type, DL_JNULL);
    ck_assert(b->items[2].num == -1e300);
    const dl_jv *eo = dl_jv_get(v, "empty_obj");
    ck_assert_int_eq(eo->type, DL_JOBJ);
    ck_assert_uint_eq(eo->n, 0);
    // Lookups that miss.
    ck_assert_ptr_null(dl_jv_get(v, "nested.nope"));
    ck_assert_ptr_null(dl_jv_get(v, "third.x"));
    ck_assert_ptr_null(dl_jv_get(v, "nest"));
    ck_assert_double_eq(dl_jv_num(NULL, -1), -1.0);
    ck_assert_double_eq(dl_jv_num(dl_jv_get(v, "name"), -2), -2.0);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "third"), "fb"), "fb");
    dl_jv_free(v);
}
END_TEST

START_TEST(unbalanced_abort_and_unwritable)
{
    const char *p = tpath("u.json");
    dl_json j;
    ck_assert_st(dl_json_open(&j, p), DL_OK);
    dl_json_object(&j, NULL);
    dl_json_array(&j, "open");
    ck_assert_st(dl_json_close(&j), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "unclosed");
    ck_assert_has(dl_last_error(), p);
    ck_assert_int_eq(dir_entries(t_dir), 0);
    // One close too many.
    ck_assert_st(dl_json_open(&j, p), DL_OK);
    dl_json_object(&j, NULL);
    dl_json_end_object(&j);
    dl_json_end_object(&j);
    ck_assert_st(dl_json_close(&j), DL_ERR_IO);
    ck_assert_int_eq(dir_entries(t_dir), 0);
    // Abort leaves nothing behind.
    ck_assert_st(dl_json_open(&j, p), DL_OK);
    dl_json_object(&j, NULL);
    dl_json_int(&j, "a", 1);
    dl_json_abort(&j);
    ck_assert_int_eq(dir_entries(t_dir), 0);
    ck_assert_st(dl_json_close(&j), DL_ERR_IO); // no longer open
    ck_assert_st(dl_json_open(&j, tpath("missing/dir.json")), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "dir.json");
}
END_TEST

START_TEST(writer_on_a_stream)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    dl_json j;
    dl_json_open_stream(&j, f);
    dl_json_object(&j, NULL);
    dl_json_int(&j, "n", 3);
    dl_json_array(&j, "v");
    dl_json_num(&j, NULL, 0.5);
    dl_json_num(&j, NULL, 2);
    dl_json_end_array(&j);
    dl_json_end_object(&j);
    ck_assert_st(dl_json_close(&j), DL_OK);
    ck_assert_int_eq(fputc('\n', f), '\n'); // still open: close did not fclose it
    rewind(f);
    char text[256];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_str_eq(text, "{\n  \"n\": 3,\n  \"v\": [\n    0.5,\n    2\n  ]\n}\n\n");
}
END_TEST

START_TEST(writer_strings_are_valid_utf8)
{
    // a student's output copied into results.json: any bytes in, valid UTF-8 out
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    dl_json j;
    dl_json_open_stream(&j, f);
    dl_json_array(&j, NULL);
    dl_json_str(&j, NULL, "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"); // é € 😀 kept
    dl_json_str(&j, NULL, "bad \xff \xc3 cut \xe2\x82 \xc0\xaf over \xed\xa0\x80 sur \x7f");
    dl_json_end_array(&j);
    ck_assert_st(dl_json_close(&j), DL_OK);
    rewind(f);
    char text[512];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    ck_assert_has(text, "\"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    // each byte that starts no valid sequence is U+FFFD: a lone 0xff, a cut
    // 2-byte and 3-byte sequence, an overlong '/', a surrogate; DEL escaped
    ck_assert_has(text, "\"bad \\ufffd \\ufffd cut \\ufffd\\ufffd \\ufffd\\ufffd over "
                        "\\ufffd\\ufffd\\ufffd sur \\u007f\"");
    for (size_t k = 0; k < n; k++)
        ck_assert_msg((unsigned char)text[k] != 0xff, "a raw 0xff byte at %zu", k);
}
END_TEST

START_TEST(reader_values_and_escapes)
{
    const char *src = "\r\n { \"s\" : \"q\\\"b\\\\s\\/ \\b\\f\\n\\r\\t \\u00e9\\u20AC \\ud83d\\ude00\","
                      "\t\"n\": [-1.5e3, 0, 1E-2, 123, -0],\n \"t\": true, \"f\": false, \"z\": null,"
                      " \"o\": {\"a\": {}}, \"e\": []} \n";
    dl_jv *v = NULL;
    ck_assert_st(dl_json_parse(src, "x.json", &v), DL_OK);
    ck_assert_str_eq(dl_jv_str(dl_jv_get(v, "s"), ""), "q\"b\\s/ \b\f\n\r\t \xc3\xa9\xe2\x82\xac \xf0\x9f\x98\x80");
    const dl_jv *n = dl_jv_get(v, "n");
    ck_assert_uint_eq(n->n, 5);
    ck_assert_double_eq(n->items[0].num, -1500.0);
    ck_assert_double_eq(n->items[2].num, 0.01);
    ck_assert_double_eq(n->items[3].num, 123.0);
    ck_assert_int_eq(dl_jv_get(v, "t")->type, DL_JBOOL);
    ck_assert_double_eq(dl_jv_get(v, "t")->num, 1.0);
    ck_assert_double_eq(dl_jv_get(v, "f")->num, 0.0);
    ck_assert_int_eq(dl_jv_get(v, "z")->type, DL_JNULL);
    ck_assert_int_eq(dl_jv_get(v, "o.a")->type, DL_JOBJ);
    ck_assert_uint_eq(dl_jv_get(v, "e")->n, 0);
    ck_assert_str_eq(v->keys[0], "s");
    dl_jv_free(v);
    // A lone high surrogate is kept as it is, not joined with what follows.
    ck_assert_st(dl_json_parse("\"\\ud83dx\"", "y", &v), DL_OK);
    ck_assert_str_eq(v->str, "\xed\xa0\xbdx");
    dl_jv_free(v);
    ck_assert_st(dl_json_parse("42", "y", &v), DL_OK);
    ck_assert_double_eq(v->num, 42.0);
    dl_jv_free(v);
    dl_jv_free(NULL);
}
END_TEST

static void expect_syntax_error(const char *text, const char *where)
{
    dl_jv *v = (dl_jv *)1;
    ck_assert_st(dl_json_parse(text, "x.json", &v), DL_ERR_FORMAT);
    ck_assert_ptr_null(v);
    ck_assert_msg(strncmp(dl_last_error(), where, strlen(where)) == 0, "'%s': got \"%s\", want \"%s...\"", text,
                  dl_last_error(), where);
}

START_TEST(reader_errors_name_line_and_column)
{
    expect_syntax_error("{\n  \"a\": 1,\n  \"b\" 2\n}", "x.json:3:7: expected ':' after an object key");
    expect_syntax_error("[1, 2", "x.json:1:6: expected ',' or ']'");
    expect_syntax_error("{\"a\": 1 \"b\": 2}", "x.json:1:9: expected ',' or '}'");
    expect_syntax_error("{\"a\": tru}", "x.json:1:7: expected a value");
    expect_syntax_error("{\"a\":1,}", "x.json:1:8: expected a string");
    expect_syntax_error("\"abc", "x.json:1:5: expected a closing quote");
    expect_syntax_error("{}\n x", "x.json:2:2: expected the end of the input");
    expect_syntax_error("", "x.json:1:1: expected a value");
    expect_syntax_error("  \n\n   @", "x.json:3:4: expected a value");
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = '\0';
    expect_syntax_error(deep, "x.json:1:");
    ck_assert_has(dl_last_error(), "less nesting");
    // From a file: the path is the name.
    const char *p = tpath("bad.json");
    write_text(p, "{\"a\": [1,\n 2,,]}");
    dl_jv *v;
    ck_assert_st(dl_json_parse_file(p, &v), DL_ERR_FORMAT);
    char want[4300];
    snprintf(want, sizeof want, "%s:2:4: expected a value", p);
    ck_assert_msg(strncmp(dl_last_error(), want, strlen(want)) == 0, "got \"%s\"", dl_last_error());
    ck_assert_st(dl_json_parse_file(tpath("absent.json"), &v), DL_ERR_IO);
    ck_assert_ptr_null(v);
}
END_TEST

Suite *json_suite(void)
{
    return suite_of("json", tcase_with_tmp("json", 10),
                    TESTS(writer_round_trips_through_reader, unbalanced_abort_and_unwritable, writer_on_a_stream,
                          writer_strings_are_valid_utf8, reader_values_and_escapes,
                          reader_errors_name_line_and_column));
}
