/* drivers.h — a test's view of a lab's driver: run it (the student's code) in
 * the sandbox, on P ranks under common/bin/dlrun, and read what it wrote.
 * Shared by every lab whose items judge a driver's run (GR_JUDGE items).
 *
 * Contract
 * - gr_run_driver(P, name, args) runs the driver built from the code under
 *   test (gr_code_dir/labNN) with `--out SCRATCH/name --plot none --quiet`
 *   and args: words split on blanks, a single-quoted part is one word. P = 0
 *   runs it without the launcher (a world of one); otherwise the ranks'
 *   watchdog (DL_COMM_TIMEOUT) is a quarter of the item's time (at least
 *   20 s; gr_set_watchdog(s): s seconds, times CK_TIMEOUT_MULTIPLIER, for the
 *   runs of a short workload), so ranks that wait for each other forever say
 *   so themselves. Its stdout and stderr go
 *   to SCRATCH/name.log. Its folder is SCRATCH/name (its cwd, its --out),
 *   emptied before it starts; it is the only thing in SCRATCH the run writes,
 *   but for the files its arguments name directly in SCRATCH (--dump-params
 *   SCRATCH/p2.npy), which are removed before it starts too; it reads the
 *   rest of SCRATCH (an earlier run's checkpoint). So what a test finds in
 *   SCRATCH/name (or SCRATCH/name.rc, which only the judge writes) came from
 *   the last run called name, and no other run; name is a plain file name.
 *   A run stopped over a budget (sandbox.h) fails the test, naming the
 *   budget ("[diagnosis: over-budget]"). It runs in the sandbox with the item's limits;
 *   for a cpu-tier item with DL_DEVICE=cpu, so that --device auto stays on
 *   the CPU on a GPU machine too (a gpu item passes --device cuda).
 *   Returns the exit status; 128 + N when killed by signal N, 124 past the
 *   wall-clock limit, 127 when it could not start. gr_run_program does the
 *   same for another build (path) of the driver, with exactly args (no --out).
 * - gr_fail_run(name, rc) fails the test with what stopped the run: the
 *   line saying "not implemented yet" if there is one, else the log's tail.
 * - gr_path(name) is SCRATCH/name. gr_summary(name) is SCRATCH/name/summary.json,
 *   parsed (the test fails when it is missing or invalid); free with dl_jv_free.
 * - gr_load_npy(file, &n) loads SCRATCH/file as float32 (fails the test otherwise).
 * - gr_csv_column(path, column, out, max) reads the column named `column` of a
 *   CSV file with a header row into out (at most max values) and returns how
 *   many; the test fails when the file or the column is missing.
 * - gr_csv_load(&t, path) reads a CSV file the kit wrote (a header row, then
 *   rows of as many cells) whole; gr_csv_col(&t, "name") is a column's index,
 *   found by its name in the header, so a reader never depends on the column
 *   order or count; gr_csv_str / gr_csv_num read a cell (row 0 is the first
 *   row after the header). Each fails the test naming the file: missing,
 *   a row with another number of cells (its line), a column it lacks (with
 *   the columns it has), a cell that is not a number (its line and column).
 *   gr_csv_free frees it.
 * - gr_gpu4_speedup(flags, key, &want) (a gpu4 item's measurement): the
 *   driver under test on 1 GPU and on 4 with flags (--out is added), its
 *   speedup = the steady epoch on 1 over the one on 4 (each the median of
 *   metrics.csv's epoch_s after the first, warm-up, epoch), returned; *want
 *   = 0.8 x the reference build's (build/solutions/labNN) speedup measured
 *   the same way in this run, or, where none is built (a student release),
 *   0.8 x the number at `key` in the 4-GPU run's summary.json (the
 *   projection). Notes both figures; fails the test on a run that fails.
 */
#ifndef GRADER_DRIVERS_H
#define GRADER_DRIVERS_H

#include <stddef.h> // size_t

#include "dl/json.h" // dl_jv

int gr_run_driver(int P, const char *name, const char *args);
void gr_set_watchdog(double seconds); /* for this process's runs from now on; 0: the item's default */
int gr_run_program(const char *program, int P, const char *name, const char *args);
void gr_fail_run(const char *name, int rc);
const char *gr_path(const char *name);
dl_jv *gr_summary(const char *name);
float *gr_load_npy(const char *file, size_t *n);
size_t gr_csv_column(const char *path, const char *column, double *out, size_t max);
typedef struct gr_csv {
    char path[1200];
    char *text; /* the file, cut into cells in place */
    int ncols;
    size_t nrows; /* after the header */
    char **cell; /* (nrows + 1) x ncols, row-major; the header first */
} gr_csv;
void gr_csv_load(gr_csv *t, const char *path);
int gr_csv_col(const gr_csv *t, const char *name);
const char *gr_csv_str(const gr_csv *t, size_t row, int col);
double gr_csv_num(const gr_csv *t, size_t row, int col);
void gr_csv_free(gr_csv *t);
double gr_gpu4_speedup(const char *flags, const char *key, double *want);
/* The driver under test (a path the sandbox can run). */
const char *gr_driver(void);

#endif /* GRADER_DRIVERS_H */
