/* drivers.c — running a lab's driver from a test, in the sandbox, and reading
 * its outputs. See drivers.h. */
#define _POSIX_C_SOURCE 200809L
#include "drivers.h"

#include <fcntl.h> // open
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free, getenv, setenv
#include <string.h> // strcspn, strstr, memset, strdup
#include <unistd.h> // close

#include "dl/fs.h" // dl_read_file
#include "dl/data.h" // dl_npy_read
#include "grader.h"
#include "items.h" // gr_code_dir, gr_the_lab
#include "sandbox.h" // gr_spawn, gr_stage

static char last_fate[300];

const char *gr_path(const char *name)
{
    static char buf[4][1200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", gr_scratch(), name);
    return buf[k];
}

const char *gr_driver(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/lab%s", gr_code_dir, gr_the_lab->id);
    return gr_stage(path);
}

/* Splits s into words (blanks separate, '...' groups) appended to argv. */
static int split_words(char *s, char **argv, int n, int max)
{
    char *p = s;
    while (*p && n < max - 1) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        char *w = p, *o = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            if (*p == '\'') {
                p++;
                while (*p && *p != '\'')
                    *o++ = *p++;
                if (*p == '\'')
                    p++;
            } else {
                *o++ = *p++;
            }
        }
        if (*p)
            p++;
        *o = '\0';
        argv[n++] = w;
    }
    argv[n] = NULL;
    return n;
}

/* The files a run's arguments name directly in the scratch folder (lab 03's
 * --dump-params SCRATCH/p2.npy): the run may create them (sandbox.h: outs). */
static void scratch_outs(char **argv, const char *name, gr_job *job)
{
    size_t n = strlen(gr_scratch()), k = 0;
    for (int i = 0; argv[i] != NULL; i++) {
        const char *w = argv[i];
        if (strncmp(w, gr_scratch(), n) != 0 || w[n] != '/' || w[n + 1] == '\0' || strchr(w + n + 1, '/') != NULL ||
            strcmp(w + n + 1, name) == 0 || strcmp(w + n + 1, "..") == 0 || strcmp(w + n + 1, ".") == 0)
            continue;
        if (k == GR_JOB_OUTS - 1)
            GR_FAIL("grader bug: the run '%s' names more than %d files in the scratch folder", name, GR_JOB_OUTS - 1);
        job->outs[k++] = w + n + 1;
        remove(w); // each run starts from nothing of its own
    }
    job->outs[k] = NULL;
}

static double watchdog_s; // gr_set_watchdog's (0: the item's default)

void gr_set_watchdog(double seconds)
{
    watchdog_s = seconds;
}

static int run(const char *program, int P, const char *name, const char *extra, const char *args)
{
    char log[1300], np[16], timeout[32];
    if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL)
        GR_FAIL("grader bug: a driver run's name must be a plain file name, not '%s'", name);
    // its own folder, empty, which only it writes (a record of another run, or
    // a marker saying a run happened, cannot come from it)
    char folder[1200];
    snprintf(folder, sizeof folder, "%s", gr_path(name));
    if (gr_sandbox_fresh(folder) != 0)
        GR_FAIL("grader: cannot make the run folder %s", folder);
    snprintf(log, sizeof log, "%s.log", gr_path(name));
    int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char *words = malloc(strlen(args) + strlen(extra) + 2);
    sprintf(words, "%s %s", extra, args);
    char *argv[128], dlrun[1100];
    int n = 0;
    if (P > 0) {
        snprintf(dlrun, sizeof dlrun, "%s/common/bin/dlrun", gr_sandbox_home());
        snprintf(np, sizeof np, "%d", P);
        argv[n++] = dlrun;
        argv[n++] = "-n";
        argv[n++] = np;
        argv[n++] = "--timeout";
        // the ranks' watchdog (DL_COMM_TIMEOUT) fires well before the item's wall
        // limit, so a deadlock is reported by the ranks themselves
        const gr_item *it = gr_current();
        double wall = (it ? it->timeout : 120.0) * gr_timeout_multiplier();
        snprintf(timeout, sizeof timeout, "%.0f",
                 watchdog_s > 0  ? watchdog_s * gr_timeout_multiplier()
                 : wall / 4 > 20 ? wall / 4
                                 : 20);
        argv[n++] = timeout;
    }
    argv[n++] = (char *)program;
    split_words(words, argv, n, 128);
    const gr_item *it = gr_current();
    gr_job job = gr_job_defaults((it ? it->timeout : 300) * gr_timeout_multiplier(), it && it->tier != GR_CPU);
    job.argv = argv;
    job.workdir = folder;
    job.share = gr_scratch();
    scratch_outs(argv, name, &job);
    job.out_fd = out;
    // The cpu tier grades on the CPU wherever it runs: left to --device auto, a
    // driver of one rank would take the GPU of a one-GPU machine and be judged
    // against the CPU's sums. A GPU item names its device in its flags.
    const char *env = getenv("DL_DEVICE");
    char *was = env != NULL ? strdup(env) : NULL;
    int cpu = it == NULL || it->tier == GR_CPU;
    if (cpu)
        setenv("DL_DEVICE", "cpu", 1);
    gr_fate f;
    int rc = 127;
    int spawned = out >= 0 && gr_spawn(&job, &f) == 0;
    if (cpu && was != NULL)
        setenv("DL_DEVICE", was, 1);
    else if (cpu)
        unsetenv("DL_DEVICE");
    free(was);
    if (out >= 0)
        close(out);
    free(words);
    if (spawned && f.how == GR_END_BUDGET) // whatever the lab makes of the exit status, the run failed
        GR_FAIL(GR_DIAG("over-budget") "the driver run '%s' %s", name, f.text);
    if (spawned) {
        rc = f.how == GR_END_EXIT ? f.code : f.how == GR_END_SIGNAL ? 128 + f.code : f.how == GR_END_WALL ? 124 : 127;
        snprintf(last_fate, sizeof last_fate, "%s", f.text);
    } else {
        snprintf(last_fate, sizeof last_fate, "could not be started");
    }
    return rc;
}

int gr_run_driver(int P, const char *name, const char *args)
{
    char extra[1400];
    snprintf(extra, sizeof extra, "--out '%s' --plot none --quiet", gr_path(name));
    return run(gr_driver(), P, name, extra, args);
}

int gr_run_program(const char *program, int P, const char *name, const char *args)
{
    return run(gr_stage(program), P, name, "", args);
}

void gr_fail_run(const char *name, int rc)
{
    char path[1300], *text = NULL;
    snprintf(path, sizeof path, "%s.log", gr_path(name));
    size_t n = 0;
    dl_read_file(path, &text, &n);
    const char *tail = text ? text : "";
    const char *todo = text ? strstr(text, "not implemented yet") : NULL;
    if (todo != NULL) {
        size_t k = strcspn(todo, "\n");
        GR_FAIL("the driver stopped (exit %d): %.*s", rc, (int)k, todo);
    }
    if (n > 600)
        tail = text + n - 600;
    while (*tail && ((unsigned char)*tail & 0xC0) == 0x80)
        tail++;
    GR_FAIL("%sthe driver run '%s' %s; its last output:\n%s", rc == 124 ? GR_DIAG("wall-time-limit") : "", name,
            last_fate, tail);
}

dl_jv *gr_summary(const char *name)
{
    char path[1300];
    snprintf(path, sizeof path, "%s/summary.json", gr_path(name));
    dl_jv *v = NULL;
    if (dl_json_parse_file(path, &v) != DL_OK)
        GR_FAIL("the driver wrote no readable summary.json (%s)", dl_last_error());
    return v;
}

float *gr_load_npy(const char *file, size_t *n)
{
    const char *path = gr_path(file);
    dl_npy a;
    if (dl_npy_read(path, &a) != DL_OK)
        GR_FAIL("cannot read %s: %s", path, dl_last_error());
    *n = a.shape[0] * a.shape[1];
    return a.data;
}

void gr_csv_load(gr_csv *t, const char *path)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    size_t len = 0;
    if (dl_read_file(path, &t->text, &len) != DL_OK)
        GR_FAIL("cannot read %s: %s", path, dl_last_error());
    // lines (a last one without its newline too; blank lines and \r dropped), then cells
    size_t lines = 0, cap = 0;
    char **line = NULL;
    for (char *p = t->text; *p;) {
        char *end = p + strcspn(p, "\n");
        char next = *end;
        *end = '\0';
        if (end > p && end[-1] == '\r')
            end[-1] = '\0';
        if (*p) {
            if (lines == cap) {
                char **more = realloc(line, (cap = cap ? 2 * cap : 256) * sizeof *line);
                if (more == NULL)
                    GR_FAIL("out of memory reading %s", path);
                line = more;
            }
            line[lines++] = p;
        }
        p = next ? end + 1 : end;
    }
    if (lines == 0) {
        free(line);
        GR_FAIL("%s is empty: expected a header row", path);
    }
    t->ncols = 1;
    for (const char *c = line[0]; *c; c++)
        t->ncols += *c == ',';
    t->nrows = lines - 1;
    t->cell = malloc(lines * (size_t)t->ncols * sizeof *t->cell);
    if (t->cell == NULL)
        GR_FAIL("out of memory reading %s", path);
    for (size_t r = 0; r < lines; r++) {
        char *p = line[r];
        for (int c = 0; c < t->ncols; c++) {
            t->cell[r * (size_t)t->ncols + (size_t)c] = p;
            char *end = p + strcspn(p, ",");
            if (*end == '\0' && c < t->ncols - 1) {
                free(line);
                GR_FAIL("%s: line %zu has %d cells, expected %d (as the header)", path, r + 1, c + 1, t->ncols);
            }
            if (*end == ',' && c == t->ncols - 1) {
                free(line);
                GR_FAIL("%s: line %zu has more than the header's %d cells", path, r + 1, t->ncols);
            }
            if (*end == ',')
                *end++ = '\0';
            p = end;
        }
    }
    free(line);
}

int gr_csv_col(const gr_csv *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->cell[c], name) == 0)
            return c;
    char have[600] = "";
    for (int c = 0; c < t->ncols && strlen(have) < sizeof have - 40; c++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", c ? "," : "", t->cell[c]);
    GR_FAIL("%s has no column '%s' (its columns: %s)", t->path, name, have);
    return -1;
}

const char *gr_csv_str(const gr_csv *t, size_t row, int col)
{
    // (not ck_assert_msg: a passing one sends its place to the judge through a pipe, two writes a call,
    // and items read every cell of a run's records)
    if (row >= t->nrows || col < 0 || col >= t->ncols)
        GR_FAIL("%s: no cell (%zu, %d)", t->path, row, col);
    return t->cell[(row + 1) * (size_t)t->ncols + (size_t)col];
}

double gr_csv_num(const gr_csv *t, size_t row, int col)
{
    const char *s = gr_csv_str(t, row, col);
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        GR_FAIL("%s: line %zu, column '%s': '%s' is not a number", t->path, row + 2, t->cell[col], s);
    return v;
}

void gr_csv_free(gr_csv *t)
{
    free(t->cell);
    free(t->text);
    memset(t, 0, sizeof *t);
}

size_t gr_csv_column(const char *path, const char *column, double *out, size_t max)
{
    gr_csv t;
    gr_csv_load(&t, path);
    int c = gr_csv_col(&t, column);
    size_t n = 0;
    for (size_t r = 0; r < t.nrows && n < max; r++) {
        char *end;
        const char *s = gr_csv_str(&t, r, c);
        double v = strtod(s, &end);
        if (end != s)
            out[n++] = v;
    }
    gr_csv_free(&t);
    return n;
}

/* Steady epoch time of `driver` on P ranks with flags: the median of
 * metrics.csv's epoch_s after the first (warm-up) epoch. */
static double steady_epoch(const char *driver, int P, const char *name, const char *flags)
{
    char args[1600];
    snprintf(args, sizeof args, "%s --out '%s'", flags, gr_path(name));
    int rc = gr_run_program(driver, P, name, args);
    if (rc != 0)
        gr_fail_run(name, rc);
    char path[1300];
    snprintf(path, sizeof path, "%s/metrics.csv", gr_path(name));
    double t[16];
    int k = (int)gr_csv_column(path, "epoch_s", t, 16);
    if (k < 2)
        GR_FAIL("%s: metrics.csv has %d epochs", name, k);
    for (int i = 1; i < k; i++) // sort the epochs after the first
        for (int j = i + 1; j < k; j++)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    return t[1 + (k - 1) / 2];
}

double gr_gpu4_speedup(const char *flags, const char *projection_key, double *want)
{
    char mine[1200], ref[1200];
    snprintf(mine, sizeof mine, "%s/lab%s", gr_code_dir, gr_the_lab->id);
    double yours = steady_epoch(mine, 1, "m1", flags) / steady_epoch(mine, 4, "m4", flags);
    // the reference, measured in the same grading run when it is there (not in a student release)
    snprintf(ref, sizeof ref, "%s/build/solutions/lab%s", dl_home(), gr_the_lab->id);
    if (access(ref, X_OK) == 0) {
        double theirs = steady_epoch(ref, 1, "r1", flags) / steady_epoch(ref, 4, "r4", flags);
        *want = 0.8 * theirs;
        gr_note("measured on 4 GPUs: yours %.2fx, the reference %.2fx (needs >= %.2fx)\n", yours, theirs, *want);
    } else {
        dl_jv *b = gr_summary("m4");
        *want = 0.8 * dl_jv_num(dl_jv_get(b, projection_key), 0);
        dl_jv_free(b);
        gr_note("measured on 4 GPUs: %.2fx; no reference build here, so against 0.8 x the projection: %.2fx\n", yours,
                *want);
    }
    return yours;
}
