/* svgtext.c — the text an SVG plot draws, at the size it is drawn, for
 * tools/check-plots.sh: is every word readable when the plot is shown at
 * slide size?
 *
 *   svgtext [--min-ratio R] [--list] FILE.svg [FILE.svg ...]
 *
 * Contract
 * - For each <text> element of each FILE it finds the text it draws and the
 *   size each piece is drawn at, in the canvas's units: font-size from the
 *   element or the nearest ancestor that sets it (attribute or style; px,
 *   pt, em, %, CSS keywords), times the scale of every transform above it
 *   (translate, scale, rotate, matrix, skew). The canvas's width is the root
 *   <svg>'s viewBox width, else its width.
 * - A piece smaller than width/R (R = 60 by default: a 960-unit canvas needs
 *   16) is a failure: "FILE: 8.8 < 16 (width 960 / 60): 'the text'".
 * - A horizontal text whose estimated extent (0.5 em per character: an
 *   underestimate for DejaVu Sans, so a failure is certain, not a guess)
 *   leaves the canvas is a failure: "FILE: runs off the canvas ...".
 * - --list prints every text with its size and position instead of only
 *   the failures; each file then ends with "FILE: N texts, smallest S".
 * - Exit 0 when every file passes, 1 when one fails, 2 on bad usage or a
 *   file that cannot be read or has no <svg> root (named).
 * Not a full XML parser: it knows elements, attributes, comments, CDATA,
 * processing instructions and the five named and numeric entities, which is
 * all that gnuplot, cairo and hand-written SVGs use. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h> // isspace, isalpha
#include <math.h> // sqrt, fabs, cos, sin
#include <stdio.h> // printf, fprintf
#include <stdlib.h> // strtod, free
#include <string.h> // strncmp, strchr

#include "dl/fs.h" // dl_read_file

#define MAX_DEPTH 256
#define MAX_TEXT 400

// ---- the state of one element: inherited font size and transform ----

typedef struct node {
    char name[32];
    double size; // font size in its own user units (CSS px)
    double m[6]; // the transform from its user units to the canvas: a b c d e f
    int anchor; // text-anchor: 0 start, 1 middle, 2 end
    int in_text; // inside a <text>
} node;

/* One <text> element being read: what it draws and where. */
typedef struct text_run {
    char s[MAX_TEXT];
    size_t len;
    double min_size; // the smallest piece's size on the canvas
    double width; // estimated extent on the canvas, in units
    double x, y; // its anchor point on the canvas
    double m[6];
    int anchor, rotated, active;
} text_run;

typedef struct report {
    const char *file;
    double canvas_w, canvas_h, min_ratio;
    int list, failures, texts;
    double smallest;
} report;

static void mat_mul(const double *p, const double *q, double *out)
{
    double r[6] = {p[0] * q[0] + p[2] * q[1], p[1] * q[0] + p[3] * q[1],        p[0] * q[2] + p[2] * q[3],
                   p[1] * q[2] + p[3] * q[3], p[0] * q[4] + p[2] * q[5] + p[4], p[1] * q[4] + p[3] * q[5] + p[5]};
    memcpy(out, r, sizeof r);
}

static double mat_scale(const double *m)
{
    return sqrt(fabs(m[0] * m[3] - m[1] * m[2]));
}

/* Reads up to max numbers separated by spaces or commas from s; returns how many. */
static int numbers(const char *s, double *v, int max)
{
    int n = 0;
    while (n < max) {
        while (*s == ' ' || *s == ',' || *s == '\t' || *s == '\n')
            s++;
        char *end;
        double x = strtod(s, &end);
        if (end == s)
            break;
        v[n++] = x;
        s = end;
    }
    return n;
}

/* Applies an SVG transform list to m (in place). Unknown functions are ignored. */
static void apply_transform(double *m, const char *t)
{
    const double pi = 3.14159265358979323846;
    while (*t) {
        while (*t && !isalpha((unsigned char)*t))
            t++;
        const char *open = strchr(t, '(');
        const char *close = open != NULL ? strchr(open, ')') : NULL;
        if (open == NULL || close == NULL)
            return;
        char args[200];
        snprintf(args, sizeof args, "%.*s", (int)(close - open - 1), open + 1);
        double v[6] = {0}, f[6] = {1, 0, 0, 1, 0, 0};
        int n = numbers(args, v, 6);
        size_t len = (size_t)(open - t);
        while (len > 0 && isspace((unsigned char)t[len - 1]))
            len--;
        if (len == 9 && strncmp(t, "translate", 9) == 0 && n >= 1) {
            f[4] = v[0], f[5] = n > 1 ? v[1] : 0;
        } else if (len == 5 && strncmp(t, "scale", 5) == 0 && n >= 1) {
            f[0] = v[0], f[3] = n > 1 ? v[1] : v[0];
        } else if (len == 6 && strncmp(t, "matrix", 6) == 0 && n == 6) {
            memcpy(f, v, sizeof f);
        } else if (len == 6 && strncmp(t, "rotate", 6) == 0 && n >= 1) {
            double a = v[0] * pi / 180, c = cos(a), s = sin(a);
            double cx = n >= 3 ? v[1] : 0, cy = n >= 3 ? v[2] : 0;
            double r[6] = {c, s, -s, c, cx - c * cx + s * cy, cy - s * cx - c * cy};
            memcpy(f, r, sizeof f);
        } else if (len == 5 && strncmp(t, "skewX", 5) == 0 && n >= 1) {
            f[2] = tan(v[0] * pi / 180);
        } else if (len == 5 && strncmp(t, "skewY", 5) == 0 && n >= 1) {
            f[1] = tan(v[0] * pi / 180);
        }
        mat_mul(m, f, m);
        t = close + 1;
    }
}

/* A CSS font-size value against the parent's size; returns the parent's when unreadable. */
static double font_size(const char *v, double parent)
{
    static const struct {
        const char *word;
        double px;
    } words[] = {{"xx-small", 9}, {"x-small", 10}, {"small", 13},    {"medium", 16},
                 {"large", 18},   {"x-large", 24}, {"xx-large", 32}, {"xxx-large", 48}};
    while (isspace((unsigned char)*v))
        v++;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (strncmp(v, words[i].word, strlen(words[i].word)) == 0 &&
            !isalpha((unsigned char)v[strlen(words[i].word)]) && v[strlen(words[i].word)] != '-')
            return words[i].px;
    }
    if (strncmp(v, "smaller", 7) == 0)
        return parent / 1.2;
    if (strncmp(v, "larger", 6) == 0)
        return parent * 1.2;
    char *end;
    double x = strtod(v, &end);
    if (end == v)
        return parent;
    if (strncmp(end, "pt", 2) == 0)
        return x * 4.0 / 3.0;
    if (strncmp(end, "pc", 2) == 0)
        return x * 16.0;
    if (strncmp(end, "mm", 2) == 0)
        return x * 96.0 / 25.4;
    if (strncmp(end, "cm", 2) == 0)
        return x * 96.0 / 2.54;
    if (strncmp(end, "in", 2) == 0)
        return x * 96.0;
    if (strncmp(end, "em", 2) == 0)
        return x * parent;
    if (strncmp(end, "ex", 2) == 0)
        return x * parent / 2;
    if (*end == '%')
        return x * parent / 100;
    return x; // px or no unit
}

// ---- attributes ----

/* The value of attribute name in the tag's attribute text (a, up to the tag's
 * end) into out (len bytes); 0 when found, -1 when not. */
static int attr(const char *a, const char *end, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    const char *p = a;
    while (p < end) {
        while (p < end && (isspace((unsigned char)*p) || *p == '/'))
            p++;
        const char *key = p;
        while (p < end && *p != '=' && !isspace((unsigned char)*p) && *p != '>' && *p != '/')
            p++;
        size_t kl = (size_t)(p - key);
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p >= end || *p != '=') {
            if (kl == 0)
                p++;
            continue;
        }
        p++;
        while (p < end && isspace((unsigned char)*p))
            p++;
        char q = *p;
        const char *vs, *ve;
        if (q == '"' || q == '\'') {
            vs = p + 1;
            ve = memchr(vs, q, (size_t)(end - vs));
            if (ve == NULL)
                ve = end;
            p = ve + 1;
        } else {
            vs = p;
            while (p < end && !isspace((unsigned char)*p) && *p != '>')
                p++;
            ve = p;
        }
        if (kl == nl && strncmp(key, name, nl) == 0) {
            snprintf(out, len, "%.*s", (int)(ve - vs), vs);
            return 0;
        }
    }
    return -1;
}

/* A property from a style attribute ("a:b; c:d") into out; 0 when found. */
static int style_prop(const char *style, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    const char *p = style;
    while (*p) {
        while (*p == ';' || isspace((unsigned char)*p))
            p++;
        const char *colon = strchr(p, ':');
        const char *semi = strchr(p, ';');
        if (semi == NULL)
            semi = p + strlen(p);
        if (colon != NULL && colon < semi) {
            const char *k = p, *ke = colon;
            while (ke > k && isspace((unsigned char)ke[-1]))
                ke--;
            if ((size_t)(ke - k) == nl && strncmp(k, name, nl) == 0) {
                snprintf(out, len, "%.*s", (int)(semi - colon - 1), colon + 1);
                return 0;
            }
        }
        p = semi;
    }
    return -1;
}

/* An attribute or a style property: the style wins, as in CSS. */
static int prop(const char *a, const char *end, const char *name, char *out, size_t len)
{
    char style[1000];
    if (attr(a, end, "style", style, sizeof style) == 0 && style_prop(style, name, out, len) == 0)
        return 0;
    return attr(a, end, name, out, len);
}

// ---- text ----

static void text_add(text_run *t, const char *s, size_t n, double size, report *r)
{
    size_t chars = 0;
    int ink = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '&') { // an entity is one character
            const char *semi = memchr(s + i, ';', n - i);
            if (semi != NULL && semi - (s + i) < 10) {
                const char *e = s + i;
                char ch = strncmp(e, "&amp;", 5) == 0    ? '&'
                          : strncmp(e, "&lt;", 4) == 0   ? '<'
                          : strncmp(e, "&gt;", 4) == 0   ? '>'
                          : strncmp(e, "&quot;", 6) == 0 ? '"'
                          : strncmp(e, "&apos;", 6) == 0 ? '\''
                                                         : '?';
                if (t->len + 1 < MAX_TEXT)
                    t->s[t->len++] = ch;
                i = (size_t)(semi - s);
                chars++;
                ink = 1;
                continue;
            }
        }
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        if (!isspace(c))
            ink = 1;
        if ((c & 0xC0) != 0x80)
            chars++;
        if (t->len + 1 < MAX_TEXT && !(c == ' ' && (t->len == 0 || t->s[t->len - 1] == ' ')))
            t->s[t->len++] = (char)c;
    }
    t->s[t->len] = '\0';
    if (!ink)
        return;
    t->width += 0.5 * size * (double)chars;
    if (t->min_size == 0 || size < t->min_size)
        t->min_size = size;
    if (r->smallest == 0 || size < r->smallest)
        r->smallest = size;
}

static void text_end(text_run *t, report *r)
{
    t->active = 0;
    if (t->min_size == 0)
        return; // drew nothing
    while (t->len > 0 && t->s[t->len - 1] == ' ')
        t->s[--t->len] = '\0';
    r->texts++;
    double need = r->canvas_w / r->min_ratio;
    int small = t->min_size < need - 1e-9;
    double left = t->x - (t->anchor == 0 ? 0 : t->anchor == 1 ? t->width / 2 : t->width);
    double right = left + t->width;
    int off = !t->rotated && (left < -0.5 || right > r->canvas_w + 0.5 || t->y < 0 || t->y > r->canvas_h);
    if (r->list)
        printf("%s: %6.2f at (%.0f, %.0f)%s: '%s'\n", r->file, t->min_size, t->x, t->y, t->rotated ? " rotated" : "",
               t->s);
    if (small) {
        printf("%s: text %.3g < %.3g (width %.0f / %g): '%s'\n", r->file, t->min_size, need, r->canvas_w, r->min_ratio,
               t->s);
        r->failures++;
    }
    if (off) {
        printf("%s: text runs off the %.0fx%.0f canvas (about %.0f to %.0f across, %.0f down): '%s'\n", r->file,
               r->canvas_w, r->canvas_h, left, right, t->y, t->s);
        r->failures++;
    }
}

// ---- one file ----

/* Checks one file; returns 0 when it passes, 1 when it fails, 2 when it cannot be read. */
static int check(const char *file, double min_ratio, int list)
{
    char *doc = NULL;
    size_t n = 0;
    if (dl_read_file(file, &doc, &n) != DL_OK) {
        fprintf(stderr, "svgtext: cannot read %s\n", file);
        return 2;
    }
    report r = {.file = file, .min_ratio = min_ratio, .list = list};
    static node stack[MAX_DEPTH];
    int depth = 0, have_root = 0;
    stack[0] = (node){.name = "", .size = 16, .m = {1, 0, 0, 1, 0, 0}};
    text_run t = {0};
    const char *p = doc, *end = doc + n;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (lt == NULL)
            lt = end;
        if (t.active && lt > p)
            text_add(&t, p, (size_t)(lt - p), stack[depth].size * mat_scale(stack[depth].m), &r);
        if (lt >= end)
            break;
        const char *gt;
        if (strncmp(lt, "<!--", 4) == 0) {
            const char *e = strstr(lt + 4, "-->");
            p = e != NULL ? e + 3 : end;
            continue;
        }
        if (strncmp(lt, "<![CDATA[", 9) == 0) {
            const char *e = strstr(lt + 9, "]]>");
            if (e == NULL)
                e = end;
            if (t.active)
                text_add(&t, lt + 9, (size_t)(e - lt - 9), stack[depth].size * mat_scale(stack[depth].m), &r);
            p = e < end ? e + 3 : end;
            continue;
        }
        gt = memchr(lt, '>', (size_t)(end - lt));
        if (gt == NULL)
            break;
        p = gt + 1;
        if (lt[1] == '?' || lt[1] == '!')
            continue;
        if (lt[1] == '/') { // an end tag closes the innermost element
            if (depth > 0) {
                if (t.active && strcmp(stack[depth].name, "text") == 0)
                    text_end(&t, &r);
                depth--;
            }
            continue;
        }
        const char *a = lt + 1;
        while (a < gt && !isspace((unsigned char)*a) && *a != '/' && *a != '>')
            a++;
        int self_closing = gt[-1] == '/';
        if (depth + 1 >= MAX_DEPTH) {
            fprintf(stderr, "svgtext: %s: elements nested deeper than %d\n", file, MAX_DEPTH);
            free(doc);
            return 2;
        }
        node *up = &stack[depth], *e = &stack[depth + 1];
        *e = *up;
        snprintf(e->name, sizeof e->name, "%.*s", (int)(a - lt - 1), lt + 1);
        char v[1000];
        if (prop(a, gt, "font-size", v, sizeof v) == 0)
            e->size = font_size(v, up->size);
        if (prop(a, gt, "text-anchor", v, sizeof v) == 0)
            e->anchor = strstr(v, "middle") != NULL ? 1 : strstr(v, "end") != NULL ? 2 : 0;
        if (attr(a, gt, "transform", v, sizeof v) == 0)
            apply_transform(e->m, v);
        if (strcmp(e->name, "svg") == 0 && !have_root) {
            have_root = 1;
            double vb[4];
            if (attr(a, gt, "viewBox", v, sizeof v) == 0 && numbers(v, vb, 4) == 4) {
                r.canvas_w = vb[2], r.canvas_h = vb[3];
            } else {
                if (attr(a, gt, "width", v, sizeof v) == 0)
                    r.canvas_w = strtod(v, NULL);
                if (attr(a, gt, "height", v, sizeof v) == 0)
                    r.canvas_h = strtod(v, NULL);
            }
        }
        if (strcmp(e->name, "text") == 0 && !t.active) {
            double x = 0, y = 0;
            if (attr(a, gt, "x", v, sizeof v) == 0)
                x = strtod(v, NULL);
            if (attr(a, gt, "y", v, sizeof v) == 0)
                y = strtod(v, NULL);
            t = (text_run){.active = 1, .anchor = e->anchor};
            memcpy(t.m, e->m, sizeof t.m);
            t.x = e->m[0] * x + e->m[2] * y + e->m[4];
            t.y = e->m[1] * x + e->m[3] * y + e->m[5];
            t.rotated = fabs(e->m[1]) > 1e-6 || fabs(e->m[2]) > 1e-6;
        }
        if (self_closing) {
            if (t.active && strcmp(e->name, "text") == 0)
                text_end(&t, &r);
            continue;
        }
        depth++;
    }
    free(doc);
    if (!have_root || r.canvas_w <= 0) {
        fprintf(stderr, "svgtext: %s: no <svg> root with a width or viewBox\n", file);
        return 2;
    }
    if (r.canvas_h <= 0)
        r.canvas_h = 1e30;
    if (list)
        printf("%s: %d texts, smallest %.3g (needs %.3g)\n", file, r.texts, r.smallest, r.canvas_w / min_ratio);
    return r.failures > 0;
}

int main(int argc, char **argv)
{
    double ratio = 60;
    int list = 0, a = 1, status = 0;
    for (; a < argc && argv[a][0] == '-'; a++) {
        char *end = NULL;
        if (strcmp(argv[a], "--min-ratio") == 0 && a + 1 < argc)
            ratio = strtod(argv[a + 1], &end);
        if (strcmp(argv[a], "--list") == 0) {
            list = 1;
        } else if (end != NULL && end != argv[a + 1] && *end == '\0' && ratio > 0) {
            a++;
        } else {
            fprintf(stderr, "svgtext: bad option %s%s%s\nusage: svgtext [--min-ratio R] [--list] FILE.svg...\n",
                    argv[a], a + 1 < argc ? " " : "", a + 1 < argc ? argv[a + 1] : "");
            return 2;
        }
    }
    if (a >= argc) {
        fprintf(stderr, "usage: svgtext [--min-ratio R] [--list] FILE.svg...\n");
        return 2;
    }
    for (; a < argc; a++) {
        int rc = check(argv[a], ratio, list);
        status = rc > status ? rc : status;
    }
    return status;
}
