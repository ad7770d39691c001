/* idx.c — LeCun's IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h> // errno
#include <stdlib.h> // malloc
#include <stdio.h> // snprintf
#include <string.h> // strerror
#include <sys/stat.h> // stat
#include <zlib.h> // gzopen, gzread (reads uncompressed files too)

#include "dl/data.h"

/* The header, then the data of the first max_items items (0: all of them);
 * *in_file: how many items the header says the file holds. */
static dl_status read_idx(const char *path, size_t max_items, dl_idx *out, uint32_t *in_file)
{
    memset(out, 0, sizeof *out);
    *in_file = 0;
    gzFile f = gzopen(path, "rb");
    if (f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "zlib error");
    unsigned char head[4];
    dl_status st = DL_OK;
    int got = gzread(f, head, 4);
    if (got != 4) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: truncated: %d of 4 header bytes (%s)", path, got < 0 ? 0 : got,
                          got == 0 ? "empty file" : "file ends early");
        goto done;
    }
    if (head[0] != 0 || head[1] != 0 || head[3] < 1 || head[3] > 4) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: not an IDX file: magic %02x %02x %02x %02x, expected 00 00 08 01..04",
                          path, head[0], head[1], head[2], head[3]);
        goto done;
    }
    if (head[2] != 0x08) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: IDX element type 0x%02x is not supported (expected 0x08, unsigned byte)",
                          path, head[2]);
        goto done;
    }
    out->ndim = head[3];
    size_t count = 1, item = 1;
    for (int i = 0; i < out->ndim; i++) {
        unsigned char b[4];
        got = gzread(f, b, 4);
        if (got != 4) {
            st = dl_error_set(DL_ERR_FORMAT, "%s: truncated: the header ends inside dimension %d", path, i);
            goto done;
        }
        out->dims[i] = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
        if (out->dims[i] == 0 || count > ((size_t)1 << 34) / out->dims[i]) {
            st = dl_error_set(DL_ERR_FORMAT, "%s: dimension %d is %u: empty or too large", path, i, out->dims[i]);
            goto done;
        }
        count *= out->dims[i];
        item *= i > 0 ? out->dims[i] : 1;
    }
    *in_file = out->dims[0];
    if (max_items > 0 && max_items < out->dims[0]) {
        // only the first items are read (decompressed): the rest of the file is not looked at
        out->dims[0] = (uint32_t)max_items;
        count = max_items * item;
    }
    out->count = count;
    out->data = malloc(count);
    if (out->data == NULL) {
        st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory for %zu bytes", path, count);
        goto done;
    }
    size_t have = 0;
    while (have < count) {
        size_t want = count - have > (1u << 30) ? (1u << 30) : count - have;
        got = gzread(f, out->data + have, (unsigned)want);
        if (got <= 0)
            break;
        have += (size_t)got;
    }
    if (have < count) {
        int zerr = 0;
        const char *zmsg = gzerror(f, &zerr);
        st = dl_error_set(DL_ERR_FORMAT, "%s: truncated: %zu of %zu data bytes%s%s", path, have, count,
                          zerr ? ": " : "", zerr ? zmsg : "");
    }
done:
    gzclose(f);
    if (st != DL_OK) {
        free(out->data);
        memset(out, 0, sizeof *out);
        *in_file = 0;
    }
    return st;
}

dl_status dl_read_idx(const char *path, dl_idx *out)
{
    uint32_t in_file;
    return read_idx(path, 0, out, &in_file);
}

dl_status dl_read_idx_first(const char *path, size_t max_items, dl_idx *out)
{
    uint32_t in_file;
    return read_idx(path, max_items, out, &in_file);
}

void dl_idx_free(dl_idx *idx)
{
    free(idx->data);
    memset(idx, 0, sizeof *idx);
}

dl_status dl_read_idx_pair(const char *images, const char *labels, int n_classes, dl_dataset *out)
{
    return dl_read_idx_pair_first(images, labels, n_classes, 0, out);
}

/* The kit's float copy of an IDX file of images: IMAGES.f32.npy beside a
 * plain (not gzip) IMAGES, no older than it, holding what the conversion below
 * gives (make writes it with tools/idx2npy, which calls this reader). Mapped,
 * its pages are the page cache's, shared by every rank of every run: none
 * converts 47 MB of bytes into 188 MB of floats of its own. 1 when there is
 * one, its name in path. */
static int float_copy_path(const char *images, char *path, size_t len)
{
    size_t n = strlen(images);
    struct stat si, sc;
    if ((n > 3 && strcmp(images + n - 3, ".gz") == 0) || n + 9 > len)
        return 0;
    snprintf(path, len, "%s.f32.npy", images);
    return stat(images, &si) == 0 && stat(path, &sc) == 0 && sc.st_mtime >= si.st_mtime;
}

dl_status dl_read_idx_pair_first(const char *images, const char *labels, int n_classes, size_t max_rows,
                                 dl_dataset *out)
{
    memset(out, 0, sizeof *out);
    dl_idx im, lb;
    uint32_t n_im, n_lb; // the items each file holds, whatever was read of them
    char path[4200];
    int copied = float_copy_path(images, path, sizeof path);
    // with a float copy, only the header and one image of the IDX file are read
    DL_TRY(read_idx(images, copied ? 1 : max_rows, &im, &n_im));
    size_t d = im.ndim == 3 ? (size_t)im.dims[1] * im.dims[2] : 0;
    dl_dataset copy = {0};
    int mapped = 0;
    if (copied && im.ndim == 3) {
        mapped = dl_npy_map_f32(path, n_im, d, &copy.X, &copy.map, &copy.map_len) == DL_OK;
        if (!mapped)
            dl_error_clear(); // (a copy that does not fit is not used: the IDX file is read)
    }
    if (copied && !mapped && (max_rows == 0 || max_rows > 1)) {
        dl_idx_free(&im);
        DL_TRY(read_idx(images, max_rows, &im, &n_im));
    }
    dl_status st = read_idx(labels, max_rows, &lb, &n_lb);
    if (st != DL_OK) {
        dl_idx_free(&im);
        dl_dataset_free(&copy);
        return st;
    }
    if (im.ndim != 3 || lb.ndim != 1) {
        st = dl_error_set(DL_ERR_FORMAT,
                          "%s / %s: expected images (n, rows, cols) and labels (n), got %d and %d dimensions", images,
                          labels, im.ndim, lb.ndim);
    } else if (n_im != n_lb) {
        st = dl_error_set(DL_ERR_FORMAT, "%s has %u images but %s has %u labels", images, n_im, labels, n_lb);
    } else {
        size_t n = lb.dims[0];
        if (mapped) {
            *out = copy;
            memset(&copy, 0, sizeof copy);
            out->n = n;
            out->d = d;
            out->n_classes = n_classes;
            out->y = malloc((n ? n : 1) * sizeof *out->y);
            if (out->y == NULL)
                st = dl_error_set(DL_ERR_NOMEM, "out of memory for %zu labels", n);
        } else {
            st = dl_dataset_alloc(out, n, d, n_classes);
        }
        for (size_t i = 0; st == DL_OK && i < n; i++) {
            if (lb.data[i] >= n_classes) {
                st = dl_error_set(DL_ERR_RANGE, "%s: label %u of item %zu is out of range [0, %d)", labels, lb.data[i],
                                  i, n_classes);
                break;
            }
            out->y[i] = lb.data[i];
            for (size_t j = 0; !mapped && j < d; j++)
                out->X[i * d + j] = (float)im.data[i * d + j] * (1.0f / 255.0f);
        }
        if (st != DL_OK)
            dl_dataset_free(out);
    }
    dl_dataset_free(&copy);
    dl_idx_free(&im);
    dl_idx_free(&lb);
    return st;
}
