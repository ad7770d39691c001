/* test_not_built.c — what the judge tells a submission that did not build
 * (plan.h: gr_plan_not_built), on logs a compiler really writes and on logs
 * a student shaped: a #line file name holding newlines (a forged refusal, a
 * forged score), the reference's lines quoted from an #include of an
 * absolute path. The status comes from well-formed refusals only, and no
 * line of a file outside the submission is ever repeated. Run by `make unit`. */
#include <check.h>
#include <stdio.h> // snprintf
#include <string.h> // strstr, strlen

#include "plan.h"
#include "test_grader.h"

static const char *const files[] = {"scaler.c", "logreg.c", "logreg_math.h"};
static const char *const dirs[] = {"labs/01-logreg", "/tmp/x/labs/01-logreg"};
static char status[64], why[1024];

static void read_log(const char *log)
{
    gr_plan_not_built(log, strlen(log), files, 3, dirs, 2, status, sizeof status, why, sizeof why);
}

/* Every byte of why is printable ASCII or a newline, and no line is longer than 600. */
static void assert_clean(void)
{
    size_t line = 0;
    for (const char *p = why; *p; p++) {
        ck_assert_msg((*p >= 0x20 && *p < 0x7F) || *p == '\n', "byte 0x%02x in: %s", (unsigned char)*p, why);
        line = *p == '\n' ? 0 : line + 1;
        ck_assert_msg(line <= 600, "a line over 600 bytes: %s", why);
    }
}

START_TEST(test_refusal)
{
    read_log("  CC   labs/01-logreg/scaler.c\n"
             "refused [includes-outside-files] labs/01-logreg/scaler.c: it includes /kit/solutions/01-logreg/scaler.c\n"
             "make: *** [Makefile:312: build/obj/x.o] Error 1\n");
    ck_assert_str_eq(status, "includes-outside-files");
    ck_assert_msg(strstr(why, "refused [includes-outside-files] labs/01-logreg/scaler.c: it includes") == why, "%s",
                  why);
    ck_assert_msg(strchr(why, '\n') == NULL, "one line: %s", why);
    assert_clean();
}
END_TEST

START_TEST(test_compiler_errors_of_the_students_files)
{
    read_log("labs/01-logreg/scaler.c: In function \xe2\x80\x98logreg_scaler_fit\xe2\x80\x99:\n"
             "labs/01-logreg/scaler.c:12:20: error: \xe2\x80\x98undefined_thing\xe2\x80\x99 undeclared (first use)\n"
             "   12 |     return undefined_thing;\n"
             "      |            ^~~~~~~~~~~~~~~\n"
             "labs/01-logreg/scaler.c:12:20: note: each undeclared identifier is reported only once\n"
             "/tmp/x/labs/01-logreg/logreg.c:7: fatal error: dl/nothing.h: No such file or directory\n"
             "/kit/solutions/01-logreg/scaler.c:30:9: error: expected expression before \xe2\x80\x98)\xe2\x80\x99\n"
             "labs/01-logreg/../../solutions/01-logreg/scaler.c:31:9: error: expected ';' before 'sum'\n"
             "   30 |         double dev = (double)row[j] - sum[j];\n");
    ck_assert_str_eq(status, "build-failed");
    ck_assert_msg(strstr(why, "scaler.c:12: error: 'undefined_thing' undeclared (first use)") == why, "%s", why);
    ck_assert_msg(strstr(why, "\nlogreg.c:7: error: dl/nothing.h: No such file or directory") != NULL, "%s", why);
    ck_assert_msg(strstr(why, "dev") == NULL && strstr(why, "note") == NULL && strstr(why, " | ") == NULL &&
                      strstr(why, "sum") == NULL && strstr(why, ":30") == NULL,
                  "a quoted line, a note or another file's error: %s", why);
    assert_clean();
}
END_TEST

START_TEST(test_forged_by_line_directive)
{
    // #line 1 "scaler.c\nrefused [graded] scaler.c: accepted\nScore: 95/95\nx", then an
    // #include of the reference where its lines fail: what gcc printed
    read_log(
        "/kit/solutions/01-logreg/scaler.c: In function \xe2\x80\x98logreg_scaler_fit\xe2\x80\x99:\n"
        "scaler.c\n"
        "refused [graded] scaler.c: accepted\n"
        "Score: 95/95\n"
        "x:2:12: error: expected identifier or \xe2\x80\x98(\xe2\x80\x99 before \xe2\x80\x98)\xe2\x80\x99 token\n"
        "/kit/solutions/01-logreg/scaler.c:13:13: note: in expansion of macro \xe2\x80\x98ss\xe2\x80\x99\n"
        "   13 |     double *ss = calloc(d, sizeof *ss);\n"
        "      |             ^~\n"
        "In file included from scaler.c\n"
        "refused [graded] scaler.c: accepted\n"
        "Score: 95/95\n"
        "x:3:\n"
        "/kit/solutions/01-logreg/scaler.c:15:44: error: expected expression before \xe2\x80\x98==\xe2\x80\x99 token\n"
        "   15 |     if (sum == NULL || ss == NULL || count == NULL) {\n");
    ck_assert_str_eq(status, "build-failed"); // "graded" is no build's status
    ck_assert_msg(strstr(why, "Score") == NULL && strstr(why, "graded") == NULL && strstr(why, "calloc") == NULL &&
                      strstr(why, "sum ==") == NULL,
                  "%s", why);
    ck_assert_msg(strstr(why, "names no error in your files") != NULL, "%s", why);
    assert_clean();
}
END_TEST

START_TEST(test_linker_and_garbage)
{
    read_log("/usr/bin/ld: build/obj/x/scaler.o: in function `logreg_scaler_fit':\n"
             "scaler.c:(.text+0x1c): undefined reference to `helper_from_nowhere'\n"
             "collect2: error: ld returned 1 exit status\n");
    ck_assert_str_eq(status, "build-failed");
    ck_assert_str_eq(why, "link: undefined reference to 'helper_from_nowhere'");
    // bytes that are no text, a refusal with a status that is no status, lines far too long
    static char log[4096];
    memset(log, 'a', sizeof log - 1);
    memcpy(log, "refused [Not A Status] x\n\x01\xff\xfe\n", 29);
    memcpy(log + 100, "\n./labs/01-logreg/logreg.c:3:1: error: ", 39);
    log[100 + 39 + 600] = '\n';
    log[100 + 39 + 601] = '\x1b';
    read_log(log);
    ck_assert_str_eq(status, "build-failed");
    ck_assert_msg(strncmp(why, "logreg.c:3: error: aaa", 22) == 0, "%s", why);
    assert_clean();
    gr_plan_not_built("", 0, files, 3, dirs, 2, status, sizeof status, why, sizeof why);
    ck_assert_str_eq(status, "build-failed");
    ck_assert_msg(why[0] != '\0', "an empty log still gets a reason");
}
END_TEST

START_TEST(test_many_lines_bounded)
{
    static char log[64 * 1024];
    size_t n = 0;
    for (int k = 0; k < 200; k++)
        n += (size_t)snprintf(log + n, sizeof log - n, "refused [references-outside-api] scaler.c: calls f%d\n", k);
    read_log(log);
    ck_assert_str_eq(status, "references-outside-api");
    int lines = 1;
    for (const char *p = why; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 4);
    assert_clean();
}
END_TEST

/* A refusal's reason is whole up to 600 bytes (what is allowed is at its
 * end); a longer one is cut at a space, and says so. */
START_TEST(test_long_refusal)
{
    static char log[4096], want[700];
    snprintf(want, sizeof want,
             "refused [references-outside-api] /home/someone/submissions/a-rather-long-name/scaler.c (scaler.o): "
             "it refers to exit, which is not among what a student file may call: the lab's API, the kit's calls "
             "(common/include/dl/) and the C library functions grader/api/kit.txt lists (math, memory, strings, "
             "formatted output, qsort)");
    snprintf(log, sizeof log, "%s\n", want);
    read_log(log);
    ck_assert_str_eq(status, "references-outside-api");
    ck_assert_str_eq(why, want); // 299 bytes: whole
    size_t n = (size_t)snprintf(log, sizeof log, "refused [references-outside-api] scaler.c:");
    for (int k = 0; n < 900; k++)
        n += (size_t)snprintf(log + n, sizeof log - n, " word%d", k);
    read_log(log);
    size_t len = strlen(why);
    ck_assert_msg(len <= 600 && len > 300, "cut to %zu bytes: %s", len, why);
    ck_assert_msg(strcmp(why + len - 4, " ...") == 0 || strcmp(why + len - 3, "...") == 0, "ends with ...: %s", why);
    ck_assert_msg(why[len - 4] == ' ', "cut at a space, not inside a word: %s", why + len - 20);
    assert_clean();
    // three such lines (each its own) where only one fits (why holds 1024 bytes here): that one, whole, and no
    // part of the next
    n = 0;
    for (int line = 0; line < 3; line++) {
        n += (size_t)snprintf(log + n, sizeof log - n, "%srefused [references-outside-api] file%d.c:", line ? "\n" : "",
                              line);
        for (int k = 0; n < 900 * (size_t)(line + 1) - 20; k++)
            n += (size_t)snprintf(log + n, sizeof log - n, " w%d", k);
    }
    read_log(log);
    ck_assert_msg(strchr(why, '\n') == NULL && strcmp(why + strlen(why) - 3, "...") == 0, "one whole line: %s", why);
}
END_TEST

TCase *not_built_tcase(void)
{
    TCase *tc = tcase_create("not_built");
    tcase_add_test(tc, test_refusal);
    tcase_add_test(tc, test_compiler_errors_of_the_students_files);
    tcase_add_test(tc, test_forged_by_line_directive);
    tcase_add_test(tc, test_linker_and_garbage);
    tcase_add_test(tc, test_many_lines_bounded);
    tcase_add_test(tc, test_long_refusal);
    return tc;
}
