/* dl/engine.h — the one driver under every training lab: the plumbing each
 * lab's main.c used to rebuild, owned once. A lab fills one struct of hooks
 * (dl_lab) and its main.c hands it to dl_engine_main; the engine runs
 *
 *   comm -> flags -> rank, device, profile, data -> lab setup -> lab start
 *        -> epochs (lab epoch, lab row) -> lab finish
 *        -> files (every rank), plots, summary.json, closing lines (rank 0)
 *        -> teardown, exit status
 *
 * in that order, so that what each lab prints and writes stays its own.
 *
 * Contract
 * - Defaults: the common ones (dl/cli.h), but --out build/run/DIR and
 *   --epochs dl_lab.epochs (when nonzero); then dl_lab.defaults.
 * - Flags: one table. The common flags (dl/cli.h) and the data-parallel
 *   drivers' shared ones (dl/trainopt.h: all of them, or those named in
 *   dl_lab.train_opts) are declared once, in common/; the lab's own come
 *   first (dl_lab.options), pointing into its state. A DL_OPT_ENUM yields
 *   the index of its word (an enum of the lab's), never a string to compare
 *   again. Two flags of one nonzero dl_opt.group (one value, two
 *   spellings: --bucket-cap 25M and --bucket-mb 2) are refused when both are
 *   given, naming both. --profile list lists the profiles (dl_profile_cli).
 * - Exit statuses: 0 after a run or --help; 2 for a flag error (said on
 *   stderr with the usage); otherwise dl_rank_exit's status for the first
 *   failure of any step (its message on stderr, the other ranks aborted).
 *   Nothing is written before the flags are known to be usable.
 * - Set-up, in order: rank and world (every rank but 0 quiet), the progress,
 *   --hidden into sizes (when the lab takes it), dl_lab.check, --out
 *   prepared (rank 0; here when DL_LAB_OUT_EARLY), the profile, this rank's
 *   device (dl_rank_device), the data and the model's first and last widths
 *   from it (none of these three with DL_LAB_HOST), dl_lab.setup, --out prepared (rank 0; here otherwise),
 *   dl_lab.start.
 * - Training: the device's counters at the start (io.start, before comm),
 *   when the data is resident (io.resident, after start) and at the end
 *   (io.end); the trace started before the first epoch (and stopped after
 *   the last with DL_LAB_TRACE_STOP; never started with DL_LAB_NO_TRACE). Epochs run from E->epoch0 while
 *   e < --epochs and no hook set E->stop; io.epochs counts them and
 *   E->train_seconds times them.
 * - The end: dl_lab.finish (every rank); rank 0 writes E->metrics as
 *   metrics.csv (with dl_lab.metrics); dl_lab.files (every rank: it may
 *   hold collectives); then rank 0 draws dl_lab.metrics_plots (each with
 *   data='OUT/metrics.csv') and dl_lab.plots with labs/DIR/plots into
 *   E->plots, writes summary.json (and --json): dl_lab.summary's body and
 *   "plots", and says dl_lab.closing. Then dl_lab.teardown frees the lab's state,
 *   and the engine its own (the data, the world, the device).
 * - On a failure dl_lab.teardown still runs (it must take a state set up
 *   only in part: zeroed where nothing was made) before dl_rank_exit.
 * - Every hook may be NULL (nothing to do) but epoch.
 */
#ifndef DL_ENGINE_H
#define DL_ENGINE_H

#include <stddef.h> // size_t

#include "dl/cli.h" // dl_args, dl_opt
#include "dl/comm.h" // dl_comm
#include "dl/data.h" // dl_data
#include "dl/device.h" // dl_device
#include "dl/json.h" // dl_json
#include "dl/metrics.h" // dl_table, dl_cols
#include "dl/mlp.h" // DL_MLP_MAX_LAYERS
#include "dl/plot.h" // dl_plots
#include "dl/progress.h" // dl_progress
#include "dl/project.h" // dl_profile
#include "dl/status.h" // dl_status
#include "dl/summary.h" // dl_run_io
#include "dl/trainopt.h" // dl_train_opts

#ifdef __cplusplus
extern "C" {
#endif

/* the most flags a lab may add to the common ones */
#define DL_ENGINE_MAX_OPTS 40

typedef struct dl_lab dl_lab;

/* One rank's run as the engine holds it; the hooks read it and the lab's
 * own state hangs from ctx. */
typedef struct dl_engine {
    const dl_lab *lab;
    void *ctx; /* the lab's state (dl_engine_main's lab) */
    dl_comm *comm;
    int rank, P;
    dl_args a; /* the common flags (dl/cli.h) */
    dl_train_opts t; /* the shared training flags (dl/trainopt.h) */
    dl_profile prof; /* --profile, loaded */
    dl_device dev; /* this rank's device */
    dl_data data; /* --data, loaded */
    size_t sizes[DL_MLP_MAX_LAYERS + 1]; /* --hidden, with the data's input and classes at the ends */
    int n_sizes;
    dl_progress pr; /* rank 0's voice (the others are quiet) */
    dl_run_io io; /* what the run asked of its device: summary.json's device_io */
    int epoch0; /* the first epoch to run (a resumed run's; 0 otherwise) */
    int stop; /* set by a hook: no further epoch */
    double train_seconds; /* the epochs' wall time */
    dl_table metrics; /* metrics.csv, with dl_lab.metrics' columns: the lab adds a row an epoch */
    char out[300]; /* --out's default: build/run/DIR */
    char plots[600]; /* what rank 0 drew ("a.png,b.png") */
} dl_engine;

enum dl_lab_flags {
    DL_LAB_OUT_EARLY = 1, /* --out prepared before the profile, device and data (a failed run leaves no summary) */
    DL_LAB_TRACE_STOP = 2, /* the trace stops after the last epoch (before io.end) */
    DL_LAB_HOST = 4, /* no profile, device or data: a lab that computes on the host from its own inputs */
    DL_LAB_NO_TRACE = 8, /* the engine starts no trace (the lab starts its own, if any) */
    DL_LAB_ONE_PROCESS = 16 /* no comm (E->comm NULL, rank 0 of 1); a run started as one of several ranks is
                               refused after the flags, exit 2 (dl_cli_single_process, named by argv[0]) */
};

/* A lab: its names, its flags and its hooks. Each hook gets the engine
 * (E->ctx: the lab's state) and returns the first failure, or DL_OK. */
struct dl_lab {
    const char *prog; /* "lab03": the usage's and every message's prefix */
    const char *dir; /* "03-data-parallel": labs/DIR/plots holds its plot scripts */
    const char *about; /* the usage's summary line */
    const char *train_opts; /* the shared training flags it takes ("hidden,warmup"); NULL: all (none: DL_LAB_HOST) */
    int epochs; /* --epochs' default (0: the common one) */
    dl_cols metrics; /* metrics.csv's columns (DL_CSV_SCHEMA), or none: E->metrics, written by the engine */
    const char *metrics_plots; /* plots drawn from metrics.csv alone ("error,loss"), besides the plots hook */
    /* its defaults over the common ones (E->a, E->t and its state), before parsing */
    void (*defaults)(dl_engine *E);
    /* its own flags into out (room for DL_ENGINE_MAX_OPTS), pointing into its state: how many */
    int (*options)(dl_engine *E, dl_opt *out);
    dl_status (*check)(dl_engine *E); /* flags that need each other, before anything loads */
    dl_status (*setup)(dl_engine *E); /* after the data loaded: splits, batches */
    dl_status (*start)(dl_engine *E); /* the model, its first state, the first line */
    dl_status (*epoch)(dl_engine *E, int e); /* epoch e (0-based) */
    dl_status (*row)(dl_engine *E, int e); /* epoch e's row and line */
    dl_status (*finish)(dl_engine *E); /* after the last epoch: test, dumps, comparisons */
    dl_status (*files)(dl_engine *E); /* every rank: the CSVs (rank 0) */
    void (*plots)(dl_engine *E, dl_plots *p); /* rank 0: draw or skip each plot */
    dl_summary_fn summary; /* summary.json's body (the engine ends it with "plots"); its ctx is the dl_engine */
    void (*closing)(dl_engine *E); /* rank 0: the lines after summary.json */
    void (*teardown)(dl_engine *E); /* frees the lab's state (also after a failure) */
    unsigned flags; /* dl_lab_flags */
};

/* Runs the lab L with its state lab (zeroed by the caller) on argc/argv,
 * as above. Returns the process's exit status. */
int dl_engine_main(const dl_lab *L, void *lab, int argc, char **argv);

/* A lab's main(): runs lab (a dl_lab) on its state (zeroed, static; or NULL) and exits with its status. */
#define DL_LAB_MAIN(lab, state)                             \
    int main(int argc, char **argv)                         \
    {                                                       \
        return dl_engine_main(&(lab), (state), argc, argv); \
    }

/* The flags alone: E->lab and E->ctx set, the rest zeroed. Sets the
 * defaults (common, shared, the lab's), builds the one table and parses it:
 * DL_CLI_RUN, DL_CLI_HELP (usage on stdout) or DL_CLI_ERROR (said on
 * stderr). A dl_lab.train_opts naming a flag that dl/trainopt.h lacks is
 * DL_CLI_ERROR (a lab's bug, said so). */
int dl_engine_parse(dl_engine *E, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* DL_ENGINE_H */
