/* dl/metrics.h — metrics.csv: one header row, then one row per record.
 *
 * Contract
 * - dl_csv_open writes to "path.tmp"; dl_csv_close renames it to path.
 *   dl_csv_abort removes the temporary, leaving no partial file behind.
 * - Values are written with %.9g (round-trips float32); non-finite values
 *   are written as "nan", "inf" or "-inf", which gnuplot and numpy read.
 * - Every function returns DL_ERR_IO with the path on a write failure;
 *   after a failure the remaining calls do nothing and close reports it.
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

#ifdef __cplusplus
}
#endif
#endif /* DL_METRICS_H */
