/* report.c — builds `make run`'s one-page report: build/report/index.html.
 *
 *   report OUT.html DIR TITLE [DIR TITLE ...]
 *
 * Each DIR is one lab's run folder as tools/run.sh leaves it: summary.json
 * (the driver's), grade.json (the grader's Gradescope results), run.log and
 * run.rc (the driver's output and exit status), grade.rc, and the plots as
 * .svg files, which are inlined so the page is self-contained and works
 * offline. A missing piece is reported on the page, never silently dropped.
 * The page is written atomically (tmp + rename). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h> // opendir, readdir
#include <errno.h> // errno
#include <math.h> // floor
#include <stdio.h> // fprintf
#include <stdlib.h> // qsort
#include <string.h> // strcmp
#include <time.h> // time, strftime

#include "dl/fs.h" // dl_read_file
#include "dl/json.h" // dl_json_parse_file, dl_jv_get

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
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
            fputc(*s, f);
        }
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

/* One row per scalar; nested objects become "a.b" keys. */
static void summary_rows(FILE *f, const dl_jv *obj, const char *prefix)
{
    for (size_t i = 0; i < obj->n; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", obj->keys[i]);
        if (obj->items[i].type == DL_JOBJ) {
            summary_rows(f, &obj->items[i], key);
            continue;
        }
        fputs("<tr><td>", f);
        esc(f, key);
        fputs("</td><td>", f);
        put_scalar(f, &obj->items[i]);
        fputs("</td></tr>\n", f);
    }
}

static int read_rc(const char *dir, const char *name)
{
    char path[1200], *text = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dl_read_file(path, &text, NULL) != DL_OK)
        return -1;
    int rc = atoi(text);
    free(text);
    return rc;
}

static void log_tail(FILE *f, const char *dir, const char *name, int max_lines)
{
    char path[1200], *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dl_read_file(path, &text, &n) != DL_OK) {
        fprintf(f, "<p class=bad>%s is missing.</p>\n", name);
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void inline_svgs(FILE *f, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    char *names[64] = {NULL};
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".svg") == 0 && strstr(e->d_name, ".tmp.") == NULL)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    if (n == 0)
        fputs("<p class=bad>No plots (.svg) in this run: is gnuplot installed? (`make deps`)</p>\n", f);
    for (int i = 0; i < n; i++) {
        char path[1200], *svg = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (dl_read_file(path, &svg, NULL) == DL_OK) {
            const char *start = strstr(svg, "<svg"); // drop the XML prologue and DOCTYPE
            fputs("<figure>", f);
            if (start != NULL)
                fputs(start, f);
            fputs("<figcaption>", f);
            esc(f, names[i]);
            fputs("</figcaption></figure>\n", f);
            free(svg);
        }
        free(names[i]);
    }
}

typedef struct lab_page {
    const char *dir, *title;
    dl_jv *summary, *grade;
    int run_rc, grade_rc;
} lab_page;

static void grade_table(FILE *f, const dl_jv *g)
{
    const dl_jv *tests = dl_jv_get(g, "tests");
    fprintf(f, "<table class=grade><tr><th>item</th><th>points</th><th>status</th><th>details</th></tr>\n");
    for (size_t i = 0; tests != NULL && i < tests->n; i++) {
        const dl_jv *t = &tests->items[i];
        const char *name = dl_jv_str(dl_jv_get(t, "name"), "?");
        const char *out = dl_jv_str(dl_jv_get(t, "output"), "");
        double score = dl_jv_num(dl_jv_get(t, "score"), 0), max = dl_jv_num(dl_jv_get(t, "max_score"), 0);
        int skipped = strncmp(out, "SKIPPED", 7) == 0;
        int pass = strcmp(dl_jv_str(dl_jv_get(t, "status"), ""), "passed") == 0;
        fprintf(f, "<tr class=%s><td>", skipped ? "skip" : pass ? "pass" : "fail");
        esc(f, name);
        if (skipped)
            fputs("</td><td>—</td><td>SKIPPED</td><td>", f);
        else
            fprintf(f, "</td><td>%.0f/%.0f</td><td>%s</td><td>", score, max, pass ? "PASS" : "FAIL");
        char first[400];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(out, "\n"), out);
        esc(f, pass ? "" : first);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static void lab_section(FILE *f, const lab_page *p)
{
    fprintf(f, "<section id=\"%s\"><h2>", base_name(p->dir));
    esc(f, p->title);
    fputs("</h2>\n", f);
    if (p->run_rc != 0) {
        fprintf(f, "<p class=bad>The driver exited with status %d. Its last lines:</p>\n", p->run_rc);
        log_tail(f, p->dir, "run.log", 20);
    }
    fputs("<h3>Run</h3>\n", f);
    if (p->summary != NULL && p->summary->type == DL_JOBJ) {
        fputs("<table class=kv>\n", f);
        summary_rows(f, p->summary, "");
        fputs("</table>\n", f);
    } else {
        fputs("<p class=bad>summary.json is missing or unreadable: the run did not complete.</p>\n", f);
    }
    fputs("<h3>Plots</h3>\n", f);
    inline_svgs(f, p->dir);
    fputs("<h3>Grade (reference solution)</h3>\n", f);
    if (p->grade != NULL) {
        fprintf(f, "<p>Score <b>%.0f/%.0f</b>", dl_jv_num(dl_jv_get(p->grade, "score"), 0),
                dl_jv_num(dl_jv_get(p->grade, "max_score"), 0));
        double sk = dl_jv_num(dl_jv_get(p->grade, "extra_data.skipped_points"), 0);
        if (sk > 0)
            fprintf(f, "; %.0f points SKIPPED (their tier cannot run here: no GPU) — not counted", sk);
        fputs(".</p>\n", f);
        grade_table(f, p->grade);
    } else {
        fputs("<p class=bad>grade.json is missing: the grader did not run.</p>\n", f);
    }
    fputs("<details><summary>driver output</summary>\n", f);
    log_tail(f, p->dir, "run.log", 60);
    fputs("</details>\n</section>\n", f);
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc % 2 != 0) {
        fprintf(stderr, "usage: report OUT.html DIR TITLE [DIR TITLE ...]\n");
        return 2;
    }
    int n = (argc - 2) / 2;
    lab_page *labs = calloc((size_t)n, sizeof *labs);
    for (int i = 0; i < n; i++) {
        lab_page *p = &labs[i];
        p->dir = argv[2 + 2 * i];
        p->title = argv[3 + 2 * i];
        char path[1200];
        snprintf(path, sizeof path, "%s/summary.json", p->dir);
        if (dl_json_parse_file(path, &p->summary) != DL_OK)
            p->summary = NULL;
        snprintf(path, sizeof path, "%s/grade.json", p->dir);
        if (dl_json_parse_file(path, &p->grade) != DL_OK)
            p->grade = NULL;
        p->run_rc = read_rc(p->dir, "run.rc");
        p->grade_rc = read_rc(p->dir, "grade.rc");
    }
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        fprintf(stderr, "report: cannot create %s: %s\n", tmp, strerror(errno));
        return 1;
    }
    char when[64];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const dl_jv *g0 = labs[0].grade;
    fputs("<!doctype html>\n<html lang=en><head><meta charset=utf-8>\n<title>ddplab report</title>\n"
          "<style>\nbody{font-family:system-ui,sans-serif;max-width:1040px;margin:2em auto;padding:0 1em;"
          "color:#222}\nh1{margin-bottom:0}\n.sub{color:#666;margin-top:.2em}\ntable{border-collapse:"
          "collapse;margin:.5em 0 1em}\ntd,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;"
          "vertical-align:top;font-size:.92em}\nth{background:#f2f2f2}\ntr.pass td:nth-child(3){color:"
          "#1a7f37;font-weight:600}\ntr.fail td:nth-child(3){color:#c62828;font-weight:600}\ntr.skip{color:"
          "#8a6d00}\n.bad{color:#c62828;font-weight:600}\nfigure{margin:1em 0}\nfigure svg{max-width:100%;"
          "height:auto}\nfigcaption{color:#666;font-size:.85em}\npre{background:#f7f7f7;padding:.6em;"
          "overflow-x:auto;font-size:.85em}\ntable.kv td:first-child{font-family:monospace}\n</style>"
          "</head><body>\n<h1>ddplab report</h1>\n",
          f);
    fprintf(f, "<p class=sub>generated %s", when);
    if (g0 != NULL) {
        fputs(" · git ", f);
        esc(f, dl_jv_str(dl_jv_get(g0, "extra_data.git_revision"), "?"));
        fputs(" · device ", f);
        esc(f, dl_jv_str(dl_jv_get(g0, "extra_data.device"), "?"));
        fputs(" · CUDA runtime ", f);
        esc(f, dl_jv_str(dl_jv_get(g0, "extra_data.cuda_runtime"), "?"));
        fputs(" · NCCL ", f);
        esc(f, dl_jv_str(dl_jv_get(g0, "extra_data.nccl"), "?"));
        fputs(" · BLAS ", f);
        esc(f, dl_jv_str(dl_jv_get(g0, "extra_data.blas"), "?"));
    }
    fputs("</p>\n<h2>Summary</h2>\n<table><tr><th>lab</th><th>dataset</th><th>device</th><th>result</th>"
          "<th>grade (reference)</th><th>skipped</th></tr>\n",
          f);
    for (int i = 0; i < n; i++) {
        const lab_page *p = &labs[i];
        fprintf(f, "<tr><td><a href=\"#%s\">", base_name(p->dir));
        esc(f, p->title);
        fputs("</a></td><td>", f);
        esc(f, dl_jv_str(dl_jv_get(p->summary, "dataset"), "—"));
        fputs("</td><td>", f);
        esc(f, dl_jv_str(dl_jv_get(p->summary, "device"), "—"));
        fputs("</td><td>", f);
        if (p->run_rc != 0 || p->summary == NULL)
            fputs("<span class=bad>run failed</span>", f);
        else if (dl_jv_get(p->summary, "test_accuracy") != NULL)
            fprintf(f, "test accuracy %.4f", dl_jv_num(dl_jv_get(p->summary, "test_accuracy"), 0));
        else if (dl_jv_get(p->summary, "algos.ring") != NULL) // lab 04's benchmark
            fprintf(f, "%s; busbw at the largest size: ring %.2f, library %.2f GB/s",
                    dl_jv_str(dl_jv_get(p->summary, "result"), "?"),
                    dl_jv_num(dl_jv_get(p->summary, "algos.ring.busbw_largest_gbs"), 0),
                    dl_jv_num(dl_jv_get(p->summary, "algos.library.busbw_largest_gbs"), 0));
        else
            fputs("ok", f);
        fputs("</td><td>", f);
        if (p->grade != NULL)
            fprintf(f, "%.0f/%.0f", dl_jv_num(dl_jv_get(p->grade, "score"), 0),
                    dl_jv_num(dl_jv_get(p->grade, "max_score"), 0));
        else
            fputs("<span class=bad>not graded</span>", f);
        fputs("</td><td>", f);
        double sk = dl_jv_num(dl_jv_get(p->grade, "extra_data.skipped_points"), 0);
        if (sk > 0)
            fprintf(f, "%.0f points (needs a GPU)", sk);
        else
            fputs("none", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    for (int i = 0; i < n; i++)
        lab_section(f, &labs[i]);
    fputs("</body></html>\n", f);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, argv[1]) != 0) {
        remove(tmp);
        fprintf(stderr, "report: cannot write %s\n", argv[1]);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        dl_jv_free(labs[i].summary);
        dl_jv_free(labs[i].grade);
    }
    free(labs);
    return 0;
}
