/* sandbox.h — running the student's code: contained, limited, and gone when its job ends.
 *
 * Contract
 * - gr_sandbox_init() is called once by the judge (the trusted grader process,
 *   which holds no student code) before any item runs. It picks the strongest
 *   containment this machine allows and never fails (but on a bad GR_BUDGET_*
 *   value: a message naming it, exit 2); GR_SANDBOX=ns|uid|pgroup forces a
 *   mode (an unavailable one falls back, and says so).
 *     ns      a fresh PID, mount and IPC namespace per job (a user namespace too
 *             when the grader is not root), whose root is built for the job:
 *             a small tmpfs holding read-only views of /usr, /bin, /sbin and
 *             /lib* (links where the host has links), of /etc's few files a
 *             program needs (ld.so.cache, nsswitch.conf, hosts, localtime,
 *             alternatives/, openmpi/, ...; passwd and group are made for the
 *             job: root, its user, nobody), a /proc of its own namespace (in
 *             which it does not see init, a copy of the judge), /sys
 *             read-only, /dev's basics (null, zero, full, random, urandom, tty,
 *             the NVIDIA devices where there are any), the staged kit
 *             (gr_stage, gr_sandbox_home), DL_DATA_DIR when it is set, and its
 *             folders (below); nothing else of the host: not the kit's tree,
 *             not another checkout, not /home, /root, /tmp or /run. /tmp,
 *             /var/tmp and /dev/shm are private tmpfs mounts. The job cannot
 *             see or signal any process outside it; when its first process
 *             ends, the kernel kills every process left in it. Directories
 *             named by gr_sandbox_hide or GR_HIDE (a:b:c) that lie inside what
 *             the view shows (a kit under /usr/local) are empty in it.
 *     uid     (root without namespaces) the job runs as a sandbox user; at the
 *             end every process of that user is killed. The host's files are
 *             visible as far as their permissions let the sandbox user read
 *             them: the kit's tree (and any other checkout) must not be
 *             readable by others there.
 *     pgroup  (neither) the job runs in its own session; at the end its process
 *             group and every orphan it left (the grader is their subreaper) are
 *             killed. It runs as the grader's user, so it could signal the
 *             grader and read and write what the grader can: the weakest mode,
 *             reported as such.
 * - As root, jobs run as an unprivileged sandbox user (GR_SANDBOX_UID, or the
 *   first free uid of 61000..61099, locked for the whole grading run so two
 *   gradings never share one), so the process limit holds and the job cannot
 *   signal the grader, make, or another grading.
 * - Folders. A job's workdir (its cwd and HOME) is a folder the judge made
 *   under the run directory, empty when the job starts; it is the only host
 *   folder the job writes. With share (the folder holding workdir, as a
 *   driver's run folder sits in the grading's scratch folder), the job also
 *   sees share's other entries, read-only (what earlier runs left: a
 *   checkpoint to resume from), and may create there the entries named in
 *   outs (files its arguments name, e.g. --dump-params SCRATCH/p2.npy); what
 *   else it creates in share is dropped. With keep, what the job left in
 *   workdir and outs is what the host's folder holds after it (ns: copied
 *   back from the job's tmpfs, links and special files left out; uid and
 *   pgroup: written in place, then links, special files and hard-linked
 *   files removed and, as root, handed back to the judge's user); without,
 *   nothing of it is kept. So no job writes a record of another run, or a
 *   marker the judge reads to know that a run happened.
 * - Budgets, per job and per grading, each named when it stops a job:
 *     memory     resident memory of all the job's processes together
 *                (anonymous and shared: RssAnon + RssShmem), mem_total
 *                (GR_BUDGET_MEMORY, default 8 GiB; 16 GiB for a GPU job);
 *     processes  processes and their threads at once, nproc
 *                (GR_BUDGET_PROCESSES, default 256; the job's user's task
 *                limit is one more, so a job that forks without end goes
 *                over the budget and is stopped, instead of spinning at it);
 *     job disk   bytes the job holds in its writable folders together (/tmp,
 *                /var/tmp, /dev/shm, share's tmpfs or its workdir), disk_bytes
 *                (GR_BUDGET_JOB_DISK, default 1 GiB);
 *     disk       bytes kept on the host for one grading in all (its jobs'
 *                folders, their logs and records), GR_BUDGET_DISK (default 1
 *                GiB): a job whose folders would take the grading past it
 *                keeps nothing, and its largest file is capped by what is left.
 *   A watchdog (the namespace's init in ns mode, the judge otherwise) reads
 *   the job's processes from /proc and its folders' usage every 25 ms and
 *   stops the whole job past a budget; in uid and pgroup modes only the job's
 *   own folders count towards its disk (its writes under the host's /tmp are
 *   bounded per file only). Values take K, M, G suffixes (GR_BUDGET_MEMORY=1G).
 *   (cgroup v2's memory.max and pids.max would do the same in the kernel; this
 *   kit does not use them yet: the watchdog works wherever /proc does.)
 * - gr_spawn(job, fate) runs job->argv in such a tree with the job's limits:
 *   CPU seconds and address space per process, largest file, the budgets, and
 *   wall-clock time. stdin is /dev/null; stdout and stderr go to
 *   job->out_fd; job->rec_fd, when >= 0, becomes fd 3. The environment is an
 *   allow-list: PATH, LANG, LC_*, TZ, DL_*, OMPI_*, PMIX_*, PRTE_*, CK_*,
 *   OPENBLAS_*, OMP_*, NCCL_*, CUDA_VISIBLE_DEVICES, and HOME (the workdir),
 *   TMPDIR and DL_HOME (gr_sandbox_home()) set for it; nothing else of the
 *   grader's. It returns when every process of the job is gone, with what
 *   ended it in *fate, each limit and budget named ("CPU time limit (70 s)
 *   reached", "over the job's memory budget ...").
 * - A job has no capabilities (it cannot unmount anything, even as root of
 *   its user namespace), and no new privileges (no set-uid programs).
 * - gr_stage(path) returns a stripped copy (no symbol table) of an executable
 *   that the sandbox user can run (the kit may live where it cannot, e.g.
 *   under /root); gr_sandbox_home() is the DL_HOME jobs see (a copy of what
 *   the drivers read at run time).
 */
#ifndef GRADER_SANDBOX_H
#define GRADER_SANDBOX_H

#include <stddef.h> // size_t

enum { GR_JOB_OUTS = 8 };

typedef struct gr_job {
    char *const *argv; /* argv[0] is a path */
    const char *workdir; /* its cwd, inside the run directory, made by the judge and empty (gr_sandbox_fresh) */
    const char *share; /* NULL, or workdir's parent: its other entries are seen read-only */
    const char *outs[GR_JOB_OUTS]; /* names (no '/') it may create in share; NULL ends the list */
    int keep; /* what it leaves in workdir and outs stays on the host */
    int out_fd; /* stdout and stderr (-1: /dev/null) */
    int rec_fd; /* becomes fd 3, or -1 */
    double wall_s; /* wall-clock limit, seconds */
    double cpu_s; /* CPU seconds per process */
    size_t mem_bytes; /* address space per process; 0 = no limit (CUDA maps a lot) */
    size_t file_bytes; /* largest file it may write */
    size_t disk_bytes; /* bytes its writable folders hold together */
    size_t mem_total; /* resident memory of all its processes together; 0 = no budget */
    int nproc; /* processes and threads it may have at once */
} gr_job;

typedef enum gr_end { GR_END_EXIT, GR_END_SIGNAL, GR_END_WALL, GR_END_NOSTART, GR_END_BUDGET } gr_end;

typedef struct gr_fate {
    gr_end how;
    int code; /* exit status, or the signal; GR_END_BUDGET: the job's exit status, or -1 when it was stopped */
    double wall_s; /* how long it ran */
    char text[300]; /* "exited with status 0", "killed by SIGSEGV (segmentation fault)", ... */
} gr_fate;

/* A directory jobs must not see (ns mode); before gr_sandbox_init. The
 * system's directories and their ancestors are never hidden. */
void gr_sandbox_hide(const char *path);
/* Once, in the judge, before any job. */
void gr_sandbox_init(void);
/* One line: the mode, the user jobs run as, the budgets. */
const char *gr_sandbox_describe(void);
/* "ns", "uid" or "pgroup". */
const char *gr_sandbox_mode(void);
/* The grading run's private directory (removed by gr_sandbox_cleanup). As
 * root it is a tmpfs mounted in a mount namespace of the judge's own, made by
 * gr_sandbox_init where the kernel allows one (what the grading keeps is then
 * in memory, never on the disk's file system, unseen by the host's other
 * processes, and gone with the judge); elsewhere a folder of TMPDIR (/tmp). */
const char *gr_sandbox_run_dir(void);
const char *gr_sandbox_home(void);
const char *gr_stage(const char *path);
/* A directory under the run directory (created with its parents; name is
 * relative to it), which only the judge writes; jobs may read it. */
const char *gr_sandbox_mkdir(const char *name, char *out, size_t len);
/* Empties the directory at path (inside the run directory; made if missing)
 * for a job's workdir: returns 0, or -1 when path lies outside the run
 * directory or cannot be made. */
int gr_sandbox_fresh(const char *path);
/* Defaults for an item whose timeout is timeout_s (CK_TIMEOUT_MULTIPLIER applied). */
gr_job gr_job_defaults(double timeout_s, int gpu);
/* Returns 0 when the job ran (whatever its fate), -1 when it could not start. */
int gr_spawn(const gr_job *job, gr_fate *fate);
void gr_sandbox_cleanup(void);
/* In a forked child, before exec'ing another judge that the caller waits
 * for: that judge's jobs run as this judge's sandbox uid, under its lock. */
void gr_sandbox_lend_uid(void);

#endif /* GRADER_SANDBOX_H */
