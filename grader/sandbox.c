/* sandbox.c — containment for the student's code. See sandbox.h for the contract.
 *
 * The job's process tree, in ns mode:
 *   judge ── relay (unshares user?, pid, mount, ipc) ── init (pid 1) ── the job
 * The relay stays outside the new PID namespace and passes init's pid up.
 * init is trusted code (no exec): it builds the job's root on a tmpfs, moves
 * into it (pivot_root), starts the job, watches its budgets, and when the job
 * is over kills what is left, copies back what the job may keep, reports
 * through a pipe and exits, which makes the kernel kill whatever remains. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <dirent.h> // opendir, readdir
#include <errno.h> // errno
#include <fcntl.h> // open, openat
#include <grp.h> // setgroups
#include <limits.h> // PATH_MAX
#include <linux/capability.h> // struct __user_cap_*, _LINUX_CAPABILITY_VERSION_3
#include <poll.h> // poll
#include <sched.h> // unshare, CLONE_NEW*
#include <signal.h> // kill, SIGKILL, sigtimedwait
#include <stdio.h> // snprintf
#include <stdlib.h> // getenv, malloc
#include <string.h> // strcmp, strsignal
#include <sys/file.h> // flock
#include <sys/mount.h> // mount, umount2
#include <sys/prctl.h> // prctl
#include <sys/resource.h> // setrlimit
#include <sys/stat.h> // mkdir, stat
#include <sys/statfs.h> // statfs
#include <sys/statvfs.h> // statvfs, ST_*
#include <sys/syscall.h> // SYS_capset, SYS_pivot_root
#include <sys/wait.h> // waitpid
#include <time.h> // clock_gettime, nanosleep
#include <unistd.h> // fork, execve

#include "dl/fs.h" // dl_home, dl_mkdir_p

extern char **environ;

enum { SB_NS, SB_UID, SB_PGROUP };
static const char *mode_names[] = {"ns", "uid", "pgroup"};

/* What stopped a job past a budget. */
enum { OVER_NONE, OVER_MEMORY, OVER_PROCS, OVER_JOB_DISK, OVER_DISK, OVER_FILES };

static struct {
    int mode;
    int userns; /* ns mode entered through a user namespace (not root) */
    int drop; /* jobs run as uid/gid (the grader is root) */
    int stage; /* jobs run copies of the programs and the kit's files (in the run directory) */
    int stripped; /* staged programs lose their symbol tables */
    uid_t uid;
    gid_t gid;
    int lock_fd;
    char run[256];
    char root[300]; /* where init builds a job's root (ns mode) */
    char home[400];
    char desc[900];
    int ready;
    int run_tmpfs; /* the run directory is a tmpfs of the judge's own mount namespace */
    char hide[8][PATH_MAX]; /* directories a job sees empty (ns mode) */
    int n_hide;
    size_t mem_cpu, mem_gpu; /* budgets (sandbox.h) */
    size_t job_disk, disk;
    int nproc;
} sb = {.lock_fd = -1};

/* Per spawn, set by the judge before the fork (init and the job read copies). */
static struct {
    size_t copy_left; /* bytes the grading may still keep */
    size_t used; /* bytes it kept before this job */
} spawn;

/* What init tells the judge at the end (one write: atomic on a pipe). */
typedef struct ns_report {
    int ok; /* the root was built and the job started */
    char why[64]; /* what could not be built, and errno's text */
    int status; /* the job's wait status */
    int over; /* OVER_* */
    unsigned long long amount; /* what went over */
} ns_report;

// ---- small helpers ----

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000000L};
    nanosleep(&t, NULL);
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void human_bytes(size_t b, char *out, size_t len)
{
    if (b >= ((size_t)1 << 30) && b % ((size_t)1 << 30) == 0)
        snprintf(out, len, "%zu GiB", b >> 30);
    else if (b >= ((size_t)1 << 30))
        snprintf(out, len, "%.2f GiB", (double)b / (double)((size_t)1 << 30));
    else if (b >= ((size_t)1 << 20))
        snprintf(out, len, "%zu MiB", b >> 20);
    else
        snprintf(out, len, "%zu KiB", b >> 10);
}

/* A budget's value: a number of bytes with an optional K, M or G suffix (or a
 * plain count, units = 0). Exits 2 naming the variable on anything else. */
static size_t budget_env(const char *name, size_t fallback, int units)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return fallback;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    size_t scale = 1;
    if (units && (*end == 'K' || *end == 'k'))
        scale = (size_t)1 << 10, end++;
    else if (units && (*end == 'M' || *end == 'm'))
        scale = (size_t)1 << 20, end++;
    else if (units && (*end == 'G' || *end == 'g'))
        scale = (size_t)1 << 30, end++;
    if (errno != 0 || end == v || *end != '\0' || n == 0 || n > ((size_t)1 << 50) / scale) {
        fprintf(stderr, "grader: error: %s='%s': expected a positive %s\n", name, v,
                units ? "number of bytes, with K, M or G after it (e.g. 512M)" : "whole number");
        exit(2);
    }
    return (size_t)n * scale;
}

/* A process's resident memory that is its own (anonymous and shared memory,
 * in bytes), its state, its real uid and its threads, from /proc/PID/status;
 * -1 when gone. */
static int proc_status(const char *pid, size_t *rss, char *state, uid_t *uid, int *threads)
{
    char path[300], buf[4096];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0)
        return -1;
    buf[k] = '\0';
    *rss = 0;
    *state = '?';
    *uid = (uid_t)-1;
    *threads = 1;
    for (char *p = buf; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        unsigned long long v;
        if (strncmp(p, "State:", 6) == 0)
            *state = p[6 + strspn(p + 6, " \t")];
        else if (strncmp(p, "Uid:", 4) == 0 && sscanf(p + 4, "%llu", &v) == 1)
            *uid = (uid_t)v;
        else if (strncmp(p, "Threads:", 8) == 0 && sscanf(p + 8, "%llu", &v) == 1 && v >= 1 && v < 1u << 20)
            *threads = (int)v;
        else if ((strncmp(p, "RssAnon:", 8) == 0 || strncmp(p, "RssShmem:", 9) == 0) &&
                 sscanf(p + strcspn(p, ":") + 1, "%llu", &v) == 1)
            *rss += (size_t)v << 10;
    }
    return 0;
}

/* The session of a process (/proc/PID/stat's sixth field), or -1. */
static pid_t proc_session(const char *pid)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    const char *rp = strrchr(buf, ')');
    int ppid, pgrp, sid;
    char st;
    if (rp == NULL || sscanf(rp + 2, "%c %d %d %d", &st, &ppid, &pgrp, &sid) != 4)
        return -1;
    return (pid_t)sid;
}

/* The live tasks (processes and their threads, as RLIMIT_NPROC counts them)
 * of a job and their resident memory: every process but pid 1 (ns mode: this
 * namespace's /proc), those of uid (uid mode), or those of session sid
 * (pgroup mode). */
enum { SCAN_NS, SCAN_UID, SCAN_SESSION };
static int scan_processes(int how, uid_t uid, pid_t sid, size_t *rss_total)
{
    DIR *d = opendir("/proc");
    int n = 0;
    *rss_total = 0;
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (how == SCAN_NS && strcmp(e->d_name, "1") == 0)
            continue;
        // the cheap test first: the host has many processes, the job a few
        char dir[300];
        struct stat st;
        snprintf(dir, sizeof dir, "/proc/%s", e->d_name);
        if (how == SCAN_UID && (stat(dir, &st) != 0 || st.st_uid != uid))
            continue;
        if (how == SCAN_SESSION && proc_session(e->d_name) != sid)
            continue;
        size_t rss;
        char state;
        uid_t u;
        int threads;
        if (proc_status(e->d_name, &rss, &state, &u, &threads) != 0 || state == 'Z' || state == 'X')
            continue;
        n += threads;
        *rss_total += rss;
    }
    closedir(d);
    return n;
}

/* Live (not zombie) tasks of uid: RLIMIT_NPROC counts them all. */
static int user_processes(uid_t uid)
{
    size_t rss;
    return scan_processes(SCAN_UID, uid, 0, &rss);
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[1 << 16];
    ssize_t k;
    int rc = 0;
    while ((k = read(in, buf, sizeof buf)) > 0) {
        if (write(out, buf, (size_t)k) != k) {
            rc = -1;
            break;
        }
    }
    if (k < 0)
        rc = -1;
    close(in);
    if (fchmod(out, mode) != 0)
        rc = -1;
    close(out);
    return rc;
}

/* Copies the tree src into dst (both paths); regular files and directories only. */
static void copy_tree_paths(const char *src, const char *dst, int depth)
{
    DIR *d = opendir(src);
    if (d == NULL || depth > 8)
        goto out;
    mkdir(dst, 0755);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || e->d_name[0] == '.')
            continue;
        char s[1024], t[1024];
        snprintf(s, sizeof s, "%s/%s", src, e->d_name);
        snprintf(t, sizeof t, "%s/%s", dst, e->d_name);
        struct stat st;
        if (lstat(s, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            copy_tree_paths(s, t, depth + 1);
        else if (S_ISREG(st.st_mode))
            copy_file(s, t, (st.st_mode & 0111) ? 0755 : 0644);
    }
out:
    if (d != NULL)
        closedir(d);
}

/* Bytes of the regular files in the tree at dir (a descriptor, closed), no
 * link followed; *entries counts what it saw (a walk stops at 100000). */
static size_t tree_bytes(int dir, int depth, long *entries)
{
    DIR *d = fdopendir(dir);
    if (d == NULL) {
        close(dir);
        return 0;
    }
    size_t total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *entries < 100000) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        ++*entries;
        struct stat st;
        if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(st.st_mode))
            total += (size_t)st.st_size;
        else if (S_ISDIR(st.st_mode) && depth < 16) {
            int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                total += tree_bytes(sub, depth + 1, entries);
        }
    }
    closedir(d);
    return total;
}

static size_t path_bytes(const char *path, long *entries)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISREG(st.st_mode)) {
        ++*entries;
        return (size_t)st.st_size;
    }
    int fd = S_ISDIR(st.st_mode) ? open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    return fd >= 0 ? tree_bytes(fd, 0, entries) : 0;
}

/* Removes name in dir (a descriptor) and, when it is a directory, what it holds. */
static void remove_at(int dir, const char *name, int depth)
{
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (S_ISDIR(st.st_mode) && depth < 32) {
        int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = sub >= 0 ? fdopendir(sub) : NULL;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                remove_at(sub, e->d_name, depth + 1);
        }
        if (d != NULL)
            closedir(d);
        else if (sub >= 0)
            close(sub);
        unlinkat(dir, name, AT_REMOVEDIR);
    } else {
        unlinkat(dir, name, 0);
    }
}

static void remove_path(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash[1] == '\0')
        return;
    *slash = '\0';
    int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        remove_at(fd, slash + 1, 0);
        close(fd);
    }
}

/* Empties the directory dir (a descriptor, kept open). */
static void empty_dir(int dir)
{
    int again = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); // its own offset: not dup's, which shares one
    DIR *d = again >= 0 ? fdopendir(again) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            remove_at(dir, e->d_name, 0);
    }
    if (d != NULL)
        closedir(d);
    else if (again >= 0)
        close(again);
}

/* What the job left in its folder (src_dir), copied into the host's (dst_dir):
 * regular files and directories, no link followed (openat with O_NOFOLLOW on
 * every component). Closes both. */
static void copy_back(int src_dir, int dst_dir, int depth)
{
    DIR *d = fdopendir(src_dir);
    if (d == NULL) {
        close(src_dir);
        close(dst_dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(src_dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 16) {
            int s = openat(src_dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            mkdirat(dst_dir, e->d_name, 0755);
            int t = openat(dst_dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (s >= 0 && t >= 0)
                copy_back(s, t, depth + 1);
            else {
                if (s >= 0)
                    close(s);
                if (t >= 0)
                    close(t);
            }
        } else if (S_ISREG(st.st_mode)) {
            int s = openat(src_dir, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            int t = openat(dst_dir, e->d_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
            char buf[1 << 16];
            ssize_t k = 0;
            while (s >= 0 && t >= 0 && (k = read(s, buf, sizeof buf)) > 0) {
                if (write(t, buf, (size_t)k) != k)
                    break;
            }
            if (s >= 0)
                close(s);
            if (t >= 0)
                close(t);
        }
    }
    closedir(d); // closes src_dir
    close(dst_dir);
}

/* A job's folder as the judge keeps it (uid and pgroup modes, where the job
 * wrote in place): no links, special or hard-linked files; the judge's user
 * owns the rest. Closes dir. */
static void settle_tree(int dir, int depth)
{
    DIR *d = fdopendir(dir);
    if (d == NULL) {
        close(dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 16) {
            (void)!fchownat(dir, e->d_name, getuid(), getgid(), AT_SYMLINK_NOFOLLOW);
            (void)!fchmodat(dir, e->d_name, 0755, 0);
            int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                settle_tree(sub, depth + 1);
        } else if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
            (void)!fchownat(dir, e->d_name, getuid(), getgid(), AT_SYMLINK_NOFOLLOW);
            (void)!fchmodat(dir, e->d_name, 0644, 0);
        } else {
            remove_at(dir, e->d_name, 0);
        }
    }
    closedir(d);
}

// ---- the job's own process ----

/* No capabilities, now or after exec: a job that is root in its user namespace
 * (the grader is not root) could otherwise unmount what its root is made of. */
static void drop_capabilities(void)
{
    for (int cap = 0; cap < 64; cap++)
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0); // fails harmlessly when there is nothing to drop
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    syscall(SYS_capset, &h, d);
}

/* uid and pgroup modes: the job's TMPDIR, a folder of the run directory made
 * for it and removed after it (counted in its own disk, not the grading's). */
static char job_tmp[400];

/* Whether an environment entry of the grader's reaches the job (sandbox.h). */
static int env_allowed(const char *e)
{
    static const char *const exact[] = {"PATH=", "LANG=", "TZ=", "CUDA_VISIBLE_DEVICES="};
    static const char *const prefix[] = {"LC_", "DL_", "OMPI_", "PMIX_", "PRTE_", "CK_", "OPENBLAS_", "OMP_", "NCCL_"};
    if (strncmp(e, "DL_HOME=", 8) == 0)
        return 0; // the job's own
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strncmp(e, exact[i], strlen(exact[i])) == 0)
            return 1;
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (strncmp(e, prefix[i], strlen(prefix[i])) == 0 && strchr(e, '=') != NULL)
            return 1;
    return 0;
}

/* Limits, descriptors, user, directory, environment, then exec. Never returns. */
static void exec_job(const gr_job *job)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); // init blocks SIGCHLD; the job starts clean
    // descriptors first, out of the way of 0..3
    int out = job->out_fd >= 0 ? fcntl(job->out_fd, F_DUPFD, 20) : open("/dev/null", O_WRONLY);
    int rec = job->rec_fd >= 0 ? fcntl(job->rec_fd, F_DUPFD, 20) : -1;
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out, 1);
    dup2(out, 2);
    if (rec >= 0)
        dup2(rec, 3);
    for (int fd = rec >= 0 ? 4 : 3; fd < 1024; fd++)
        close(fd);
    setsid();
    struct rlimit r;
    r.rlim_cur = (rlim_t)job->cpu_s;
    r.rlim_max = r.rlim_cur + 5;
    setrlimit(RLIMIT_CPU, &r);
    r.rlim_cur = r.rlim_max = (rlim_t)job->file_bytes;
    setrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = r.rlim_max = 0;
    setrlimit(RLIMIT_CORE, &r);
    if (job->mem_bytes > 0) {
        r.rlim_cur = r.rlim_max = (rlim_t)job->mem_bytes;
        setrlimit(RLIMIT_AS, &r);
    }
    if (sb.drop) {
        if (setgroups(0, NULL) != 0 || setgid(sb.gid) != 0 || setuid(sb.uid) != 0) {
            dprintf(2, "sandbox: cannot switch to uid %u: %s\n", (unsigned)sb.uid, strerror(errno));
            _exit(126);
        }
    }
    // after the switch: the limit counts the sandbox user's tasks (or, not as
    // root, this user's: all of them, so leave room for those already there);
    // one over the budget, so that a job that forks without end (which spins
    // where the kernel refuses its forks) goes over it, and the watch stops it
    r.rlim_cur = r.rlim_max = (rlim_t)(job->nproc + 1 + (sb.drop ? 0 : user_processes(getuid())));
    setrlimit(RLIMIT_NPROC, &r);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    drop_capabilities();
    if (chdir(job->workdir) != 0) {
        dprintf(2, "sandbox: cannot enter %s: %s\n", job->workdir, strerror(errno));
        _exit(126);
    }
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 8, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (env_allowed(environ[i]))
            env[k++] = environ[i];
    }
    char home[1100], tmp[1100], dlhome[500], cuda[1200];
    snprintf(home, sizeof home, "HOME=%s", job->workdir);
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", sb.mode == SB_NS ? "/tmp" : job_tmp);
    snprintf(dlhome, sizeof dlhome, "DL_HOME=%s", sb.home);
    // CUDA's JIT cache (~/.nv by default): not in the run folder the judge keeps
    snprintf(cuda, sizeof cuda, "CUDA_CACHE_PATH=%s/.nv-cache", sb.mode == SB_NS ? "/tmp" : job_tmp);
    env[k++] = home;
    env[k++] = tmp;
    env[k++] = dlhome;
    env[k++] = cuda;
    env[k] = NULL;
    execve(job->argv[0], job->argv, env);
    dprintf(2, "sandbox: cannot run %s: %s\n", job->argv[0], strerror(errno));
    _exit(127);
}

// ---- ns mode: the job's root ----

/* mkdir -p of an absolute path. */
static int mkdirs(const char *path, mode_t mode)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, mode) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    }
    return mkdir(p, mode) != 0 && errno != EEXIST ? -1 : 0;
}

/* path inside the root being built. */
static const char *in_root(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s%.3700s", sb.root, path);
    return buf;
}

static int mount_tmpfs(const char *where, size_t bytes, const char *mode, int job_owned)
{
    char opts[200];
    unsigned owner = job_owned && sb.drop ? (unsigned)sb.uid : 0u;
    snprintf(opts, sizeof opts, "size=%zu,mode=%s,uid=%u,gid=%u", bytes, mode, owner,
             job_owned && sb.drop ? (unsigned)sb.gid : 0u);
    return mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

/* Binds src at dst (which exists), read-only; the flags the source mount has
 * (and that a user namespace may not clear) are kept. */
static int bind_ro(const char *src, const char *dst, int rec)
{
    if (mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) != 0)
        return -1;
    struct statvfs v;
    unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID;
    if (statvfs(dst, &v) == 0) {
        fl |= (v.f_flag & ST_NODEV ? MS_NODEV : 0) | (v.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) |
              (v.f_flag & ST_NOATIME ? MS_NOATIME : 0) | (v.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) |
              (v.f_flag & ST_RELATIME ? MS_RELATIME : 0);
    }
    return mount(NULL, dst, NULL, fl, NULL);
}

/* The host's src in the root at the same path: a link as a link, a directory
 * bound read-only, a file bound read-only (or, with dev, a device bound as
 * it is). Missing: nothing. */
static int show(const char *src, int dev)
{
    char dst[PATH_MAX];
    struct stat st;
    in_root(src, dst, sizeof dst);
    if (lstat(src, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t k = readlink(src, target, sizeof target - 1);
        if (k <= 0)
            return 0;
        target[k] = '\0';
        return symlink(target, dst) == 0 || errno == EEXIST ? 0 : -1;
    }
    if (S_ISDIR(st.st_mode))
        return mkdirs(dst, 0755) == 0 && bind_ro(src, dst, 1) == 0 ? 0 : -1;
    int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    if (dev)
        return mount(src, dst, NULL, MS_BIND, NULL);
    return bind_ro(src, dst, 0);
}

/* passwd and group for the job: root, its user (as root: the sandbox user), nobody. */
static int make_users(void)
{
    char buf[PATH_MAX], user[160] = "", group[80] = "", text[600];
    if (sb.drop) {
        snprintf(user, sizeof user, "ddplab:x:%u:%u:ddplab sandbox:/tmp:/usr/sbin/nologin\n", (unsigned)sb.uid,
                 (unsigned)sb.gid);
        snprintf(group, sizeof group, "ddplab:x:%u:\n", (unsigned)sb.gid);
    }
    snprintf(text, sizeof text,
             "root:x:0:0:root:/root:/bin/sh\n%snobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", user);
    if (write_file(in_root("/etc/passwd", buf, sizeof buf), text) != 0)
        return -1;
    snprintf(text, sizeof text, "root:x:0:\n%snogroup:x:65534:\n", group);
    return write_file(in_root("/etc/group", buf, sizeof buf), text);
}

/* Whether path lies in one of the system directories the root shows. */
static int in_system_dir(const char *path)
{
    static const char *const sys[] = {"/usr/", "/bin/", "/sbin/", "/lib", "/etc/", "/opt/nvidia/"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (strncmp(path, sys[i], strlen(sys[i])) == 0)
            return 1;
    return 0;
}

/* Whether name is the job's own entry of share: its workdir or one of its outs. */
static int own_entry(const gr_job *job, const char *wname, const char *name)
{
    if (wname != NULL && strcmp(name, wname) == 0)
        return 1;
    for (int i = 0; i < GR_JOB_OUTS && job->outs[i] != NULL; i++)
        if (strcmp(job->outs[i], name) == 0)
            return 1;
    return 0;
}

/* The job's folders in the root: share as a tmpfs the job owns, showing the
 * host's other entries read-only, with workdir made in it; or workdir alone
 * as such a tmpfs. */
static int make_folders(const gr_job *job, const char *wname)
{
    char dst[PATH_MAX];
    if (job->share == NULL) {
        in_root(job->workdir, dst, sizeof dst);
        return mkdirs(dst, 0755) == 0 && mount_tmpfs(dst, job->disk_bytes, "0755", 1) == 0 ? 0 : -1;
    }
    in_root(job->share, dst, sizeof dst);
    if (mkdirs(dst, 0755) != 0 || mount_tmpfs(dst, job->disk_bytes, "0755", 1) != 0)
        return -1;
    DIR *d = opendir(job->share);
    struct dirent *e;
    int ok = d != NULL;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
            continue;
        if (own_entry(job, wname, e->d_name))
            continue;
        char src[PATH_MAX], at[PATH_MAX];
        struct stat st;
        snprintf(src, sizeof src, "%s/%s", job->share, e->d_name);
        snprintf(at, sizeof at, "%.3800s/%s", dst, e->d_name);
        if (lstat(src, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            ok = mkdir(at, 0755) == 0 && bind_ro(src, at, 0) == 0;
        else if (S_ISREG(st.st_mode)) {
            int fd = open(at, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            ok = fd >= 0 && close(fd) == 0 && bind_ro(src, at, 0) == 0;
        }
    }
    if (d != NULL)
        closedir(d);
    in_root(job->workdir, dst, sizeof dst);
    return ok && mkdir(dst, 0755) == 0 && (!sb.drop || chown(dst, sb.uid, sb.gid) == 0) ? 0 : -1;
}

static const char *root_step = "";
static int own_proc; /* the job's /proc is its namespace's own (not the host's, bound) */

/* Builds the job's root at sb.root and moves into it. job->workdir NULL: the
 * probe (no folders). Returns 0, or -1 when something could not be made. */
static int build_root(const gr_job *job, const char *wname)
{
    char buf[PATH_MAX], src[PATH_MAX];
    root_step = "the root's tmpfs";
    if (mount("tmpfs", sb.root, "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0755") != 0)
        return -1;
    root_step = "/usr, /bin, /lib*";
    // the system's programs and libraries, links as links
    static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/nvidia"};
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (show(sys[i], 0) != 0)
            return -1;
    // what a program reads of /etc: the loader's cache, names, MPI's settings
    static const char *const etc[] = {
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf", "/etc/hosts",
        "/etc/host.conf",   "/etc/localtime",  "/etc/protocols",    "/etc/services",      "/etc/alternatives",
        "/etc/openmpi",     "/etc/pmix",       "/etc/prte"};
    root_step = "/etc";
    if (mkdir(in_root("/etc", buf, sizeof buf), 0755) != 0 || make_users() != 0)
        return -1;
    for (size_t i = 0; i < sizeof etc / sizeof etc[0]; i++)
        if (show(etc[i], 0) != 0)
            return -1;
    root_step = "/proc";
    // its own processes; the hardware's description (MPI's hwloc, CUDA, NCCL)
    in_root("/proc", buf, sizeof buf);
    if (mkdir(buf, 0555) != 0)
        return -1;
    // hidepid: a job running as the sandbox user does not see init (a copy of the judge: its command line)
    own_proc = mount("proc", buf, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2") == 0 ||
               mount("proc", buf, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
    if (!own_proc && mount("/proc", buf, NULL, MS_BIND | MS_REC, NULL) != 0)
        return -1; // (the host's: the watchdog cannot tell the job's processes there)
    root_step = "/sys";
    if (show("/sys", 0) != 0)
        return -1;
    root_step = "/dev";
    // /dev: the basic devices and the GPUs', its own shared memory
    in_root("/dev", buf, sizeof buf);
    if (mkdir(buf, 0755) != 0 || mount("tmpfs", buf, "tmpfs", MS_NOSUID, "size=64k,mode=0755") != 0)
        return -1;
    static const char *const devs[] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                       "/dev/random", "/dev/urandom", "/dev/tty"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        if (show(devs[i], 1) != 0)
            return -1;
    DIR *d = opendir("/dev");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "nvidia", 6) == 0) {
            snprintf(src, sizeof src, "/dev/%s", e->d_name);
            struct stat st;
            if (lstat(src, &st) == 0 && S_ISDIR(st.st_mode)) {
                mkdir(in_root(src, buf, sizeof buf), 0755);
                mount(src, buf, NULL, MS_BIND | MS_REC, NULL);
            } else {
                show(src, 1);
            }
        }
    }
    if (d != NULL)
        closedir(d);
    static const char *const links[][2] = {{"/proc/self/fd", "/dev/fd"},
                                           {"/proc/self/fd/0", "/dev/stdin"},
                                           {"/proc/self/fd/1", "/dev/stdout"},
                                           {"/proc/self/fd/2", "/dev/stderr"}};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (symlink(links[i][0], in_root(links[i][1], buf, sizeof buf)) != 0)
            return -1;
    root_step = "/tmp, /var/tmp, /dev/shm";
    size_t tmp_bytes = job->disk_bytes;
    static const char *const tmps[] = {"/dev/shm", "/tmp", "/var/tmp"};
    for (size_t i = 0; i < sizeof tmps / sizeof tmps[0]; i++) {
        in_root(tmps[i], buf, sizeof buf);
        if (mkdirs(buf, 0755) != 0 || mount_tmpfs(buf, tmp_bytes, "1777", 0) != 0)
            return -1;
    }
    root_step = "DL_DATA_DIR";
    // the data the instructor points the kit at, the staged kit, the job's folders
    const char *data = getenv("DL_DATA_DIR");
    struct stat st;
    if (data != NULL && data[0] == '/' && realpath(data, src) != NULL && stat(src, &st) == 0 && S_ISDIR(st.st_mode) &&
        !(mkdirs(in_root(src, buf, sizeof buf), 0755) == 0 && bind_ro(src, buf, 1) == 0))
        return -1;
    root_step = "the staged kit";
    snprintf(src, sizeof src, "%s/stage", sb.run);
    if (mkdirs(in_root(src, buf, sizeof buf), 0755) != 0 || bind_ro(src, buf, 0) != 0)
        return -1;
    root_step = "the job's folders";
    if (job->workdir != NULL && make_folders(job, wname) != 0)
        return -1;
    root_step = "hidden directories";
    // what the judge hides and the views above would show (a kit under /usr/local)
    for (int i = 0; i < sb.n_hide; i++) {
        if (in_system_dir(sb.hide[i]) && stat(in_root(sb.hide[i], buf, sizeof buf), &st) == 0 && S_ISDIR(st.st_mode) &&
            mount("tmpfs", buf, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755") != 0)
            return -1;
    }
    root_step = "pivot_root";
    // in: the host's root goes, and the new one's own tmpfs (and /dev's) become read-only
    if (chdir(sb.root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 ||
        chdir("/") != 0)
        return -1;
    root_step = "read-only root";
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0 ||
        mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) != 0)
        return -1;
    return 0;
}

// ---- ns mode: watching the job ----

/* Bytes used in a tmpfs the job writes. */
static size_t fs_used(const char *path)
{
    struct statfs f;
    if (path == NULL || statfs(path, &f) != 0)
        return 0;
    return (size_t)(f.f_blocks - f.f_bfree) * (size_t)f.f_bsize;
}

/* Bytes in the host's file behind a descriptor the job writes (its log, its record). */
static size_t fd_bytes(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
}

/* What a job adds to the grading's disk now: its log and record, and what it
 * keeps (ns mode: its folder's tmpfs, which holds what it keeps). */
static size_t kept_now(const gr_job *job)
{
    size_t b = fd_bytes(job->out_fd) + (job->rec_fd != job->out_fd ? fd_bytes(job->rec_fd) : 0);
    return b + (job->keep ? fs_used(job->share != NULL ? job->share : job->workdir) : 0);
}

/* Whether the job (everything in this namespace but init) is over a budget
 * now: memory, processes, the bytes its folders hold, what it would add to
 * the grading's disk. */
static int over_budget(const gr_job *job, unsigned long long *amount)
{
    size_t rss = 0;
    int n = own_proc ? scan_processes(SCAN_NS, 0, 0, &rss) : 0;
    if (job->mem_total > 0 && rss > job->mem_total) {
        *amount = rss;
        return OVER_MEMORY;
    }
    if (n > job->nproc) { // (RLIMIT_NPROC lets it go one over: a fork bomb gets there at once)
        *amount = (unsigned long long)n;
        return OVER_PROCS;
    }
    size_t disk = fs_used("/tmp") + fs_used("/var/tmp") + fs_used("/dev/shm") +
                  fs_used(job->share != NULL ? job->share : job->workdir);
    if (disk > job->disk_bytes) {
        *amount = disk;
        return OVER_JOB_DISK;
    }
    size_t kept = kept_now(job);
    if (kept > spawn.copy_left) {
        *amount = kept;
        return OVER_DISK;
    }
    return OVER_NONE;
}

/* What the job leaves for the host (ns mode, in the job's root): its workdir
 * and outs, if they fit what is left of the grading's disk budget. */
static void keep_files(const gr_job *job, int host_work, int host_share, ns_report *rep)
{
    long entries = 0;
    size_t bytes = path_bytes(job->workdir, &entries) + fd_bytes(job->out_fd) + fd_bytes(job->rec_fd);
    for (int i = 0; job->share != NULL && i < GR_JOB_OUTS && job->outs[i] != NULL; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", job->share, job->outs[i]);
        bytes += path_bytes(p, &entries);
    }
    if (entries >= 100000 || bytes > spawn.copy_left) {
        rep->over = entries >= 100000 ? OVER_FILES : OVER_DISK;
        rep->amount = entries >= 100000 ? (unsigned long long)entries : bytes;
        return;
    }
    int src = open(job->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dst = dup(host_work);
    if (src >= 0 && dst >= 0)
        copy_back(src, dst, 0);
    else {
        if (src >= 0)
            close(src);
        if (dst >= 0)
            close(dst);
    }
    int at = job->share != NULL ? open(job->share, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    for (int i = 0; at >= 0 && i < GR_JOB_OUTS && job->outs[i] != NULL; i++) {
        struct stat st;
        if (fstatat(at, job->outs[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        int s = openat(at, job->outs[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        int t = openat(host_share, job->outs[i], O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        char buf[1 << 16];
        ssize_t k;
        while (s >= 0 && t >= 0 && (k = read(s, buf, sizeof buf)) > 0)
            if (write(t, buf, (size_t)k) != k)
                break;
        if (s >= 0)
            close(s);
        if (t >= 0)
            close(t);
    }
    if (at >= 0)
        close(at);
}

/* pid 1 of the job's namespace. Reports on status_fd. */
static void ns_init(const gr_job *job, int status_fd, int probe)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    ns_report rep;
    memset(&rep, 0, sizeof rep);
    rep.status = -1;
    const char *wname = NULL;
    if (job->workdir != NULL && job->share != NULL) {
        wname = strrchr(job->workdir, '/');
        wname = wname != NULL ? wname + 1 : job->workdir;
    }
    // the host's folders the job's files go back to, opened before the host's root goes
    int host_work = job->workdir != NULL ? open(job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int host_share = job->share != NULL ? open(job->share, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int ok = chdir("/") == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 && build_root(job, wname) == 0;
    if (probe || !ok) {
        rep.ok = ok;
        if (!ok)
            snprintf(rep.why, sizeof rep.why, "%s: %s", root_step, strerror(errno));
        (void)!write(status_fd, &rep, sizeof rep);
        _exit(ok ? 0 : 1);
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    pid_t pid = fork();
    if (pid == 0)
        exec_job(job);
    rep.ok = pid > 0;
    int w, done = pid <= 0;
    pid_t got;
    while (!done) {
        while ((got = waitpid(-1, &w, WNOHANG)) > 0) {
            if (got == pid) {
                rep.status = w;
                done = 1;
            }
        }
        if (done || got < 0)
            break;
        rep.over = over_budget(job, &rep.amount);
        if (rep.over != OVER_NONE)
            break;
        struct timespec tick = {0, 25 * 1000 * 1000};
        sigtimedwait(&chld, NULL, &tick);
    }
    // the job is over (or stopped): everything it left goes, then its files come back
    for (int k = 0; k < 100 && kill(-1, SIGKILL) == 0; k++)
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    while ((got = waitpid(-1, &w, 0)) > 0)
        if (got == pid && !done)
            rep.status = w;
    if (rep.over == OVER_NONE && job->keep && host_work >= 0)
        keep_files(job, host_work, host_share, &rep);
    (void)!write(status_fd, &rep, sizeof rep);
    _exit(0);
}

static void ns_relay(const gr_job *job, int status_fd, int probe)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | (sb.userns ? CLONE_NEWUSER : 0);
    int fail = -1;
    if (unshare(flags) != 0) {
        (void)!write(status_fd, &fail, sizeof fail);
        _exit(1);
    }
    if (sb.userns) {
        char map[64];
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
        int a = write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
        if (a != 0 || write_file("/proc/self/gid_map", map) != 0) {
            (void)!write(status_fd, &fail, sizeof fail);
            _exit(1);
        }
    }
    pid_t pid = fork();
    if (pid == 0)
        ns_init(job, status_fd, probe);
    int p = pid > 0 ? (int)pid : -1;
    (void)!write(status_fd, &p, sizeof p);
    if (pid < 0)
        _exit(1);
    int w;
    waitpid(pid, &w, 0);
    _exit(0);
}

// ---- choosing the mode ----

static int try_ns(char *why, size_t len)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return 0;
    gr_job probe = gr_job_defaults(10, 0);
    probe.workdir = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        ns_relay(&probe, fds[1], 1);
    }
    close(fds[1]);
    int init = -1;
    ns_report rep;
    memset(&rep, 0, sizeof rep);
    ssize_t got = read(fds[0], &init, sizeof init);
    ssize_t got2 = got == (ssize_t)sizeof init && init > 0 ? read(fds[0], &rep, sizeof rep) : 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got2 == (ssize_t)sizeof rep && !rep.ok)
        snprintf(why, len, " (no namespace: %.60s)", rep.why);
    return got2 == (ssize_t)sizeof rep && rep.ok;
}

static int lock_uid(uid_t uid)
{
    char dir[64] = "/run/lock/ddplab", path[128];
    if (dl_mkdir_p(dir) != DL_OK) {
        snprintf(dir, sizeof dir, "/tmp/ddplab-locks");
        mkdir(dir, 0700);
    }
    chmod(dir, 0700);
    snprintf(path, sizeof path, "%s/uid-%u.lock", dir, (unsigned)uid);
    // a judge started by a judge (the emulated device's, grader/gpu.h) runs
    // its jobs as its parent's uid while the parent waits for it: it holds
    // the parent's lock, handed over open (gr_sandbox_lend_uid)
    const char *lent = getenv("GR_SANDBOX_LOCK_FD");
    struct stat have, want;
    if (lent != NULL && lent[0] != '\0' && stat(path, &want) == 0 && fstat(atoi(lent), &have) == 0 &&
        have.st_dev == want.st_dev && have.st_ino == want.st_ino) {
        int fd = atoi(lent);
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        unsetenv("GR_SANDBOX_LOCK_FD");
        return fd;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* In a child about to exec another judge (the emulated device's): that judge
 * runs its jobs as this one's uid, under this one's lock, while this one
 * waits for it (GR_SANDBOX_UID, and the lock's descriptor kept open across
 * exec as GR_SANDBOX_LOCK_FD). Nothing when this judge holds no uid. */
void gr_sandbox_lend_uid(void)
{
    if (sb.lock_fd < 0)
        return;
    char v[32];
    snprintf(v, sizeof v, "%u", (unsigned)sb.uid);
    setenv("GR_SANDBOX_UID", v, 1);
    snprintf(v, sizeof v, "%d", sb.lock_fd);
    setenv("GR_SANDBOX_LOCK_FD", v, 1);
    fcntl(sb.lock_fd, F_SETFD, 0);
}

static void stage_home(void)
{
    // what the drivers read through DL_HOME at run time
    static const char *parts[] = {"datasets", "common/perf", "common/bin", "common/plot"};
    char dst[700], src[1100];
    snprintf(sb.home, sizeof sb.home, "%s/stage/home", sb.run);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(src, sizeof src, "%s/%s", dl_home(), parts[i]);
        snprintf(dst, sizeof dst, "%s/%s", sb.home, parts[i]);
        dl_mkdir_p(dst);
        copy_tree_paths(src, dst, 0);
    }
    snprintf(src, sizeof src, "%s/labs", dl_home());
    DIR *d = opendir(src);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char s[1400], t[1400];
        snprintf(s, sizeof s, "%s/%s/plots", src, e->d_name);
        snprintf(t, sizeof t, "%s/labs/%s/plots", sb.home, e->d_name);
        struct stat st;
        if (stat(s, &st) == 0) {
            dl_mkdir_p(t);
            copy_tree_paths(s, t, 0);
        }
    }
    if (d != NULL)
        closedir(d);
}

void gr_sandbox_hide(const char *path)
{
    // what jobs need stays: the system's directories, and no hidden directory holds one
    static const char *keep[] = {"/usr",  "/etc", "/lib", "/lib64", "/bin", "/sbin",      "/dev",
                                 "/proc", "/sys", "/run", "/tmp",   "/var", "/opt/nvidia"};
    char real[PATH_MAX];
    struct stat st;
    if (path == NULL || path[0] == '\0' || realpath(path, real) == NULL || stat(real, &st) != 0 ||
        !S_ISDIR(st.st_mode) || strcmp(real, "/") == 0 || sb.n_hide == 8)
        return;
    size_t n = strlen(real);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        if (strncmp(keep[i], real, n) == 0 && (keep[i][n] == '\0' || keep[i][n] == '/'))
            return;
    }
    for (int i = 0; i < sb.n_hide; i++) {
        if (strcmp(sb.hide[i], real) == 0)
            return;
    }
    snprintf(sb.hide[sb.n_hide++], sizeof sb.hide[0], "%s", real);
}

void gr_sandbox_init(void)
{
    if (sb.ready)
        return;
    sb.ready = 1;
    // the budgets (sandbox.h), first: a bad value stops everything
    sb.mem_cpu = budget_env("GR_BUDGET_MEMORY", (size_t)8 << 30, 1);
    sb.mem_gpu = getenv("GR_BUDGET_MEMORY") != NULL && getenv("GR_BUDGET_MEMORY")[0] ? sb.mem_cpu : (size_t)16 << 30;
    sb.disk = budget_env("GR_BUDGET_DISK", (size_t)1 << 30, 1);
    sb.job_disk = budget_env("GR_BUDGET_JOB_DISK", (size_t)1 << 30, 1);
    sb.nproc = (int)budget_env("GR_BUDGET_PROCESSES", 256, 0);
    // the kit's tree, at the path compiled into the library and where DL_HOME
    // says; GR_HIDE adds more (a:b:c): empty in a job's view where it shows them
    gr_sandbox_hide(DL_SOURCE_DIR);
    gr_sandbox_hide(dl_home());
    const char *more = getenv("GR_HIDE");
    while (more != NULL && *more != '\0') {
        char one[PATH_MAX];
        size_t k = strcspn(more, ":");
        snprintf(one, sizeof one, "%.*s", (int)k, more);
        gr_sandbox_hide(one);
        more += k + (more[k] == ':');
    }
    const char *base = getenv("TMPDIR");
    snprintf(sb.run, sizeof sb.run, "%s/ddplab-grade-XXXXXX", base && base[0] == '/' ? base : "/tmp");
    if (mkdtemp(sb.run) == NULL) {
        snprintf(sb.run, sizeof sb.run, "/tmp/ddplab-grade-XXXXXX");
        if (mkdtemp(sb.run) == NULL) {
            fprintf(stderr, "grader: cannot create a temporary directory: %s\n", strerror(errno));
            exit(1);
        }
    }
    char real[PATH_MAX]; // a job's root shows it at the same path: no link in it
    if (realpath(sb.run, real) != NULL)
        snprintf(sb.run, sizeof sb.run, "%.250s", real);
    // as root, the run directory is a tmpfs in a mount namespace of the judge's own (private: nothing of it
    // reaches the host's, and it is gone with the judge's last process): what the jobs keep, the staged kit and
    // the judge's folders never touch the disk's file system, whose file creations cost most of a job's upkeep
    // (its size: what the grading may keep, what a job may hold in its folders, a GiB for the staged kit and the
    // judge's own files; the budgets, not this, are what stop a job)
    if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
        char opts[80];
        snprintf(opts, sizeof opts, "mode=0711,size=%zu", sb.disk + sb.job_disk + ((size_t)1 << 30));
        sb.run_tmpfs = mount("tmpfs", sb.run, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0;
    }
    chmod(sb.run, 0711);
    snprintf(sb.root, sizeof sb.root, "%s/.root", sb.run);
    mkdir(sb.root, 0700);
    char stage[400];
    snprintf(stage, sizeof stage, "%s/stage/bin", sb.run);
    dl_mkdir_p(stage);
    chmod(stage, 0755);
    snprintf(stage, sizeof stage, "%s/stage", sb.run);
    chmod(stage, 0755);
    snprintf(sb.home, sizeof sb.home, "%s", dl_home());
    const char *want = getenv("GR_SANDBOX");
    int root = geteuid() == 0;
    char note[300] = "";
    if (root) {
        const char *fixed = getenv("GR_SANDBOX_UID");
        if (fixed != NULL && fixed[0] != '\0') {
            sb.uid = (uid_t)atol(fixed);
            sb.lock_fd = lock_uid(sb.uid);
            if (sb.lock_fd < 0) {
                fprintf(stderr, "grader: GR_SANDBOX_UID=%s is in use by another grading run\n", fixed);
                exit(1);
            }
        } else {
            for (uid_t u = 61000; u < 61100 && sb.lock_fd < 0; u++) {
                sb.lock_fd = lock_uid(u);
                sb.uid = u;
            }
        }
        sb.gid = (gid_t)sb.uid;
        sb.drop = sb.lock_fd >= 0;
        if (!sb.drop)
            snprintf(note, sizeof note, " (no free sandbox uid in 61000..61099: jobs run as root)");
    }
    sb.userns = !root;
    char ns_why[100] = "";
    int ns_ok = (want == NULL || strcmp(want, "ns") == 0) && try_ns(ns_why, sizeof ns_why);
    if (!ns_ok)
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s", ns_why);
    if (ns_ok)
        sb.mode = SB_NS;
    else if (sb.drop && (want == NULL || strcmp(want, "pgroup") != 0))
        sb.mode = SB_UID;
    else
        sb.mode = SB_PGROUP;
    if (want != NULL && strcmp(want, mode_names[sb.mode]) != 0)
        snprintf(note + strlen(note), sizeof note - strlen(note), " (GR_SANDBOX=%s is not available here)", want);
    if (sb.mode == SB_PGROUP)
        sb.drop = 0; // a forced pgroup mode runs as the grader's user
    sb.stage = sb.drop || sb.mode == SB_NS; // the job's root shows the run directory's stage only
    if (sb.stage)
        stage_home();
    // strip: staged programs keep no symbol table a job could read (/proc/self/exe)
    pid_t p = fork();
    if (p == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execlp("strip", "strip", "--version", (char *)NULL);
        _exit(127);
    }
    int st = -1;
    if (p > 0)
        waitpid(p, &st, 0);
    sb.stripped = sb.stage && p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (sb.stage && !sb.stripped)
        snprintf(note + strlen(note), sizeof note - strlen(note), " (staged programs keep their symbols: no strip)");
    const char *what = sb.mode == SB_NS    ? (sb.userns ? "PID+mount+IPC+user namespace per job, a root built for it"
                                                        : "PID+mount+IPC namespace per job, a root built for it")
                       : sb.mode == SB_UID ? "own session per job, every process of the sandbox user killed at its end"
                                           : "own session per job, its process group killed at its end (weak: same "
                                             "user as the grader)";
    char m[32], d1[32], d2[32];
    human_bytes(sb.mem_cpu, m, sizeof m);
    human_bytes(sb.job_disk, d1, sizeof d1);
    human_bytes(sb.disk, d2, sizeof d2);
    snprintf(sb.desc, sizeof sb.desc,
             "%s, as uid %u%s; budgets: %s resident per job, %d processes, %s in a job's "
             "folders, %s kept per grading",
             what, sb.drop ? (unsigned)sb.uid : (unsigned)getuid(), note, m, sb.nproc, d1, d2);
}

const char *gr_sandbox_describe(void)
{
    return sb.desc;
}

const char *gr_sandbox_mode(void)
{
    return mode_names[sb.mode];
}

const char *gr_sandbox_run_dir(void)
{
    return sb.run;
}

const char *gr_sandbox_home(void)
{
    return sb.home;
}

const char *gr_stage(const char *path)
{
    static struct {
        char src[1024], dst[1100];
    } cache[16];
    static int n;
    if (!sb.stage)
        return path;
    for (int i = 0; i < n; i++) {
        if (strcmp(cache[i].src, path) == 0)
            return cache[i].dst;
    }
    if (n == 16)
        return path;
    const char *base = strrchr(path, '/');
    snprintf(cache[n].src, sizeof cache[n].src, "%s", path);
    snprintf(cache[n].dst, sizeof cache[n].dst, "%s/stage/bin/%d-%s", sb.run, n, base ? base + 1 : path);
    if (copy_file(path, cache[n].dst, 0755) != 0)
        return path; // the spawn will say it cannot run it
    if (sb.stripped) {
        fflush(stdout);
        fflush(stderr);
        pid_t p = fork();
        if (p == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execlp("strip", "strip", "--strip-all", cache[n].dst, (char *)NULL);
            _exit(127);
        }
        int st = -1;
        if (p > 0)
            waitpid(p, &st, 0);
        if (!(p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            fprintf(stderr, "grader: error: cannot strip the staged copy of %s\n", path);
            unlink(cache[n].dst);
            return path;
        }
    }
    return cache[n++].dst;
}

const char *gr_sandbox_mkdir(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", sb.run, name);
    dl_mkdir_p(out);
    chmod(out, 0711);
    return out;
}

int gr_sandbox_fresh(const char *path)
{
    size_t n = strlen(sb.run);
    if (!sb.ready || strncmp(path, sb.run, n) != 0 || path[n] != '/' || strstr(path, "/..") != NULL)
        return -1;
    if (dl_mkdir_p(path) != DL_OK)
        return -1;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    empty_dir(fd);
    int rc = 0;
    if (sb.drop && sb.mode != SB_NS) // written in place by the sandbox user
        rc = fchown(fd, sb.uid, sb.gid) != 0 || fchmod(fd, 0700) != 0 ? -1 : 0;
    else
        rc = fchmod(fd, 0755);
    close(fd);
    return rc;
}

gr_job gr_job_defaults(double timeout_s, int gpu)
{
    gr_job j;
    memset(&j, 0, sizeof j);
    j.out_fd = -1;
    j.rec_fd = -1;
    j.wall_s = timeout_s;
    j.cpu_s = 2.0 * timeout_s + 10.0; // several ranks share the cores
    j.mem_bytes = gpu ? 0 : (size_t)8 << 30;
    j.mem_total = gpu ? sb.mem_gpu : sb.mem_cpu;
#if defined(__SANITIZE_ADDRESS__)
    j.mem_bytes = 0; // ASan reserves terabytes of address space
    j.mem_total = 0; // and its shadow memory is resident
#endif
    j.file_bytes = (size_t)256 << 20;
    j.disk_bytes = sb.job_disk ? sb.job_disk : (size_t)1 << 30;
    j.nproc = sb.nproc ? sb.nproc : 256;
    j.keep = 1;
    return j;
}

// ---- ending a job ----

static void kill_uid(uid_t uid)
{
    pid_t p = fork();
    if (p == 0) {
        if (setuid(uid) != 0)
            _exit(1);
        // kill(-1) succeeds whenever any other process exists (it counts the
        // ones it may not signal), so count what is left of the user instead;
        // a fork bomb is bounded by RLIMIT_NPROC, and SIGKILLed processes cannot fork
        for (int k = 0; k < 2000; k++) {
            kill(-1, SIGKILL);
            if (user_processes(uid) <= 1) // this helper
                _exit(0);
            sleep_ms(1);
        }
        _exit(0);
    }
    if (p > 0)
        waitpid(p, NULL, 0);
}

/* pgroup mode: the job's orphans were reparented to us (the subreaper). */
static void kill_orphans(void)
{
    pid_t me = getpid();
    for (int round = 0; round < 200; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            char path[300], buf[512];
            snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            ssize_t k = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (k <= 0)
                continue;
            buf[k] = '\0';
            const char *rp = strrchr(buf, ')');
            int ppid = 0;
            char state;
            if (rp != NULL && sscanf(rp + 2, "%c %d", &state, &ppid) == 2 && ppid == me) {
                kill((pid_t)atoi(e->d_name), SIGKILL);
                found = 1;
            }
        }
        if (d != NULL)
            closedir(d);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!found)
            return;
        sleep_ms(2);
    }
}

static void describe_over(const gr_job *job, int over, unsigned long long amount, gr_fate *f)
{
    char a[32], b[32], c[32];
    human_bytes((size_t)amount, a, sizeof a);
    switch (over) {
    case OVER_MEMORY:
        human_bytes(job->mem_total, b, sizeof b);
        snprintf(f->text, sizeof f->text,
                 "was stopped: its processes held %s resident together, over the job's memory budget (%s for all "
                 "its processes; GR_BUDGET_MEMORY)",
                 a, b);
        break;
    case OVER_PROCS:
        snprintf(
            f->text, sizeof f->text,
            "was stopped: %llu processes and threads at once, over the job's process budget (%d; GR_BUDGET_PROCESSES)",
            amount, job->nproc);
        break;
    case OVER_JOB_DISK:
        human_bytes(job->disk_bytes, b, sizeof b);
        snprintf(f->text, sizeof f->text,
                 "was stopped: its folders (/tmp, /var/tmp, /dev/shm, its run folder) held %s together, over the "
                 "job's disk budget (%s in all; GR_BUDGET_JOB_DISK)",
                 a, b);
        break;
    case OVER_FILES:
        snprintf(f->text, sizeof f->text, "left %llu or more files in its folder, over the disk budget's 100000 files",
                 amount);
        break;
    default:
        human_bytes(sb.disk, b, sizeof b);
        human_bytes(spawn.used, c, sizeof c);
        snprintf(f->text, sizeof f->text,
                 "wrote %s to keep (its run folder, its log), over what is left of the grading's disk budget (%s "
                 "kept in all; %s kept before it; GR_BUDGET_DISK): it was stopped, and none of it was kept",
                 a, b, c);
        break;
    }
}

static void describe(const gr_job *job, gr_fate *f)
{
    char b[64];
    switch (f->how) {
    case GR_END_EXIT:
        snprintf(f->text, sizeof f->text, "exited (status %d)", f->code);
        break;
    case GR_END_WALL:
        snprintf(f->text, sizeof f->text, "ran past the wall-clock limit (%.0f s) and was stopped", job->wall_s);
        break;
    case GR_END_NOSTART:
        if (f->text[0] == '\0')
            snprintf(f->text, sizeof f->text, "could not be started");
        break;
    case GR_END_BUDGET:
        break; // describe_over said it
    case GR_END_SIGNAL:
        if (f->code == SIGXCPU)
            snprintf(f->text, sizeof f->text, "reached the CPU time limit (%.0f s per process; SIGXCPU)", job->cpu_s);
        else if (f->code == SIGXFSZ) {
            human_bytes(job->file_bytes, b, sizeof b);
            snprintf(f->text, sizeof f->text, "reached the file size limit (%s; SIGXFSZ)", b);
        } else if (f->code == SIGKILL)
            snprintf(f->text, sizeof f->text,
                     "was killed (SIGKILL): out of memory, past the CPU limit's hard cap, or killed by "
                     "its own code");
        else if (f->code == SIGSEGV || f->code == SIGBUS || f->code == SIGABRT) {
            human_bytes(job->mem_bytes, b, sizeof b);
            snprintf(f->text, sizeof f->text, "crashed: SIG%s (%s%s%s%s)",
                     sigabbrev_np(f->code) ? sigabbrev_np(f->code) : "?", strsignal(f->code),
                     job->mem_bytes ? "; the memory limit is " : "", job->mem_bytes ? b : "",
                     job->mem_bytes ? " per process" : "");
        } else
            snprintf(f->text, sizeof f->text, "was killed by SIG%s (%s)",
                     sigabbrev_np(f->code) ? sigabbrev_np(f->code) : "?", strsignal(f->code));
        break;
    }
}

static void set_from_status(gr_fate *f, int status)
{
    if (WIFEXITED(status)) {
        f->how = GR_END_EXIT;
        f->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        f->how = GR_END_SIGNAL;
        f->code = WTERMSIG(status);
    } else {
        f->how = GR_END_NOSTART;
    }
}

static int spawn_ns(const gr_job *job, gr_fate *f, double t0)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t relay = fork();
    if (relay == 0) {
        close(fds[0]);
        ns_relay(job, fds[1], 0);
    }
    close(fds[1]);
    if (relay < 0) {
        close(fds[0]);
        return -1;
    }
    int init = -1, got_init = 0, got_rep = 0;
    ns_report rep;
    memset(&rep, 0, sizeof rep);
    while (!got_rep) {
        double left = job->wall_s - (now_s() - t0);
        if (left <= 0)
            break;
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; // the loop re-checks the time
        if (!got_init) {
            if (read(fds[0], &init, sizeof init) != (ssize_t)sizeof init || init <= 0)
                break; // the relay died, or could not start init
            got_init = 1;
        } else {
            got_rep = read(fds[0], &rep, sizeof rep) == (ssize_t)sizeof rep;
            if (!got_rep)
                break; // init died: no report
        }
    }
    if (!got_rep) {
        // pid 1 of the namespace: all of it goes; the relay, its parent, returns
        // only once the kernel has killed and reaped the whole namespace
        if (init > 0)
            kill(init, SIGKILL);
        else
            kill(relay, SIGKILL);
    }
    close(fds[0]);
    waitpid(relay, NULL, 0);
    if (got_rep && !rep.ok) {
        f->how = GR_END_NOSTART;
        snprintf(f->text, sizeof f->text, "could not be started (its root: %.60s)", rep.why);
    } else if (got_rep && rep.over != OVER_NONE) {
        f->how = GR_END_BUDGET;
        f->code = -1;
        describe_over(job, rep.over, rep.amount, f);
    } else if (got_rep)
        set_from_status(f, rep.status);
    else if (now_s() - t0 >= job->wall_s)
        f->how = GR_END_WALL;
    else
        f->how = GR_END_NOSTART;
    return 0;
}

/* The names in dir (at most max, each under 256 bytes), for uid mode's cleanup. */
static int list_names(const char *dir, char (*names)[256], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < max)
        snprintf(names[n++], 256, "%s", e->d_name);
    if (d != NULL)
        closedir(d);
    return n;
}

/* uid and pgroup modes, after the job: share holds only what it held and the
 * job's own entries, and those hold no links; their size counts against the
 * grading's disk budget. Returns OVER_NONE or what went over. */
static int settle_plain(const gr_job *job, char (*before)[256], int n_before, unsigned long long *amount)
{
    const char *wname = job->share != NULL ? strrchr(job->workdir, '/') + 1 : NULL;
    if (job->share != NULL) {
        int at = open(job->share, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = at >= 0 ? fdopendir(dup(at)) : NULL;
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            int old = 0;
            for (int i = 0; i < n_before && !old; i++)
                old = strcmp(before[i], e->d_name) == 0;
            if (old && strcmp(e->d_name, wname) != 0)
                continue;
            if (!own_entry(job, wname, e->d_name)) {
                remove_at(at, e->d_name, 0);
                continue;
            }
            struct stat st;
            if (fstatat(at, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (strcmp(e->d_name, wname) == 0 ? !S_ISDIR(st.st_mode) : !(S_ISREG(st.st_mode) && st.st_nlink == 1))
                remove_at(at, e->d_name, 0);
            else if (!S_ISDIR(st.st_mode)) {
                (void)!fchownat(at, e->d_name, getuid(), getgid(), AT_SYMLINK_NOFOLLOW);
                (void)!fchmodat(at, e->d_name, 0644, 0);
            }
        }
        if (d != NULL)
            closedir(d);
        if (at >= 0) {
            if (sb.drop)
                fchmod(at, 0711);
            close(at);
        }
    }
    int w = open(job->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (w < 0) { // gone or replaced: the job's folder, empty again
        remove_path(job->workdir);
        dl_mkdir_p(job->workdir);
        return OVER_NONE;
    }
    settle_tree(openat(w, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), 0);
    fchown(w, getuid(), getgid());
    fchmod(w, 0755);
    long entries = 0;
    size_t bytes = path_bytes(job->workdir, &entries) + fd_bytes(job->out_fd) + fd_bytes(job->rec_fd);
    for (int i = 0; job->share != NULL && i < GR_JOB_OUTS && job->outs[i] != NULL; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", job->share, job->outs[i]);
        bytes += path_bytes(p, &entries);
    }
    int over = entries >= 100000 ? OVER_FILES : bytes > spawn.copy_left ? OVER_DISK : OVER_NONE;
    *amount = over == OVER_FILES ? (unsigned long long)entries : bytes;
    if (over != OVER_NONE || !job->keep) {
        empty_dir(w);
        for (int i = 0; job->share != NULL && i < GR_JOB_OUTS && job->outs[i] != NULL; i++) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", job->share, job->outs[i]);
            remove_path(p);
        }
    }
    close(w);
    return over;
}

static int spawn_plain(const gr_job *job, gr_fate *f, double t0)
{
    static char before[4096][256];
    int n_before = job->share != NULL ? list_names(job->share, before, 4096) : 0;
    snprintf(job_tmp, sizeof job_tmp, "%s/tmp", sb.run);
    remove_path(job_tmp);
    if (mkdir(job_tmp, 0700) != 0 || (sb.drop && chown(job_tmp, sb.uid, sb.gid) != 0))
        return -1;
    if (job->share != NULL && sb.drop)
        chmod(job->share, 01733); // the job may create its outs; it cannot touch what others own
    prctl(PR_SET_CHILD_SUBREAPER, 1); // the job's orphans come to us, to be killed and reaped
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        exec_job(job);
    }
    if (pid < 0) {
        if (job->share != NULL && sb.drop)
            chmod(job->share, 0711);
        return -1;
    }
    int status = 0, done = 0, over = OVER_NONE;
    unsigned long long amount = 0;
    double next_scan = 0, next_walk = 0;
    while (!done) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            done = 1;
            break;
        }
        double t = now_s();
        if (t - t0 >= job->wall_s)
            break;
        if (t >= next_scan) { // the budgets: the job's processes, and every 200 ms its folders
            size_t rss;
            int n = scan_processes(sb.mode == SB_UID ? SCAN_UID : SCAN_SESSION, sb.uid, pid, &rss);
            if (job->mem_total > 0 && rss > job->mem_total)
                over = OVER_MEMORY, amount = rss;
            else if (n > job->nproc) // (RLIMIT_NPROC lets it go one over: a fork bomb gets there at once)
                over = OVER_PROCS, amount = (unsigned long long)n;
            next_scan = t + 0.05;
        }
        if (over == OVER_NONE && t >= next_walk) {
            long entries = 0;
            size_t bytes = path_bytes(job->workdir, &entries);
            for (int i = 0; job->share != NULL && i < GR_JOB_OUTS && job->outs[i] != NULL; i++) {
                char p[PATH_MAX];
                snprintf(p, sizeof p, "%s/%s", job->share, job->outs[i]);
                bytes += path_bytes(p, &entries);
            }
            size_t logs = fd_bytes(job->out_fd) + fd_bytes(job->rec_fd), tmp = path_bytes(job_tmp, &entries);
            if (bytes + tmp > job->disk_bytes)
                over = OVER_JOB_DISK, amount = bytes + tmp;
            else if ((job->keep ? bytes : 0) + logs > spawn.copy_left)
                over = OVER_DISK, amount = (job->keep ? bytes : 0) + logs;
            else if (entries >= 100000)
                over = OVER_FILES, amount = (unsigned long long)entries;
            next_walk = t + 0.2;
        }
        if (over != OVER_NONE)
            break;
        sleep_ms(5);
    }
    // everything the job started goes with it
    if (sb.mode == SB_UID)
        kill_uid(sb.uid);
    kill(-pid, SIGKILL);
    if (!done)
        kill(pid, SIGKILL);
    if (!done)
        waitpid(pid, &status, 0);
    kill_orphans(); // pgroup: whatever left the group; uid: the zombies kill_uid left
    remove_path(job_tmp);
    unsigned long long kept = 0;
    int over_kept = settle_plain(job, before, n_before, &kept);
    if (over == OVER_NONE && over_kept != OVER_NONE)
        over = over_kept, amount = kept;
    if (over != OVER_NONE) {
        f->how = GR_END_BUDGET;
        f->code = done ? status : -1;
        describe_over(job, over, amount, f);
    } else if (done)
        set_from_status(f, status);
    else
        f->how = GR_END_WALL;
    return 0;
}

int gr_spawn(const gr_job *job, gr_fate *fate)
{
    gr_sandbox_init();
    memset(fate, 0, sizeof *fate);
    double t0 = now_s();
    fflush(stdout);
    fflush(stderr);
    // what the grading has kept so far: its jobs' folders, their logs and records
    char p[PATH_MAX];
    long entries = 0;
    snprintf(p, sizeof p, "%s/work", sb.run);
    spawn.used = path_bytes(p, &entries);
    snprintf(p, sizeof p, "%s/items", sb.run);
    spawn.used += path_bytes(p, &entries);
    spawn.copy_left = spawn.used < sb.disk ? sb.disk - spawn.used : 0;
    gr_job j = *job;
    if (j.disk_bytes == 0)
        j.disk_bytes = (size_t)1 << 30;
    int rc;
    const char *wname = j.share != NULL ? strrchr(j.workdir, '/') : NULL;
    if (j.workdir == NULL || (j.share != NULL && (wname == NULL || strncmp(j.share, j.workdir, strlen(j.share)) != 0 ||
                                                  j.workdir + strlen(j.share) != wname))) {
        fprintf(stderr, "grader bug: a job's workdir %s is not a folder of its share %s\n",
                j.workdir ? j.workdir : "(none)", j.share);
        rc = -1;
    } else if (spawn.copy_left == 0) {
        fate->how = GR_END_BUDGET;
        fate->code = -1;
        describe_over(&j, OVER_DISK, 0, fate);
        snprintf(fate->text, sizeof fate->text,
                 "was not started: the grading's disk budget is used up (GR_BUDGET_DISK)");
        rc = 0;
    } else {
        rc = sb.mode == SB_NS ? spawn_ns(&j, fate, t0) : spawn_plain(&j, fate, t0);
    }
    fate->wall_s = now_s() - t0;
    if (rc != 0)
        fate->how = GR_END_NOSTART;
    if (fate->how == GR_END_BUDGET && strstr(fate->text, "grading's disk budget") != NULL) {
        // what the grading keeps of it: the start of its log and record (where a driver says what it is)
        for (int k = 0; k < 2; k++) {
            int fd = k == 0 ? j.out_fd : j.rec_fd;
            if (fd_bytes(fd) > ((size_t)64 << 10))
                (void)!ftruncate(fd, (off_t)64 << 10);
        }
    }
    describe(&j, fate);
    return rc;
}

void gr_sandbox_cleanup(void)
{
    if (!sb.ready)
        return;
    if (sb.mode == SB_UID)
        kill_uid(sb.uid);
    if (sb.run_tmpfs)
        umount2(sb.run, MNT_DETACH); // its files go with it; below, the empty folder under it goes too
    sb.run_tmpfs = 0;
    remove_path(sb.run);
    if (sb.lock_fd >= 0)
        close(sb.lock_fd);
    sb.lock_fd = -1;
    sb.ready = 0;
}
