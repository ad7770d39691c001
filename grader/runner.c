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
#include "drivers.h" // gr_driver
#include "gpu.h" // gr_gpu_emulable, gr_gpu_emulated, gr_gpu_crash_diag
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
    int emulated; /* graded on the emulated CUDA device (gpu.h) */
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

/* The base names of the lab's student files (its lab.mk's LAB_NN_STUDENT_*
 * lines), into names (at most max), as pointers into buf; how many. */
static int student_files(char *buf, size_t len, const char **names, int max)
{
    char path[1200], *text = NULL;
    snprintf(path, sizeof path, "%s/labs/%s/lab.mk", dl_home(), gr_the_lab->dir);
    int n = 0;
    buf[0] = '\0';
    if (dl_read_file(path, &text, NULL) != DL_OK)
        return 0;
    size_t used = 0;
    for (char *line = text; line != NULL && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char key[64];
        snprintf(key, sizeof key, "LAB_%s_STUDENT_", gr_the_lab->id);
        if (strncmp(line, key, strlen(key)) != 0)
            continue;
        char *eq = strstr(line, ":=");
        size_t end = strcspn(line, "\n");
        if (eq == NULL || eq > line + end)
            continue;
        for (char *p = eq + 2; p < line + end && n < max;) {
            p += strspn(p, " \t");
            size_t k = strcspn(p, " \t\n");
            if (k == 0 || p >= line + end)
                break;
            if (used + k + 1 > len)
                break;
            memcpy(buf + used, p, k);
            buf[used + k] = '\0';
            names[n++] = buf + used;
            used += k + 1;
            p += k;
        }
    }
    free(text);
    return n;
}

/* Why the build whose log is at path failed, and its status: what
 * gr_plan_not_built (plan.h) lets through, nothing raw. The student's files
 * are the lab's, in the folder the build named: labs/DIR (make grade, the
 * gradebook's tree), IMPL/DIR (make grade IMPL=solutions), or IMPL itself,
 * absolute (make grade SRC=dir). */
static void not_built_reason(const char *path, const char *impl, char *status, size_t slen, char *why, size_t wlen)
{
    char *text = NULL, names_buf[600], d0[300], d1[300], d2[PATH_MAX], d3[PATH_MAX], here[PATH_MAX];
    size_t n = 0;
    const char *names[16];
    int n_names = student_files(names_buf, sizeof names_buf, names, 16);
    snprintf(d0, sizeof d0, "labs/%s", gr_the_lab->dir);
    snprintf(d1, sizeof d1, "%.100s/%s", impl, gr_the_lab->dir);
    // SRC=dir as make wrote it (its abspath: the links in it kept) and as the system resolves it
    if (impl[0] == '/' || getcwd(here, sizeof here) == NULL)
        here[0] = '\0';
    snprintf(d3, sizeof d3, "%.2000s%s%.2000s", here, here[0] ? "/" : "",
             impl[0] == '.' && impl[1] == '/' ? impl + 2 : impl);
    for (size_t k = strlen(d3); k > 1 && d3[k - 1] == '/'; k--)
        d3[k - 1] = '\0';
    const char *dirs[4] = {d0, d1, d3, NULL};
    if (realpath(impl, d2) != NULL)
        dirs[3] = d2;
    if (dl_read_file(path, &text, &n) != DL_OK) {
        snprintf(status, slen, "build-failed");
        snprintf(why, wlen, "(no build log at %s)", path);
        return;
    }
    gr_plan_not_built(text, n, names, n_names, dirs, dirs[3] != NULL ? 4 : 3, status, slen, why, wlen);
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
    gr_sandbox_mkdir(name, work, sizeof work);
    gr_sandbox_fresh(work);
    int rec = open(record_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int out = open(wlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    gr_job job = gr_job_defaults(it->timeout * gr_timeout_multiplier(), it->tier != GR_CPU);
    job.workdir = work;
    job.keep = 0; // what the worker writes is nobody's input: the judge reads its record only
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
    gr_sandbox_mkdir(name, dir, sizeof dir);
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
    if (replaying && worker_fate.how == GR_END_BUDGET) { // whatever the record held: the job was stopped
        passed = 0;
        snprintf(res->msg, sizeof res->msg, GR_DIAG("over-budget") "your code %s", worker_fate.text);
    }
    if (!passed && replaying && gr_gpu_emulated() && worker_fate.how == GR_END_SIGNAL) {
        // the emulated device ended the worker at a guard page: its report names the kernel, the thread
        // and the line (it can only fail an item: the worker crashed either way)
        char wlog[1100], text[8192];
        snprintf(wlog, sizeof wlog, "%s/worker.log", dir);
        tail_of(wlog, text, sizeof text, 60);
        const char *d = gr_gpu_crash_diag(text);
        const char *rest = strncmp(res->msg, GR_DIAG("crashed"), strlen(GR_DIAG("crashed"))) == 0
                               ? res->msg + strlen(GR_DIAG("crashed"))
                               : res->msg;
        if (d != NULL) {
            char was[sizeof res->msg];
            snprintf(was, sizeof was, "%s", rest);
            snprintf(res->msg, sizeof res->msg,
                     "[diagnosis: %s] %.1700s; the emulated CUDA device stopped it at an access past an array's "
                     "end (its report, under output, names the kernel, the thread and the line)",
                     d, was);
        }
    }
    res->kind = passed ? R_PASS : R_FAIL;
    res->score = passed ? it->points : 0;
    find_diag(res->msg, res->diag, sizeof res->diag);
}

// ---- items on the emulated CUDA device (gpu.h) ----

/* Where the gpu1 items run: on a GPU, on the emulated device, or nowhere (SKIPPED). */
typedef enum { CUDA_NONE, CUDA_GPU, CUDA_EMU } cuda_mode;

static const char *emu_code; /* --emu-code DIR: the code under test built for the emulated device */
static const char *emu_not_built; /* --emu-not-built LOG: that build failed */
static char emu_judge[1200]; /* the emulated build's judge: --emu-judge, or beside this one */
static const char *sub_note; /* --note TEXT: a line about the submission, for its reader */
static const char *impl_name = "labs";

static int is_emulable(const gr_item *it)
{
    return it->tier == GR_GPU1 && gr_gpu_emulable(it->name);
}

static int lab_emulable(void)
{
    for (int i = 0; i < gr_the_lab->n_items; i++)
        if (is_emulable(&gr_the_lab->items[i]))
            return 1;
    return 0;
}

/* GR_CUDA: auto (the default: a GPU when one answers, else the emulated
 * device), gpu (only a GPU), emu (the emulated device, even where a GPU
 * answers: to compare). A lab without emulable items has the GPU or nothing. */
static cuda_mode cuda_choice(int gpus)
{
    const char *v = getenv("GR_CUDA");
    if (v == NULL || v[0] == '\0' || strcmp(v, "auto") == 0)
        return gpus > 0 ? CUDA_GPU : lab_emulable() ? CUDA_EMU : CUDA_NONE;
    if (strcmp(v, "gpu") == 0)
        return gpus > 0 ? CUDA_GPU : CUDA_NONE;
    if (strcmp(v, "emu") == 0)
        return lab_emulable() ? CUDA_EMU : gpus > 0 ? CUDA_GPU : CUDA_NONE;
    fprintf(stderr, "grader: error: GR_CUDA='%s': expected auto, gpu or emu\n", v);
    exit(2);
}

/* Item i on the emulated device: the emulated build's judge (no student code:
 * trusted, as this one is) grades it alone, with the code under test built
 * for that device as its worker, and writes its result into the item's
 * folder; this judge reads it. */
static void run_emulated(int i, result *res)
{
    const gr_item *it = &gr_the_lab->items[i];
    res->emulated = 1;
    if (emu_not_built != NULL) {
        char status[64], why[2048];
        not_built_reason(emu_not_built, impl_name, status, sizeof status, why, sizeof why);
        res->kind = R_FAIL;
        res->score = 0;
        snprintf(res->msg, sizeof res->msg,
                 "[diagnosis: emulated-build-failed] not graded: your code did not build for the emulated CUDA "
                 "device (make EMU=1; %s): %.1800s",
                 status, why);
        find_diag(res->msg, res->diag, sizeof res->diag);
        return;
    }
    char dir[700], name[300], out[1100], log[1100];
    snprintf(name, sizeof name, "items/%s/emulated", it->name);
    gr_sandbox_mkdir(name, dir, sizeof dir);
    snprintf(out, sizeof out, "%s/result", dir);
    snprintf(log, sizeof log, "%s/judge.log", dir);
    unlink(out);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        gr_sandbox_lend_uid(); // its jobs run as this judge's uid, while this one waits
        execl(emu_judge, emu_judge, "--emulated-item", it->name, "--code", emu_code, "--result", out, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", emu_judge, strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    char *text = NULL;
    size_t n = 0;
    int kind = -1, score = 0;
    size_t lm = 0, lo = 0;
    int head = 0;
    if (pid > 0 && dl_read_file(out, &text, &n) == DL_OK)
        head = sscanf(text, "ddplab-emulated-result %d %d %zu %zu\n", &kind, &score, &lm, &lo);
    const char *body = text != NULL ? strchr(text, '\n') : NULL;
    if (head != 4 || body == NULL || lm >= sizeof res->msg || lo >= sizeof res->output ||
        (size_t)(text + n - (body + 1)) != lm + lo || kind < R_PASS || kind > R_FAIL) {
        char tail[1536];
        tail_of(log, tail, sizeof tail, 10);
        res->kind = R_FAIL;
        res->score = 0;
        snprintf(res->msg, sizeof res->msg,
                 "grader: the emulated device's judge (%.300s) gave no result (%s %d)%s%.1200s", emu_judge,
                 WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                 tail[0] ? ":\n" : "", tail);
        free(text);
        return;
    }
    memcpy(res->msg, body + 1, lm);
    res->msg[lm] = '\0';
    memcpy(res->output, body + 1 + lm, lo);
    res->output[lo] = '\0';
    res->kind = kind == R_PASS ? R_PASS : R_FAIL;
    res->score = res->kind == R_PASS ? it->points : 0; // the points are this table's, whatever the file says
    find_diag(res->msg, res->diag, sizeof res->diag);
    free(text);
}

/* The emulated build's judge, in --emulated-item mode: item i alone, its
 * result into path. */
static int grade_one_emulated(int i, const char *path)
{
    result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 2;
    run_item(i, r);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "grader: error: cannot write %s: %s\n", path, strerror(errno));
        free(r);
        return 2;
    }
    fprintf(f, "ddplab-emulated-result %d %d %zu %zu\n%s%s", (int)r->kind, r->score, strlen(r->msg), strlen(r->output),
            r->msg, r->output);
    int bad = fclose(f) != 0;
    free(r);
    return bad ? 2 : 0;
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

/* The kit's revision: in a release (no .git of its own) the REVISION file
 * tools/release-tree.sh wrote, else git's where the kit is the checkout's
 * top (not a repository around it); "unknown" without either. */
static void git_revision(char *out, size_t len)
{
    char path[1100], *text = NULL;
    snprintf(out, len, "unknown");
    snprintf(path, sizeof path, "%s/REVISION", dl_home());
    if (dl_file_exists(path) && dl_read_file(path, &text, NULL) == DL_OK) {
        text[strcspn(text, "\n")] = '\0';
        if (text[0] != '\0' && strlen(text) <= 40 && strspn(text, "0123456789abcdef") == strlen(text))
            snprintf(out, len, "%s", text);
        free(text);
        return;
    }
    char cmd[1200], top[PATH_MAX] = "", home[PATH_MAX];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --show-toplevel --short HEAD 2>/dev/null", dl_home());
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return;
    char rev[64] = "";
    if (fgets(top, sizeof top, p) != NULL && fgets(rev, sizeof rev, p) != NULL) {
        top[strcspn(top, "\n")] = '\0';
        rev[strcspn(rev, "\n")] = '\0';
        if (realpath(dl_home(), home) != NULL && strcmp(top, home) == 0 && rev[0] != '\0')
            snprintf(out, len, "%s", rev);
    }
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
            "  --emu-code DIR  the code under test built for the emulated CUDA device (make EMU=1): where no\n"
            "                GPU answers, the gpu1 items of task 5 are graded on it, by the emulated build's judge\n"
            "                (--emu-judge PATH; default: emucuda/grader/labNN beside this judge's build)\n"
            "  --emu-not-built LOG  that build failed (LOG is its output): those items score 0, with the reason\n"
            "  --note TEXT   a line about the submission for its reader, above the table and as results.json's\n"
            "                output (the gradebook's: the lab's files it did not hand in)\n"
            "  --which-cuda  print where the gpu1 items would run: gpu, emu or none (run nothing)\n"
            "Environment: GR_CUDA=auto|gpu|emu (the gpu1 items on a GPU when one answers, else emulated; only\n"
            "a GPU; the emulated device even where a GPU answers), CK_TIMEOUT_MULTIPLIER (slow machines),\n"
            "GR_TIERS=cpu,gpu1 (only these tiers, and\n"
            "the items of other tiers that theirs need first), GR_SANDBOX=ns|uid|pgroup and GR_SANDBOX_UID,\n"
            "GR_BUDGET_MEMORY, GR_BUDGET_PROCESSES, GR_BUDGET_JOB_DISK and GR_BUDGET_DISK (512M, 2G; see\n"
            "grader/sandbox.h and the README's instructor section).\n",
            prog, gr_the_lab->id, gr_the_lab->title, gr_the_lab->id, gr_the_lab->id, gr_the_lab->id);
}

static dl_status write_json(const char *path, const result *res, const gr_plan *plan, const char *impl, int gpus,
                            const char *gpu_name, const char *cuda_used, int score, int max_score, int skipped,
                            const char *build)
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
    if (sub_note != NULL)
        dl_json_str(&j, "output", sub_note);
    dl_json_array(&j, "tests");
    for (int i = 0; i < lab->n_items; i++) {
        if (plan[i].kind == GR_PLAN_OUT)
            continue;
        const gr_item *it = &lab->items[i];
        const result *r = &res[i];
        char name[256], out[6000], note[300];
        snprintf(note, sizeof note, "%s%s", r->note[0] ? "\n" : "", r->note);
        snprintf(name, sizeof name, "%s: %s%s", it->name, it->title, r->emulated ? " [emulated CUDA]" : "");
        if (r->kind == R_PASS)
            snprintf(out, sizeof out, "passed%s%s%s%s",
                     r->emulated ? " on the emulated CUDA device (no speed measured)" : "", note,
                     r->output[0] ? "\noutput:\n" : "", r->output);
        else if (r->kind == R_SKIP)
            snprintf(out, sizeof out, "SKIPPED: %s (worth %d points where the %s tier runs; not counted)", r->msg,
                     it->points, gr_tier_name(it->tier));
        else if (build != NULL)
            snprintf(out, sizeof out, "%s", r->msg);
        else
            snprintf(out, sizeof out, "%s%s%s\nhint: %s\nsee: labs/%s/%s%s%s",
                     r->emulated ? "on the emulated CUDA device: " : "", r->msg, note, it->hint, lab->dir, it->section,
                     r->output[0] ? "\noutput:\n" : "", r->output);
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
        if (r->emulated)
            dl_json_str(&j, NULL, "emulated-cuda");
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
    dl_json_str(&j, "cuda", cuda_used);
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
    const char *json = NULL, *impl = "labs", *code = NULL, *not_built = NULL, *result_path = NULL;
    int list = 0, verbose = 0, which = 0, emulated_item = -1;
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
        } else if (strcmp(argv[a], "--emu-code") == 0 && a + 1 < argc) {
            emu_code = argv[++a];
        } else if (strcmp(argv[a], "--emu-not-built") == 0 && a + 1 < argc) {
            emu_not_built = argv[++a];
        } else if (strcmp(argv[a], "--note") == 0 && a + 1 < argc) {
            sub_note = argv[++a];
        } else if (strcmp(argv[a], "--emu-judge") == 0 && a + 1 < argc) {
            snprintf(emu_judge, sizeof emu_judge, "%s", argv[++a]);
        } else if (strcmp(argv[a], "--which-cuda") == 0) {
            which = 1;
        } else if (strcmp(argv[a], "--emulated-item") == 0 && a + 1 < argc) { // the main judge runs this
            if ((emulated_item = gr_find_item(argv[++a])) < 0 || !gr_gpu_emulated() ||
                !is_emulable(&lab->items[emulated_item])) {
                fprintf(stderr, "%s: error: --emulated-item %s: %s\n", argv[0], argv[a],
                        gr_gpu_emulated() ? "not an item the emulated device grades"
                                          : "this is not the emulated "
                                            "build's judge (make EMU=1)");
                return 2;
            }
        } else if (strcmp(argv[a], "--result") == 0 && a + 1 < argc) {
            result_path = argv[++a];
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
        free(selected); // (a leak checker's report would end the program before stdout is flushed)
        free(res);
        return 0;
    }
    if (which) {
        char name[300];
        cuda_mode m = cuda_choice(gpus_here(name, sizeof name));
        printf("%s\n", m == CUDA_GPU ? "gpu" : m == CUDA_EMU ? "emu" : "none");
        free(selected);
        free(res);
        return 0;
    }
    if (emulated_item >= 0 && (result_path == NULL || code == NULL)) {
        fprintf(stderr, "%s: error: --emulated-item needs --code DIR and --result FILE\n", argv[0]);
        return 2;
    }
    if (json != NULL)
        check_writable(json);
    impl_name = impl;
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
    // (the reason's lines, whole, and the line before them fit an item's message, res->msg)
    char worker[1200], build_status[64] = "", build_why[1900] = "";
    snprintf(worker, sizeof worker, "%s/lab%s-worker", gr_code_dir, lab->id);
    if (not_built != NULL)
        not_built_reason(not_built, impl, build_status, sizeof build_status, build_why, sizeof build_why);
    else if (access(worker, X_OK) != 0) {
        fprintf(stderr, "grader: error: no worker at %s (build it: make %s)\n", worker, code ? worker : "all");
        return 2;
    }
    if (emulated_item >= 0) { // one item, for the main judge: no table
        gr_sandbox_hide(gr_code_dir);
        gr_sandbox_init();
        worker_path = gr_stage(worker);
        gr_sandbox_mkdir("work", gr_scratch_dir, sizeof gr_scratch_dir);
        int rc = grade_one_emulated(emulated_item, result_path);
        gr_sandbox_cleanup();
        return rc;
    }
    color = isatty(1) && getenv("NO_COLOR") == NULL;
    char gpu_name[300];
    int gpus = gpus_here(gpu_name, sizeof gpu_name);
    // the gpu1 items the emulated device grades: where no GPU answers (or GR_CUDA=emu), given its build
    cuda_mode cuda = cuda_choice(gpus);
    int emulating = cuda == CUDA_EMU && (emu_code != NULL || emu_not_built != NULL) && not_built == NULL;
    if (emulating && emu_judge[0] == '\0') {
        char self[900];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        self[len > 0 ? len : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(emu_judge, sizeof emu_judge, "%s/../emucuda/grader/lab%s", self, lab->id);
    }
    if (emulating && emu_code != NULL) {
        char resolved_emu[PATH_MAX], w[PATH_MAX + 32];
        if (realpath(emu_code, resolved_emu) != NULL)
            emu_code = strdup(resolved_emu);
        snprintf(w, sizeof w, "%s/lab%s-worker", emu_code, lab->id);
        if (access(w, X_OK) != 0 || access(emu_judge, X_OK) != 0) {
            fprintf(stderr, "grader: error: --emu-code: no %s (make EMU=1 builds it)\n",
                    access(w, X_OK) != 0 ? w : emu_judge);
            return 2;
        }
    }
    // what runs: the named items (or all), their parents, whatever the tier filter
    // leaves out that a running item needs (plan.h)
    const char *tiers = getenv("GR_TIERS") != NULL ? getenv("GR_TIERS") : "";
    gr_plan *plan = calloc((size_t)lab->n_items, sizeof *plan);
    char why[300];
    if (plan == NULL || gr_plan_make(lab->items, lab->n_items, any_named ? selected : NULL, tiers,
                                     emulating && gpus < 1 ? 1 : gpus, plan, why, sizeof why) != 0) {
        fprintf(stderr, "grader: error: %s\n", plan == NULL ? "out of memory" : why);
        return 2;
    }
    for (int i = 0; emulating && gpus < 1 && i < lab->n_items; i++) { // the emulated device grades only its own
        if ((plan[i].kind == GR_PLAN_RUN || plan[i].kind == GR_PLAN_NEEDED) && lab->items[i].tier != GR_CPU &&
            !is_emulable(&lab->items[i])) {
            plan[i].kind = GR_PLAN_SKIP_GPU;
            plan[i].gpu_need = i;
        }
    }
    if (not_built == NULL) {
        gr_sandbox_hide(gr_code_dir); // jobs run staged copies of what is there
        gr_sandbox_init();
        worker_path = gr_stage(worker);
        char driver[1200];
        snprintf(driver, sizeof driver, "%s/lab%s", gr_code_dir, lab->id);
        if (access(driver, X_OK) == 0)
            gr_driver(); // staged (and stripped) once, here: every item's test child has it
        gr_sandbox_mkdir("work", gr_scratch_dir, sizeof gr_scratch_dir);
    }
    printf("== ddplab lab %s: %s ==\n", lab->id, lab->title);
    printf("   code: %s   device: %s\n", impl,
           gpus > 0 ? gpu_name : (dl_built_with_cuda() ? "cpu (no CUDA GPU answers)" : "cpu (built without CUDA)"));
    if (emulating)
        printf("   task 5's CUDA items: on the emulated CUDA device (common/emu; %s): correctness, races, barriers, "
               "bounds and the same bits in every schedule; no speed is measured there\n",
               gpus > 0 ? "GR_CUDA=emu" : "no GPU answers here");
    if (sub_note != NULL)
        printf("   note: %s\n", sub_note);
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
                     gr_tier_gpus(g->tier) == 1 ? (cuda == CUDA_EMU && is_emulable(g) && !emulating
                                                       ? "a CUDA GPU or the emulated device's build (make grade)"
                                                       : "a CUDA GPU; none answers here")
                                                : "4 CUDA GPUs");
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
                r->emulated = emulating && is_emulable(it);
                snprintf(r->msg, sizeof r->msg, "parent failed: %s must pass first", it->parent);
                max_score += it->points;
            } else {
                if (emulating && is_emulable(it))
                    run_emulated(i, r);
                else
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
            printf("[%s%s%s] %3d/%-3d  %-24s %s%s\n", paint(col), tag, paint("\033[0m"), r->score, it->points, it->name,
                   it->title, r->emulated ? "  [emulated CUDA]" : "");
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
    const char *cuda_used = emulating ? "emulated" : gpus > 0 && cuda == CUDA_GPU ? "gpu" : "none";
    if (json != NULL && write_json(json, res, plan, impl, gpus, gpu_name, cuda_used, score, max_score, skipped,
                                   not_built != NULL ? build_status : NULL) != DL_OK) {
        fprintf(stderr, "grader: %s\n", dl_last_error());
        rc = 3;
    }
    free(selected);
    free(plan);
    free(res);
    return rc;
}
