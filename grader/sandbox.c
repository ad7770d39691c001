/* sandbox.c — containment for the student's code. See sandbox.h for the contract.
 *
 * The job's process tree, in ns mode:
 *   judge ── relay (unshares user?, pid, mount) ── init (pid 1: mounts, reaps, copies back) ── the job
 * The relay stays outside the new PID namespace and passes init's pid up; init
 * is trusted code (no exec) and reports the job's wait status through a pipe,
 * then exits, which makes the kernel kill whatever the job left behind. */
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
#include <signal.h> // kill, SIGKILL
#include <stdio.h> // snprintf
#include <stdlib.h> // getenv, malloc
#include <string.h> // strcmp, strsignal
#include <sys/file.h> // flock
#include <sys/mount.h> // mount
#include <sys/prctl.h> // prctl
#include <sys/resource.h> // setrlimit
#include <sys/stat.h> // mkdir, stat
#include <sys/syscall.h> // SYS_capset
#include <sys/wait.h> // waitpid
#include <time.h> // clock_gettime, nanosleep
#include <unistd.h> // fork, execve

#include "dl/fs.h" // dl_home, dl_mkdir_p

extern char **environ;

enum { SB_NS, SB_UID, SB_PGROUP };
static const char *mode_names[] = {"ns", "uid", "pgroup"};

static struct {
    int mode;
    int userns; /* ns mode entered through a user namespace (not root) */
    int drop; /* jobs run as uid/gid (the grader is root) */
    int stage; /* jobs run copies of the programs and the kit's files (in the run directory) */
    uid_t uid;
    gid_t gid;
    int lock_fd;
    char run[256];
    char home[400];
    char desc[600];
    int ready;
    char hide[8][PATH_MAX]; /* directories a job sees empty (ns mode) */
    int n_hide;
} sb = {.lock_fd = -1};

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
    int fd = open(path, O_WRONLY | O_CLOEXEC);
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
    else
        snprintf(out, len, "%zu MiB", b >> 20);
}

/* Live (not zombie) processes of uid: RLIMIT_NPROC counts them all. */
static int user_processes(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != uid)
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        buf[k > 0 ? k : 0] = '\0';
        const char *rp = strrchr(buf, ')');
        if (rp == NULL || rp[1] == '\0' || rp[2] != 'Z')
            n++;
    }
    closedir(d);
    return n;
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

/* What the job left in its tmpfs work directory, copied into the host's: no
 * symlink is followed (openat with O_NOFOLLOW on every component). The same
 * walk copies the host's into the job's at its start (in = 1): those copies
 * get the modification time 0, and the walk back skips files that still have
 * it — the job did not write them, and the host's own may have changed since
 * (a log the job's output goes to). */
static void copy_back(int src_dir, int dst_dir, int depth, int in)
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
                copy_back(s, t, depth + 1, in);
            else {
                if (s >= 0)
                    close(s);
                if (t >= 0)
                    close(t);
            }
        } else if (S_ISREG(st.st_mode)) {
            if (!in && st.st_mtim.tv_sec == 0 && st.st_mtim.tv_nsec == 0)
                continue; // copied in, never written
            int s = openat(src_dir, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            int t = openat(dst_dir, e->d_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
            char buf[1 << 16];
            ssize_t k = 0;
            while (s >= 0 && t >= 0 && (k = read(s, buf, sizeof buf)) > 0) {
                if (write(t, buf, (size_t)k) != k)
                    break;
            }
            if (in && t >= 0)
                futimens(t, (const struct timespec[]){{0, 0}, {0, 0}});
            if (s >= 0)
                close(s);
            if (t >= 0)
                close(t);
        }
    }
    closedir(d); // closes src_dir
    close(dst_dir);
}

/* Hands a copied-in tree to the job's user (ns mode drops to it). */
static void chown_tree(int dir, uid_t uid, gid_t gid, int depth)
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
        (void)!fchownat(dir, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW);
        struct stat st;
        if (depth < 16 && fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                chown_tree(sub, uid, gid, depth + 1);
        }
    }
    closedir(d);
}

// ---- the job's own process ----

/* No capabilities, now or after exec: a job that is root in its user namespace
 * (the grader is not root) could otherwise unmount what hides the kit. */
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

/* Limits, descriptors, user, directory, then exec. Never returns. */
static void exec_job(const gr_job *job)
{
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
    // after the switch: the limit counts the sandbox user's processes (or, not
    // as root, this user's: all of them, so leave room for those already there)
    r.rlim_cur = r.rlim_max = (rlim_t)(job->nproc + (sb.drop ? 0 : user_processes(getuid())));
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
        if (strncmp(environ[i], "HOME=", 5) != 0 && strncmp(environ[i], "TMPDIR=", 7) != 0 &&
            strncmp(environ[i], "DL_HOME=", 8) != 0 && strncmp(environ[i], "PWD=", 4) != 0 &&
            strncmp(environ[i], "OLDPWD=", 7) != 0 && strncmp(environ[i], "GR_HIDE=", 8) != 0)
            env[k++] = environ[i];
    }
    char home[1100], tmp[1100], dlhome[500];
    snprintf(home, sizeof home, "HOME=%s", job->workdir);
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", sb.mode == SB_NS ? "/tmp" : job->workdir);
    snprintf(dlhome, sizeof dlhome, "DL_HOME=%s", sb.home);
    env[k++] = home;
    env[k++] = tmp;
    env[k++] = dlhome;
    env[k] = NULL;
    execve(job->argv[0], job->argv, env);
    dprintf(2, "sandbox: cannot run %s: %s\n", job->argv[0], strerror(errno));
    _exit(127);
}

// ---- ns mode: relay and init ----

static void mount_tmpfs(const char *where, size_t bytes, const char *mode)
{
    char opts[200];
    snprintf(opts, sizeof opts, "size=%zu,mode=%s,uid=%u,gid=%u", bytes, mode, sb.drop ? (unsigned)sb.uid : 0u,
             sb.drop ? (unsigned)sb.gid : 0u);
    mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, opts);
}

/* Whether hidden directory i lies inside another one (that one's mount hides it). */
static int hidden_by_another(int i)
{
    for (int j = 0; j < sb.n_hide; j++) {
        size_t n = strlen(sb.hide[j]);
        if (j != i && strncmp(sb.hide[i], sb.hide[j], n) == 0 && sb.hide[i][n] == '/')
            return 1;
    }
    return 0;
}

/* pid 1 of the job's namespace. Reports the job's wait status on status_fd. */
static void ns_init(const gr_job *job, int status_fd, int run_fd, int host_work_fd, int probe)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // the judge's directory (the kit, most likely) is no way back to what is hidden
    int ok = chdir("/") == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
    char opts[64];
    snprintf(opts, sizeof opts, "size=%zu,mode=1777", job->disk_bytes);
    ok = ok && mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0;
    mount("tmpfs", "/var/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts);
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts);
    // the kit's tree (solutions/, build/solutions/, the path compiled into the
    // library) and whatever else the judge hides: an empty directory; one
    // that is gone already (under /tmp) needs nothing
    struct stat st;
    int hidden[8] = {0};
    for (int i = 0; ok && i < sb.n_hide; i++) {
        if (hidden_by_another(i) || stat(sb.hide[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        ok = mount("tmpfs", sb.hide[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0755") == 0;
        hidden[i] = ok;
    }
    // the run directory (staged programs, the kit's home) back in view, read-only
    // (also where /tmp did not hide it: a TMPDIR elsewhere)
    if (ok) {
        char src[64];
        snprintf(src, sizeof src, "/proc/self/fd/%d", run_fd);
        ok = dl_mkdir_p(sb.run) == DL_OK && mount(src, sb.run, NULL, MS_BIND | MS_REC, NULL) == 0 &&
             mount(NULL, sb.run, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) == 0;
    }
    for (int i = 0; ok && i < sb.n_hide; i++) { // read-only once the run directory's path is made in it
        if (hidden[i])
            ok = mount(NULL, sb.hide[i], NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "size=64k,mode=0755") == 0;
    }
    if (ok && job->workdir != NULL) {
        mount_tmpfs(job->workdir, job->disk_bytes, "0755");
        ok = stat(job->workdir, &st) == 0;
        // what the item's earlier jobs left (a checkpoint to resume from) is in view again
        int in = host_work_fd >= 0 ? dup(host_work_fd) : -1;
        int into = open(job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ok && in >= 0 && into >= 0) {
            copy_back(in, into, 0, 1);
            if (sb.drop)
                chown_tree(open(job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sb.uid, sb.gid, 0);
        } else {
            if (in >= 0)
                close(in);
            if (into >= 0)
                close(into);
        }
    }
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    if (probe || !ok) {
        int w = ok ? 0 : -1;
        (void)!write(status_fd, &w, sizeof w);
        _exit(ok ? 0 : 1);
    }
    pid_t pid = fork();
    if (pid == 0)
        exec_job(job);
    int status = -1, w;
    pid_t got;
    while ((got = waitpid(-1, &w, 0)) > 0 || errno == EINTR) {
        if (got == pid) {
            status = w;
            break;
        }
    }
    // the job is over: everything it left goes, then its files come back
    for (int k = 0; k < 100 && kill(-1, SIGKILL) == 0; k++)
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    while (waitpid(-1, NULL, 0) > 0)
        ;
    int src = open(job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (src >= 0 && host_work_fd >= 0)
        copy_back(src, host_work_fd, 0, 0);
    (void)!write(status_fd, &status, sizeof status);
    _exit(0);
}

static void ns_relay(const gr_job *job, int status_fd, int probe)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWPID | CLONE_NEWNS | (sb.userns ? CLONE_NEWUSER : 0);
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
    // opened in the new mount namespace (a bind mount cannot come from another
    // one) and before init hides /tmp: they reach the host's directories
    int run_fd = open(sb.run, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int work_fd = job->workdir ? open(job->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    pid_t pid = fork();
    if (pid == 0)
        ns_init(job, status_fd, run_fd, work_fd, probe);
    if (pid < 0) {
        (void)!write(status_fd, &fail, sizeof fail);
        _exit(1);
    }
    int p = (int)pid;
    if (!probe)
        (void)!write(status_fd, &p, sizeof p);
    int w;
    waitpid(pid, &w, 0);
    _exit(0);
}

// ---- choosing the mode ----

static int try_ns(void)
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
    int w = -1;
    ssize_t got = read(fds[0], &w, sizeof w);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return got == (ssize_t)sizeof w && w == 0;
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
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
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
    // the kit's tree, at the path compiled into the library (a student's code
    // can read it there) and where DL_HOME says; GR_HIDE adds more (a:b:c)
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
    chmod(sb.run, 0711);
    snprintf(sb.home, sizeof sb.home, "%s", dl_home());
    const char *want = getenv("GR_SANDBOX");
    int root = geteuid() == 0;
    char note[200] = "";
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
    int ns_ok = (want == NULL || strcmp(want, "ns") == 0) && try_ns();
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
    sb.stage = sb.drop || sb.mode == SB_NS; // /tmp is hidden in a namespace: the kit may live there
    if (sb.stage) {
        char stage[400];
        snprintf(stage, sizeof stage, "%s/stage/bin", sb.run);
        dl_mkdir_p(stage);
        chmod(stage, 0755);
        stage_home();
    }
    const char *what = sb.mode == SB_NS
                           ? (sb.userns ? "PID+mount+user namespace per job" : "PID+mount namespace per job")
                       : sb.mode == SB_UID ? "own session per job, every process of the sandbox user killed at its end"
                                           : "own session per job, its process group killed at its end (weak: same "
                                             "user as the grader)";
    if (sb.drop)
        snprintf(sb.desc, sizeof sb.desc, "%s, as uid %u%s", what, (unsigned)sb.uid, note);
    else
        snprintf(sb.desc, sizeof sb.desc, "%s, as uid %u%s", what, (unsigned)getuid(), note);
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
    return cache[n++].dst;
}

const char *gr_sandbox_mkdir(const char *name, int writable, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", sb.run, name);
    dl_mkdir_p(out);
    chmod(out, 0711);
    if (writable && sb.drop && sb.mode != SB_NS) {
        if (chown(out, sb.uid, sb.gid) != 0)
            fprintf(stderr, "grader: cannot give %s to uid %u: %s\n", out, (unsigned)sb.uid, strerror(errno));
        chmod(out, 0700);
    }
    return out;
}

gr_job gr_job_defaults(double timeout_s, int gpu)
{
    gr_job j = {0};
    j.out_fd = -1;
    j.rec_fd = -1;
    j.wall_s = timeout_s;
    j.cpu_s = 2.0 * timeout_s + 10.0; // several ranks share the cores
    j.mem_bytes = gpu ? 0 : (size_t)8 << 30;
#if defined(__SANITIZE_ADDRESS__)
    j.mem_bytes = 0; // ASan reserves terabytes of address space
#endif
    j.file_bytes = (size_t)256 << 20;
    j.disk_bytes = (size_t)1 << 30;
    j.nproc = 256;
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
        snprintf(f->text, sizeof f->text, "could not be started");
        break;
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
    int init = -1, status = 0, got_init = 0, got_status = 0;
    while (!got_status) {
        double left = job->wall_s - (now_s() - t0);
        if (left <= 0)
            break;
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; // the loop re-checks the time
        int v;
        ssize_t k = read(fds[0], &v, sizeof v);
        if (k != (ssize_t)sizeof v)
            break; // the relay died: no status
        if (!got_init) {
            init = v;
            got_init = 1;
            if (init < 0)
                break;
        } else {
            status = v;
            got_status = 1;
        }
    }
    if (!got_status) {
        // pid 1 of the namespace: all of it goes; the relay, its parent, returns
        // only once the kernel has killed and reaped the whole namespace
        if (init > 0)
            kill(init, SIGKILL);
        else
            kill(relay, SIGKILL);
    }
    close(fds[0]);
    waitpid(relay, NULL, 0);
    if (got_status)
        set_from_status(f, status);
    else if (now_s() - t0 >= job->wall_s)
        f->how = GR_END_WALL;
    else
        f->how = GR_END_NOSTART;
    return 0;
}

static int spawn_plain(const gr_job *job, gr_fate *f, double t0)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1); // the job's orphans come to us, to be killed and reaped
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        exec_job(job);
    }
    if (pid < 0)
        return -1;
    int status = 0, done = 0;
    while (!done) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            done = 1;
            break;
        }
        if (now_s() - t0 >= job->wall_s)
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

    if (done)
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
    int rc = sb.mode == SB_NS ? spawn_ns(job, fate, t0) : spawn_plain(job, fate, t0);
    fate->wall_s = now_s() - t0;
    if (rc != 0)
        fate->how = GR_END_NOSTART;
    describe(job, fate);
    return rc;
}

static int remove_entry(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[2048];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_entry(sub);
        }
        if (d != NULL)
            closedir(d);
        return rmdir(path);
    }
    return unlink(path);
}

void gr_sandbox_cleanup(void)
{
    if (!sb.ready)
        return;
    if (sb.mode == SB_UID)
        kill_uid(sb.uid);
    remove_entry(sb.run);
    if (sb.lock_fd >= 0)
        close(sb.lock_fd);
    sb.lock_fd = -1;
    sb.ready = 0;
}
