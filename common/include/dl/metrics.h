/* dl/metrics.h — the kit's CSV files: one header row, then one row per record.
 *
 * Contract
 * - A CSV's columns are a schema, declared once where the writer and every
 *   reader (the grader included) can see it, as an X-macro list of
 *   X(ID, "name") entries:
 *
 *       #define LAB01_METRICS(X) X(M_EPOCH, "epoch") X(M_LOSS, "train_loss")
 *       DL_CSV_SCHEMA(lab01_metrics, LAB01_METRICS);
 *
 *   declares the column indices M_EPOCH, M_LOSS (in the list's order), the
 *   count LAB01_METRICS_NCOLS, the names lab01_metrics_names[] and the
 *   dl_cols lab01_metrics = {names, count}: the count is the list's, never
 *   typed. A row is filled by column, not by place:
 *   double row[LAB01_METRICS_NCOLS] = {[M_EPOCH] = k, [M_LOSS] = loss};
 *   a reader finds a column by its name, lab01_metrics_names[M_LOSS]. A
 *   table whose columns depend on the run (one per class, per algorithm)
 *   builds its dl_cols at run time: {names, how many}. A list longer than
 *   a line is written one X a line between // clang-format off and on
 *   (clang-format's layout of a run of X() is not stable).
 * - dl_csv_open writes to "path.tmp"; dl_csv_close renames it to path.
 *   dl_csv_abort removes the temporary, leaving no partial file behind.
 * - Values are written with %.9g (round-trips float32); non-finite values
 *   are written as "nan", "inf" or "-inf", which gnuplot and numpy read.
 * - Every function returns DL_ERR_IO with the path on a write failure;
 *   after a failure the remaining calls do nothing and close reports it.
 * - A row with text or its own number format is written cell by cell:
 *   dl_csv_cell(c, ID, fmt, ...) sets column ID (printf's fmt; cells in any
 *   order) and dl_csv_end_row writes the row. A column out of range, a cell
 *   over DL_CSV_CELL_MAX − 1 bytes or a row ended with a cell unset is
 *   DL_ERR_ARG (naming the column), kept: the row's dl_csv_end_row and
 *   dl_csv_close return it and the file is not written.
 * - dl_csv_write_named writes a table whose first column is text (class
 *   names, run names): each label in double quotes (a quote inside doubled,
 *   as CSV does), so gnuplot can use it as a tic label.
 * - A dl_table collects rows (one per epoch, say) and writes them at the
 *   end: dl_table_add copies cols.n values (DL_ERR_NOMEM, the table
 *   unchanged, when it cannot grow); dl_table_at(t, row, "col") reads a
 *   value back by column name (NAN for a row or name that is not there);
 *   dl_table_column gives a column's values (stride cols.n from that
 *   pointer) or NULL. The names are kept by pointer: they must outlive the
 *   table (a schema's are static).
 */
#ifndef DL_METRICS_H
#define DL_METRICS_H

#include <stdio.h> // FILE

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

/* A CSV's columns: n names. */
typedef struct dl_cols {
    const char *const *names; /* (n,) */
    int n;
} dl_cols;

#define DL_CSV_COL_ID_(id, name) id,
#define DL_CSV_COL_NAME_(id, name) name,
/* The schema of LIST (an X-macro of X(ID, "name")): see the contract. */
#define DL_CSV_SCHEMA(var, LIST)                                                   \
    enum { LIST(DL_CSV_COL_ID_) LIST##_NCOLS };                                    \
    static const char *const var##_names[LIST##_NCOLS] = {LIST(DL_CSV_COL_NAME_)}; \
    static const dl_cols var = {var##_names, LIST##_NCOLS}

#define DL_CSV_CELL_MAX 128

typedef struct dl_csv_out {
    FILE *f;
    dl_cols cols;
    int ncols; /* values a dl_csv_row writes */
    int failed;
    dl_status err; /* a cell's error, kept for dl_csv_end_row and dl_csv_close */
    char *cells; /* (cols.n, DL_CSV_CELL_MAX) the row under way, NULL before the first cell */
    unsigned char *set; /* (cols.n,) which of its cells are set */
    char path[1024];
    char tmp[1040];
} dl_csv_out;

dl_status dl_csv_open(dl_csv_out *c, const char *path, dl_cols cols);
dl_status dl_csv_row(dl_csv_out *c, const double *vals);
dl_status dl_csv_cell(dl_csv_out *c, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
dl_status dl_csv_end_row(dl_csv_out *c);
dl_status dl_csv_close(dl_csv_out *c);
void dl_csv_abort(dl_csv_out *c);

/* A whole table at once: dir/name with the header cols and nrows rows of
 * cols.n values (row-major), written atomically as above. */
dl_status dl_csv_write(const char *dir, const char *name, dl_cols cols, const double *rows, int nrows);
/* dir/name with the header cols (cols.names[0] names the label column),
 * then per row labels[r] and cols.n − 1 values of rows (row-major). */
dl_status dl_csv_write_named(const char *dir, const char *name, dl_cols cols, const char *const *labels,
                             const double *rows, int nrows);
/* Removes dir/name if it is there: a file an earlier run wrote and this
 * run does not, which must not stay beside this run's data. */
void dl_csv_drop(const char *dir, const char *name);

typedef struct dl_table {
    dl_cols cols;
    int n, cap; /* rows held, rows of room */
    double *rows; /* (n, cols.n) row-major */
} dl_table;

void dl_table_init(dl_table *t, dl_cols cols);
dl_status dl_table_add(dl_table *t, const double *vals);
double dl_table_at(const dl_table *t, int row, const char *col);
const double *dl_table_column(const dl_table *t, const char *col);
/* dl_csv_write of the rows held. */
dl_status dl_table_write(const dl_table *t, const char *dir, const char *name);
void dl_table_free(dl_table *t);

#ifdef __cplusplus
}
#endif
#endif /* DL_METRICS_H */
