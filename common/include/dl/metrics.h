/* dl/metrics.h — metrics.csv: one header row, then one row per record.
 *
 * Contract
 * - dl_csv_open writes to "path.tmp"; dl_csv_close renames it to path.
 *   dl_csv_abort removes the temporary, leaving no partial file behind.
 * - Values are written with %.9g (round-trips float32); non-finite values
 *   are written as "nan", "inf" or "-inf", which gnuplot and numpy read.
 * - Every function returns DL_ERR_IO with the path on a write failure;
 *   after a failure the remaining calls do nothing and close reports it.
 * - dl_csv_write_named writes a table whose first column is text (class
 *   names, run names): each label in double quotes (a quote inside doubled,
 *   as CSV does), so gnuplot can use it as a tic label.
 * - A dl_table collects rows (one per epoch, say) and writes them at the
 *   end: dl_table_add copies ncols values (DL_ERR_NOMEM, the table
 *   unchanged, when it cannot grow); dl_table_at(t, row, "col") reads a
 *   value back by column name (NAN for a row or name that is not there);
 *   dl_table_column gives a column's values (stride ncols from that
 *   pointer) or NULL. cols are kept by pointer: they must outlive the table.
 */
#ifndef DL_METRICS_H
#define DL_METRICS_H

#include <stdio.h> // FILE

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_csv_out {
    FILE *f;
    int ncols;
    int failed;
    char path[1024];
    char tmp[1040];
} dl_csv_out;

dl_status dl_csv_open(dl_csv_out *c, const char *path, const char *const *cols, int ncols);
dl_status dl_csv_row(dl_csv_out *c, const double *vals);
dl_status dl_csv_close(dl_csv_out *c);
void dl_csv_abort(dl_csv_out *c);

/* A whole table at once: dir/name with the header cols and nrows rows of
 * ncols values (row-major), written atomically as above. */
dl_status dl_csv_write(const char *dir, const char *name, const char *const *cols, int ncols, const double *rows,
                       int nrows);
/* dir/name with the header cols (cols[0] names the label column), then per
 * row labels[r] and ncols − 1 values of rows (row-major). */
dl_status dl_csv_write_named(const char *dir, const char *name, const char *const *cols, int ncols,
                             const char *const *labels, const double *rows, int nrows);

typedef struct dl_table {
    const char *const *cols;
    int ncols;
    int n, cap; /* rows held, rows of room */
    double *rows; /* (n, ncols) row-major */
} dl_table;

void dl_table_init(dl_table *t, const char *const *cols, int ncols);
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
