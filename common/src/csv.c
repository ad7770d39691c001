/* csv.c — CSV with a header row into a dl_dataset; every error names file:line:column. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h> // errno, ERANGE
#include <float.h> // FLT_MAX
#include <math.h> // NAN, floor
#include <stdio.h> // snprintf
#include <stdlib.h> // strtod, malloc
#include <string.h> // strcspn, strdup

#include "dl/data.h"
#include "dl/fs.h" // dl_read_file

/* Splits line (modified in place) at commas; trims blanks and one pair of
 * double quotes. Returns the number of fields (capped at cap). */
static size_t split_fields(char *line, char **fields, size_t cap)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        char *end = p + strcspn(p, ",");
        char last = *end;
        *end = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        char *q = end;
        while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
            *--q = '\0';
        if (q - p >= 2 && *p == '"' && q[-1] == '"') {
            q[-1] = '\0';
            p++;
        }
        if (n < cap)
            fields[n] = p;
        n++;
        if (last == '\0')
            return n;
        p = end + 1;
    }
}

static size_t count_fields(const char *line)
{
    size_t n = 1;
    for (const char *p = line; *p; p++)
        n += *p == ',';
    return n;
}

static int is_missing(const char *s)
{
    return s[0] == '\0' || strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0 || strcmp(s, "NA") == 0 ||
           strcmp(s, "NAN") == 0;
}

/* Next line: NUL-terminates it (dropping \r) and advances *cursor. */
static char *next_line(char **cursor)
{
    char *s = *cursor;
    if (*s == '\0')
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl != NULL) {
        *nl = '\0';
        *cursor = nl + 1;
    } else {
        *cursor = s + strlen(s);
    }
    size_t len = strlen(s);
    if (len > 0 && s[len - 1] == '\r')
        s[len - 1] = '\0';
    return s;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0';
}

dl_status dl_read_csv(const char *path, const dl_csv_options *opt, dl_dataset *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    DL_TRY(dl_read_file(path, &text, &len));
    dl_status st = DL_OK;
    char **fields = NULL, **names = NULL;
    float *X = NULL;
    int32_t *y = NULL;
    char *cursor = text;
    size_t ncols = 0;
    int lineno = 0, header_line = 0;
    char *line = NULL;
    while ((line = next_line(&cursor)) != NULL) {
        lineno++;
        if (!blank(line))
            break;
    }
    if (line == NULL) {
        st = dl_error_set(DL_ERR_FORMAT, "%s: empty file (expected a header row, then data rows)", path);
        goto done;
    }
    // ---- header ----
    header_line = lineno;
    ncols = count_fields(line);
    fields = malloc(ncols * sizeof *fields);
    names = calloc(ncols, sizeof *names);
    if (fields == NULL || names == NULL) {
        st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    split_fields(line, fields, ncols);
    if (ncols < 2) {
        st = dl_error_set(DL_ERR_FORMAT, "%s:%d: header has %zu column(s); expected features and a label", path, lineno,
                          ncols);
        goto done;
    }
    size_t label = ncols - 1;
    int header_numeric = 1;
    for (size_t c = 0; c < ncols; c++) {
        char *end = NULL;
        strtod(fields[c], &end);
        if (end == fields[c] || *end != '\0')
            header_numeric = 0;
        if (opt != NULL && opt->label_column != NULL && strcmp(fields[c], opt->label_column) == 0)
            label = c;
    }
    if (header_numeric) {
        st = dl_error_set(DL_ERR_FORMAT, "%s:%d: the first row is all numbers; expected a header row of column names",
                          path, lineno);
        goto done;
    }
    if (opt != NULL && opt->label_column != NULL && strcmp(fields[label], opt->label_column) != 0) {
        st = dl_error_set(DL_ERR_FORMAT, "%s:%d: no column named '%s' for the label", path, lineno, opt->label_column);
        goto done;
    }
    for (size_t c = 0; c < ncols; c++)
        names[c] = strdup(fields[c]);
    // ---- rows ----
    size_t d = ncols - 1, cap = 1024, n = 0;
    int max_label = -1;
    X = malloc(cap * d * sizeof *X);
    y = malloc(cap * sizeof *y);
    if (X == NULL || y == NULL) {
        st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    while ((line = next_line(&cursor)) != NULL) {
        lineno++;
        if (blank(line))
            continue;
        size_t nf = split_fields(line, fields, ncols);
        if (nf != ncols) {
            st = dl_error_set(DL_ERR_FORMAT, "%s:%d: ragged row: %zu fields, expected %zu (as in the header)", path,
                              lineno, nf, ncols);
            goto done;
        }
        if (n == cap) {
            cap *= 2;
            float *nx = realloc(X, cap * d * sizeof *X);
            int32_t *ny = realloc(y, cap * sizeof *y);
            if (nx != NULL)
                X = nx;
            if (ny != NULL)
                y = ny;
            if (nx == NULL || ny == NULL) {
                st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory at line %d", path, lineno);
                goto done;
            }
        }
        size_t j = 0;
        for (size_t c = 0; c < ncols; c++) {
            const char *f = fields[c];
            double v = NAN;
            if (!is_missing(f)) {
                char *end = NULL;
                errno = 0;
                v = strtod(f, &end);
                if (end == f || *end != '\0' || isnan(v) || isinf(v)) {
                    st = dl_error_set(DL_ERR_FORMAT, "%s:%d:%zu: '%s' is not a number (column '%s')", path, lineno,
                                      c + 1, f, names[c]);
                    goto done;
                }
                if (fabs(v) > FLT_MAX) {
                    st = dl_error_set(DL_ERR_RANGE, "%s:%d:%zu: %s is outside the float32 range (column '%s')", path,
                                      lineno, c + 1, f, names[c]);
                    goto done;
                }
            }
            if (c != label) {
                X[n * d + j++] = (float)v;
                continue;
            }
            if (isnan(v)) {
                st = dl_error_set(DL_ERR_FORMAT, "%s:%d:%zu: missing label (column '%s')", path, lineno, c + 1,
                                  names[c]);
                goto done;
            }
            if (v != floor(v) || v < 0 || v > 1e6) {
                st = dl_error_set(DL_ERR_RANGE,
                                  "%s:%d:%zu: label %s is out of range: expected an integer class 0, 1, ...", path,
                                  lineno, c + 1, f);
                goto done;
            }
            if (opt != NULL && opt->n_classes > 0 && v >= opt->n_classes) {
                st = dl_error_set(DL_ERR_RANGE, "%s:%d:%zu: label %s is out of range [0, %d)", path, lineno, c + 1, f,
                                  opt->n_classes);
                goto done;
            }
            y[n] = (int32_t)v;
            if (y[n] > max_label)
                max_label = y[n];
        }
        n++;
    }
    if (n == 0) {
        st = dl_error_set(DL_ERR_FORMAT, "%s:%d: no data rows after the header", path, header_line);
        goto done;
    }
    out->n = n;
    out->d = d;
    out->X = X;
    out->y = y;
    out->n_classes = (opt != NULL && opt->n_classes > 0) ? opt->n_classes : max_label + 1;
    out->feature_names = malloc(d * sizeof *out->feature_names);
    if (out->feature_names != NULL) {
        size_t k = 0;
        for (size_t c = 0; c < ncols; c++) {
            if (c == label)
                free(names[c]);
            else
                out->feature_names[k++] = names[c];
        }
    } else {
        for (size_t c = 0; c < ncols; c++)
            free(names[c]);
    }
    free(names);
    names = NULL;
    X = NULL;
    y = NULL;
done:
    if (names != NULL) {
        for (size_t c = 0; c < ncols; c++)
            free(names[c]);
        free(names);
    }
    free(fields);
    free(X);
    free(y);
    free(text);
    if (st != DL_OK)
        memset(out, 0, sizeof *out);
    return st;
}
