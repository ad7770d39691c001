/* metrics.c — metrics.csv written atomically (tmp + rename). */
#define _POSIX_C_SOURCE 200809L
#include "dl/metrics.h"

#include "dl/fs.h" // dl_tmp_create

#include <errno.h> // errno
#include <math.h> // isnan, isinf
#include <stdio.h> // fopen, fprintf, rename, remove
#include <string.h> // strerror

dl_status dl_csv_open(dl_csv_out *c, const char *path, const char *const *cols, int ncols)
{
    memset(c, 0, sizeof *c);
    if (ncols <= 0)
        return dl_error_set(DL_ERR_ARG, "%s: a CSV needs at least one column", path);
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path)
        return dl_error_set(DL_ERR_ARG, "%s: path too long", path);
    c->f = dl_tmp_create(path, c->tmp, sizeof c->tmp, "w");
    if (c->f == NULL)
        return DL_ERR_IO;
    c->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        fprintf(c->f, "%s%s", i ? "," : "", cols[i]);
    fputc('\n', c->f);
    return DL_OK;
}

static void put_value(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        fprintf(f, "%.9g", v);
}

dl_status dl_csv_row(dl_csv_out *c, const double *vals)
{
    if (c->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", c->path);
    for (int i = 0; i < c->ncols; i++) {
        if (i)
            fputc(',', c->f);
        put_value(c->f, vals[i]);
    }
    if (fputc('\n', c->f) == EOF) {
        c->failed = 1;
        return dl_error_set(DL_ERR_IO, "%s: write failed: %s", c->tmp, strerror(errno));
    }
    return DL_OK;
}

dl_status dl_csv_close(dl_csv_out *c)
{
    if (c->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", c->path);
    int bad = c->failed | ferror(c->f);
    bad |= fclose(c->f) != 0;
    c->f = NULL;
    if (bad) {
        remove(c->tmp);
        return dl_error_set(DL_ERR_IO, "%s: write failed (disk full?)", c->path);
    }
    if (rename(c->tmp, c->path) != 0) {
        remove(c->tmp);
        return dl_error_set(DL_ERR_IO, "%s: cannot rename into place: %s", c->path, strerror(errno));
    }
    return DL_OK;
}

void dl_csv_abort(dl_csv_out *c)
{
    if (c->f != NULL) {
        fclose(c->f);
        c->f = NULL;
        remove(c->tmp);
    }
}

dl_status dl_csv_write(const char *dir, const char *name, const char *const *cols, int ncols, const double *rows,
                       int nrows)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return dl_error_set(DL_ERR_ARG, "%s/%s: path too long", dir, name);
    dl_csv_out c;
    DL_TRY(dl_csv_open(&c, path, cols, ncols));
    for (int r = 0; r < nrows; r++) {
        dl_status st = dl_csv_row(&c, rows + (size_t)r * (size_t)ncols);
        if (st != DL_OK) {
            dl_csv_abort(&c);
            return st;
        }
    }
    return dl_csv_close(&c);
}
