/* fs.c — directories, paths, whole-file reads, the kit's home. */
#define _POSIX_C_SOURCE 200809L
#include "dl/fs.h"

#include <errno.h> // errno, EEXIST
#include <stdio.h> // fopen, snprintf
#include <stdlib.h> // getenv, malloc, mkstemp
#include <string.h> // strerror, strlen
#include <sys/stat.h> // mkdir, stat, fchmod
#include <unistd.h> // access, close

#ifndef DL_SOURCE_DIR
#define DL_SOURCE_DIR "."
#endif

const char *dl_home(void)
{
    const char *h = getenv("DL_HOME");
    return (h != NULL && h[0] != '\0') ? h : DL_SOURCE_DIR;
}

int dl_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

dl_status dl_mkdir_p(const char *path)
{
    char buf[1024];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf)
        return dl_error_set(DL_ERR_ARG, "directory path '%s' is empty or too long", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return dl_error_set(DL_ERR_IO, "cannot create directory '%s': %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return dl_error_set(DL_ERR_IO, "'%s' exists and is not a directory", path);
    return DL_OK;
}

dl_status dl_path_join(char *buf, size_t len, const char *a, const char *b)
{
    int n = snprintf(buf, len, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= len)
        return dl_error_set(DL_ERR_ARG, "path '%s/%s' is too long (max %zu)", a, b, len - 1);
    return DL_OK;
}

FILE *dl_tmp_create(const char *path, char *tmp, size_t len, const char *mode)
{
    int n = snprintf(tmp, len, "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= len) {
        dl_error_set(DL_ERR_ARG, "%s: path too long", path);
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        dl_error_set(DL_ERR_IO, "%s: cannot create a file beside it: %s", path, strerror(errno));
        return NULL;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, mode);
    if (f == NULL) {
        dl_error_set(DL_ERR_IO, "%s: %s", tmp, strerror(errno));
        close(fd);
        remove(tmp);
    }
    return f;
}

dl_status dl_check_writable(const char *flag, const char *path, int is_dir)
{
    char buf[1024];
    struct stat st;
    if (path == NULL || path[0] == '\0')
        return dl_error_set(DL_ERR_ARG, "%s: an empty path", flag);
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return dl_error_set(DL_ERR_ARG, "%s '%s': path too long", flag, path);
    if (stat(buf, &st) == 0) {
        if (is_dir && !S_ISDIR(st.st_mode))
            return dl_error_set(DL_ERR_ARG, "%s '%s': exists and is not a directory", flag, path);
        if (!is_dir && S_ISDIR(st.st_mode))
            return dl_error_set(DL_ERR_ARG, "%s '%s': is a directory, expected a file name", flag, path);
        if (is_dir && access(buf, W_OK | X_OK) != 0)
            return dl_error_set(DL_ERR_ARG, "%s '%s': the directory is not writable", flag, path);
        if (is_dir)
            return DL_OK;
    }
    // the nearest existing directory above must be writable
    for (;;) {
        char *slash = strrchr(buf, '/');
        if (slash == NULL) {
            snprintf(buf, sizeof buf, ".");
        } else if (slash == buf) {
            buf[1] = '\0';
        } else {
            *slash = '\0';
        }
        if (stat(buf, &st) != 0 && !is_dir) // a file's directory must be there already
            return dl_error_set(DL_ERR_ARG, "%s '%s': the directory '%s' does not exist", flag, path, buf);
        if (stat(buf, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return dl_error_set(DL_ERR_ARG, "%s '%s': '%s' is not a directory", flag, path, buf);
            if (access(buf, W_OK | X_OK) != 0)
                return dl_error_set(DL_ERR_ARG, "%s '%s': cannot write in '%s'", flag, path, buf);
            return DL_OK;
        }
        if (strcmp(buf, ".") == 0 || strcmp(buf, "/") == 0)
            return dl_error_set(DL_ERR_ARG, "%s '%s': no directory to create it in", flag, path);
    }
}

dl_status dl_read_file(const char *path, char **text, size_t *len)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (buf == NULL)
        return dl_error_set(DL_ERR_NOMEM, "%s: out of memory reading the file", path);
    if (err) {
        free(buf);
        return dl_error_set(DL_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    *text = buf;
    if (len != NULL)
        *len = n;
    return DL_OK;
}
