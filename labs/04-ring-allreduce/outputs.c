/* outputs.c — lab 04's benchmark outputs (outputs.h): the α–β fit, the
 * closing lines, the CSVs, summary.json, the plots and the profile. */
#define _POSIX_C_SOURCE 200809L
#include "outputs.h"

#include <math.h> // fabs, NAN
#include <stdio.h> // printf, snprintf
#include <stdlib.h> // calloc, free
#include <string.h> // strlen, strrchr

#include "dl/fmt.h" // dl_fmt_bytes
#include "dl/fs.h" // dl_mkdir_p, dl_tmp_create, dl_check_writable, dl_home
#include "dl/json.h" // dl_json
#include "dl/metrics.h" // dl_csv_write
#include "dl/plot.h" // dl_plot_listed
#include "dl/project.h" // dl_profile
#include "dl/summary.h" // dl_summary_blas

// ---- the α–β fit ----

/* Median of v[0..n) (n >= 1); reorders v. */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) // insertion sort: n is at most LAB04_MAX_SIZES
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* t = α + β·bytes over n sizes in ascending order, each term fitted where it
 * is what the time is made of: β on the `edge` largest sizes, α on the
 * `edge` smallest. Not one least-squares line through every size: on a real
 * machine a byte has no single cost (a buffer that fits in a cache moves
 * several times faster than one streamed from memory), and such a line —
 * even in relative error — was pulled by the mid-sized points to a bandwidth
 * 3-5x above what the large messages reached, the very bandwidth a
 * projection needs. So β is the median of (t - α) / bytes over the large
 * sizes and α the median of t - β·bytes over the small ones, neither below 0:
 * medians, because on a shared machine one size can be off by a factor of
 * several, and a least-squares fit follows it. Twice, from α = 0, so that β
 * is taken from the large times without α's share. α is at most half the
 * quickest large time (each of them is α plus its bytes' share): on a busy
 * machine the small sizes can be the slow ones, and an α above the large
 * times would leave them no β; then β is taken again under that α. */
static void fit(const double *bytes, const double *t, int n, int edge, double *alpha, double *beta)
{
    double a = 0, b = 0, v[LAB04_MAX_SIZES];
    for (int pass = 0; pass < 2; pass++) {
        int m = 0;
        for (int i = n - edge; i < n; i++)
            if (bytes[i] > 0)
                v[m++] = (t[i] - a) / bytes[i];
        b = m > 0 ? median(v, m) : 0;
        b = b > 0 ? b : 0; // sizes so small that α is all there is
        for (int i = 0; i < edge; i++)
            v[i] = t[i] - b * bytes[i];
        a = median(v, edge);
        a = a > 0 ? a : 0;
    }
    double quickest = 0;
    for (int i = n - edge; i < n; i++)
        if (bytes[i] > 0 && (quickest == 0 || t[i] < quickest))
            quickest = t[i];
    if (quickest > 0 && a > quickest / 2) {
        a = quickest / 2;
        int m = 0;
        for (int i = n - edge; i < n; i++)
            if (bytes[i] > 0)
                v[m++] = (t[i] - a) / bytes[i];
        b = m > 0 ? median(v, m) : 0;
    }
    *alpha = a;
    *beta = b;
}

// ---- what the sweep adds up to ----

void lab04_summarise(lab04_sweep *w)
{
    // a quarter of the sizes at each end, at least one
    w->edge = w->n_sizes / 4 > 0 ? w->n_sizes / 4 : 1;
    double xb[LAB04_MAX_SIZES], yt[LAB04_MAX_SIZES], bw[LAB04_MAX_SIZES];
    for (int k = 0; k < w->n_algos; k++) {
        lab04_stats *s = &w->st[k];
        s->coll = ring_algo_coll(w->algo[k]);
        s->factor = dl_bw_factor(s->coll, w->P);
        s->avg = 0;
        for (int i = 0; i < w->n_sizes; i++) {
            const lab04_cell *x = &w->cells[i * w->n_algos + k];
            s->avg += x->busbw / w->n_sizes;
            xb[i] = (double)w->sizes[i];
            yt[i] = x->us * 1e-6;
        }
        fit(xb, yt, w->n_sizes, w->edge, &s->alpha, &s->beta);
        // the large messages' busbw: from their median time per byte (the
        // fit's β without α), and the range of their own busbw
        int n = 0, m = 0;
        double per[LAB04_MAX_SIZES];
        for (int i = w->n_sizes - w->edge; i < w->n_sizes; i++) {
            bw[n++] = w->cells[i * w->n_algos + k].busbw;
            if (xb[i] > 0)
                per[m++] = yt[i] / xb[i];
        }
        s->large = m > 0 ? dl_bw_busbw(s->coll, w->P, 1.0, median(per, m)) / 1e9 : 0;
        median(bw, n); // sorts bw
        s->large_lo = bw[0];
        s->large_hi = bw[n - 1];
    }
}

/* The model's time for algorithm k at size i, and its error against the
 * measurement (model / measured - 1). */
static double model_s(const lab04_sweep *w, int k, int i)
{
    return w->st[k].alpha + w->st[k].beta * (double)w->sizes[i];
}

static double model_err(const lab04_sweep *w, int k, int i)
{
    return model_s(w, k, i) / (w->cells[i * w->n_algos + k].us * 1e-6) - 1;
}

// ---- outputs ----

/* The sizes from index i to j as "8 B to 32 B", or "8 B" when i = j. */
static const char *span(const lab04_sweep *w, int i, int j, char *buf, size_t len)
{
    char a[32], b[32];
    dl_fmt_bytes((double)w->sizes[i], a, sizeof a);
    dl_fmt_bytes((double)w->sizes[j], b, sizeof b);
    if (i == j)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s to %s", a, b);
    return buf;
}

/* The large sizes, and the small ones. */
static const char *large_span(const lab04_sweep *w, char *buf, size_t len)
{
    return span(w, w->n_sizes - w->edge, w->n_sizes - 1, buf, len);
}

static const char *small_span(const lab04_sweep *w, char *buf, size_t len)
{
    return span(w, 0, w->edge - 1, buf, len);
}

/* The directory a file goes in ("." for a bare name). */
static void parent_dir(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, len, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

/* --write-profile FILE: FILE's directory may be made (like --out), FILE may
 * not be a directory. */
dl_status lab04_check_profile_path(const char *path)
{
    char dir[1024];
    parent_dir(path, dir, sizeof dir);
    DL_TRY(dl_check_writable("--write-profile", dir, 1));
    return dl_file_exists(dir) ? dl_check_writable("--write-profile", path, 0) : DL_OK;
}

/* The projection profile of what algorithm k measured: bus_bw the large
 * sizes' busbw (measured, not extrapolated from a fit), hop_latency the
 * fit's α over the ring's sequential steps. */
static dl_status write_profile(const lab04_sweep *w, const lab04_out *o, int k)
{
    const lab04_stats *s = &w->st[k];
    dl_profile base;
    DL_TRY(dl_profile_load(o->profile != NULL ? o->profile : dl_profile_default(), &base));
    char dir[1024], tmp[1300], large[80];
    parent_dir(o->write_profile, dir, sizeof dir);
    DL_TRY(dl_mkdir_p(dir));
    FILE *f = dl_tmp_create(o->write_profile, tmp, sizeof tmp, "w");
    if (f == NULL)
        return DL_ERR_IO;
    double steps = dl_bw_ring_steps(s->coll, w->P);
    double bus_bw = s->large > 0 ? s->large * 1e9 : base.bus_bw,
           hop = s->alpha > 0 ? s->alpha / steps : base.hop_latency;
    fprintf(f,
            "# measured by lab 04 (%s, %s on %d ranks, %s):\n"
            "# bus_bw = the busbw of the large messages' median time per byte, %s (%.3g to %.3g GB/s);\n"
            "# hop_latency = alpha / %g sequential steps, alpha from t = alpha + beta * bytes on the small ones.\n"
            "# The compute numbers are %s's, unchanged.\n"
            "name = measured-%dranks\ngpus = %d\nfp32_peak = %.6g\nfp16_peak = %.6g\nmem_bw = %.6g\n"
            "fp32_efficiency = %.6g\nfp16_efficiency = %.6g\nmem_efficiency = %.6g\nbus_bw = %.6g\n"
            "hop_latency = %.6g\nlaunch_overhead = %.6g\n",
            ring_algo_name(w->algo[k]), dl_bw_coll_name(s->coll), w->P, w->dev->name,
            large_span(w, large, sizeof large), s->large_lo, s->large_hi, steps, base.name, w->P, w->P, base.fp32_peak,
            base.fp16_peak, base.mem_bw, base.fp32_efficiency, base.fp16_efficiency, base.mem_efficiency, bus_bw, hop,
            base.launch_overhead);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, o->write_profile) != 0) {
        remove(tmp);
        return dl_error_set(DL_ERR_IO, "--write-profile %s: write failed", o->write_profile);
    }
    return DL_OK;
}

/* metrics.csv (one row per size, us/algbw/busbw/wrong per algorithm) and
 * fit.csv (the model's us/algbw/busbw where it is within LAB04_FIT_SHOWN of the
 * measurement, nan elsewhere, and its error everywhere). */
static dl_status write_tables(const lab04_sweep *w, const char *dir)
{
    // bytes, count, then per algorithm its us, algbw, busbw and wrong (fit.csv: err)
    enum { BYTES, COUNT, FIRST, US = 0, ALGBW, BUSBW, WRONG, PER_ALGO, ERR = WRONG };
    int ncols = FIRST + PER_ALGO * w->n_algos;
    char(*names)[48] = calloc((size_t)ncols, sizeof *names);
    const char **cols = calloc((size_t)ncols, sizeof *cols);
    double *rows = calloc((size_t)w->n_sizes * (size_t)ncols, sizeof *rows);
    if (names == NULL || cols == NULL || rows == NULL) {
        free(names), free(cols), free(rows);
        return dl_error_set(DL_ERR_NOMEM, "out of memory for the tables");
    }
    dl_status st = DL_OK;
    for (int table = 0; table < 2 && st == DL_OK; table++) {
        const char *what[2][PER_ALGO] = {{[US] = "us", [ALGBW] = "algbw", [BUSBW] = "busbw", [WRONG] = "wrong"},
                                         {[US] = "us", [ALGBW] = "algbw", [BUSBW] = "busbw", [ERR] = "err"}};
        snprintf(names[BYTES], sizeof names[0], "bytes");
        snprintf(names[COUNT], sizeof names[0], "count");
        for (int k = 0; k < w->n_algos; k++)
            for (int q = 0; q < PER_ALGO; q++)
                snprintf(names[FIRST + PER_ALGO * k + q], sizeof names[0], "%s_%s", ring_algo_name(w->algo[k]),
                         what[table][q]);
        for (int i = 0; i < ncols; i++)
            cols[i] = names[i];
        for (int i = 0; i < w->n_sizes; i++) {
            double *r = rows + (size_t)i * ncols, bytes = (double)w->sizes[i];
            r[BYTES] = bytes;
            r[COUNT] = (double)(w->sizes[i] / w->esz);
            for (int k = 0; k < w->n_algos; k++) {
                const lab04_cell *x = &w->cells[i * w->n_algos + k];
                double *c = r + FIRST + PER_ALGO * k, t = model_s(w, k, i), err = model_err(w, k, i);
                if (table == 0) {
                    c[US] = x->us, c[ALGBW] = x->algbw, c[BUSBW] = x->busbw, c[WRONG] = x->wrong;
                } else if (fabs(err) <= LAB04_FIT_SHOWN) {
                    c[US] = t * 1e6, c[ALGBW] = dl_bw_algbw(bytes, t) / 1e9;
                    c[BUSBW] = dl_bw_busbw(w->st[k].coll, w->P, bytes, t) / 1e9, c[ERR] = err;
                } else {
                    c[US] = c[ALGBW] = c[BUSBW] = NAN, c[ERR] = err;
                }
            }
        }
        st = dl_csv_write(dir, table == 0 ? "metrics.csv" : "fit.csv", (dl_cols){cols, ncols}, rows, w->n_sizes);
    }
    free(names), free(cols), free(rows);
    return st;
}

/* The algorithms by their large messages' busbw, fastest first (for the
 * slides' prose, slides/04-ring-allreduce.md): large_order "a > b > ...",
 * large_fastest and large_slowest. */
static void large_ranking(dl_json *j, const lab04_sweep *w)
{
    int order[RING_N_ALGOS], n = w->n_algos;
    for (int k = 0; k < n; k++) {
        int at = k;
        while (at > 0 && w->st[k].large > w->st[order[at - 1]].large) // a stable insertion: ties keep the run's order
            order[at] = order[at - 1], at--;
        order[at] = k;
    }
    char text[256] = "";
    size_t used = 0;
    for (int k = 0; k < n && used < sizeof text; k++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%s", k ? " > " : "",
                                 ring_algo_name(w->algo[order[k]]));
    if (n > 0) {
        dl_json_str(j, "large_order", text);
        dl_json_str(j, "large_fastest", ring_algo_name(w->algo[order[0]]));
        dl_json_str(j, "large_slowest", ring_algo_name(w->algo[order[n - 1]]));
    }
}

/* summary.json (and a copy at --json). */
static dl_status write_summary(const lab04_sweep *w, const char *path)
{
    dl_json j;
    DL_TRY(dl_json_open(&j, path));
    dl_json_object(&j, NULL);
    dl_json_str(&j, "lab", "04");
    dl_json_int(&j, "ranks", w->P);
    dl_json_str(&j, "device", w->dev->name);
    dl_json_str(&j, "backend", w->backend);
    dl_json_str(&j, "dtype", dl_dtype_name(w->t));
    dl_json_num(&j, "memcpy_gbs", w->copy_gbs);
    dl_json_int(&j, "small_to_bytes", (long long)w->sizes[w->edge - 1]);
    dl_json_int(&j, "large_from_bytes", (long long)w->sizes[w->n_sizes - w->edge]);
    dl_json_int(&j, "large_to_bytes", (long long)w->sizes[w->n_sizes - 1]);
    dl_json_int(&j, "sizes_from_bytes", (long long)w->sizes[0]);
    dl_json_int(&j, "sizes", w->n_sizes);
    large_ranking(&j, w);
    dl_json_int(&j, "wrong", (long long)w->wrong);
    dl_json_str(&j, "result", w->wrong == 0 ? "OK" : "FAILED");
    dl_json_object(&j, "algos");
    for (int k = 0; k < w->n_algos; k++) {
        const lab04_cell *last = &w->cells[(w->n_sizes - 1) * w->n_algos + k];
        const lab04_stats *s = &w->st[k];
        dl_json_object(&j, ring_algo_name(w->algo[k]));
        dl_json_str(&j, "collective", dl_bw_coll_name(s->coll));
        dl_json_num(&j, "busbw_factor", s->factor);
        dl_json_num(&j, "avg_busbw_gbs", s->avg);
        dl_json_num(&j, "busbw_largest_gbs", last->busbw);
        dl_json_num(&j, "time_largest_us", last->us);
        dl_json_num(&j, "large_busbw_gbs", s->large);
        dl_json_num(&j, "large_busbw_min_gbs", s->large_lo);
        dl_json_num(&j, "large_busbw_max_gbs", s->large_hi);
        dl_json_num(&j, "fit_alpha_us", s->alpha * 1e6);
        dl_json_num(&j, "fit_bw_gbs", s->beta > 0 ? 1e-9 / s->beta : 0.0);
        dl_json_num(&j, "fit_busbw_gbs", s->beta > 0 ? s->factor * 1e-9 / s->beta : 0.0);
        dl_json_end_object(&j);
    }
    dl_json_end_object(&j);
    dl_summary_blas(&j);
    dl_json_end_object(&j);
    return dl_json_close(&j);
}

/* busbw and time plots; what was drawn goes to list. */
static void draw(const lab04_sweep *w, const lab04_out *o, char *list, size_t len)
{
    char vars[3600], algos[300] = "", meas[300] = "", alpha[300] = "", fitbw[300] = "", beta[300] = "",
                     factor[300] = "", small[80], large[80];
    for (int k = 0; k < w->n_algos; k++) {
        const lab04_stats *s = &w->st[k];
        const char *sep = k ? " " : "";
        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s", sep, ring_algo_name(w->algo[k]));
        snprintf(meas + strlen(meas), sizeof meas - strlen(meas), "%s%.3g", sep, s->large);
        snprintf(alpha + strlen(alpha), sizeof alpha - strlen(alpha), "%s%.3g", sep, s->alpha * 1e6);
        snprintf(fitbw + strlen(fitbw), sizeof fitbw - strlen(fitbw), "%s%.3g", sep,
                 s->beta > 0 ? s->factor * 1e-9 / s->beta : 0.0);
        snprintf(beta + strlen(beta), sizeof beta - strlen(beta), "%s%.6g", sep, s->beta);
        snprintf(factor + strlen(factor), sizeof factor - strlen(factor), "%s%.6g", sep, s->factor);
    }
    snprintf(vars, sizeof vars,
             "data='%s/metrics.csv'; model='%s/fit.csv'; algos='%s'; P=%d; dtype='%s'; meas='%s'; alpha='%s'; "
             "fitbw='%s'; beta='%s'; factor='%s'; small='%s'; large='%s'; shown=%g; "
             "scripts='%s/labs/04-ring-allreduce/plots'",
             o->dir, o->dir, algos, w->P, dl_dtype_name(w->t), meas, alpha, fitbw, beta, factor,
             small_span(w, small, sizeof small), large_span(w, large, sizeof large), 100 * LAB04_FIT_SHOWN, dl_home());
    dl_plot_listed("labs/04-ring-allreduce/plots/busbw.gp", o->plot, o->dir, "busbw", vars, "lab04", list, len);
    dl_plot_listed("labs/04-ring-allreduce/plots/time.gp", o->plot, o->dir, "time", vars, "lab04", list, len);
}

// ---- the closing lines ----

/* The closing lines: the busbw factors, the copy, and per algorithm the
 * average busbw, the large messages' busbw and the fit. */
void lab04_report(const lab04_sweep *w)
{
    char large[80];
    const char *sep = "";
    printf("# busbw = algbw");
    for (int c = 0; c < DL_BW_COLL_COUNT; c++)
        for (int k = 0; k < w->n_algos; k++)
            if (w->st[k].coll == (dl_bw_coll)c) {
                printf("%s x %g (%s)", sep, w->st[k].factor, dl_bw_coll_name((dl_bw_coll)c));
                sep = ",";
                break;
            }
    printf("; large messages: %s\n", large_span(w, large, sizeof large));
    if (w->copy_bytes > 0)
        printf("# a copy of %zu bytes on rank 0's %s: %.3f GB/s (one thread: the ceiling of a rank's adds)\n",
               w->copy_bytes, w->dev->name, w->copy_gbs);
    for (int k = 0; k < w->n_algos; k++) {
        const lab04_stats *s = &w->st[k];
        printf(
            "# %-14s Avg bus bandwidth %7.3f GB/s, large messages %7.3f GB/s   fit: t = %.3g us + bytes / %.3g GB/s\n",
            ring_algo_name(w->algo[k]), s->avg, s->large, s->alpha * 1e6, s->beta > 0 ? 1e-9 / s->beta : 0.0);
    }
}

dl_status lab04_write_outputs(const lab04_sweep *w, const lab04_out *o, char *list, size_t len)
{
    int prof = 0;
    for (int k = 0; k < w->n_algos; k++) // the library's, else the ring's, else the first
        if (w->algo[k] == RING_LIBRARY || (w->algo[prof] != RING_LIBRARY && w->algo[k] == RING_RING))
            prof = k;
    DL_TRY(dl_mkdir_p(o->dir));
    DL_TRY(write_tables(w, o->dir));
    if (o->write_profile != NULL)
        DL_TRY(write_profile(w, o, prof));
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.json", o->dir);
    DL_TRY(write_summary(w, path));
    if (o->json != NULL)
        DL_TRY(write_summary(w, o->json));
    draw(w, o, list, len);
    return DL_OK;
}
