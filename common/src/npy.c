/* npy.c — NumPy .npy files (format 1.0/2.0), float32 and int32, C order. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h> // errno
#include <stdio.h> // fopen, fwrite
#include <stdlib.h> // malloc, strtoull
#include <string.h> // strstr, strerror
#include <sys/mman.h> // mmap
#include <sys/stat.h> // fstat
#include <fcntl.h> // open
#include <unistd.h> // close

#include "dl/data.h"

#include "dl/fs.h" // dl_tmp_create

static dl_status write_npy(const char *path, const char *descr, const void *data, size_t elem, size_t rows, size_t cols)
{
    char dict[256];
    if (cols > 0)
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu, %zu), }", descr, rows,
                 cols);
    else
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", descr, rows);
    size_t hlen = strlen(dict) + 1; // + '\n'
    size_t total = 10 + hlen;
    size_t pad = (64 - total % 64) % 64;
    hlen += pad;
    char tmp[1100];
    FILE *f = dl_tmp_create(path, tmp, sizeof tmp, "wb");
    if (f == NULL)
        return DL_ERR_IO;
    unsigned char magic[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    fwrite(magic, 1, 10, f);
    fputs(dict, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    size_t count = rows * (cols > 0 ? cols : 1);
    size_t wrote = fwrite(data, elem, count, f);
    int bad = wrote != count || ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return dl_error_set(DL_ERR_IO, "%s: write failed", path);
    }
    return DL_OK;
}

dl_status dl_npy_write_f32(const char *path, const float *a, size_t rows, size_t cols)
{
    return write_npy(path, "<f4", a, sizeof(float), rows, cols);
}

dl_status dl_npy_write_i32(const char *path, const int32_t *a, size_t n)
{
    return write_npy(path, "<i4", a, sizeof(int32_t), n, 0);
}

/* The header of the .npy open in f: its dtype and shape in out (no data),
 * *offset where the data begins. */
static dl_status read_header(FILE *f, const char *path, dl_npy *out, size_t *offset)
{
    memset(out, 0, sizeof *out);
    dl_status st = DL_OK;
    char *header = NULL;
    unsigned char magic[12];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    size_t hlen = 0;
    if (magic[6] == 1) {
        if (fread(magic + 8, 1, 2, f) != 2) {
            st = dl_error_set(DL_ERR_FORMAT, "%s: truncated header", path);
            goto done;
        }
        hlen = magic[8] | ((size_t)magic[9] << 8);
        *offset = 10;
    } else if (magic[6] == 2 || magic[6] == 3) {
        if (fread(magic + 8, 1, 4, f) != 4) {
            st = dl_error_set(DL_ERR_FORMAT, "%s: truncated header", path);
            goto done;
        }
        hlen = magic[8] | ((size_t)magic[9] << 8) | ((size_t)magic[10] << 16) | ((size_t)magic[11] << 24);
        *offset = 12;
    } else {
        st = dl_error_set(DL_ERR_FORMAT, "%s: .npy version %d.%d is not supported", path, magic[6], magic[7]);
        goto done;
    }
    if (hlen > 65536) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: header of %zu bytes is implausible", path, hlen);
        goto done;
    }
    header = malloc(hlen + 1);
    if (header == NULL || fread(header, 1, hlen, f) != hlen) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: truncated header", path);
        goto done;
    }
    header[hlen] = '\0';
    const char *descr = strstr(header, "'descr':");
    const char *fo = strstr(header, "'fortran_order':");
    const char *shape = strstr(header, "'shape':");
    if (descr == NULL || fo == NULL || shape == NULL) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: header lacks descr, fortran_order or shape", path);
        goto done;
    }
    descr += 8;
    while (*descr == ' ')
        descr++;
    fo += 16;
    while (*fo == ' ')
        fo++;
    if (strncmp(descr, "'<f4'", 5) == 0) {
        out->is_float = 1;
    } else if (strncmp(descr, "'<i4'", 5) == 0) {
        out->is_float = 0;
    } else {
        st = dl_error_set(DL_ERR_FORMAT, "%s: dtype %.8s is not supported (expected '<f4' float32 or '<i4' int32)",
                          path, descr);
        goto done;
    }
    if (strncmp(fo, "False", 5) != 0) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: Fortran-ordered arrays are not supported (save with order='C')", path);
        goto done;
    }
    const char *p = strchr(shape, '(');
    if (p == NULL) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: shape is not a tuple", path);
        goto done;
    }
    p++;
    out->ndim = 0;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end = NULL;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || out->ndim >= 2) {
            st = dl_error_set(DL_ERR_FORMAT, "%s: shape must have 1 or 2 integer dimensions", path);
            goto done;
        }
        out->shape[out->ndim++] = (size_t)v;
        p = end;
    }
    if (out->ndim == 0) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: scalar arrays are not supported", path);
        goto done;
    }
    if (out->ndim == 1)
        out->shape[1] = 1;
    *offset += hlen;
done:
    free(header);
    return st;
}

dl_status dl_npy_read(const char *path, dl_npy *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t offset = 0;
    dl_status st = read_header(f, path, out, &offset);
    if (st != DL_OK) {
        fclose(f);
        memset(out, 0, sizeof *out);
        return st;
    }
    size_t count = out->shape[0] * out->shape[1];
    out->data = malloc(count ? count * 4 : 1);
    size_t got = out->data != NULL ? fread(out->data, 4, count, f) : 0;
    if (out->data == NULL)
        st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", path);
    else if (got != count)
        st = dl_error_set(DL_ERR_FORMAT, "%s: truncated: %zu of %zu elements", path, got, count);
    fclose(f);
    if (st != DL_OK) {
        free(out->data);
        memset(out, 0, sizeof *out);
    }
    return st;
}

dl_status dl_npy_map_f32(const char *path, size_t rows, size_t cols, float **data, void **map, size_t *map_len)
{
    *data = NULL;
    *map = NULL;
    *map_len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dl_error_set(DL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        close(fd);
        return dl_error_set(DL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    dl_npy h;
    size_t offset = 0;
    struct stat st;
    dl_status s = read_header(f, path, &h, &offset);
    if (s == DL_OK && (!h.is_float || h.ndim != 2 || h.shape[0] != rows || h.shape[1] != cols))
        s = dl_error_set(DL_ERR_FORMAT, "%s: expected float32 of shape (%zu, %zu), got %s of (%zu, %zu)", path, rows,
                         cols, h.is_float ? "float32" : "int32", h.shape[0], h.shape[1]);
    if (s == DL_OK && fstat(fd, &st) != 0)
        s = dl_error_set(DL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    if (s == DL_OK && (offset % sizeof(float) != 0 || (size_t)st.st_size != offset + rows * cols * sizeof(float)))
        s = dl_error_set(DL_ERR_FORMAT, "%s: %lld bytes, expected %zu", path, (long long)st.st_size,
                         offset + rows * cols * sizeof(float));
    if (s == DL_OK) {
        // private: a run may write into its rows (scaling in place) without touching the file
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            s = dl_error_set(DL_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        } else {
            *map = m;
            *map_len = (size_t)st.st_size;
            *data = (float *)(void *)((char *)m + offset);
        }
    }
    fclose(f); // (a mapping outlives its descriptor)
    return s;
}

void dl_npy_free(dl_npy *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}
