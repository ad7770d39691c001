/* report.c — builds `make run`'s one-page report: build/report/index.html.
 *
 *   report [--note TEXT] OUT.html LAB [LAB ...]
 *   LAB: --lab DIR TITLE [--key-plot NAME] [--headline TEXT] [--caption PLOT TEXT ...]
 *        [--run2 SUB [--key-plot NAME] [--headline TEXT]]
 *
 * What a lab shows comes from its manifest (labs/NN-name/lab.mk: TITLE,
 * KEY_PLOT, HEADLINE, CAPTION_<plot>, RUN2, RUN2_KEY_PLOT, RUN2_HEADLINE),
 * which tools/run.sh reads (tools/lab.sh) and hands over as these flags:
 * --key-plot and --headline belong to the --lab or --run2 before them, a
 * --caption to the lab (both its runs). This file knows no lab.
 *
 * Each DIR is one lab's run folder as tools/run.sh leaves it: summary.json
 * (the driver's), run.log and run.rc (the driver's output and exit status),
 * the plots (.svg or .png, listed in summary.json's "plots"), and, when the
 * run was graded, grade.json (Gradescope results), grade.log and grade.rc.
 *
 * Contract
 * - A lab's section opens with its headline, one or two sentences whose
 *   numbers come from its summary.json through the lab's --headline, and
 *   its key plot. The summary table, the other plots, the grade
 *   items and the driver's output fold away in <details>.
 * - A lab may have a second run (--run2 SUB: LAB_NN_RUN2 in its lab.mk,
 *   its outputs in the subfolder DIR/SUB): its own headline and key plot
 *   come under the first run's, and its
 *   plots, summary and output fold away beside the first run's. A second
 *   run that did not run to the end gets its own "not run" line.
 * - A lab that did not run to the end (no folder, no run.rc, a non-zero exit,
 *   no summary.json) gets one "not run: <why>" line (class "notrun") instead.
 *   A student's run (tools/run.sh --impl labs) that stopped at a task not
 *   done yet ("not implemented yet: labNN task K" in run.log) gets "task K
 *   not done yet: ..." (class "todo": where the work stands, not a failure);
 *   one whose code did not build (build.rc non-zero) gets "not built" and the
 *   build log's last lines. The grade line says whose code was graded (its
 *   grade.json's extra_data.impl) and, for the student's, which tasks the
 *   grader found not done yet (grade.log).
 *   A headline that cannot be filled (a key summary.json lacks, none
 *   given) and a key plot that is not there each get a line that says so
 *   (class "unavailable"). The page is always complete and valid.
 * - Every string read from a file (JSON, logs) or the command line is
 *   HTML-escaped. Plots are linked, not copied: <img src> is the plot's path
 *   relative to OUT's folder, percent-encoded, so the page works offline
 *   beside the run folders (build/report/ and build/run/). A plot name from
 *   JSON is linked only when it is a plain .svg/.png file name.
 * - The page is written atomically (a temporary beside OUT, then rename).
 *   Exit 0 when written, 1 when it could not be, 2 on bad usage. */
#define _XOPEN_SOURCE 700 // realpath, strndup, open_memstream
#include <dirent.h> // opendir, readdir
#include <limits.h> // PATH_MAX
#include <math.h> // floor, ldexp, ilogb
#include <stdio.h> // fprintf, open_memstream
#include <stdlib.h> // realpath, qsort
#include <string.h> // strcmp, strspn
#include <sys/stat.h> // stat
#include <time.h> // time, strftime

#include "dl/fmt.h" // dl_pct
#include "dl/fs.h" // dl_read_file, dl_tmp_create, dl_file_exists
#include "dl/json.h" // dl_json_parse_file, dl_jv_get

// ---- what a lab shows: its manifest's view, from the command line ----

/* What a lab's section opens with, its --key-plot and --headline.
 * The headline is two or three sentences with placeholders filled from the
 * lab's summary.json; every number it gives that its key plot shows too is
 * the same quantity, written the same way (tools/check-report.sh checks it):
 *   {path}       a value; path is a dotted key: "algos.ring.large_busbw_gbs"
 *   {a/b}        the ratio of two numbers
 *   {path:fmt}   fmt: pct (x100, one decimal, "%"), x (two decimals, "×"),
 *                f1 f2 f3 f4 (fixed decimals), g (3 significant digits,
 *                integers in full; the default for numbers),
 *                pctg (x100, 3 significant digits, "%": small shares),
 *                pow2 (a power of two as "65536 = 2^16"; else as g),
 *                bytes (a byte count with binary prefixes, dl_fmt_bytes: "1.5 MiB"),
 *                #noun (a count and its noun, plural unless 1: {steps:#step}
 *                gives "36 steps", "1 step")
 * In a second run's headline {^path} reads the lab's first run's summary.json.
 * Strings are written as they are (escaped). A placeholder summary.json
 * cannot fill turns the whole headline into a line that names it. */
typedef struct lab_view {
    const char *key_plot; // the plot's name without extension (.svg, else .png); NULL: the first plot
    const char *headline; // NULL: none given
} lab_view;

/* What to see in a plot: its caption on the page (a plot without one is
 * captioned with its file name). The plot's name without extension. */
typedef struct plot_caption {
    const char *plot, *text;
} plot_caption;

#define MAX_CAPTIONS 64

// ---- HTML helpers ----

static void esc_n(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        switch (s[i]) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(s[i], f);
        }
    }
}

static void esc(FILE *f, const char *s)
{
    esc_n(f, s, (size_t)-1);
}

/* A path in an attribute: bytes outside [A-Za-z0-9._~/-] are %XX. */
static void put_url(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("._~/-", *c))
            fputc(*c, f);
        else
            fprintf(f, "%%%02X", *c);
    }
}

static void put_num(FILE *f, double v)
{
    if (v == floor(v) && v > -1e15 && v < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.6g", v);
}

static void put_scalar(FILE *f, const dl_jv *v)
{
    switch (v->type) {
    case DL_JNULL:
        fputs("null", f);
        break;
    case DL_JBOOL:
        fputs(v->num ? "true" : "false", f);
        break;
    case DL_JNUM:
        put_num(f, v->num);
        break;
    case DL_JSTR:
        esc(f, v->str);
        break;
    case DL_JARR: {
        size_t show = v->n <= 10 ? v->n : 4;
        fputs("[", f);
        for (size_t i = 0; i < show; i++) {
            if (i)
                fputs(", ", f);
            if (v->items[i].type == DL_JNUM)
                put_num(f, v->items[i].num);
            else if (v->items[i].type == DL_JSTR)
                esc(f, v->items[i].str);
            else
                fputs("…", f);
        }
        if (show < v->n)
            fprintf(f, ", … (%zu values)", v->n);
        fputs("]", f);
        break;
    }
    case DL_JOBJ:
        fputs("{…}", f);
        break;
    }
}

/* An array of objects (per_class, worst features) as a table: one row per
 * item, one column per key of the first item; values that are not scalars
 * as put_scalar writes them. */
static void object_table(FILE *f, const dl_jv *v)
{
    const dl_jv *first = &v->items[0];
    fputs("<table class=arr><tr>", f);
    for (size_t k = 0; k < first->n; k++) {
        fputs("<th>", f);
        esc(f, first->keys[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t i = 0; i < v->n; i++) {
        fputs("<tr>", f);
        for (size_t k = 0; k < first->n; k++) {
            const dl_jv *cell = v->items[i].type == DL_JOBJ ? dl_jv_get(&v->items[i], first->keys[k]) : NULL;
            fputs("<td>", f);
            if (cell != NULL)
                put_scalar(f, cell);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>", f);
}

/* An array of numbers as a table of ten per row, each row headed by its
 * first index; a long one (over 100) shows its first 30, then its size,
 * smallest and largest value. */
static void number_table(FILE *f, const dl_jv *v)
{
    const size_t per_row = 10, shown = v->n <= 100 ? v->n : 30;
    double lo = v->items[0].num, hi = lo;
    for (size_t i = 1; i < v->n; i++) {
        lo = v->items[i].num < lo ? v->items[i].num : lo;
        hi = v->items[i].num > hi ? v->items[i].num : hi;
    }
    fputs("<table class=nums>", f);
    for (size_t i = 0; i < shown; i += per_row) {
        fprintf(f, "<tr><th>[%zu]</th>", i);
        for (size_t j = i; j < i + per_row && j < shown; j++) {
            fputs("<td>", f);
            put_num(f, v->items[j].num);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>", f);
    if (shown < v->n) {
        fprintf(f, "<span class=file>… %zu values in all, from ", v->n);
        put_num(f, lo);
        fputs(" to ", f);
        put_num(f, hi);
        fputs("</span>", f);
    }
}

/* What kind of array v is: 1 objects, 2 numbers, 0 anything else (empty, mixed). */
static int array_kind(const dl_jv *v)
{
    int objects = v->n > 0, numbers = v->n > 0;
    for (size_t i = 0; i < v->n; i++) {
        objects &= v->items[i].type == DL_JOBJ;
        numbers &= v->items[i].type == DL_JNUM;
    }
    return objects ? 1 : numbers ? 2 : 0;
}

/* One row per scalar; nested objects become "a.b" keys; an array of objects
 * or of numbers becomes a table in its row. Returns the rows written. */
static int summary_rows(FILE *f, const dl_jv *obj, const char *prefix)
{
    int rows = 0;
    for (size_t i = 0; i < obj->n; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", obj->keys[i]);
        if (obj->items[i].type == DL_JOBJ) {
            rows += summary_rows(f, &obj->items[i], key);
            continue;
        }
        fputs("<tr><td>", f);
        esc(f, key);
        fputs("</td><td>", f);
        int kind = obj->items[i].type == DL_JARR ? array_kind(&obj->items[i]) : 0;
        if (kind == 1)
            object_table(f, &obj->items[i]);
        else if (kind == 2)
            number_table(f, &obj->items[i]);
        else
            put_scalar(f, &obj->items[i]);
        fputs("</td></tr>\n", f);
        rows++;
    }
    return rows;
}

// ---- headlines: the templates filled from summary.json ----

/* Writes v in format fmt ("" is g); returns 0, or -1 for an unknown fmt. */
static int put_formatted(FILE *f, double v, const char *fmt)
{
    if (strcmp(fmt, "pct") == 0)
        fprintf(f, "%.1f%%", dl_pct(v, 1));
    else if (strcmp(fmt, "pctg") == 0)
        fprintf(f, "%.3g%%", dl_pct(v, 60)); // %g shows any magnitude: only -0 needs the fix
    else if (strcmp(fmt, "x") == 0)
        fprintf(f, "%.2f×", v);
    else if (strcmp(fmt, "bytes") == 0 && v >= 0) {
        char b[32];
        fputs(dl_fmt_bytes(v, b, sizeof b), f);
    } else if (fmt[0] == 'f' && fmt[1] >= '1' && fmt[1] <= '4' && fmt[2] == '\0')
        fprintf(f, "%.*f", fmt[1] - '0', v);
    else if (fmt[0] == '#' && fmt[1] != '\0' && v == floor(v) && v > -1e15 && v < 1e15)
        fprintf(f, "%.0f %s%s", v, fmt + 1, v == 1 ? "" : "s");
    else if (strcmp(fmt, "pow2") == 0 && v >= 1 && v < 1e15 && v == ldexp(1, ilogb(v)))
        fprintf(f, "%.0f = 2^%d", v, ilogb(v));
    else if (strcmp(fmt, "pow2") == 0)
        return put_formatted(f, v, "g");
    else if ((fmt[0] == '\0' || strcmp(fmt, "g") == 0) && v == floor(v) && v > -1e15 && v < 1e15)
        fprintf(f, "%.0f", v);
    else if (fmt[0] == '\0' || strcmp(fmt, "g") == 0)
        fprintf(f, "%.3g", v);
    else
        return -1;
    return 0;
}

/* Fills one placeholder ("path", "a/b", "path:fmt"; "^..." from first) from
 * summary into f. Returns 0, or -1 with the reason in why (len bytes). */
static int fill_one(FILE *f, const char *ph, const dl_jv *summary, const dl_jv *first, char *why, size_t len)
{
    char path[200];
    if (ph[0] == '^' && first == NULL) {
        snprintf(why, len, "'{%s}' reads the first run's summary.json, which is not there", ph);
        return -1;
    }
    if (ph[0] == '^')
        summary = first, ph++;
    snprintf(path, sizeof path, "%s", ph);
    char *colon = strchr(path, ':');
    const char *fmt = "";
    if (colon != NULL) {
        *colon = '\0';
        fmt = colon + 1;
    }
    char *slash = strchr(path, '/');
    if (slash != NULL)
        *slash = '\0';
    const dl_jv *v = dl_jv_get(summary, path);
    const dl_jv *den = slash != NULL ? dl_jv_get(summary, slash + 1) : NULL;
    if (v == NULL || v->type == DL_JNULL || v->type == DL_JARR || v->type == DL_JOBJ) {
        snprintf(why, len, "summary.json has no value '%s'", path);
        return -1;
    }
    if (slash != NULL && (den == NULL || den->type != DL_JNUM || v->type != DL_JNUM || den->num == 0)) {
        snprintf(why, len, "'%s/%s' is not a ratio of two numbers in summary.json", path, slash + 1);
        return -1;
    }
    if (v->type == DL_JSTR) {
        esc(f, v->str);
        return 0;
    }
    if (v->type == DL_JBOOL) {
        fputs(v->num ? "yes" : "no", f);
        return 0;
    }
    if (put_formatted(f, slash != NULL ? v->num / den->num : v->num, fmt) != 0) {
        snprintf(why, len, "unknown format '%s' in '{%s}'", fmt, ph);
        return -1;
    }
    return 0;
}

/* The filled headline (malloc'ed, escaped HTML), or NULL with the reason in
 * why; first: the lab's first run's summary, for a second run's "{^path}". */
static char *fill_headline(const char *tpl, const dl_jv *summary, const dl_jv *first, char *why, size_t len)
{
    char *html = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&html, &size);
    if (f == NULL) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    int bad = 0;
    const char *p = tpl;
    while (*p && !bad) {
        const char *open = strchr(p, '{');
        const char *close = open != NULL ? strchr(open, '}') : NULL;
        if (open == NULL || close == NULL) {
            esc(f, p);
            break;
        }
        esc_n(f, p, (size_t)(open - p));
        char ph[200];
        snprintf(ph, sizeof ph, "%.*s", (int)(close - open - 1), open + 1);
        bad = fill_one(f, ph, summary, first, why, len) != 0;
        p = close + 1;
    }
    fclose(f);
    if (bad) {
        free(html);
        return NULL;
    }
    return html;
}

// ---- a lab's run folder ----

typedef struct lab_page {
    const char *dir, *title;
    const char *name; // the folder's name: the section's id
    lab_view view; // its key plot and headline
    const plot_caption *captions; // the lab's (both runs'), n_captions of them
    int n_captions;
    dl_jv *summary, *grade;
    int run_rc, grade_rc, build_rc; // -1 when the file is missing
    char why[600]; // why the lab did not run to the end; "" when it did
    int todo; // the task the run stopped at, "not implemented yet" (a student's run), else 0
    char *rel; // the folder relative to the page's folder, NULL when it does not exist
    char *own_dir; // a second run's folder, malloc'ed (dir points to it)
    const char *sub; // the second run's folder name (--run2), NULL when none
    lab_view view2; // the second run's key plot and headline
    struct lab_page *second; // the lab's second run (--run2); NULL when none
} lab_page;

/* DIR/NAME's text (malloc'ed), or NULL. */
static char *read_text(const char *dir, const char *name)
{
    char path[1200], *text = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return dl_read_file(path, &text, NULL) == DL_OK ? text : NULL;
}

static int read_rc(const char *dir, const char *name)
{
    char *text = read_text(dir, name);
    int rc = text != NULL ? atoi(text) : -1;
    free(text);
    return rc;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* The last non-empty line of DIR/NAME into buf (len bytes); "" when none. */
static void last_line(const char *dir, const char *name, char *buf, size_t len)
{
    char path[1200], *text = NULL;
    size_t n = 0;
    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dl_read_file(path, &text, &n) != DL_OK)
        return;
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        n--;
    size_t start = n;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(buf, len, "%.*s", (int)(n - start), text + start);
    free(text);
}

/* target's path relative to the folder from_dir (both must exist), malloc'ed; NULL when either does not. */
static char *rel_path(const char *from_dir, const char *target)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (realpath(from_dir, from) == NULL || realpath(target, to) == NULL)
        return NULL;
    size_t i = 0, common = 0; // common: the length of the leading folders both share
    while (from[i] && from[i] == to[i]) {
        if (from[i] == '/')
            common = i;
        i++;
    }
    if (from[i] == '\0' && (to[i] == '/' || to[i] == '\0'))
        common = i;
    char *out = malloc(2 * PATH_MAX);
    if (out == NULL)
        return NULL;
    out[0] = '\0';
    for (const char *c = from + common; *c; c++) {
        if (*c == '/')
            strcat(out, "../");
    }
    const char *rest = to + common + (to[common] == '/' ? 1 : 0);
    strcat(out, *rest ? rest : ".");
    return out;
}

/* DL_TODO's message: "not implemented yet: labNN task K: WHAT", a task the
 * student has not done yet. The next one in text from *at on: returns K
 * (WHAT into what, up to its line's end, when what is not NULL) and moves
 * *at past it; 0 when there is none. */
static int next_todo(const char **at, const char **what)
{
    static const char mark[] = "not implemented yet: lab";
    for (const char *m = strstr(*at, mark); m != NULL; m = strstr(m + 1, mark)) {
        const char *t = m + strlen(mark);
        t += strspn(t, "0123456789");
        int k = strncmp(t, " task ", 6) == 0 && t[6] >= '1' && t[6] <= '9' ? atoi(t + 6) : 0;
        if (k == 0)
            continue;
        t += 6 + strspn(t + 6, "0123456789");
        *at = t;
        if (what != NULL)
            *what = t + (strncmp(t, ": ", 2) == 0 ? 2 : 0);
        return k;
    }
    return 0;
}

/* The first task not done yet in DIR/NAME (next_todo): K, with what it is
 * into line (len bytes); 0 when there is none. */
static int todo_task(const char *dir, const char *name, char *line, size_t len)
{
    char *text = read_text(dir, name);
    const char *at = text != NULL ? text : "", *what = "";
    int k = next_todo(&at, &what);
    if (k > 0)
        snprintf(line, len, "%.*s", (int)strcspn(what, "\n"), what);
    free(text);
    return k;
}

/* A run folder's files, its path from the page and, when it did not run to
 * the end, why. */
static void run_load(lab_page *p, const char *page_dir)
{
    char path[1200];
    struct stat st;
    snprintf(path, sizeof path, "%s/summary.json", p->dir);
    if (dl_json_parse_file(path, &p->summary) != DL_OK)
        p->summary = NULL;
    snprintf(path, sizeof path, "%s/grade.json", p->dir);
    if (dl_json_parse_file(path, &p->grade) != DL_OK)
        p->grade = NULL;
    p->run_rc = read_rc(p->dir, "run.rc");
    p->grade_rc = read_rc(p->dir, "grade.rc");
    p->build_rc = read_rc(p->dir, "build.rc"); // a student's run: its build (tools/run.sh)
    p->rel = rel_path(page_dir, p->dir);
    char todo_line[300] = "";
    if (stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(p->why, sizeof p->why, "not run: there is no run folder %s (the run stopped before this lab?)",
                 p->dir);
    } else if (p->build_rc > 0) {
        snprintf(p->why, sizeof p->why,
                 "not built: your code does not build (the compiler's reason below, from %s/build.log)", p->dir);
    } else if (p->run_rc < 0) {
        snprintf(p->why, sizeof p->why, "not run: %s/run.rc is missing (the driver was interrupted?)", p->dir);
    } else if (p->run_rc != 0 && (p->todo = todo_task(p->dir, "run.log", todo_line, sizeof todo_line)) > 0) {
        snprintf(p->why, sizeof p->why, "task %d not done yet: %s", p->todo, todo_line);
    } else if (p->run_rc != 0) {
        char last[300];
        last_line(p->dir, "run.log", last, sizeof last);
        snprintf(p->why, sizeof p->why, "not run: the driver exited with status %d%s%s", p->run_rc,
                 last[0] ? ": " : " and printed nothing", last);
    } else if (p->summary == NULL || p->summary->type != DL_JOBJ) {
        snprintf(p->why, sizeof p->why, "not run: the driver exited 0 but %s/summary.json is missing or unreadable",
                 p->dir);
    }
}

static void lab_load(lab_page *p, const char *page_dir)
{
    p->name = base_name(p->dir);
    run_load(p, page_dir);
    lab_page *q = p->sub != NULL ? calloc(1, sizeof *q) : NULL;
    size_t len = strlen(p->dir) + strlen(p->sub != NULL ? p->sub : "") + 2;
    char *dir = q != NULL ? malloc(len) : NULL;
    if (dir == NULL) {
        free(q);
        return;
    }
    snprintf(dir, len, "%s/%s", p->dir, p->sub);
    *q = (lab_page){.dir = dir,
                    .title = p->title,
                    .name = p->sub,
                    .view = p->view2,
                    .captions = p->captions,
                    .n_captions = p->n_captions,
                    .own_dir = dir};
    run_load(q, page_dir);
    p->second = q;
}

static void lab_free(lab_page *p)
{
    dl_jv_free(p->summary);
    dl_jv_free(p->grade);
    free(p->rel);
    if (p->second != NULL)
        lab_free(p->second);
    free(p->second);
    free(p->own_dir);
}

// ---- plots ----

#define MAX_PLOTS 64

/* A plot name we link: a plain .svg or .png file name, nothing that could
 * leave the folder or break the attribute. */
static int plain_plot_name(const char *s)
{
    size_t n = strlen(s);
    const char *plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    if (n < 5 || n > 200 || s[0] == '.' || strspn(s, plain) != n)
        return 0;
    return strcmp(s + n - 4, ".svg") == 0 || strcmp(s + n - 4, ".png") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lab's plots, in summary.json's order ("plots": "a.svg,b.svg"), else
 * the folder's .svg/.png files by name. Returns how many went to names
 * (malloc'ed each). */
static int list_plots(const lab_page *p, char **names)
{
    int n = 0;
    const char *listed = dl_jv_str(dl_jv_get(p->summary, "plots"), NULL);
    if (listed != NULL) {
        const char *c = listed;
        while (*c && n < MAX_PLOTS) {
            size_t len = strcspn(c, ",");
            if (len > 0)
                names[n++] = strndup(c, len);
            c += len + (c[len] == ',' ? 1 : 0);
        }
        return n;
    }
    DIR *d = opendir(p->dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_PLOTS) {
        if (plain_plot_name(e->d_name) && strstr(e->d_name, ".tmp.") == NULL)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    return n;
}

static int plot_exists(const lab_page *p, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", p->dir, name);
    return dl_file_exists(path);
}

/* The caption of plot file name (base.svg or base.png) in p's lab, or NULL
 * when its manifest gives none. */
static const char *caption_of(const lab_page *p, const char *name)
{
    size_t base = strcspn(name, ".");
    for (int k = 0; k < p->n_captions; k++) {
        const plot_caption *c = &p->captions[k];
        if (strlen(c->plot) == base && strncmp(name, c->plot, base) == 0)
            return c->text;
    }
    return NULL;
}

/* One plot: <img> when its file is there, else a line that says why not. */
static void figure(FILE *f, const lab_page *p, const char *name, const char *cls)
{
    if (!plain_plot_name(name)) {
        fputs("<p class=\"unavailable\">plot '", f);
        esc(f, name);
        fputs("' not shown: not a plain .svg/.png file name</p>\n", f);
        return;
    }
    if (!plot_exists(p, name) || p->rel == NULL) {
        fputs("<p class=\"unavailable\">plot ", f);
        esc(f, name);
        fputs(" is missing from the run folder (is gnuplot installed? `make deps`)</p>\n", f);
        return;
    }
    // onerror marks an image the browser could not load (the page moved away from build/?);
    // a thumbnail (not the key plot, shown at full width) opens the plot itself
    int link = strcmp(cls, "key") != 0;
    fprintf(f, "<figure class=\"%s\">", cls);
    if (link) {
        fputs("<a href=\"", f);
        put_url(f, p->rel);
        fputc('/', f);
        put_url(f, name);
        fputs("\" title=\"open the plot at full size\">", f);
    }
    fputs("<img src=\"", f);
    put_url(f, p->rel);
    fputc('/', f);
    put_url(f, name);
    fputs("\" alt=\"plot ", f);
    esc(f, name);
    fputs(" (not found beside this page)\" onerror=\"this.className='broken'\">", f);
    if (link)
        fputs("</a>", f);
    fputs("<figcaption>", f);
    const char *what = caption_of(p, name);
    if (what != NULL) { // what to see, then the file it is in
        esc(f, what);
        fputs(" <span class=file>", f);
        esc(f, name);
        fputs("</span>", f);
    } else {
        esc(f, name);
    }
    fputs("</figcaption></figure>\n", f);
}

/* The key plot's file name in key (len bytes): --key-plot's name with .svg or
 * .png, whichever the run wrote, else the first listed plot. "" when none. */
static void key_plot(const lab_page *p, char **names, int n, char *key, size_t len)
{
    key[0] = '\0';
    if (p->view.key_plot == NULL) {
        if (n > 0)
            snprintf(key, len, "%s", names[0]);
        return;
    }
    snprintf(key, len, "%s.svg", p->view.key_plot);
    if (plot_exists(p, key))
        return;
    snprintf(key, len, "%s.png", p->view.key_plot);
    if (!plot_exists(p, key))
        snprintf(key, len, "%s.svg", p->view.key_plot); // named as missing by figure()
}

// ---- a lab's section ----

static void log_tail(FILE *f, const char *dir, const char *name, int max_lines)
{
    char path[1200], *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dl_read_file(path, &text, &n) != DL_OK) {
        fprintf(f, "<p class=\"unavailable\">%s is missing.</p>\n", name);
        return;
    }
    const char *start = text;
    int lines = 0;
    for (size_t k = n; k > 0; k--) {
        if (text[k - 1] == '\n' && k != n && ++lines >= max_lines) {
            start = text + k;
            break;
        }
    }
    fputs("<pre>", f);
    esc(f, start);
    fputs("</pre>\n", f);
    free(text);
}

/* Prints the grade table; returns the number of items that failed. */
static int grade_table(FILE *f, const dl_jv *g)
{
    const dl_jv *tests = dl_jv_get(g, "tests");
    int failed = 0;
    fprintf(f, "<table class=grade><tr><th>item</th><th>points</th><th>status</th><th>details</th></tr>\n");
    for (size_t i = 0; tests != NULL && i < tests->n; i++) {
        const dl_jv *t = &tests->items[i];
        const char *name = dl_jv_str(dl_jv_get(t, "name"), "?");
        const char *out = dl_jv_str(dl_jv_get(t, "output"), "");
        double score = dl_jv_num(dl_jv_get(t, "score"), 0), max = dl_jv_num(dl_jv_get(t, "max_score"), 0);
        int skipped = strncmp(out, "SKIPPED", 7) == 0;
        int pass = strcmp(dl_jv_str(dl_jv_get(t, "status"), ""), "passed") == 0;
        failed += !skipped && !pass;
        fprintf(f, "<tr class=%s><td>", skipped ? "skip" : pass ? "pass" : "fail");
        esc(f, name);
        if (skipped)
            fputs("</td><td>—</td><td>SKIPPED</td><td>", f);
        else
            fprintf(f, "</td><td>%.0f/%.0f</td><td>%s</td><td>", score, max, pass ? "PASS" : "FAIL");
        esc_n(f, pass ? "" : out, strcspn(out, "\n"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    return failed;
}

/* The tasks the grader's items found not done yet (their "not implemented
 * yet: labNN task K" in grade.log), as a sentence: "tasks 1, 2 and 4". */
static void todo_tasks(FILE *f, const lab_page *p)
{
    char *text = read_text(p->dir, "grade.log");
    const char *at = text != NULL ? text : "";
    int seen[100] = {0}, n = 0;
    for (int k; (k = next_todo(&at, NULL)) > 0;) {
        if (k < 100 && !seen[k]) {
            seen[k] = 1;
            n++;
        }
    }
    free(text);
    if (n == 0)
        return;
    fprintf(f, "<p class=\"todo\">Not done yet, as the grader's items that ran say: task%s ", n > 1 ? "s" : "");
    for (int k = 1, i = 0; k < 100; k++) {
        if (!seen[k])
            continue;
        i++;
        fprintf(f, "%s%d", i == 1 ? "" : i == n ? " and " : ", ", k);
    }
    fputs(".</p>\n", f);
}

static void grade_part(FILE *f, const lab_page *p)
{
    if (p->grade_rc < 0 && p->grade == NULL) {
        fputs("<p class=grade-line>Not graded in this run.</p>\n", f);
        return;
    }
    if (p->grade == NULL) {
        fputs("<p class=\"unavailable\">grade.json is missing: the grader did not finish (see grade.log).</p>\n", f);
        return;
    }
    int yours = strcmp(dl_jv_str(dl_jv_get(p->grade, "extra_data.impl"), ""), "labs") == 0;
    fprintf(f, "<p class=grade-line>Grade of %s: <b>%.0f/%.0f</b>", yours ? "your code" : "the reference solution",
            dl_jv_num(dl_jv_get(p->grade, "score"), 0), dl_jv_num(dl_jv_get(p->grade, "extra_data.max_score"), 0));
    double sk = dl_jv_num(dl_jv_get(p->grade, "extra_data.skipped_points"), 0);
    if (sk > 0)
        fprintf(f, "; %.0f points SKIPPED (their tier cannot run here: no GPU) — not counted", sk);
    fputs(".</p>\n", f);
    if (yours)
        todo_tasks(f, p);
    // the items are open when one failed: that is what the reader needs to see
    char *table = NULL;
    size_t size = 0;
    FILE *t = open_memstream(&table, &size);
    int failed = t != NULL ? grade_table(t, p->grade) : 0;
    if (t != NULL)
        fclose(t);
    fprintf(f, "<details%s><summary>grade items</summary>\n%s</details>\n", failed ? " open" : "",
            table != NULL ? table : "");
    free(table);
}

/* p's headline (first: the lab's first run's summary, for a second run's
 * "{^path}"), or the line that says why it cannot be filled. */
static void headline(FILE *f, const lab_page *p, const dl_jv *first)
{
    char why[300];
    char *html = p->view.headline != NULL ? fill_headline(p->view.headline, p->summary, first, why, sizeof why) : NULL;
    if (p->view.headline == NULL)
        snprintf(why, sizeof why, "no headline given for this lab: its manifest (lab.mk) sets LAB_NN_HEADLINE");
    if (html != NULL) {
        fprintf(f, "<p class=\"headline\">%s</p>\n", html);
    } else {
        fputs("<p class=\"unavailable\">headline unavailable: ", f);
        esc(f, why);
        fputs("</p>\n", f);
    }
    free(html);
}

/* p's plots (names, malloc'ed; returns how many) and its key plot, shown;
 * its name goes to key (len bytes). */
static int key_figure(FILE *f, const lab_page *p, char **names, char *key, size_t len)
{
    int n = list_plots(p, names);
    key_plot(p, names, n, key, len);
    if (key[0])
        figure(f, p, key, "key");
    else
        fputs("<p class=\"unavailable\">No plots in this run: is gnuplot installed? (`make deps`)</p>\n", f);
    return n;
}

/* Folded: p's plots but its key plot (then freed), its summary and its
 * output; what is a prefix for their titles ("" for the lab's run). */
static void run_details(FILE *f, const lab_page *p, char **names, int n, const char *key, const char *what)
{
    int others = 0;
    for (int i = 0; i < n; i++)
        others += strcmp(names[i], key) != 0;
    if (others > 0) {
        fprintf(f, "<details><summary>%sthe other plots (%d)</summary><div class=plots>\n", what, others);
        for (int i = 0; i < n; i++) {
            if (strcmp(names[i], key) != 0)
                figure(f, p, names[i], "other");
        }
        fputs("</div></details>\n", f);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    if (p->summary != NULL) {
        fprintf(f, "<details><summary>%ssummary.json, every value</summary>\n<table class=kv>\n", what);
        summary_rows(f, p->summary, "");
        fputs("</table></details>\n", f);
    }
    if (p->run_rc >= 0) {
        fprintf(f, "<details><summary>%sdriver output</summary>\n", what);
        log_tail(f, p->dir, "run.log", 60);
        fputs("</details>\n", f);
    }
}

static void lab_section(FILE *f, const lab_page *p)
{
    fputs("<section id=\"", f);
    esc(f, p->name);
    fputs("\"><h2>", f);
    esc(f, p->title);
    fputs("</h2>\n", f);
    if (p->why[0]) {
        fprintf(f, "<p class=\"%s\">", p->todo > 0 ? "todo" : "notrun");
        esc(f, p->why);
        fputs("</p>\n", f);
        if (p->todo > 0) {
            fputs("<p>Your code stopped where a task is not done yet: that is where your work stands, not a "
                  "crash. The grade below runs every item and names the tasks still to do.</p>\n",
                  f);
        } else if (p->build_rc > 0) {
            fputs("<p>The build's last lines:</p>\n", f);
            log_tail(f, p->dir, "build.log", 40);
        } else if (p->run_rc > 0) {
            fputs("<p>The driver's last lines:</p>\n", f);
            log_tail(f, p->dir, "run.log", 20);
        }
        if (p->run_rc >= 0 || p->build_rc > 0)
            grade_part(f, p);
        fputs("</section>\n", f);
        return;
    }
    headline(f, p, NULL);
    char *names[MAX_PLOTS] = {NULL}, key[256];
    int n = key_figure(f, p, names, key, sizeof key);
    // the second run: its headline and key plot under the first's
    const lab_page *q = p->second;
    char *names2[MAX_PLOTS] = {NULL}, key2[256] = "", what[300] = "";
    int n2 = 0;
    if (q != NULL)
        snprintf(what, sizeof what, "the %s run: ", q->name);
    if (q != NULL && q->why[0]) {
        fprintf(f, "<p class=\"%s\">", q->todo > 0 ? "todo" : "notrun");
        esc(f, what);
        esc(f, q->why);
        fputs("</p>\n", f);
    } else if (q != NULL) {
        headline(f, q, p->summary);
        n2 = key_figure(f, q, names2, key2, sizeof key2);
    }
    grade_part(f, p);
    run_details(f, p, names, n, key, "");
    if (q != NULL)
        run_details(f, q, names2, n2, key2, what);
    fputs("</section>\n", f);
}

// ---- the page ----

/* One rule per line. */
static const char *const style[] = {
    "body{font-family:system-ui,sans-serif;max-width:1040px;margin:2em auto;padding:0 1em;color:#222}",
    "h1{margin-bottom:0}",
    ".sub{color:#666;margin-top:.2em}",
    "section{margin-top:2.5em;border-top:1px solid #ddd}",
    "table{border-collapse:collapse;margin:.5em 0 1em}",
    "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top;font-size:.92em}",
    "th{background:#f2f2f2}",
    "tr.pass td:nth-child(3),.ok{color:#1a7f37;font-weight:600}",
    "tr.fail td:nth-child(3),.bad{color:#c62828;font-weight:600}",
    "tr.skip{color:#8a6d00}",
    ".headline{font-size:1.15em;line-height:1.45;background:#f3f7fb;border-left:4px solid #2a6fb0;padding:.6em .9em}",
    ".notrun{font-size:1.1em;background:#fdecea;border-left:4px solid #c62828;padding:.6em .9em;color:#8e1c1c;"
    "font-weight:600}",
    ".todo{font-size:1.1em;background:#fff6db;border-left:4px solid #b58900;padding:.6em .9em;color:#6b5200;"
    "font-weight:600}",
    ".unavailable{background:#fff6db;border-left:4px solid #b58900;padding:.4em .9em;color:#6b5200}",
    "figure{margin:1em 0}",
    "figure img{max-width:100%;height:auto;display:block}",
    "figure.key img{width:100%;max-width:880px}",
    "img.broken{outline:3px solid #c62828;min-height:2em}",
    ".plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,440px),1fr));gap:1em}",
    ".plots a{display:block;cursor:zoom-in}",
    "table.arr,table.nums{margin:0;font-size:.95em}",
    "table.nums th{font-weight:400;color:#666}",
    "table.kv{max-width:100%;display:block;overflow-x:auto}",
    "table.overview{width:100%;table-layout:fixed}",
    "table.overview td,table.overview th{overflow-wrap:anywhere}",
    "table.overview th:nth-child(1){width:24%}",
    "table.overview th:nth-child(3){width:20%}",
    ".todo-note{color:#6b5200;font-weight:600}",
    ".skip-note{color:#8a6d00;font-size:.9em}",
    "figcaption{color:#444;font-size:.9em;line-height:1.4}",
    ".file{color:#999;font-size:.9em;white-space:nowrap}",
    "details{margin:.4em 0}",
    "summary{cursor:pointer;color:#2a6fb0}",
    "pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}",
    "table.kv td:first-child{font-family:monospace}",
};

/* The line under the title: when, and what the runs ran on. */
static void page_sub(FILE *f, const lab_page *labs, int n, const char *note)
{
    char when[64];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "<p class=sub>generated %s", when);
    const dl_jv *g = NULL, *s = NULL;
    for (int i = 0; i < n && g == NULL; i++)
        g = labs[i].grade;
    for (int i = 0; i < n && s == NULL; i++)
        s = labs[i].summary;
    if (g != NULL) {
        static const char *const fields[][2] = {{"git", "git_revision"},
                                                {"device", "device"},
                                                {"CUDA runtime", "cuda_runtime"},
                                                {"NCCL", "nccl"},
                                                {"BLAS", "blas"}};
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
            char path[64];
            snprintf(path, sizeof path, "extra_data.%s", fields[k][1]);
            fprintf(f, " · %s ", fields[k][0]);
            esc(f, dl_jv_str(dl_jv_get(g, path), "?"));
        }
    } else if (s != NULL) {
        fputs(" · device ", f);
        esc(f, dl_jv_str(dl_jv_get(s, "device"), "?"));
    }
    const dl_jv *b = dl_jv_get(s, "blas"); // which kernels computed (dl_summary_blas)
    if (b != NULL) {
        fputs("<br>CPU BLAS: ", f);
        esc(f, dl_jv_str(dl_jv_get(b, "library"), "?"));
        fputs(" ", f);
        esc(f, dl_jv_str(dl_jv_get(b, "version"), ""));
        fputs(", ", f);
        esc(f, dl_jv_str(dl_jv_get(b, "core"), "?"));
        fputs(" kernels, chosen by ", f);
        esc(f, dl_jv_str(dl_jv_get(b, "chosen_by"), "?"));
        fprintf(f, "; %.0f thread(s); subnormals flushed inside it", dl_jv_num(dl_jv_get(b, "threads"), 0));
    }
    if (note != NULL) {
        fputs("<br>", f);
        esc(f, note);
    }
    fputs("</p>\n", f);
}

/* The first sentence of p's filled headline (escaped HTML) into f: the lab's
 * result, for the overview; a line that says why when there is none. */
static void result_cell(FILE *f, const lab_page *p)
{
    char why[300];
    if (p->why[0]) {
        fputs(p->todo > 0 ? "<span class=todo-note>" : "<span class=bad>", f);
        esc(f, p->why);
        fputs("</span>", f);
        return;
    }
    char *html = p->view.headline != NULL ? fill_headline(p->view.headline, p->summary, NULL, why, sizeof why) : NULL;
    if (html == NULL) {
        fputs("—", f);
        return;
    }
    // a sentence ends at a full stop before a space or the end ("0.0893" does not end one)
    size_t end = strlen(html);
    for (size_t i = 0; html[i]; i++) {
        if (html[i] == '.' && (html[i + 1] == ' ' || html[i + 1] == '\n')) {
            end = i + 1;
            break;
        }
    }
    fprintf(f, "%.*s", (int)end, html);
    free(html);
}

/* The table at the top: each lab, its result (its headline's first
 * sentence) and its grade. Three columns that wrap: it fits a 600-px window. */
static void overview(FILE *f, const lab_page *labs, int n)
{
    const char *who = "reference";
    for (int i = 0; i < n; i++) {
        if (strcmp(dl_jv_str(dl_jv_get(labs[i].grade, "extra_data.impl"), ""), "labs") == 0 || labs[i].build_rc >= 0)
            who = "your code";
    }
    fprintf(f, "<table class=overview><tr><th>lab</th><th>result</th><th>grade (%s)</th></tr>\n", who);
    for (int i = 0; i < n; i++) {
        const lab_page *p = &labs[i];
        fputs("<tr><td><a href=\"#", f);
        esc(f, p->name);
        fputs("\">", f);
        esc(f, p->title);
        fputs("</a></td><td>", f);
        result_cell(f, p);
        fputs("</td><td>", f);
        if (p->grade != NULL)
            fprintf(f, "%.0f/%.0f", dl_jv_num(dl_jv_get(p->grade, "score"), 0),
                    dl_jv_num(dl_jv_get(p->grade, "extra_data.max_score"), 0));
        else
            fputs(p->grade_rc < 0 ? "not graded" : "<span class=bad>grader failed</span>", f);
        double sk = dl_jv_num(dl_jv_get(p->grade, "extra_data.skipped_points"), 0);
        if (sk > 0)
            fprintf(f, "<br><span class=skip-note>%.0f points skipped (need a GPU)</span>", sk);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void page(FILE *f, const lab_page *labs, int n, const char *note)
{
    fputs(
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>\n"
        "<meta name=viewport content=\"width=device-width, initial-scale=1\">\n<title>ddplab report</title>\n<style>\n",
        f);
    for (size_t i = 0; i < sizeof style / sizeof style[0]; i++)
        fprintf(f, "%s\n", style[i]);
    fputs("</style></head><body>\n<h1>ddplab report</h1>\n", f);
    page_sub(f, labs, n, note);
    overview(f, labs, n);
    for (int i = 0; i < n; i++)
        lab_section(f, &labs[i]);
    fputs("</body></html>\n", f);
}

static int usage(const char *why, const char *arg)
{
    fprintf(stderr, "report: %s%s%s\n", why, arg != NULL ? ": " : "", arg != NULL ? arg : "");
    fprintf(stderr, "usage: report [--note TEXT] OUT.html LAB [LAB ...]\n"
                    "  LAB: --lab DIR TITLE [--key-plot NAME] [--headline TEXT] [--caption PLOT TEXT ...]\n"
                    "       [--run2 SUB [--key-plot NAME] [--headline TEXT]]\n"
                    "   or: report --fill RUNS NAME < TEXT > FILLED\n");
    return 2;
}

// ---- a deck's numbers, from the run it describes ----

/* report --fill RUNS NAME: copies a text (a slide deck's Markdown) from stdin
 * to stdout with every placeholder {{RUN path:fmt}} replaced by the value at
 * path in RUNS/RUN/summary.json, formatted as a headline's {path:fmt} (see
 * lab_view above; RUN: a run folder under RUNS, "03-data-parallel" or a
 * second run, "06-sharded/fsdp"). So a number a deck gives of a run is that
 * run's, whatever run the deck is built from. Exit 0; 1 naming NAME's line and the
 * placeholder when one cannot be filled (no such run, key or format), and
 * nothing is written then; 2 on bad usage. */
static int fill_text(const char *runs, const char *name)
{
    char *in = NULL, *outbuf = NULL;
    size_t in_size = 0, out_size = 0;
    FILE *src = open_memstream(&in, &in_size);
    if (src == NULL)
        return 1;
    int c;
    while ((c = getchar()) != EOF)
        fputc(c, src);
    fclose(src);
    FILE *f = open_memstream(&outbuf, &out_size);
    if (f == NULL) {
        free(in);
        return 1;
    }
    int line = 1, bad = 0;
    const char *p = in;
    while (*p && !bad) {
        const char *open = strstr(p, "{{");
        const char *close = open != NULL ? strstr(open + 2, "}}") : NULL;
        if (open == NULL || close == NULL) {
            fputs(p, f);
            break;
        }
        for (const char *q = p; q < open; q++)
            line += *q == '\n';
        fwrite(p, 1, (size_t)(open - p), f);
        char ph[300], run[200], key[200], why[300];
        snprintf(ph, sizeof ph, "%.*s", (int)(close - open - 2), open + 2);
        if (sscanf(ph, " %199s %199s", run, key) != 2 || strstr(run, "..") != NULL || run[0] == '/') {
            fprintf(stderr, "report --fill: %s:%d: '{{%s}}': expected {{RUN path[:fmt]}}, RUN a run folder under %s\n",
                    name, line, ph, runs);
            bad = 1;
            break;
        }
        char path[700];
        snprintf(path, sizeof path, "%s/%s/summary.json", runs, run);
        dl_jv *summary = NULL;
        if (dl_json_parse_file(path, &summary) != DL_OK) {
            fprintf(stderr, "report --fill: %s:%d: '{{%s}}': no readable %s (%s)\n", name, line, ph, path,
                    dl_last_error());
            bad = 1;
            break;
        }
        // (fill_one escapes a string value for HTML: pandoc passes the entities through)
        char *val = NULL;
        size_t val_size = 0;
        FILE *vf = open_memstream(&val, &val_size);
        int rc = vf != NULL ? fill_one(vf, key, summary, NULL, why, sizeof why) : -1;
        if (vf != NULL)
            fclose(vf);
        dl_jv_free(summary);
        if (rc != 0) {
            fprintf(stderr, "report --fill: %s:%d: '{{%s}}': %s\n", name, line, ph, vf != NULL ? why : "no memory");
            bad = 1;
        } else {
            fputs(val, f);
        }
        free(val);
        p = close + 2;
    }
    fclose(f);
    if (!bad)
        fwrite(outbuf, 1, out_size, stdout);
    free(in);
    free(outbuf);
    return bad ? 1 : (fflush(stdout) != 0 || ferror(stdout) ? 1 : 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fill") == 0)
        return argc == 4 ? fill_text(argv[2], argv[3]) : usage("--fill takes RUNS and NAME", NULL);
    const char *note = NULL;
    int a = 1;
    if (argc > 2 && strcmp(argv[1], "--note") == 0) {
        note = argv[2];
        a = 3;
    }
    if (a >= argc || argv[a][0] == '-')
        return usage("expected the page's file name", a < argc ? argv[a] : NULL);
    const char *out = argv[a++];
    char page_dir[1200];
    snprintf(page_dir, sizeof page_dir, "%s", out);
    char *slash = strrchr(page_dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(page_dir, sizeof page_dir, ".");
    // every --lab, then what follows it, up to the next --lab
    int n = 0;
    for (int i = a; i < argc; i++)
        n += strcmp(argv[i], "--lab") == 0;
    if (n == 0)
        return usage("no --lab given", NULL);
    lab_page *labs = calloc((size_t)n, sizeof *labs);
    plot_caption *caps = calloc((size_t)n * MAX_CAPTIONS, sizeof *caps);
    if (labs == NULL || caps == NULL)
        return 1;
    int k = -1, second = 0, status = 0;
    for (int i = a; i < argc && status == 0; i++) {
        const char *flag = argv[i];
        int need = strcmp(flag, "--lab") == 0 || strcmp(flag, "--caption") == 0 ? 2 : 1;
        if (strcmp(flag, "--lab") != 0 && strcmp(flag, "--key-plot") != 0 && strcmp(flag, "--headline") != 0 &&
            strcmp(flag, "--caption") != 0 && strcmp(flag, "--run2") != 0)
            status = usage("unknown argument", flag);
        else if (i + need >= argc)
            status = usage("missing its value(s)", flag);
        else if (k < 0 && strcmp(flag, "--lab") != 0)
            status = usage("comes before any --lab", flag);
        if (status != 0)
            break;
        const char *v = argv[i + 1];
        if (strcmp(flag, "--lab") == 0) {
            k++;
            second = 0;
            labs[k].dir = v;
            labs[k].title = argv[i + 2];
            labs[k].captions = caps + (size_t)k * MAX_CAPTIONS;
        } else if (strcmp(flag, "--run2") == 0) {
            if (v[0] == '\0' || v[0] == '.' || strchr(v, '/') != NULL) {
                status = usage("--run2 takes a plain folder name (inside the lab's run folder)", v);
                break;
            }
            second = 1;
            labs[k].sub = v;
        } else if (strcmp(flag, "--key-plot") == 0) {
            (second ? &labs[k].view2 : &labs[k].view)->key_plot = v;
        } else if (strcmp(flag, "--headline") == 0) {
            (second ? &labs[k].view2 : &labs[k].view)->headline = v;
        } else if (labs[k].n_captions == MAX_CAPTIONS) {
            status = usage("too many --caption for one lab", v);
        } else {
            caps[(size_t)k * MAX_CAPTIONS + labs[k].n_captions++] = (plot_caption){v, argv[i + 2]};
        }
        i += need;
    }
    if (status != 0) {
        free(labs);
        free(caps);
        return status;
    }
    for (int i = 0; i < n; i++)
        lab_load(&labs[i], page_dir);
    char tmp[1300];
    FILE *f = dl_tmp_create(out, tmp, sizeof tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "report: cannot create a file beside %s (does its folder exist?)\n", out);
        status = 1;
    } else {
        page(f, labs, n, note);
        int bad = ferror(f) != 0;
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, out) != 0) {
            remove(tmp);
            fprintf(stderr, "report: cannot write %s\n", out);
            status = 1;
        }
    }
    for (int i = 0; i < n; i++)
        lab_free(&labs[i]);
    free(labs);
    free(caps);
    return status;
}
