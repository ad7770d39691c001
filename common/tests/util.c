/* util.c — helpers shared by the unit suites: temp dirs, files, captured output. */
#define _XOPEN_SOURCE 700 // nftw
#include "tests.h"

#include <dirent.h> // opendir, readdir
#include <fcntl.h> // open
#include <ftw.h> // nftw
#include <stdio.h> // fopen, snprintf
#include <stdlib.h> // mkdtemp, getenv, malloc
#include <string.h> // strncmp, strlen
#include <sys/stat.h> // stat
#include <unistd.h> // dup, dup2, close, unlink

char t_dir[4096];

TCase *tcase_of(TCase *tc, const TTest *const *tests)
{
    for (size_t k = 0; tests != NULL && tests[k] != NULL; k++)
        tcase_add_test(tc, tests[k]);
    return tc;
}

Suite *suite_of(const char *name, TCase *tc, const TTest *const *tests)
{
    Suite *s = suite_create(name);
    suite_add_tcase(s, tcase_of(tc, tests));
    return s;
}

TCase *tcase_with_timeout(const char *name, double seconds)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, seconds);
    return tc;
}

void tmp_setup(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(t_dir, sizeof t_dir, "%s/dlunit-XXXXXX", base);
    ck_assert_msg(mkdtemp(t_dir) != NULL, "mkdtemp(%s) failed", t_dir);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void tmp_teardown(void)
{
    if (t_dir[0] != '\0')
        nftw(t_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    t_dir[0] = '\0';
}

TCase *tcase_with_tmp(const char *name, double seconds)
{
    TCase *tc = tcase_with_timeout(name, seconds);
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    return tc;
}

const char *tpath(const char *name)
{
    static char bufs[8][4200];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", t_dir, name);
    return b;
}

void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

void write_text(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text));
}

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1024, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

int path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int tmp_entries(const char *prefix)
{
    DIR *d = opendir(t_dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

int dir_entries(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

void capture_start(capture *c, int fd)
{
    memset(c, 0, sizeof *c);
    fflush(stdout);
    fflush(stderr);
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(c->path, sizeof c->path, "%s/dlunit-out-XXXXXX", base);
    int tfd = mkstemp(c->path);
    ck_assert_msg(tfd >= 0, "mkstemp failed");
    c->fd = fd;
    c->saved = dup(fd);
    dup2(tfd, fd);
    close(tfd);
}

char *capture_stop(capture *c)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved, c->fd);
    close(c->saved);
    char *text = slurp(c->path, NULL);
    unlink(c->path);
    ck_assert_msg(text != NULL, "cannot read back captured output");
    return text;
}

env_saved env_set(const char *name, const char *value)
{
    env_saved e = {name, NULL};
    const char *old = getenv(name);
    if (old != NULL)
        e.old = strdup(old);
    if (value != NULL)
        setenv(name, value, 1);
    else
        unsetenv(name);
    return e;
}

void env_restore(env_saved *e)
{
    if (e->old != NULL)
        setenv(e->name, e->old, 1);
    else
        unsetenv(e->name);
    free(e->old);
    e->old = NULL;
}
