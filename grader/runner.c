/* runner.c — the judge: runs a lab's items, prints the xv6-style table,
 * writes Gradescope's results.json. It holds no student code: the student's
 * code runs in the worker and the drivers, both in the sandbox. See grader.h,
 * replay.h and sandbox.h for the contracts. */
#define _GNU_SOURCE
#include <errno.h> // errno
#include <limits.h> // PATH_MAX
#include <fcntl.h> // open
#include <stdarg.h> // va_list
#include <stdio.h> // printf, popen
#include <stdlib.h> // getenv, exit
#include <string.h> // strcmp, strstr
#include <sys/stat.h> // stat
#include <sys/wait.h> // waitpid
#include <time.h> // time, strftime
#include <unistd.h> // fork, dup2, isatty

#include "dl/blas.h" // dl_blas_name
#include "dl/device.h" // dl_cuda_device_count
#include "dl/fs.h" // dl_home, dl_read_file
#include "dl/json.h" // dl_json writer
#include "grader.h"
#include "items.h" // gr_the_lab, gr_find_item, hooks
#include "plan.h" // gr_plan_make, gr_tier_name
#include "replay.h" // gr_replay_start
#include "sandbox.h" // gr_spawn

// ---- the item being judged (read by the test child's hooks) ----

static char judge_log[1100];
static char record_path[1100];
static gr_fate worker_fate;
static int replaying;

static void child_setup(void)
{
    if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0)
        return;
    int fd = open(judge_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        fflush(stdout);
        fflush(stderr);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    if (replaying)
        gr_replay_start(record_path, &worker_fate, gr_current()->name);
}

static void child_teardown(void)
{
    if (replaying)
        gr_replay_finish();
}

// ---- results ----

typedef enum { R_PASS, R_FAIL, R_SKIP, R_PARENT } r_kind;

typedef struct result {
    r_kind kind;
    int score;
    char msg[2048]; /* what the test said */
    char output[3072]; /* the tail of what the judge's test and the student's code printed */
    char diag[128]; /* "[diagnosis: x]" name, if any */
    char note[256]; /* why an item outside the selection ran (plan.h: GR_PLAN_NEEDED) */
} result;

/* The last lines of a file (at most len - 1 bytes, cut on a UTF-8 character boundary). */
static void tail_of(const char *path, char *out, size_t len, int lines_max)
{
    char *text = NULL;
    size_t n = 0;
    out[0] = '\0';
    if (dl_read_file(path, &text, &n) != DL_OK || n == 0) {
        free(text);
        return;
    }
    size_t start = 0;
    int lines = 0;
    for (size_t k = n; k > 0; k--) {
        if (text[k - 1] == '\n' && k != n && ++lines >= lines_max) {
            start = k;
            break;
        }
    }
    if (n - start >= len)
        start = n - (len - 1);
    while (start < n && ((unsigned char)text[start] & 0xC0) == 0x80)
        start++; // not in the middle of a character
    size_t m = n - start;
    for (size_t k = 0; k < m; k++) // NUL bytes would cut the string short
        out[k] = text[start + k] ? text[start + k] : ' ';
    out[m] = '\0';
    free(text);
}

/* Cuts a string that snprintf may have cut inside a UTF-8 character back to
 * the last whole character. */
static void trim_utf8(char *s)
{
    size_t n = strlen(s), k = n;
    while (k > 0 && n - k < 4 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
        k--;
    if (k == 0 || ((unsigned char)s[k - 1] & 0x80) == 0)
        return;
    unsigned lead = (unsigned char)s[k - 1];
    size_t want = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
    if (n - (k - 1) < want)
        s[k - 1] = '\0';
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

// ---- a submission that was not built ----

/* Copies text into out (len bytes), valid UTF-8 only: a byte that starts no
 * whole character, or a control character but '\n', becomes '?'. */
static void clean_utf8(const char *text, size_t n, char *out, size_t len)
{
    size_t o = 0;
    for (size_t k = 0; k < n && o + 5 < len;) {
        unsigned c = (unsigned char)text[k];
        size_t want = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        int whole = want > 0 && k + want <= n;
        for (size_t m = 1; whole && m < want; m++)
            whole = ((unsigned char)text[k + m] & 0xC0) == 0x80;
        if (!whole || (c < 0x20 && c != '\n') || c == 0x7F) {
            out[o++] = '?';
            k++;
        } else {
            memcpy(out + o, text + k, want);
            o += want;
            k += want;
        }
    }
    out[o] = '\0';
}

/* Why the build whose log is at path failed: the check's refusals
 * ("refused [STATUS] ...", tools/check-submission.sh) when there are any,
 * else the compiler's and the linker's errors (else the log's last lines).
 * status gets STATUS, or "build-failed". */
static void not_built_reason(const char *path, char *status, size_t slen, char *why, size_t wlen)
{
    char *text = NULL;
    size_t n = 0;
    snprintf(status, slen, "build-failed");
    snprintf(why, wlen, "(no build log at %s)", path);
    if (dl_read_file(path, &text, &n) != DL_OK)
        return;
    static const char *const marks[] = {"refused [", "error", NULL};
    char picked[2048] = "";
    for (int m = 0; marks[m] != NULL && picked[0] == '\0'; m++) {
        int lines = 0;
        for (const char *p = text; *p && lines < 4; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
            size_t k = strcspn(p, "\n");
            const char *hit = m == 0 ? (strncmp(p, marks[0], 9) == 0 ? p : NULL) : strstr(p, marks[1]);
            if (hit == NULL || hit >= p + k)
                continue;
            if (m == 0 && lines == 0)
                snprintf(status, slen, "%.*s", (int)strcspn(p + 9, "] \n"), p + 9);
            size_t used = strlen(picked);
            snprintf(picked + used, sizeof picked - used, "%.*s\n", (int)(k < 400 ? k : 400), p);
            lines++;
        }
    }
    if (picked[0] == '\0') // the last lines, whatever they say
        tail_of(path, picked, sizeof picked, 4);
    size_t k = strlen(picked);
    while (k > 0 && picked[k - 1] == '\n')
        picked[--k] = '\0';
    clean_utf8(picked, k, why, wlen);
    free(text);
}

static const char *worker_path;

/* Runs item i's test body in the worker (sandboxed), recording the student's calls. */
static void run_worker(const gr_item *it, const char *dir)
{
    char wlog[1100], name[300], work[800];
    snprintf(record_path, sizeof record_path, "%s/record", dir);
    snprintf(wlog, sizeof wlog, "%s/worker.log", dir);
    snprintf(name, sizeof name, "items/%s/work", it->name); // each item its own (not one shared by all)
    gr_sandbox_mkdir(name, 1, work, sizeof work);
    int rec = open(record_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int out = open(wlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    gr_job job = gr_job_defaults(it->timeout * gr_timeout_multiplier(), it->tier != GR_CPU);
    job.workdir = work;
    job.out_fd = out;
    job.rec_fd = rec;
    char *argv[] = {(char *)worker_path, "--item", (char *)it->name, NULL};
    job.argv = argv;
    if (rec < 0 || out < 0 || gr_spawn(&job, &worker_fate) != 0) {
        memset(&worker_fate, 0, sizeof worker_fate);
        worker_fate.how = GR_END_NOSTART;
        snprintf(worker_fate.text, sizeof worker_fate.text, "could not be started (%s)", strerror(errno));
    }
    if (rec >= 0)
        close(rec);
    if (out >= 0)
        close(out);
}

static void run_item(int i, result *res)
{
    const gr_item *it = &gr_the_lab->items[i];
    char dir[700], name[300];
    snprintf(name, sizeof name, "items/%s", it->name);
    gr_sandbox_mkdir(name, 0, dir, sizeof dir);
    snprintf(judge_log, sizeof judge_log, "%s/judge.log", dir);
    gr_current_item = i;
    replaying = it->where == GR_WORKER;
    if (replaying)
        run_worker(it, dir);
    SRunner *sr = srunner_create(gr_suite());
    srunner_set_log(sr, NULL);
    srunner_set_fork_status(sr, CK_FORK); // the judge's own test runs in a child; CK_FORK=no does not apply here
    if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0)
        srunner_set_fork_status(sr, CK_NOFORK); // debugging the grader in gdb
    srunner_run(sr, NULL, it->name, CK_SILENT);
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
                snprintf(res->msg, sizeof res->msg, "the check crashed: %s (at %s:%d)", m,
                         tr_lfile(trs[k]) ? tr_lfile(trs[k]) : "?", tr_lno(trs[k]));
            else if (m != NULL && strstr(m, "timeout") != NULL)
                snprintf(res->msg, sizeof res->msg,
                         GR_DIAG("wall-time-limit") "timed out after %.0f s (x CK_TIMEOUT_MULTIPLIER): an endless "
                                                    "loop, or far too slow",
                         it->timeout);
            else
                snprintf(res->msg, sizeof res->msg, "%s", m ? m : "failed");
        }
    }
    if (n == 0)
        snprintf(res->msg, sizeof res->msg, "grader bug: item has no tests");
    free(trs);
    srunner_free(sr);
    gr_current_item = -1;
    char notes[1536], printed[1536];
    tail_of(judge_log, notes, sizeof notes, 10);
    printed[0] = '\0';
    if (replaying) {
        char wlog[1100];
        snprintf(wlog, sizeof wlog, "%s/worker.log", dir);
        tail_of(wlog, printed, sizeof printed, 12);
    }
    snprintf(res->output, sizeof res->output, "%s%s%s", notes,
             printed[0] ? (notes[0] ? "your code printed:\n" : "your code printed:\n") : "", printed);
    res->kind = passed ? R_PASS : R_FAIL;
    res->score = passed ? it->points : 0;
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
        dprintf(fds[1], "%d\n%s\n", n, buf);
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
            "usage: %s [--impl NAME] [--code DIR] [--not-built LOG] [--json FILE] [--list] [--verbose] [ITEM ...]\n"
            "Grades lab %s (%s). With ITEMs, runs only those (and their parents).\n"
            "  --impl NAME   the code under test: build/NAME/lab%s and its worker (default: labs)\n"
            "  --code DIR    the directory holding lab%s and lab%s-worker, if not build/NAME\n"
            "  --not-built LOG  the code under test did not build (LOG is its build's output): every item\n"
            "                scores 0, with the reason (tools/check-submission.sh's refusal, or the errors)\n"
            "  --json FILE   write Gradescope results.json to FILE\n"
            "  --list        list the items with points and tiers, run nothing\n"
            "  --verbose     show what passing tests printed too\n"
            "Environment: CK_TIMEOUT_MULTIPLIER (slow machines), GR_TIERS=cpu,gpu1 (only these tiers, and\n"
            "the items of other tiers that theirs need first), GR_SANDBOX=ns|uid|pgroup and GR_SANDBOX_UID\n"
            "(see the README's instructor section).\n",
            prog, gr_the_lab->id, gr_the_lab->title, gr_the_lab->id, gr_the_lab->id, gr_the_lab->id);
}

static dl_status write_json(const char *path, const result *res, const gr_plan *plan, const char *impl, int gpus,
                            const char *gpu_name, int score, int max_score, int skipped, const char *build)
{
    const gr_lab *lab = gr_the_lab;
    dl_json j;
    if (dl_json_open(&j, path) != DL_OK)
        return DL_ERR_IO;
    char rev[64], when[64];
    git_revision(rev, sizeof rev);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    dl_json_object(&j, NULL);
    dl_json_num(&j, "score", score); // Gradescope sums the tests' max_score itself; ours is in extra_data
    dl_json_str(&j, "visibility", "visible");
    dl_json_str(&j, "stdout_visibility", "visible");
    dl_json_array(&j, "tests");
    for (int i = 0; i < lab->n_items; i++) {
        if (plan[i].kind == GR_PLAN_OUT)
            continue;
        const gr_item *it = &lab->items[i];
        const result *r = &res[i];
        char name[256], out[6000], note[300];
        snprintf(note, sizeof note, "%s%s", r->note[0] ? "\n" : "", r->note);
        snprintf(name, sizeof name, "%s: %s", it->name, it->title);
        if (r->kind == R_PASS)
            snprintf(out, sizeof out, "passed%s%s%s", note, r->output[0] ? "\noutput:\n" : "", r->output);
        else if (r->kind == R_SKIP)
            snprintf(out, sizeof out, "SKIPPED: %s (worth %d points where the %s tier runs; not counted)", r->msg,
                     it->points, gr_tier_name(it->tier));
        else if (build != NULL)
            snprintf(out, sizeof out, "%s", r->msg);
        else
            snprintf(out, sizeof out, "%s%s\nhint: %s\nsee: labs/%s/%s%s%s", r->msg, note, it->hint, lab->dir,
                     it->section, r->output[0] ? "\noutput:\n" : "", r->output);
        trim_utf8(out); // what the student printed may have been cut mid-character
        dl_json_object(&j, NULL);
        dl_json_str(&j, "name", name);
        dl_json_num(&j, "score", r->score);
        dl_json_num(&j, "max_score", r->kind == R_SKIP ? 0 : it->points);
        if (r->kind != R_SKIP) // a skipped item is neither: no status, so it shows as neither green nor red
            dl_json_str(&j, "status", r->kind == R_PASS ? "passed" : "failed");
        dl_json_str(&j, "output", out);
        dl_json_array(&j, "tags");
        dl_json_str(&j, NULL, gr_tier_name(it->tier));
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
    dl_json_num(&j, "max_score", max_score);
    dl_json_num(&j, "skipped_points", skipped);
    dl_json_int(&j, "gpus", gpus);
    dl_json_str(&j, "device", gpus > 0 ? gpu_name : "cpu");
    dl_json_str(&j, "cuda_runtime", dl_cuda_runtime_version());
    dl_json_str(&j, "cuda_driver", dl_cuda_driver_version());
    dl_json_str(&j, "nccl", dl_nccl_version());
    dl_json_str(&j, "blas", dl_blas_name());
    dl_json_str(&j, "sandbox", build != NULL ? "none: nothing ran" : gr_sandbox_describe());
    dl_json_str(&j, "build", build != NULL ? build : "built");
    dl_json_str(&j, "git_revision", rev);
    dl_json_str(&j, "graded_at", when);
    dl_json_end_object(&j);
    dl_json_end_object(&j);
    return dl_json_close(&j);
}

/* Fails early (exit 2) when the results file could not be written at the end. */
static void check_writable(const char *path)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
        fprintf(stderr, "grader: error: --json '%s': the directory '%s' does not exist or is not writable\n", path,
                dir);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    gr_the_lab = gr_lab_get();
    const gr_lab *lab = gr_the_lab;
    gr_setup_hook = child_setup;
    gr_teardown_hook = child_teardown;
    const char *json = NULL, *impl = "labs", *code = NULL, *not_built = NULL;
    int list = 0, verbose = 0;
    int *selected = calloc((size_t)lab->n_items, sizeof *selected);
    result *res = calloc((size_t)lab->n_items, sizeof *res);
    int any_named = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--json") == 0 && a + 1 < argc) {
            json = argv[++a];
        } else if (strcmp(argv[a], "--impl") == 0 && a + 1 < argc) {
            impl = argv[++a];
        } else if (strcmp(argv[a], "--code") == 0 && a + 1 < argc) {
            code = argv[++a];
        } else if (strcmp(argv[a], "--not-built") == 0 && a + 1 < argc) {
            not_built = argv[++a];
        } else if (strcmp(argv[a], "--list") == 0) {
            list = 1;
        } else if (strcmp(argv[a], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[a], "--help") == 0) {
            usage(stdout, argv[0]);
            return 0;
        } else if (argv[a][0] == '-') {
            fprintf(stderr, "%s: error: unknown option '%s' (or it lacks its value)\n", argv[0], argv[a]);
            usage(stderr, argv[0]);
            return 2;
        } else {
            int i = gr_find_item(argv[a]);
            if (i < 0) {
                fprintf(stderr, "%s: error: no item named '%s' in lab %s (see --list)\n", argv[0], argv[a], lab->id);
                return 2;
            }
            selected[i] = 1;
            any_named = 1;
        }
    }
    if (list) {
        for (int i = 0; i < lab->n_items; i++) {
            const gr_item *it = &lab->items[i];
            printf("%-24s %3d pts  %-4s  %s", it->name, it->points, gr_tier_name(it->tier), it->title);
            if (it->parent != NULL)
                printf("  (after %s)", it->parent);
            printf("  [see %s]\n", it->section);
        }
        return 0;
    }
    if (json != NULL)
        check_writable(json);
    // the code under test: build/IMPL/labNN and build/IMPL/labNN-worker, beside build/grader/
    if (code != NULL) {
        snprintf(gr_code_dir, sizeof gr_code_dir, "%s", code);
    } else {
        char self[900];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(gr_code_dir, sizeof gr_code_dir, "%s/../%.100s", self, impl);
    }
    char resolved[PATH_MAX]; // the jobs start in their own directories: absolute paths only
    if (realpath(gr_code_dir, resolved) != NULL)
        snprintf(gr_code_dir, sizeof gr_code_dir, "%.1000s", resolved);
    char worker[1200], build_status[64] = "", build_why[2048] = "";
    snprintf(worker, sizeof worker, "%s/lab%s-worker", gr_code_dir, lab->id);
    if (not_built != NULL)
        not_built_reason(not_built, build_status, sizeof build_status, build_why, sizeof build_why);
    else if (access(worker, X_OK) != 0) {
        fprintf(stderr, "grader: error: no worker at %s (build it: make %s)\n", worker, code ? worker : "all");
        return 2;
    }
    color = isatty(1) && getenv("NO_COLOR") == NULL;
    char gpu_name[300];
    int gpus = gpus_here(gpu_name, sizeof gpu_name);
    // what runs: the named items (or all), their parents, whatever the tier filter
    // leaves out that a running item needs (plan.h)
    const char *tiers = getenv("GR_TIERS") != NULL ? getenv("GR_TIERS") : "";
    gr_plan *plan = calloc((size_t)lab->n_items, sizeof *plan);
    char why[300];
    if (plan == NULL ||
        gr_plan_make(lab->items, lab->n_items, any_named ? selected : NULL, tiers, gpus, plan, why, sizeof why) != 0) {
        fprintf(stderr, "grader: error: %s\n", plan == NULL ? "out of memory" : why);
        return 2;
    }
    if (not_built == NULL) {
        gr_sandbox_hide(gr_code_dir); // jobs run staged copies of what is there
        gr_sandbox_init();
        worker_path = gr_stage(worker);
        gr_sandbox_mkdir("work", 1, gr_scratch_dir, sizeof gr_scratch_dir);
    }
    printf("== ddplab lab %s: %s ==\n", lab->id, lab->title);
    printf("   code: %s   device: %s\n", impl,
           gpus > 0 ? gpu_name : (dl_built_with_cuda() ? "cpu (no CUDA GPU answers)" : "cpu (built without CUDA)"));
    if (not_built != NULL) {
        printf("   not built (%s), so nothing ran and every item scores 0:\n", build_status);
        print_indented("", build_why);
    } else {
        printf("   sandbox: %s\n", gr_sandbox_describe());
    }
    int score = 0, max_score = 0, skipped = 0;
    int skipped_tiers[3] = {0, 0, 0};
    for (int i = 0; i < lab->n_items; i++) {
        if (plan[i].kind == GR_PLAN_OUT)
            continue;
        const gr_item *it = &lab->items[i];
        result *r = &res[i];
        int parent = it->parent ? gr_find_item(it->parent) : -1;
        if (plan[i].kind == GR_PLAN_SKIP_TIER || plan[i].kind == GR_PLAN_SKIP_GPU) {
            const gr_item *g = plan[i].gpu_need >= 0 ? &lab->items[plan[i].gpu_need] : it;
            char need[64];
            snprintf(need, sizeof need, "%s",
                     gr_tier_gpus(g->tier) == 1 ? "a CUDA GPU; none answers here" : "4 CUDA GPUs");
            r->kind = R_SKIP;
            if (plan[i].kind == GR_PLAN_SKIP_TIER)
                snprintf(r->msg, sizeof r->msg, "tier not selected (GR_TIERS)");
            else if (g == it)
                snprintf(r->msg, sizeof r->msg, "needs %s", need);
            else
                snprintf(r->msg, sizeof r->msg, "needs %s first, which needs %s", g->name, need);
            skipped += it->points;
            skipped_tiers[it->tier] = 1;
        } else {
            if (plan[i].kind == GR_PLAN_NEEDED) // its tier is filtered out, but an item that runs needs it
                snprintf(r->note, sizeof r->note,
                         "run because %s needs it, though GR_TIERS=%.60s leaves out the %s tier",
                         lab->items[plan[i].needed_by].name, tiers, gr_tier_name(it->tier));
            if (not_built != NULL) {
                r->kind = R_FAIL;
                snprintf(r->msg, sizeof r->msg, "not graded: your code was not built (%s):\n%s", build_status,
                         build_why);
                snprintf(r->diag, sizeof r->diag, "%s", build_status);
                max_score += it->points;
            } else if (parent >= 0 && res[parent].kind != R_PASS) {
                r->kind = R_PARENT;
                snprintf(r->msg, sizeof r->msg, "parent failed: %s must pass first", it->parent);
                max_score += it->points;
            } else {
                run_item(i, r);
                max_score += it->points;
                score += r->score;
            }
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
        if (r->note[0])
            print_indented("", r->note);
        if (r->kind == R_FAIL && not_built != NULL) {
            print_indented("", "not graded: your code was not built (above)");
        } else if (r->kind == R_FAIL) {
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
    if (not_built == NULL)
        gr_sandbox_cleanup();
    printf("Score: %d/%d", score, max_score);
    if (skipped > 0) {
        printf("   (skipped: %d points in the", skipped);
        for (int t = 0; t < 3; t++) {
            if (skipped_tiers[t])
                printf(" %s", gr_tier_name((gr_tier)t));
        }
        printf(" tier%s; not counted)", skipped_tiers[0] + skipped_tiers[1] + skipped_tiers[2] > 1 ? "s" : "");
    }
    printf("\n");
    int rc = score == max_score ? 0 : 1;
    if (json != NULL && write_json(json, res, plan, impl, gpus, gpu_name, score, max_score, skipped,
                                   not_built != NULL ? build_status : NULL) != DL_OK) {
        fprintf(stderr, "grader: %s\n", dl_last_error());
        rc = 3;
    }
    free(selected);
    free(plan);
    free(res);
    return rc;
}
