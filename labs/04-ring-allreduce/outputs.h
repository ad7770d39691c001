/* outputs.h — lab 04's benchmark outputs (outputs.c), so that main.c reads
 * as the benchmark: what a sweep measured goes into a lab04_sweep, and
 * everything the end of a run reports comes from it — the busbw factors, the
 * α–β fit, the closing lines, metrics.csv, fit.csv, summary.json, the plots
 * and --write-profile's profile. Not a student file: lab.mk lists it with
 * the kit's; the grader links it but calls none of it.
 *
 * Contract
 * - The driver fills a lab04_sweep's first part: the world, the algorithms,
 *   the sizes (ascending, at least one), one lab04_cell per size and
 *   algorithm (busbw from dl_bw_busbw with ring_algo_coll: one formula),
 *   the copy and the count of wrong elements. lab04_summarise fills the
 *   rest; it cannot fail.
 * - The sizes' two ends: the first `edge` sizes are the small ones, the last
 *   `edge` the large ones (a quarter of the sizes each, at least one). The
 *   α–β fit t = α + β·bytes takes β from the large sizes' median time per
 *   byte and α from the small ones' median time less β·bytes (outputs.c says
 *   why); "large" is the busbw of the large sizes' median time per byte.
 * - The model is drawn (fit.csv, the plots) only at sizes where it is within
 *   LAB04_FIT_SHOWN of the measured time; fit.csv says its error everywhere.
 * - lab04_report prints the closing lines (rank 0, unless quiet).
 * - lab04_check_profile_path: DL_OK when --write-profile FILE can be
 *   written: FILE's folder exists and is writable or can be made (like
 *   --out), FILE is no folder. Else DL_ERR_ARG naming the flag.
 * - lab04_write_outputs (rank 0) makes o->dir, writes metrics.csv, fit.csv,
 *   the profile (o->write_profile: its folder is made; bus_bw is the
 *   profile algorithm's large-message busbw, hop_latency its α over the
 *   ring's sequential steps; the compute numbers are o->profile's, else the
 *   default), summary.json and a copy at o->json, then draws the plots and
 *   appends what was drawn to list (len bytes). Stops at the first failure
 *   and returns it; summary.json comes after every CSV and the profile.
 *   summary.json: "lab", "ranks", "device", "backend", "dtype",
 *   "memcpy_gbs", "small_to_bytes", "large_from_bytes", "large_to_bytes",
 *   "wrong", "result" (OK|FAILED), and "algos", per algorithm: "collective",
 *   "busbw_factor", "avg_busbw_gbs", "busbw_largest_gbs", "time_largest_us",
 *   "large_busbw_gbs", "large_busbw_min_gbs", "large_busbw_max_gbs",
 *   "fit_alpha_us", "fit_bw_gbs" (1/β, algbw), "fit_busbw_gbs" (the fit's
 *   busbw for large messages).
 */
#ifndef LAB04_OUTPUTS_H
#define LAB04_OUTPUTS_H

#include <stddef.h> // size_t

#include "dl/bandwidth.h" // dl_bw_coll
#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/status.h" // dl_status
#include "ring.h" // ring_algo

#define LAB04_MAX_SIZES 64
#define LAB04_FIT_SHOWN 0.25

/* One algorithm at one size. */
typedef struct lab04_cell {
    double us, algbw, busbw, wrong; /* time per call (µs), GB/s, GB/s, wrong elements over all ranks */
} lab04_cell;

/* What the outputs say about one algorithm (lab04_summarise). */
typedef struct lab04_stats {
    dl_bw_coll coll;
    double factor; /* busbw / algbw: dl_bw_factor(coll, P) */
    double avg; /* GB/s: busbw averaged over every size */
    double alpha, beta; /* the fit: seconds, seconds per byte */
    double large; /* GB/s: busbw of the large sizes' median time per byte */
    double large_lo, large_hi; /* GB/s: the lowest and highest busbw among the large sizes */
} lab04_stats;

typedef struct lab04_sweep {
    // filled by the driver
    int P;
    dl_dtype t;
    size_t esz;
    const dl_device *dev;
    const char *backend; /* dl_comm_backend */
    ring_algo algo[RING_N_ALGOS];
    int n_algos;
    size_t sizes[LAB04_MAX_SIZES]; /* bytes per rank, ascending */
    int n_sizes;
    lab04_cell *cells; /* (n_sizes, n_algos) */
    size_t copy_bytes; /* the one-thread copy: bytes, GB/s */
    double copy_gbs;
    double wrong; /* wrong elements, every size and algorithm */
    // filled by lab04_summarise
    int edge;
    lab04_stats st[RING_N_ALGOS];
} lab04_sweep;

typedef struct lab04_out {
    const char *dir, *plot, *json; /* --out, --plot, --json (NULL: none) */
    const char *write_profile, *profile; /* --write-profile (NULL: none), --profile (NULL: the default) */
} lab04_out;

void lab04_summarise(lab04_sweep *w);
void lab04_report(const lab04_sweep *w);
dl_status lab04_check_profile_path(const char *path);
dl_status lab04_write_outputs(const lab04_sweep *w, const lab04_out *o, char *list, size_t len);

#endif /* LAB04_OUTPUTS_H */
