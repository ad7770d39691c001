/* runner.c — the grader's main: runs a lab's items, prints the xv6-style
 * table, writes Gradescope's results.json. See grader.h for the contract. */
#define _GNU_SOURCE
#include <errno.h> // errno
#include <fcntl.h> // open
#include <ftw.h> // nftw
#include <stdarg.h> // va_list
#include <stdio.h> // printf, popen
#include <stdlib.h> // getenv, exit
#include <string.h> // strcmp, strstr
#include <sys/resource.h> // setrlimit
#include <sys/stat.h> // mkdir
#include <sys/wait.h> // waitpid
#include <time.h> // time, strftime
#include <unistd.h> // fork, dup2, isatty

#include "dl/blas.h" // dl_blas_name
#include "dl/device.h" // dl_cuda_device_count
#include "dl/fs.h" // dl_home, dl_read_file
#include "dl/json.h" // dl_json writer
#include "grader.h"

// ---- state shared with the forked test child ----

static const gr_lab *lab;
static int current = -1;
static char log_path[512];
static char scratch[512];

const char *gr_scratch(void)
{
    return scratch;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

const gr_item *gr_current(void)
{
    return current >= 0 ? &lab->items[current] : NULL;
}

static int find_item(const char *name)
{
    for (int i = 0; i < lab->n_items; i++) {
        if (strcmp(lab->items[i].name, name) == 0)
            return i;
    }
    return -1;
}

static int no_fork(void)
{
    const char *f = getenv("CK_FORK");
    return f != NULL && strcmp(f, "no") == 0;
}

/* Checked fixture: runs in the child before the test. */
static void child_setup(void)
{
    if (no_fork())
        return;
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        fflush(stdout);
        fflush(stderr);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    const gr_item *it = gr_current();
    double mult = getenv("CK_TIMEOUT_MULTIPLIER") ? atof(getenv("CK_TIMEOUT_MULTIPLIER")) : 1.0;
    if (!(mult > 0))
        mult = 1.0;
    rlim_t cpu = (rlim_t)(2.0 * it->timeout * mult) + 10; // CPU seconds: loops that spin
    struct rlimit r = {cpu, cpu + 5};
    setrlimit(RLIMIT_CPU, &r);
    r.rlim_cur = r.rlim_max = (rlim_t)512 << 20; // files written: 512 MiB
    setrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = r.rlim_max = 4096; // processes: no fork bombs
    setrlimit(RLIMIT_NPROC, &r);
#if !defined(__SANITIZE_ADDRESS__)
    if (it->tier == GR_CPU) { // CUDA reserves a large address space: cpu tier only
        r.rlim_cur = r.rlim_max = (rlim_t)8 << 30;
        setrlimit(RLIMIT_AS, &r);
    }
#endif
}

TCase *gr_tcase(Suite *s, const char *name)
{
    int i = find_item(name);
    if (i < 0) {
        fprintf(stderr, "grader bug: TCase '%s' is not in lab %s's item table\n", name, lab->id);
        exit(3);
    }
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, lab->items[i].timeout);
    tcase_add_checked_fixture(tc, child_setup, NULL);
    suite_add_tcase(s, tc);
    return tc;
}

// ---- results ----

typedef enum { R_PASS, R_FAIL, R_SKIP, R_PARENT } r_kind;

typedef struct result {
    r_kind kind;
    int score;
    char msg[2048]; /* what the test said */
    char output[2048]; /* the tail of what the test printed */
    char diag[128]; /* "[diagnosis: x]" name, if any */
} result;

static void tail_of(const char *path, char *out, size_t len)
{
    char *text = NULL;
    size_t n = 0;
    out[0] = '\0';
    if (dl_read_file(path, &text, &n) != DL_OK)
        return;
    const char *start = text;
    int lines = 0;
    for (size_t k = n; k > 0; k--) {
        if (text[k - 1] == '\n' && k != n && ++lines >= 10) {
            start = text + k;
            break;
        }
    }
    if (n - (size_t)(start - text) >= len)
        start = text + n - (len - 1);
    snprintf(out, len, "%s", start);
    free(text);
}

static void find_diag(const char *msg, char *out, size_t len)
{
    const char *p = strstr(msg, "[diagnosis: ");
    out[0] = '\0';
    if (p == NULL)
        return;
    p += 12;
    size_t k = strcspn(p, "]");
    snprintf(out, len, "%.*s", (int)k, p);
}

static void run_item(int i, result *res)
{
    current = i;
    Suite *s = lab->suite();
    SRunner *sr = srunner_create(s);
    srunner_set_log(sr, NULL);
    srunner_run(sr, NULL, lab->items[i].name, CK_SILENT);
    int n = srunner_ntests_run(sr);
    TestResult **trs = srunner_results(sr);
    int passed = n > 0;
    res->msg[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (tr_rtype(trs[k]) == CK_PASS)
            continue;
        passed = 0;
        if (res->msg[0] == '\0') {
            const char *m = tr_msg(trs[k]);
            if (tr_rtype(trs[k]) == CK_ERROR && m != NULL && strstr(m, "signal") != NULL)
                snprintf(res->msg, sizeof res->msg, "crashed: %s (at %s:%d)", m,
                         tr_lfile(trs[k]) ? tr_lfile(trs[k]) : "?", tr_lno(trs[k]));
            else if (m != NULL && strstr(m, "timeout") != NULL)
                snprintf(res->msg, sizeof res->msg,
                         "timed out after %.0f s (x CK_TIMEOUT_MULTIPLIER): an endless loop, or far "
                         "too slow",
                         lab->items[i].timeout);
            else
                snprintf(res->msg, sizeof res->msg, "%s", m ? m : "failed");
        }
    }
    if (n == 0)
        snprintf(res->msg, sizeof res->msg, "grader bug: item has no tests");
    free(trs);
    srunner_free(sr);
    current = -1;
    tail_of(log_path, res->output, sizeof res->output);
    res->kind = passed ? R_PASS : R_FAIL;
    res->score = passed ? lab->items[i].points : 0;
    find_diag(res->msg, res->diag, sizeof res->diag);
}

// ---- environment facts ----

static int gpus_here(char *name, size_t len)
{
    // CUDA does not survive fork(): ask in a child so the tests start clean.
    int fds[2];
    snprintf(name, len, "none");
    if (!dl_built_with_cuda() || pipe(fds) != 0)
        return 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int n = dl_cuda_device_count();
        char buf[300] = "none";
        if (n > 0) {
            dl_device dev;
            if (dl_device_open("cuda:0", &dev) == DL_OK) {
                snprintf(buf, sizeof buf, "%s", dev.name);
                dl_device_close(&dev);
            }
        }
        dprintf(fds[1], "%d\n%s\n%s\n%s\n", n, buf, dl_cuda_runtime_version(), dl_cuda_driver_version());
        _exit(0);
    }
    close(fds[1]);
    char buf[1024] = "";
    ssize_t got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    int n = atoi(buf);
    char *nl = strchr(buf, '\n');
    if (nl != NULL) {
        char *end = strchr(nl + 1, '\n');
        if (end)
            *end = '\0';
        snprintf(name, len, "%s", nl + 1);
    }
    return n;
}

static void git_revision(char *out, size_t len)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --short HEAD 2>/dev/null", dl_home());
    snprintf(out, len, "unknown");
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return;
    if (fgets(out, (int)len, p) != NULL)
        out[strcspn(out, "\n")] = '\0';
    else
        snprintf(out, len, "unknown");
    pclose(p);
}

// ---- output ----

static int color;

static const char *paint(const char *code)
{
    return color ? code : "";
}

static void print_indented(const char *label, const char *text)
{
    const char *p = text;
    int first = 1;
    while (*p) {
        size_t k = strcspn(p, "\n");
        printf("         %-8s%.*s\n", first ? label : "", (int)k, p);
        first = 0;
        p += k;
        if (*p == '\n')
            p++;
    }
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [--json FILE] [--impl NAME] [--list] [--verbose] [ITEM ...]\n"
            "Grades lab %s (%s). With ITEMs, runs only those (and reports their parents).\n"
            "  --json FILE   write Gradescope results.json to FILE\n"
            "  --impl NAME   label for the code under test (labs, solutions, ...)\n"
            "  --list        list the items with points and tiers, run nothing\n"
            "  --verbose     show what passing tests printed too\n"
            "Environment: CK_TIMEOUT_MULTIPLIER (slow machines), CK_FORK=no (debug in gdb),\n"
            "GR_TIERS=cpu,gpu1 (run only these tiers).\n",
            prog, lab->id, lab->title);
}

static const char *tier_name(gr_tier t)
{
    return t == GR_CPU ? "cpu" : t == GR_GPU1 ? "gpu1" : "gpu4";
}

static int tier_allowed(gr_tier t)
{
    const char *env = getenv("GR_TIERS");
    if (env == NULL || env[0] == '\0')
        return 1;
    return strstr(env, tier_name(t)) != NULL;
}

static void write_json(const char *path, const result *res, const int *selected, const char *impl, int gpus,
                       const char *gpu_name, int score, int max_score, int skipped)
{
    dl_json j;
    if (dl_json_open(&j, path) != DL_OK) {
        fprintf(stderr, "grader: %s\n", dl_last_error());
        return;
    }
    char rev[64], when[64];
    git_revision(rev, sizeof rev);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    dl_json_object(&j, NULL);
    dl_json_num(&j, "score", score);
    dl_json_num(&j, "max_score", max_score);
    dl_json_str(&j, "visibility", "visible");
    dl_json_str(&j, "stdout_visibility", "visible");
    dl_json_array(&j, "tests");
    for (int i = 0; i < lab->n_items; i++) {
        if (!selected[i])
            continue;
        const gr_item *it = &lab->items[i];
        const result *r = &res[i];
        char name[256], out[6000];
        snprintf(name, sizeof name, "%s: %s", it->name, it->title);
        if (r->kind == R_PASS)
            snprintf(out, sizeof out, "passed%s%s", r->output[0] ? "\noutput:\n" : "", r->output);
        else if (r->kind == R_SKIP)
            snprintf(out, sizeof out, "SKIPPED: %s (worth %d points where the %s tier runs; not counted)", r->msg,
                     it->points, tier_name(it->tier));
        else
            snprintf(out, sizeof out, "%s\nhint: %s\nsee: labs/%s/%s%s%s", r->msg, it->hint, lab->dir, it->section,
                     r->output[0] ? "\noutput:\n" : "", r->output);
        dl_json_object(&j, NULL);
        dl_json_str(&j, "name", name);
        dl_json_num(&j, "score", r->score);
        dl_json_num(&j, "max_score", r->kind == R_SKIP ? 0 : it->points);
        dl_json_str(&j, "status", r->kind == R_PASS ? "passed" : "failed");
        dl_json_str(&j, "output", out);
        dl_json_array(&j, "tags");
        dl_json_str(&j, NULL, tier_name(it->tier));
        if (r->kind == R_SKIP)
            dl_json_str(&j, NULL, "skipped");
        if (r->diag[0])
            dl_json_str(&j, NULL, r->diag);
        dl_json_end_array(&j);
        dl_json_str(&j, "visibility", "visible");
        dl_json_end_object(&j);
    }
    dl_json_end_array(&j);
    dl_json_object(&j, "extra_data");
    dl_json_str(&j, "lab", lab->id);
    dl_json_str(&j, "impl", impl);
    dl_json_num(&j, "skipped_points", skipped);
    dl_json_int(&j, "gpus", gpus);
    dl_json_str(&j, "device", gpus > 0 ? gpu_name : "cpu");
    dl_json_str(&j, "cuda_runtime", dl_cuda_runtime_version());
    dl_json_str(&j, "cuda_driver", dl_cuda_driver_version());
    dl_json_str(&j, "nccl", dl_nccl_version());
    dl_json_str(&j, "blas", dl_blas_name());
    dl_json_str(&j, "git_revision", rev);
    dl_json_str(&j, "graded_at", when);
    dl_json_end_object(&j);
    dl_json_end_object(&j);
    if (dl_json_close(&j) != DL_OK)
        fprintf(stderr, "grader: %s\n", dl_last_error());
}

int main(int argc, char **argv)
{
    lab = gr_lab_get();
    const char *json = NULL, *impl = "labs";
    const char *dash = strrchr(argv[0], '-'); // build/grader/labNN-IMPL names the code it was built from
    if (dash != NULL && dash[1] != '\0')
        impl = dash + 1;
    int list = 0, verbose = 0;
    int *selected = calloc((size_t)lab->n_items, sizeof *selected);
    result *res = calloc((size_t)lab->n_items, sizeof *res);
    int any_named = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--json") == 0 && a + 1 < argc) {
            json = argv[++a];
        } else if (strcmp(argv[a], "--impl") == 0 && a + 1 < argc) {
            impl = argv[++a];
        } else if (strcmp(argv[a], "--list") == 0) {
            list = 1;
        } else if (strcmp(argv[a], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[a], "--help") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else if (argv[a][0] == '-') {
            fprintf(stderr, "%s: error: unknown option '%s'\n", argv[0], argv[a]);
            usage(stderr, argv[0]);
            return 2;
        } else {
            int i = find_item(argv[a]);
            if (i < 0) {
                fprintf(stderr, "%s: error: no item named '%s' in lab %s (see --list)\n", argv[0], argv[a], lab->id);
                return 2;
            }
            selected[i] = 1;
            any_named = 1;
        }
    }
    // Named items bring their parents along (so "parent failed" is meaningful).
    for (int pass = 0; pass < lab->n_items; pass++) {
        for (int i = 0; i < lab->n_items; i++) {
            if (!any_named)
                selected[i] = 1;
            else if (selected[i] && lab->items[i].parent != NULL)
                selected[find_item(lab->items[i].parent)] = 1;
        }
    }
    if (list) {
        for (int i = 0; i < lab->n_items; i++) {
            const gr_item *it = &lab->items[i];
            printf("%-24s %3d pts  %-4s  %s", it->name, it->points, tier_name(it->tier), it->title);
            if (it->parent != NULL)
                printf("  (after %s)", it->parent);
            printf("\n");
        }
        return 0;
    }
    color = isatty(1) && getenv("NO_COLOR") == NULL;
    char gpu_name[300];
    int gpus = gpus_here(gpu_name, sizeof gpu_name);
    char tmpdir[] = "/tmp/ddplab-grade-XXXXXX";
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr, "grader: cannot create a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    snprintf(log_path, sizeof log_path, "%s/output.log", tmpdir);
    snprintf(scratch, sizeof scratch, "%s/scratch", tmpdir);
    mkdir(scratch, 0755);
    printf("== ddplab lab %s: %s ==\n", lab->id, lab->title);
    printf("   code: %s   device: %s\n", impl,
           gpus > 0 ? gpu_name : (dl_built_with_cuda() ? "cpu (no CUDA GPU answers)" : "cpu (built without CUDA)"));
    int score = 0, max_score = 0, skipped = 0;
    int skipped_tiers[3] = {0, 0, 0};
    for (int i = 0; i < lab->n_items; i++) {
        if (!selected[i])
            continue;
        const gr_item *it = &lab->items[i];
        result *r = &res[i];
        int need = it->tier == GR_GPU1 ? 1 : it->tier == GR_GPU4 ? 4 : 0;
        int parent = it->parent ? find_item(it->parent) : -1;
        if (gpus < need || !tier_allowed(it->tier)) {
            r->kind = R_SKIP;
            snprintf(r->msg, sizeof r->msg, "%s",
                     !tier_allowed(it->tier) ? "tier not selected (GR_TIERS)"
                     : need == 1             ? "needs a CUDA GPU; none answers here"
                                             : "needs 4 CUDA GPUs");
            skipped += it->points;
            skipped_tiers[it->tier] = 1;
        } else if (parent >= 0 && res[parent].kind != R_PASS) {
            r->kind = R_PARENT;
            snprintf(r->msg, sizeof r->msg, "parent failed: %s must pass first", it->parent);
            max_score += it->points;
        } else {
            run_item(i, r);
            max_score += it->points;
            score += r->score;
        }
        const char *tag = r->kind == R_PASS     ? "PASS"
                          : r->kind == R_SKIP   ? "SKIP"
                          : r->kind == R_PARENT ? "----"
                                                : "FAIL";
        const char *col = r->kind == R_PASS ? "\033[32m" : r->kind == R_SKIP ? "\033[33m" : "\033[31m";
        if (r->kind == R_SKIP)
            printf("[%s%s%s]  (%3d)   %-24s %s\n", paint(col), tag, paint("\033[0m"), it->points, it->name, it->title);
        else
            printf("[%s%s%s] %3d/%-3d  %-24s %s\n", paint(col), tag, paint("\033[0m"), r->score, it->points, it->name,
                   it->title);
        if (r->kind == R_FAIL) {
            print_indented("saw:", r->msg);
            print_indented("hint:", it->hint);
            char see[300];
            snprintf(see, sizeof see, "labs/%s/%s", lab->dir, it->section);
            print_indented("see:", see);
            if (r->output[0])
                print_indented("output:", r->output);
        } else if (r->kind == R_PARENT || r->kind == R_SKIP) {
            print_indented("", r->msg);
        } else if (verbose && r->output[0]) {
            print_indented("output:", r->output);
        }
        fflush(stdout);
    }
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    printf("Score: %d/%d", score, max_score);
    if (skipped > 0) {
        printf("   (skipped: %d points in the", skipped);
        for (int t = 0; t < 3; t++) {
            if (skipped_tiers[t])
                printf(" %s", tier_name((gr_tier)t));
        }
        printf(" tier%s; not counted)", skipped_tiers[0] + skipped_tiers[1] + skipped_tiers[2] > 1 ? "s" : "");
    }
    printf("\n");
    if (json != NULL)
        write_json(json, res, selected, impl, gpus, gpu_name, score, max_score, skipped);
    free(selected);
    free(res);
    return score == max_score ? 0 : 1;
}
