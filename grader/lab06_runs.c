/* lab06_runs.c — lab 06's driver runs as the judge makes and keeps them, the
 * operating system's count of their memory, and the readers of what they
 * dumped (see lab06_ref.h). */
#define _GNU_SOURCE
#include <dirent.h> // opendir
#include <errno.h> // errno
#include <fcntl.h> // open
#include <ftw.h> // nftw
#include <signal.h> // SIGKILL
#include <stdio.h> // snprintf, fopen
#include <stdlib.h> // malloc, free
#include <string.h> // strstr, strcmp
#include <sys/prctl.h> // prctl
#include <sys/resource.h> // getrusage
#include <sys/stat.h> // lstat, mkdir
#include <sys/wait.h> // waitpid
#include <unistd.h> // fork, pipe2, access

#include "dl/comm.h" // dl_comm_op_name
#include "dl/data.h" // dl_npy_read
#include "dl/dtype.h" // dl_dtype_size
#include "dl/fs.h" // dl_read_file, dl_mkdir_p
#include "drivers.h" // gr_run_driver, gr_path, gr_csv
#include "kit.h" // the dump's schemas
#include "lab06_ref.h"
#include "sandbox.h" // gr_sandbox_mkdir
#include "shard.h" // SHARD_CHUNK

// ---- the judge's folder ----

/* The judge's folder of this grading's lab 06 runs: under the grading's run directory, which no job may write. */
static const char *judge_dir(void)
{
    static char dir[1024];
    if (dir[0] == '\0')
        gr_sandbox_mkdir("lab06", dir, sizeof dir);
    return dir;
}

const char *gr6_path(const char *file)
{
    static char buf[4][1400];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", judge_dir(), file);
    return buf[k];
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode))
        nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    else
        remove(path);
}

/* A regular file, never followed through a link (what a job left could point anywhere), moved to dst: renamed
 * (the run's folder and the judge's lie in the grading's run directory, one file system), or copied where it
 * cannot be. Only a file with no other name moves: every process of the job is gone, so nothing the job left
 * can still write it, and no other path reaches it; anything else is copied, as a file of the judge's. */
static void move_file(const char *src, const char *dst)
{
    struct stat st;
    if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    if (st.st_nlink == 1 && rename(src, dst) == 0)
        return;
    int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1;
    if (in >= 0 && fstat(in, &st) == 0 && S_ISREG(st.st_mode))
        out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    char buf[65536];
    ssize_t k;
    while (out >= 0 && (k = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)k) != k)
            break;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
}

/* The run's folder (two levels: its outputs and dump/), regular files only, moved into dst. */
static void move_tree(const char *src, const char *dst, int depth)
{
    DIR *d = opendir(src);
    if (d == NULL)
        return;
    dl_mkdir_p(dst);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char s[2048], t[2048];
        struct stat st;
        snprintf(s, sizeof s, "%s/%s", src, e->d_name);
        snprintf(t, sizeof t, "%s/%s", dst, e->d_name);
        if (lstat(s, &st) != 0)
            continue;
        if (S_ISREG(st.st_mode))
            move_file(s, t);
        else if (S_ISDIR(st.st_mode) && depth < 2)
            move_tree(s, t, depth + 1);
    }
    closedir(d);
}

/* This process's resident set now, in bytes. */
static double rss_now(void)
{
    char *text = NULL;
    size_t n = 0;
    double kib = 0;
    if (dl_read_file("/proc/self/status", &text, &n) == DL_OK) {
        const char *p = strstr(text, "VmRSS:");
        if (p != NULL)
            kib = strtod(p + 6, NULL);
    }
    free(text);
    return 1024.0 * kib;
}

// ---- the runs ----

gr6_result gr6_run(const char *name, int P, const char *args)
{
    gr6_result r = {127, 0, 0};
    char mark[1500], dump[1300], expanded[2400];
    snprintf(mark, sizeof mark, "%s.run", gr6_path(name));
    FILE *f = fopen(mark, "r");
    if (f != NULL) { // made earlier in this grading: its outcome as the judge kept it
        if (fscanf(f, "%d %lf %lf", &r.rc, &r.rss, &r.judge_rss) != 3)
            r.rc = 127;
        fclose(f);
        return r;
    }
    // the run's folder in the scratch, emptied: nothing an earlier job left there is read
    char log[1300];
    snprintf(log, sizeof log, "%s.log", gr_path(name));
    remove_tree(gr_path(name));
    remove_tree(log);
    snprintf(dump, sizeof dump, "%s/dump", gr_path(name));
    size_t o = 0;
    for (const char *a = args; *a && o + 1 < sizeof expanded; a++) { // "%D": the dump folder
        if (a[0] == '%' && a[1] == 'D') {
            o += (size_t)snprintf(expanded + o, sizeof expanded - o, "%s", dump);
            o = o < sizeof expanded ? o : sizeof expanded - 1;
            a++;
        } else {
            expanded[o++] = *a;
        }
    }
    expanded[o] = '\0';
    // a child of the judge runs it and reaps the whole job: the kernel's count of its children's
    // largest resident set is then the run's, whatever the job's processes did
    int fds[2];
    double out[3] = {127, 0, 0};
    fflush(stdout);
    fflush(stderr);
    if (pipe2(fds, O_CLOEXEC) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            double self = rss_now();
            int rc = gr_run_driver(P, name, expanded);
            struct rusage ru;
            getrusage(RUSAGE_CHILDREN, &ru);
            double res[3] = {rc, 1024.0 * (double)ru.ru_maxrss, self};
            (void)!write(fds[1], res, sizeof res);
            _exit(0);
        }
        close(fds[1]);
        ssize_t k = -1;
        while (pid > 0 && (k = read(fds[0], out, sizeof out)) < 0 && errno == EINTR)
            ;
        close(fds[0]);
        int ws = 0;
        if (pid > 0)
            waitpid(pid, &ws, 0);
        if (pid > 0 && k != (ssize_t)sizeof out && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
            // the runner failed the test itself (drivers.h: a run over a budget), its message already sent:
            // this test ends with it
            fflush(stdout);
            fflush(stderr);
            _exit(1);
        }
        if (k != (ssize_t)sizeof out)
            out[0] = 127, out[1] = out[2] = 0;
    }
    r = (gr6_result){(int)out[0], out[1], out[2]};
    // out of the jobs' reach: the judge's folder is what every item reads (the files moved there, not copied)
    move_tree(gr_path(name), gr6_path(name), 0);
    char kept[300];
    snprintf(kept, sizeof kept, "%s.log", name);
    move_file(log, gr6_path(kept));
    remove_tree(gr_path(name));
    remove_tree(log);
    f = fopen(mark, "w");
    if (f != NULL) {
        fprintf(f, "%d %.0f %.0f\n", r.rc, r.rss, r.judge_rss);
        fclose(f);
    }
    return r;
}

char *gr6_log(const char *name)
{
    char file[300], *text = NULL;
    size_t n = 0;
    snprintf(file, sizeof file, "%s.log", name);
    if (dl_read_file(gr6_path(file), &text, &n) != DL_OK) {
        free(text);
        text = calloc(1, 1);
    }
    return text;
}

void gr6_fail_run(const char *name, const gr6_result *r)
{
    char *text = gr6_log(name), how[160];
    size_t n = strlen(text);
    const char *todo = strstr(text, "not implemented yet"), *bare = strstr(text, "(backward gathers nothing?)");
    if (todo != NULL)
        GR_FAIL("the driver stopped (exit %d): %.*s", r->rc, (int)strcspn(todo, "\n"), todo);
    while (bare != NULL && bare > text && bare[-1] != '\n')
        bare--;
    if (bare != NULL)
        GR_FAIL(GR_DIAG("backward-gathers-nothing") "the driver stopped (exit %d): %.*s. Forward gives each layer "
                                                    "back; backward must gather it again before it computes "
                                                    "(invariant 1 of task 5)",
                r->rc, (int)strcspn(bare, "\n"), bare);
    const char *tail = n > 600 ? text + n - 600 : text;
    while (*tail && ((unsigned char)*tail & 0xC0) == 0x80)
        tail++;
    if (r->rc == 124)
        snprintf(how, sizeof how, "ran past its wall-clock limit and was stopped");
    else if (r->rc > 128 && r->rc < 128 + 65)
        snprintf(how, sizeof how, "was killed by signal %d (%s)", r->rc - 128, strsignal(r->rc - 128));
    else if (r->rc == 127)
        snprintf(how, sizeof how, "could not be started (or its runner ended)");
    else
        snprintf(how, sizeof how, "exited with status %d", r->rc);
    GR_FAIL("%sthe driver run '%s' %s; its last output:\n%s", r->rc == 124 ? GR_DIAG("wall-time-limit") : "", name, how,
            tail);
}

void gr6_workload_args(char *buf, size_t len, const char *mode, const char *device)
{
    snprintf(buf, len,
             "%s%s --mode %s --data %s --hidden %s --batch-size %d --max-steps %d --epochs 50 --lr %g --base-batch %d "
             "--warmup %d --momentum %g --weight-decay %g --seed %d --dump %%D",
             device != NULL ? "--device " : "", device != NULL ? device : "", mode, G6_DATA, G6_HIDDEN, G6_BATCH,
             G6_STEPS, G6_LR, G6_BASE, G6_WARMUP, G6_MOMENTUM, G6_WD, G6_SEED);
}

void gr6_run_zero1(const char *name, int P)
{
    char args[1200];
    gr6_workload_args(args, sizeof args, "zero1", NULL);
    gr6_result r = gr6_run(name, P, args);
    if (r.rc != 0)
        gr6_fail_run(name, &r);
}

/* The half's files from one run of all three halves on P ranks (--selftest all: one start of the ranks instead of
 * three), moved to name's folder as its own run leaves them, and its mark made: 1. 0 when that run failed or left
 * the half unwritten (the kit writes each rank's layout last, after a barrier past your last call): the half then
 * runs alone, so that a mistake in one half never costs another's item. */
static int from_all(const char *name, int P, const char *half)
{
    // once the three together failed on some P, the halves alone on every P (a half that hangs would hang the
    // three on each P first)
    if (access(gr6_path("selftest-all.failed"), F_OK) == 0)
        return 0;
    char all[16], from[1400], to[1400], mark[1410];
    snprintf(all, sizeof all, "st%d", P);
    gr6_result a = gr6_run(all, P, "--selftest all --dump %D");
    if (a.rc != 0) {
        FILE *f = fopen(gr6_path("selftest-all.failed"), "w");
        if (f != NULL)
            fclose(f);
        return 0;
    }
    snprintf(from, sizeof from, "%s/dump/%s", gr6_path(all), half);
    for (int r = 0; r < P; r++) {
        char f[1500];
        struct stat st;
        snprintf(f, sizeof f, "%s/layout.%d.csv", from, r);
        if (lstat(f, &st) != 0 || !S_ISREG(st.st_mode))
            return 0;
    }
    snprintf(to, sizeof to, "%s", gr6_path(name));
    snprintf(mark, sizeof mark, "%s.run", to);
    remove_tree(to);
    if (dl_mkdir_p(to) != DL_OK)
        return 0;
    snprintf(to + strlen(to), sizeof to - strlen(to), "/dump");
    if (rename(from, to) != 0)
        return 0;
    FILE *f = fopen(mark, "w");
    if (f == NULL)
        return 0;
    fprintf(f, "%d %.0f %.0f\n", a.rc, a.rss, a.judge_rss);
    return fclose(f) == 0;
}

void gr6_run_selftest(const char *name, int P, const char *half)
{
    // a few thousand floats a case: ranks that wait for each other 10 s are stuck (a start that waits for its peers)
    gr_set_watchdog(10);
    int done = from_all(name, P, half);
    gr6_result r = {0, 0, 0};
    if (!done) {
        char args[300];
        snprintf(args, sizeof args, "--selftest %s --dump %%D", half);
        r = gr6_run(name, P, args);
    }
    gr_set_watchdog(0);
    if (done || r.rc == 0)
        return;
    char *text = gr6_log(name);
    const char *line = strstr(text, "timed out after");
    if (strcmp(half, "start") == 0 && line != NULL && strstr(text, "not implemented yet") == NULL) {
        const char *b = line;
        while (b > text && b[-1] != '\n')
            b--;
        GR_FAIL(GR_DIAG("start-waits") "the self-test of task 4 hung (exit %d): rank 0 started an all-gather and a "
                                       "reduce-scatter before the other ranks started anything, and one of its "
                                       "starts never returned: it waited for its peers. A start posts its P - 1 "
                                       "exchanges with dl_comm_isendrecv and returns; only shard_wait waits. "
                                       "The watchdog said: %.*s",
                r.rc, (int)strcspn(b, "\n"), b);
    }
    free(text);
    gr6_fail_run(name, &r);
}

// ---- memory, measured from outside ----

int gr6_mem_sizes(size_t *sizes)
{
    int n = 0;
    sizes[n++] = 784;
    for (const char *h = G6M_HIDDEN; *h && n < 7;) {
        char *end;
        sizes[n++] = strtoul(h, &end, 10);
        h = *end == ',' ? end + 1 : end;
    }
    sizes[n++] = 10;
    return n;
}

gr6_result gr6_mem_run(const char *mode)
{
    char name[32], args[600];
    snprintf(name, sizeof name, "mem-%s", mode);
    snprintf(args, sizeof args,
             "--mode %s --data %s --val-rows %d --hidden %s --batch-size %d --max-steps %d --epochs 1 --lr %g "
             "--seed %d --dump %%D",
             mode, G6M_DATA, G6M_VAL, G6M_HIDDEN, G6M_BATCH, G6M_STEPS, G6_LR, G6_SEED);
    gr6_result r = gr6_run(name, G6M_P, args);
    // no item reads the memory workload's parameters (20 MB a rank): they leave the judge's folder, which the
    // grading holds in memory where it can (sandbox.h)
    for (int k = 0; k < G6M_P; k++) {
        char f[64];
        snprintf(f, sizeof f, "%s/dump/params.%d.npy", name, k);
        remove(gr6_path(f));
    }
    if (r.rc != 0)
        gr6_fail_run(name, &r);
    return r;
}

int gr6_rss_restartable(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    ssize_t k = fd >= 0 ? write(fd, "5", 1) : -1;
    if (fd >= 0)
        close(fd);
    return k == 1;
}

// ---- what the runs dumped ----

float *gr6_dumped(const char *name, const char *file, size_t *n)
{
    char f[400];
    snprintf(f, sizeof f, "%s/dump/%s", name, file);
    dl_npy a;
    if (dl_npy_read(gr6_path(f), &a) != DL_OK)
        GR_FAIL("cannot read %s: %s", gr6_path(f), dl_last_error());
    *n = a.shape[0] * a.shape[1];
    return a.data;
}

void gr6_layout_get(const char *name, int P, const char *of, size_t n, gr6_layout *L)
{
    if (P < 1 || P > GR6_MAX_P)
        GR_FAIL("gr6_layout_get: %d ranks", P);
    *L = (gr6_layout){.n = n, .P = P};
    for (int r = 0; r < P; r++) {
        char file[400];
        snprintf(file, sizeof file, "%s/dump/layout.%d.csv", name, r);
        gr_csv t;
        gr_csv_load(&t, gr6_path(file));
        int c_of = gr_csv_col(&t, kit_layout_names[KIT_O_OF]), c_n = gr_csv_col(&t, kit_layout_names[KIT_O_N]);
        int c_s = gr_csv_col(&t, kit_layout_names[KIT_O_SHARD]), c_off = gr_csv_col(&t, kit_layout_names[KIT_O_OFFSET]);
        int c_cnt = gr_csv_col(&t, kit_layout_names[KIT_O_COUNT]), seen = 0, bad = -1;
        size_t off[GR6_MAX_P + 1] = {0}, cnt[GR6_MAX_P + 1] = {0};
        for (size_t k = 0; k < t.nrows; k++) {
            double s = gr_csv_num(&t, k, c_s);
            if (strcmp(gr_csv_str(&t, k, c_of), of) != 0 || gr_csv_num(&t, k, c_n) != (double)n || s < 0 || s > P)
                continue;
            off[(int)s] = (size_t)gr_csv_num(&t, k, c_off);
            cnt[(int)s] = (size_t)gr_csv_num(&t, k, c_cnt);
            seen |= 1 << (int)s;
        }
        gr_csv_free(&t);
        if (seen != (1 << (P + 1)) - 1)
            GR_FAIL("the run '%s' holds no complete record of rank %d's shards of %s (n = %zu over %d ranks)", name, r,
                    of, n, P);
        for (int s = 0; s < P && bad < 0; s++)
            if (off[s + 1] < off[s] || cnt[s] != off[s + 1] - off[s])
                bad = s;
        if (bad >= 0 || off[0] != 0 || off[P] != n)
            GR_FAIL("your shard_offset and shard_count do not cut n = %zu into %d contiguous shards in rank order "
                    "(rank %d's: shard %d starts at %zu and holds %zu, the next starts at %zu; shard_offset(n, P, P) "
                    "is %zu, n expected): task 1 must hold first (the shards item)",
                    n, P, r, bad >= 0 ? bad : 0, off[bad >= 0 ? bad : 0], cnt[bad >= 0 ? bad : 0],
                    off[bad >= 0 ? bad + 1 : 1], off[P]);
        for (int s = 0; s <= P; s++) {
            if (r > 0 && off[s] != L->off[s])
                GR_FAIL("ranks 0 and %d cut n = %zu differently (shard %d starts at %zu on one, %zu on the other): "
                        "shard_offset must depend on (n, P, s) alone",
                        r, n, s, L->off[s], off[s]);
            L->off[s] = off[s];
        }
    }
    for (int s = 0; s < P; s++) {
        size_t lo;
        gr6_shard(n, P, s, &lo);
        L->own |= lo != L->off[s];
    }
}

int gr6_layout_usable(const gr6_layout *L)
{
    size_t lo, first = gr6_layout_shard(L, 0, &lo), ceil = (L->n + (size_t)L->P - 1) / (size_t)L->P;
    for (int s = 1; s < L->P; s++)
        if (gr6_layout_shard(L, s, &lo) > first)
            return !L->own;
    return !L->own || first <= ceil;
}

size_t gr6_layout_shard(const gr6_layout *L, int s, size_t *lo)
{
    *lo = L->off[s];
    return L->off[s + 1] - L->off[s];
}

gr6_rec *gr6_read_log(const char *name, int r, size_t *n)
{
    char file[400];
    snprintf(file, sizeof file, "%s/dump/comm.%d.csv", name, r);
    const char *path = gr6_path(file);
    if (access(path, R_OK) != 0)
        GR_FAIL("the driver run '%s' left no transport log for rank %d", name, r);
    gr_csv t;
    gr_csv_load(&t, path);
    int c_op = gr_csv_col(&t, kit_commlog_names[KIT_C_OP]), c_count = gr_csv_col(&t, kit_commlog_names[KIT_C_COUNT]);
    int c_dtype = gr_csv_col(&t, kit_commlog_names[KIT_C_DTYPE]);
    int c_phase = gr_csv_col(&t, kit_commlog_names[KIT_C_PHASE]),
        c_id = gr_csv_col(&t, kit_commlog_names[KIT_C_PHASE_ID]);
    gr6_rec *v = calloc(t.nrows > 0 ? t.nrows : 1, sizeof *v);
    for (size_t k = 0; k < t.nrows; k++) {
        snprintf(v[k].op, sizeof v[k].op, "%s", gr_csv_str(&t, k, c_op));
        snprintf(v[k].dtype, sizeof v[k].dtype, "%s", gr_csv_str(&t, k, c_dtype));
        snprintf(v[k].phase, sizeof v[k].phase, "%s", gr_csv_str(&t, k, c_phase));
        v[k].count = (size_t)gr_csv_num(&t, k, c_count);
        v[k].id = (long)gr_csv_num(&t, k, c_id);
    }
    *n = t.nrows;
    gr_csv_free(&t);
    return v;
}

/* Bytes per element of the dtype named t ("f32"), 0 if unknown. */
static size_t dtype_bytes(const char *t)
{
    for (int k = 0; k < DL_DTYPE_COUNT; k++)
        if (strcmp(t, dl_dtype_name((dl_dtype)k)) == 0)
            return dl_dtype_size((dl_dtype)k);
    return 0;
}

size_t gr6_phase_traffic(const gr6_rec *log, size_t n, const char *phase, long id, double *bytes, long *messages,
                         char *other, size_t other_len)
{
    size_t found = 0;
    *bytes = 0, *messages = 0, other[0] = '\0';
    for (size_t k = 0; k < n; k++) {
        if (strcmp(log[k].phase, phase) != 0 || log[k].id != id)
            continue;
        found++;
        if (strcmp(log[k].op, dl_comm_op_name(DL_OP_SENDRECV)) != 0) {
            if (other[0] == '\0')
                snprintf(other, other_len, "%s", log[k].op);
            continue;
        }
        *bytes += (double)(log[k].count * dtype_bytes(log[k].dtype));
        *messages += log[k].count > 0;
    }
    return found;
}

long gr6_reduce_scatter_messages(const gr6_layout *L, int r)
{
    int P = L->P;
    long m = 0;
    for (int k = 0; k < P - 1; k++) {
        size_t lo, count = gr6_layout_shard(L, ((r - 1 - k) % P + P) % P, &lo);
        m += (long)((count + SHARD_CHUNK - 1) / SHARD_CHUNK);
    }
    return m;
}
