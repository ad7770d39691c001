/* test_fs.c — directories, path joining, whole-file reads, the kit's home. */
#include "tests.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // free, malloc
#include <string.h> // strncmp, strlen
#include <sys/stat.h> // stat, S_ISDIR
#include <unistd.h> // geteuid

#include "dl/fs.h" // dl_mkdir_p, dl_path_join, dl_read_file, dl_home

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

START_TEST(mkdir_p)
{
    ck_assert_st(dl_mkdir_p(tpath("a/b/c")), DL_OK);
    ck_assert(is_dir(tpath("a/b/c")));
    ck_assert_st(dl_mkdir_p(tpath("a/b/c")), DL_OK); // existing is fine
    ck_assert_st(dl_mkdir_p(tpath("a/b")), DL_OK);
    ck_assert_st(dl_mkdir_p(tpath("a/b/d/")), DL_OK); // trailing slash
    ck_assert(is_dir(tpath("a/b/d")));
    write_text(tpath("a/file"), "x");
    ck_assert_st(dl_mkdir_p(tpath("a/file")), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "a/file");
    ck_assert_has(dl_last_error(), "not a directory");
    ck_assert_st(dl_mkdir_p(tpath("a/file/sub")), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "cannot create directory");
    ck_assert(!path_exists(tpath("a/file/sub")));
    ck_assert_st(dl_mkdir_p(""), DL_ERR_ARG);
    char *longp = malloc(3000);
    memset(longp, 'd', 2999);
    longp[2999] = '\0';
    ck_assert_st(dl_mkdir_p(longp), DL_ERR_ARG);
    free(longp);
    ck_assert(dl_file_exists(tpath("a/file")));
    ck_assert(dl_file_exists(tpath("a/b")));
    ck_assert(!dl_file_exists(tpath("a/none")));
}
END_TEST

START_TEST(path_join)
{
    char buf[8];
    ck_assert_st(dl_path_join(buf, sizeof buf, "ab", "cde"), DL_OK);
    ck_assert_str_eq(buf, "ab/cde");
    ck_assert_st(dl_path_join(buf, sizeof buf, "abc", "def"), DL_OK); // exactly 7 + NUL
    ck_assert_str_eq(buf, "abc/def");
    ck_assert_st(dl_path_join(buf, sizeof buf, "abcd", "def"), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "abcd/def");
    ck_assert_has(dl_last_error(), "max 7");
}
END_TEST

START_TEST(read_file)
{
    char *text = (char *)1;
    size_t len = 99;
    write_bytes(tpath("empty"), "", 0);
    ck_assert_st(dl_read_file(tpath("empty"), &text, &len), DL_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(text, "");
    free(text);
    // Larger than the first buffer, with a NUL byte inside.
    const size_t n = 10000;
    char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + i % 26);
    data[5000] = '\0';
    write_bytes(tpath("big"), data, n);
    ck_assert_st(dl_read_file(tpath("big"), &text, &len), DL_OK);
    ck_assert_uint_eq(len, n);
    ck_assert_mem_eq(text, data, n);
    ck_assert_int_eq(text[n], '\0');
    free(text);
    // Exactly the size where the buffer must grow.
    write_bytes(tpath("edge"), data, 4095);
    ck_assert_st(dl_read_file(tpath("edge"), &text, NULL), DL_OK);
    ck_assert_mem_eq(text, data, 4095);
    ck_assert_int_eq(text[4095], '\0');
    free(text);
    free(data);
    text = (char *)1;
    ck_assert_st(dl_read_file(tpath("absent"), &text, &len), DL_ERR_IO);
    ck_assert_ptr_null(text);
    ck_assert_has(dl_last_error(), "absent");
    ck_assert_has(dl_last_error(), "No such file");
}
END_TEST

START_TEST(tmp_create_is_unique)
{
    // two writers of the same output (two ranks, two runs) never share a temporary
    char a[1200], b[1200];
    FILE *fa = dl_tmp_create(tpath("out.json"), a, sizeof a, "w");
    FILE *fb = dl_tmp_create(tpath("out.json"), b, sizeof b, "w");
    ck_assert_ptr_nonnull(fa);
    ck_assert_ptr_nonnull(fb);
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(strncmp(a, tpath("out.json.tmp."), strlen(tpath("out.json.tmp."))), 0);
    fclose(fa);
    fclose(fb);
    ck_assert_int_eq(tmp_entries("out.json.tmp."), 2);
    ck_assert_ptr_null(dl_tmp_create(tpath("no/such/dir/x.json"), a, sizeof a, "w"));
    ck_assert_has(dl_last_error(), "no/such/dir/x.json: cannot create");
}
END_TEST

START_TEST(check_writable)
{
    ck_assert_st(dl_check_writable("--out", tpath("new/deeper/dir"), 1), DL_OK); // made later by dl_mkdir_p
    ck_assert_st(dl_check_writable("--json", tpath("s.json"), 0), DL_OK);
    ck_assert_st(dl_check_writable("--json", tpath("no/dir/s.json"), 0), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "does not exist");
    write_text(tpath("file"), "x");
    ck_assert_st(dl_check_writable("--out", tpath("file"), 1), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "--out '");
    ck_assert_has(dl_last_error(), "exists and is not a directory");
    ck_assert_st(dl_check_writable("--json", tpath("file/s.json"), 0), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "is not a directory");
    ck_assert_st(dl_check_writable("--json", t_dir, 0), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "is a directory, expected a file name");
    if (geteuid() != 0) { // root writes anywhere
        ck_assert_st(dl_check_writable("--json", "/proc/x.json", 0), DL_ERR_ARG);
        ck_assert_has(dl_last_error(), "cannot write in '/proc'");
    }
}
END_TEST

START_TEST(home)
{
    env_saved e = env_set("DL_HOME", "/some/where");
    ck_assert_str_eq(dl_home(), "/some/where");
    setenv("DL_HOME", "", 1);
    ck_assert_str_eq(dl_home(), DL_SOURCE_DIR);
    unsetenv("DL_HOME");
    ck_assert_str_eq(dl_home(), DL_SOURCE_DIR);
    char p[4200];
    snprintf(p, sizeof p, "%s/common/plot/style.gp", dl_home());
    ck_assert(dl_file_exists(p));
    env_restore(&e);
}
END_TEST

Suite *fs_suite(void)
{
    return suite_of("fs", tcase_with_tmp("fs", 10),
                    TESTS(mkdir_p, path_join, read_file, tmp_create_is_unique, check_writable, home));
}
