/* metrics.c — the kit's CSVs written atomically (tmp + rename), by row or by cell. */
#define _POSIX_C_SOURCE 200809L
#include "dl/metrics.h"

#include "dl/fs.h" // dl_tmp_create

#include <errno.h> // errno
#include <math.h> // isnan, isinf, NAN
#include <stdarg.h> // va_list
#include <stdio.h> // fopen, fprintf, vsnprintf, rename, remove
#include <stdlib.h> // calloc, realloc, free
#include <string.h> // strerror, strcmp, memcpy

dl_status dl_csv_open(dl_csv_out *c, const char *path, dl_cols cols)
{
    memset(c, 0, sizeof *c);
    int ncols = cols.n;
    if (ncols <= 0)
        return dl_error_set(DL_ERR_ARG, "%s: a CSV needs at least one column", path);
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path)
        return dl_error_set(DL_ERR_ARG, "%s: path too long", path);
    c->f = dl_tmp_create(path, c->tmp, sizeof c->tmp, "w");
    if (c->f == NULL)
        return DL_ERR_IO;
    c->cols = cols;
    c->ncols = ncols;
    for (int i = 0; i < ncols; i++)
        fprintf(c->f, "%s%s", i ? "," : "", cols.names[i]);
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

// ---- a row cell by cell ----

/* Keeps st as the file's error (the first one) and returns it. */
static dl_status keep(dl_csv_out *c, dl_status st)
{
    if (c->err == DL_OK)
        c->err = st;
    return st;
}

dl_status dl_csv_cell(dl_csv_out *c, int col, const char *fmt, ...)
{
    if (c->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", c->path);
    if (col < 0 || col >= c->cols.n)
        return keep(c, dl_error_set(DL_ERR_ARG, "%s: no column %d (it has %d)", c->path, col, c->cols.n));
    if (c->cells == NULL) {
        c->cells = calloc((size_t)c->cols.n, DL_CSV_CELL_MAX);
        c->set = calloc((size_t)c->cols.n, 1);
        if (c->cells == NULL || c->set == NULL)
            return keep(c, dl_error_set(DL_ERR_NOMEM, "%s: out of memory for a row", c->path));
    }
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(c->cells + (size_t)col * DL_CSV_CELL_MAX, DL_CSV_CELL_MAX, fmt, ap);
    va_end(ap);
    if (len < 0 || len >= DL_CSV_CELL_MAX)
        return keep(c, dl_error_set(DL_ERR_ARG, "%s: column '%s': a cell over %d bytes", c->path, c->cols.names[col],
                                    DL_CSV_CELL_MAX - 1));
    c->set[col] = 1;
    return DL_OK;
}

dl_status dl_csv_end_row(dl_csv_out *c)
{
    if (c->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", c->path);
    if (c->err != DL_OK)
        return c->err;
    for (int i = 0; i < c->cols.n; i++)
        if (c->set == NULL || !c->set[i])
            return keep(c, dl_error_set(DL_ERR_ARG, "%s: a row without its '%s' cell", c->path, c->cols.names[i]));
    for (int i = 0; i < c->cols.n; i++) {
        if (i)
            fputc(',', c->f);
        fputs(c->cells + (size_t)i * DL_CSV_CELL_MAX, c->f);
    }
    memset(c->set, 0, (size_t)c->cols.n);
    if (fputc('\n', c->f) == EOF) {
        c->failed = 1;
        return dl_error_set(DL_ERR_IO, "%s: write failed: %s", c->tmp, strerror(errno));
    }
    return DL_OK;
}

// ---- closing ----

static void free_row(dl_csv_out *c)
{
    free(c->cells);
    free(c->set);
    c->cells = NULL;
    c->set = NULL;
}

dl_status dl_csv_close(dl_csv_out *c)
{
    if (c->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", c->path);
    free_row(c);
    if (c->err != DL_OK) {
        dl_csv_abort(c);
        return c->err;
    }
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
    free_row(c);
    if (c->f != NULL) {
        fclose(c->f);
        c->f = NULL;
        remove(c->tmp);
    }
}

/* A whole table; labels != NULL: a text first column, ncols − 1 values a row. */
static dl_status write_table(const char *dir, const char *name, dl_cols cols, const char *const *labels,
                             const double *rows, int nrows)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return dl_error_set(DL_ERR_ARG, "%s/%s: path too long", dir, name);
    dl_csv_out c;
    DL_TRY(dl_csv_open(&c, path, cols));
    int nvals = labels != NULL ? cols.n - 1 : cols.n;
    c.ncols = nvals;
    for (int r = 0; r < nrows; r++) {
        if (labels != NULL) {
            fputc('"', c.f);
            for (const char *p = labels[r]; *p != '\0'; p++) {
                if (*p == '"')
                    fputc('"', c.f); // a quote is doubled
                fputc(*p, c.f);
            }
            fputs(nvals > 0 ? "\"," : "\"", c.f);
        }
        dl_status st = dl_csv_row(&c, rows + (size_t)r * (size_t)nvals);
        if (st != DL_OK) {
            dl_csv_abort(&c);
            return st;
        }
    }
    return dl_csv_close(&c);
}

dl_status dl_csv_write(const char *dir, const char *name, dl_cols cols, const double *rows, int nrows)
{
    return write_table(dir, name, cols, NULL, rows, nrows);
}

void dl_csv_drop(const char *dir, const char *name)
{
    char path[2048];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path)
        remove(path);
}

dl_status dl_csv_write_named(const char *dir, const char *name, dl_cols cols, const char *const *labels,
                             const double *rows, int nrows)
{
    if (cols.n < 1 || labels == NULL)
        return dl_error_set(DL_ERR_ARG, "%s/%s: a named table needs its label column", dir, name);
    return write_table(dir, name, cols, labels, rows, nrows);
}

// ---- a table built row by row ----

void dl_table_init(dl_table *t, dl_cols cols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
}

dl_status dl_table_add(dl_table *t, const double *vals)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        double *rows = realloc(t->rows, (size_t)cap * (size_t)t->cols.n * sizeof *rows);
        if (rows == NULL)
            return dl_error_set(DL_ERR_NOMEM, "table: out of memory for %d rows", cap);
        t->rows = rows;
        t->cap = cap;
    }
    memcpy(t->rows + (size_t)t->n * (size_t)t->cols.n, vals, (size_t)t->cols.n * sizeof *vals);
    t->n++;
    return DL_OK;
}

const double *dl_table_column(const dl_table *t, const char *col)
{
    for (int k = 0; k < t->cols.n; k++)
        if (strcmp(t->cols.names[k], col) == 0)
            return t->rows != NULL ? t->rows + k : NULL;
    return NULL;
}

double dl_table_at(const dl_table *t, int row, const char *col)
{
    const double *c = dl_table_column(t, col);
    return c != NULL && row >= 0 && row < t->n ? c[(size_t)row * (size_t)t->cols.n] : NAN;
}

dl_status dl_table_write(const dl_table *t, const char *dir, const char *name)
{
    return dl_csv_write(dir, name, t->cols, t->rows, t->n);
}

void dl_table_free(dl_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
