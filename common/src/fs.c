/* fs.c — directories, paths, whole-file reads, the kit's home. */
#define _POSIX_C_SOURCE 200809L
#include "dl/fs.h"

#include <errno.h> // errno, EEXIST
#include <stdio.h> // fopen, snprintf
#include <stdlib.h> // getenv, malloc
#include <string.h> // strerror, strlen
#include <sys/stat.h> // mkdir, stat

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
