/* sandbox.h — running the student's code: contained, limited, and gone when its job ends.
 *
 * Contract
 * - gr_sandbox_init() is called once by the judge (the trusted grader process,
 *   which holds no student code) before any item runs. It picks the strongest
 *   containment this machine allows and never fails; GR_SANDBOX=ns|uid|pgroup
 *   forces a mode (an unavailable one falls back, and says so).
 *     ns      a fresh PID and mount namespace per job (a user namespace too when
 *             the grader is not root). The job cannot see or signal any process
 *             outside it; when its first process ends, the kernel kills every
 *             process left in it. /tmp, /var/tmp and /dev/shm are private tmpfs
 *             mounts of bounded size; so is the job's work directory, which
 *             starts with a copy of what is at its path on the host (what the
 *             item's earlier jobs left, e.g. a checkpoint to resume) and whose
 *             contents are copied back to the same path on the host at the end.
 *             The rest of the grading run's directory is read-only.
 *     uid     (root without namespaces) the job runs as a sandbox user; at the
 *             end every process of that user is killed.
 *     pgroup  (neither) the job runs in its own session; at the end its process
 *             group and every orphan it left (the grader is their subreaper) are
 *             killed. It runs as the grader's user, so it could signal the
 *             grader: the weakest mode, reported as such.
 * - As root, jobs run as an unprivileged sandbox user (GR_SANDBOX_UID, or the
 *   first free uid of 61000..61099, locked for the whole grading run so two
 *   gradings never share one), so the process limit holds and the job cannot
 *   signal the grader, make, or another grading.
 * - gr_spawn(job, fate) runs job->argv in such a tree with the job's limits:
 *   CPU seconds and address space per process, largest file, processes,
 *   bytes written (ns mode), and wall-clock time. stdin is /dev/null;
 *   stdout and stderr go to job->out_fd; job->rec_fd, when >= 0, becomes fd 3.
 *   It returns when every process of the job is gone, with what ended it in
 *   *fate, each limit named ("CPU time limit (70 s) reached").
 * - In ns mode a job sees these directories empty (read-only tmpfs mounts):
 *   the kit's tree, at the path compiled into the library (DL_SOURCE_DIR) and
 *   at dl_home(); every directory named by gr_sandbox_hide before
 *   gr_sandbox_init (the code under test's); and GR_HIDE's (a:b:c). So its
 *   solutions/ and build/solutions/ are out of reach, whatever path the
 *   student's code finds. The jobs need nothing there: they run staged copies
 *   (gr_stage) and read the kit's files from gr_sandbox_home(), which the
 *   judge passes as DL_HOME. A job has no capabilities (it cannot unmount
 *   them, even as root of its user namespace). uid and pgroup modes hide
 *   nothing: there the kit's tree must be unreadable to the sandbox user.
 * - gr_stage(path) returns a copy of an executable that the sandbox user can run
 *   (the kit may live where it cannot, e.g. under /root); gr_sandbox_home() is
 *   the DL_HOME jobs see (a copy of what the drivers read at run time).
 */
#ifndef GRADER_SANDBOX_H
#define GRADER_SANDBOX_H

#include <stddef.h> // size_t

typedef struct gr_job {
    char *const *argv; /* argv[0] is a path */
    const char *workdir; /* the job's writable directory (its cwd); must exist */
    int out_fd; /* stdout and stderr (-1: /dev/null) */
    int rec_fd; /* becomes fd 3, or -1 */
    double wall_s; /* wall-clock limit, seconds */
    double cpu_s; /* CPU seconds per process */
    size_t mem_bytes; /* address space per process; 0 = no limit (CUDA maps a lot) */
    size_t file_bytes; /* largest file it may write */
    size_t disk_bytes; /* size of each private tmpfs (ns mode) */
    int nproc; /* processes it may have at once */
} gr_job;

typedef enum gr_end { GR_END_EXIT, GR_END_SIGNAL, GR_END_WALL, GR_END_NOSTART } gr_end;

typedef struct gr_fate {
    gr_end how;
    int code; /* exit status, or the signal */
    double wall_s; /* how long it ran */
    char text[300]; /* "exited with status 0", "killed by SIGSEGV (segmentation fault)", ... */
} gr_fate;

/* A directory jobs must not see (ns mode); before gr_sandbox_init. The
 * system's directories and their ancestors are never hidden. */
void gr_sandbox_hide(const char *path);
/* Once, in the judge, before any job. */
void gr_sandbox_init(void);
/* One line: the mode and the user jobs run as. */
const char *gr_sandbox_describe(void);
/* "ns", "uid" or "pgroup". */
const char *gr_sandbox_mode(void);
/* The grading run's private directory (removed by gr_sandbox_cleanup). */
const char *gr_sandbox_run_dir(void);
const char *gr_sandbox_home(void);
const char *gr_stage(const char *path);
/* A directory under the run directory (created with its parents); jobs may
 * write it when writable (use one as a job's workdir), else only read it. */
const char *gr_sandbox_mkdir(const char *name, int writable, char *out, size_t len);
/* Defaults for an item whose timeout is timeout_s (CK_TIMEOUT_MULTIPLIER applied). */
gr_job gr_job_defaults(double timeout_s, int gpu);
/* Returns 0 when the job ran (whatever its fate), -1 when it could not start. */
int gr_spawn(const gr_job *job, gr_fate *fate);
void gr_sandbox_cleanup(void);

#endif /* GRADER_SANDBOX_H */
