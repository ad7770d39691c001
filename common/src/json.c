/* json.c — a streaming JSON writer (atomic file output) and a small reader. */
#define _POSIX_C_SOURCE 200809L
#include "dl/json.h"

#include <errno.h> // errno
#include <math.h> // isfinite
#include <stdio.h> // fprintf
#include <stdlib.h> // malloc, strtod
#include <string.h> // strerror

#include "dl/fs.h" // dl_read_file

// ---- writer ----

dl_status dl_json_open(dl_json *j, const char *path)
{
    memset(j, 0, sizeof *j);
    if (snprintf(j->path, sizeof j->path, "%s", path) >= (int)sizeof j->path)
        return dl_error_set(DL_ERR_ARG, "%s: path too long", path);
    j->f = dl_tmp_create(path, j->tmp, sizeof j->tmp, "w");
    return j->f != NULL ? DL_OK : DL_ERR_IO;
}

void dl_json_open_stream(dl_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not). */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n <= 1)
        return n;
    unsigned cp = c & (0x7F >> n);
    for (int k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Writes s as a JSON string: always valid UTF-8 (a byte that does not start
 * a valid sequence becomes U+FFFD), control characters escaped. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, (size_t)n, f);
            p += n;
            continue;
        }
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7F)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
        p++;
    }
    fputc('"', f);
}

/* Separator, indentation and key before a value. */
static void prefix(dl_json *j, const char *key)
{
    if (j->f == NULL)
        return;
    if (j->count[j->depth]++ > 0)
        fputc(',', j->f);
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key != NULL) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_container(dl_json *j, const char *key, char c)
{
    prefix(j, key);
    if (j->f == NULL)
        return;
    fputc(c, j->f);
    if (j->depth + 1 >= DL_JSON_MAX_DEPTH) {
        j->failed = 1;
        return;
    }
    j->depth++;
    j->count[j->depth] = 0;
}

static void close_container(dl_json *j, char c)
{
    if (j->f == NULL)
        return;
    if (j->depth == 0) {
        j->failed = 1;
        return;
    }
    int had = j->count[j->depth] > 0;
    j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void dl_json_object(dl_json *j, const char *key)
{
    open_container(j, key, '{');
}

void dl_json_end_object(dl_json *j)
{
    close_container(j, '}');
}

void dl_json_array(dl_json *j, const char *key)
{
    open_container(j, key, '[');
}

void dl_json_end_array(dl_json *j)
{
    close_container(j, ']');
}

/* v with `digits` significant digits (17 round-trips a double, 9 a
 * float); null when it is not finite. */
static void put_num(FILE *f, double v, int digits)
{
    if (isfinite(v))
        fprintf(f, "%.*g", digits, v);
    else
        fputs("null", f);
}

void dl_json_num(dl_json *j, const char *key, double v)
{
    prefix(j, key);
    if (j->f != NULL)
        put_num(j->f, v, 17);
}

void dl_json_int(dl_json *j, const char *key, long long v)
{
    prefix(j, key);
    if (j->f != NULL)
        fprintf(j->f, "%lld", v);
}

void dl_json_str(dl_json *j, const char *key, const char *s)
{
    prefix(j, key);
    if (j->f != NULL)
        put_string(j->f, s != NULL ? s : "");
}

void dl_json_bool(dl_json *j, const char *key, int v)
{
    prefix(j, key);
    if (j->f != NULL)
        fputs(v ? "true" : "false", j->f);
}

void dl_json_null(dl_json *j, const char *key)
{
    prefix(j, key);
    if (j->f != NULL)
        fputs("null", j->f);
}

/* A list of n numbers: f32's as floats, or else f64's as doubles. */
static void put_list(dl_json *j, const char *key, const float *f32, const double *f64, size_t n)
{
    prefix(j, key);
    if (j->f == NULL)
        return;
    fputc('[', j->f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(", ", j->f);
        if (f32 != NULL)
            put_num(j->f, (double)f32[i], 9);
        else
            put_num(j->f, f64[i], 17);
    }
    fputc(']', j->f);
}

void dl_json_f32s(dl_json *j, const char *key, const float *v, size_t n)
{
    put_list(j, key, v, NULL, n);
}

void dl_json_f64s(dl_json *j, const char *key, const double *v, size_t n)
{
    put_list(j, key, NULL, v, n);
}

dl_status dl_json_close(dl_json *j)
{
    if (j->f == NULL)
        return dl_error_set(DL_ERR_IO, "%s: not open", j->path);
    fputc('\n', j->f);
    int unbalanced = j->depth != 0;
    int bad = j->failed | ferror(j->f);
    if (j->tmp[0] == '\0') { // a stream: not ours to close
        j->f = NULL;
        return bad || unbalanced ? dl_error_set(DL_ERR_IO, "JSON stream: write failed") : DL_OK;
    }
    bad |= fclose(j->f) != 0;
    j->f = NULL;
    if (bad || unbalanced) {
        remove(j->tmp);
        return dl_error_set(DL_ERR_IO, "%s: %s", j->path,
                            unbalanced ? "unclosed object or array (a bug in the writer)"
                                       : "write failed (disk full?)");
    }
    if (rename(j->tmp, j->path) != 0) {
        remove(j->tmp);
        return dl_error_set(DL_ERR_IO, "%s: cannot rename into place: %s", j->path, strerror(errno));
    }
    return DL_OK;
}

void dl_json_abort(dl_json *j)
{
    if (j->f != NULL && j->tmp[0] != '\0') {
        fclose(j->f);
        remove(j->tmp);
    }
    j->f = NULL;
}

// ---- reader ----

typedef struct parser {
    const char *s, *p;
    const char *name;
    dl_status st;
} parser;

static dl_status perr(parser *ps, const char *what)
{
    int line = 1, col = 1;
    for (const char *q = ps->s; q < ps->p; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    ps->st = dl_error_set(DL_ERR_FORMAT, "%s:%d:%d: expected %s", ps->name, line, col, what);
    return ps->st;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static dl_status parse_value(parser *ps, dl_jv *v, int depth);

static void put_utf8(char **o, unsigned cp)
{
    if (cp < 0x80) {
        *(*o)++ = (char)cp;
    } else if (cp < 0x800) {
        *(*o)++ = (char)(0xC0 | (cp >> 6));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *(*o)++ = (char)(0xE0 | (cp >> 12));
        *(*o)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *(*o)++ = (char)(0xF0 | (cp >> 18));
        *(*o)++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *(*o)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    }
}

/* The low half of a surrogate pair: "\uDC00".."\uDFFF" at q, before end. */
static int low_surrogate(const char *q, const char *end, unsigned *lo)
{
    if (end - q < 6 || q[0] != '\\' || q[1] != 'u')
        return 0;
    unsigned v = 0;
    for (int k = 2; k < 6; k++) {
        const char *hex = "0123456789abcdef0123456789ABCDEF";
        const char *at = q[k] != '\0' ? strchr(hex, q[k]) : NULL;
        if (at == NULL)
            return 0;
        v = v * 16 + (unsigned)((at - hex) % 16);
    }
    *lo = v;
    return v >= 0xDC00 && v <= 0xDFFF;
}

static dl_status parse_string(parser *ps, char **out)
{
    if (*ps->p != '"')
        return perr(ps, "a string");
    ps->p++;
    const char *start = ps->p;
    size_t cap = 1;
    while (*ps->p && *ps->p != '"') {
        if (*ps->p == '\\' && ps->p[1])
            ps->p++;
        ps->p++;
        cap++;
    }
    if (*ps->p != '"')
        return perr(ps, "a closing quote");
    char *buf = malloc(cap * 3 + 1);
    if (buf == NULL)
        return ps->st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", ps->name);
    char *o = buf;
    for (const char *q = start; q < ps->p; q++) {
        if (*q != '\\') {
            *o++ = *q;
            continue;
        }
        q++;
        switch (*q) {
        case 'n':
            *o++ = '\n';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'u': {
            unsigned cp = 0;
            int k = 0;
            for (; k < 4 && q[1]; k++) {
                char h = *++q;
                cp = cp * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
            }
            unsigned lo = 0; // characters beyond U+FFFF come as a pair of UTF-16 surrogates
            if (cp >= 0xD800 && cp <= 0xDBFF && low_surrogate(q + 1, ps->p, &lo)) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            }
            put_utf8(&o, cp);
            break;
        }
        default:
            *o++ = *q;
        }
    }
    *o = '\0';
    ps->p++;
    *out = buf;
    return DL_OK;
}

static dl_status grow(parser *ps, dl_jv *v, size_t *cap, int with_keys)
{
    if (v->n < *cap)
        return DL_OK;
    size_t nc = *cap ? *cap * 2 : 4;
    dl_jv *items = realloc(v->items, nc * sizeof *items);
    if (items == NULL)
        return ps->st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", ps->name);
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, nc * sizeof *keys);
        if (keys == NULL)
            return ps->st = dl_error_set(DL_ERR_NOMEM, "%s: out of memory", ps->name);
        v->keys = keys;
    }
    *cap = nc;
    return DL_OK;
}

static dl_status parse_container(parser *ps, dl_jv *v, int depth, int is_obj)
{
    size_t cap = 0;
    char close = is_obj ? '}' : ']';
    v->type = is_obj ? DL_JOBJ : DL_JARR;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return DL_OK;
    }
    for (;;) {
        DL_TRY(grow(ps, v, &cap, is_obj));
        dl_jv *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        if (is_obj) {
            skip_ws(ps);
            char *key = NULL;
            DL_TRY(parse_string(ps, &key));
            v->keys[v->n] = key;
            skip_ws(ps);
            if (*ps->p != ':') {
                v->n++;
                return perr(ps, "':' after an object key");
            }
            ps->p++;
        }
        v->n++;
        DL_TRY(parse_value(ps, item, depth + 1));
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return DL_OK;
        }
        return perr(ps, is_obj ? "',' or '}'" : "',' or ']'");
    }
}

static dl_status parse_value(parser *ps, dl_jv *v, int depth)
{
    if (depth > 64)
        return perr(ps, "less nesting (over 64 levels)");
    skip_ws(ps);
    char c = *ps->p;
    if (c == '{' || c == '[')
        return parse_container(ps, v, depth, c == '{');
    if (c == '"') {
        v->type = DL_JSTR;
        return parse_string(ps, &v->str);
    }
    if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        v->type = DL_JBOOL;
        v->num = c == 't';
        ps->p += c == 't' ? 4 : 5;
        return DL_OK;
    }
    if (strncmp(ps->p, "null", 4) == 0) {
        v->type = DL_JNULL;
        ps->p += 4;
        return DL_OK;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char *end = NULL;
        v->type = DL_JNUM;
        v->num = strtod(ps->p, &end);
        ps->p = end;
        return DL_OK;
    }
    return perr(ps, "a value (object, array, string, number, true, false or null)");
}

dl_status dl_json_parse(const char *text, const char *name, dl_jv **out)
{
    *out = NULL;
    dl_jv *v = calloc(1, sizeof *v);
    if (v == NULL)
        return dl_error_set(DL_ERR_NOMEM, "%s: out of memory", name);
    parser ps = {text, text, name, DL_OK};
    dl_status st = parse_value(&ps, v, 0);
    if (st == DL_OK) {
        skip_ws(&ps);
        if (*ps.p != '\0')
            st = perr(&ps, "the end of the input");
    }
    if (st != DL_OK) {
        dl_jv_free(v);
        return st;
    }
    *out = v;
    return DL_OK;
}

dl_status dl_json_parse_file(const char *path, dl_jv **out)
{
    char *text = NULL;
    *out = NULL;
    DL_TRY(dl_read_file(path, &text, NULL));
    dl_status st = dl_json_parse(text, path, out);
    free(text);
    return st;
}

static void free_inner(dl_jv *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free_inner(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

void dl_jv_free(dl_jv *v)
{
    if (v == NULL)
        return;
    free_inner(v);
    free(v);
}

const dl_jv *dl_jv_get(const dl_jv *obj, const char *dotted)
{
    const dl_jv *v = obj;
    const char *p = dotted;
    while (v != NULL && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        const dl_jv *next = NULL;
        if (v->type == DL_JOBJ) {
            for (size_t i = 0; i < v->n; i++) {
                if (strlen(v->keys[i]) == len && strncmp(v->keys[i], p, len) == 0)
                    next = &v->items[i];
            }
        }
        v = next;
        p += len + (dot ? 1 : 0);
    }
    return v;
}

double dl_jv_num(const dl_jv *v, double fallback)
{
    return (v != NULL && (v->type == DL_JNUM || v->type == DL_JBOOL)) ? v->num : fallback;
}

const char *dl_jv_str(const dl_jv *v, const char *fallback)
{
    return (v != NULL && v->type == DL_JSTR) ? v->str : fallback;
}
