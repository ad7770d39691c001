/* dl/data.h — datasets: CSV, IDX (+gzip) and .npy readers, a registry, and a
 * seeded synthetic generator.
 *
 * Contract
 * - A dl_dataset holds X (n, d) row-major float32, where NaN marks a missing
 *   value, and labels y (n,) int32 in [0, n_classes). It owns its memory;
 *   dl_dataset_free releases it and zeroes the struct (freeing a zeroed
 *   struct is fine).
 * - Readers never crash on bad input. They fail with DL_ERR_IO (cannot open or
 *   read; the message names the file and the system's reason), or
 *   DL_ERR_FORMAT / DL_ERR_RANGE with "file:line:column: reason" (ragged row,
 *   not a number, empty file, missing header, NaN or non-integer label, label
 *   out of range, truncated IDX, wrong magic, unsupported .npy dtype). On
 *   failure *out is left zeroed.
 * - CSV: first line is a header of column names. Fields are numbers; an empty
 *   field, "nan", "NaN" or "NA" is a missing value (NaN). The label column is
 *   chosen by name (default: the last column) and must hold integers.
 * - Registry specs (dl_data_load):
 *     breast_cancer          datasets/breast_cancer.csv (UCI WDBC, 569×30)
 *     fashion_mnist          Debian's dataset-fashion-mnist, or $DL_DATA_DIR;
 *                            pixels scaled to [0, 1]; official test split
 *     synthetic:k=v,...      the generator below, e.g.
 *                            synthetic:n=20000,d=8,classes=2,imbalance=0.02
 *     PATH.csv               any CSV as above
 *   Unknown names and bad k=v pairs give DL_ERR_ARG naming the key and what
 *   was expected.
 */
#ifndef DL_DATA_H
#define DL_DATA_H

#include <stddef.h> // size_t
#include <stdint.h> // int32_t, uint64_t

#include "dl/status.h" // dl_status

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dl_dataset {
    size_t n, d;
    float *X; /* (n, d) row-major; NaN = missing */
    int32_t *y; /* (n,) labels in [0, n_classes) */
    int n_classes;
    char **feature_names; /* d names, or NULL */
    char **class_names; /* n_classes names, or NULL */
    /* X lies in this mapping of a file (dl_npy_map_f32), map_len bytes, which
     * dl_dataset_free unmaps; NULL: X is malloc'd */
    void *map;
    size_t map_len;
} dl_dataset;

dl_status dl_dataset_alloc(dl_dataset *ds, size_t n, size_t d, int n_classes);
void dl_dataset_free(dl_dataset *ds);
/* out = rows idx[0..m) of src (names copied). */
dl_status dl_dataset_subset(const dl_dataset *src, const size_t *idx, size_t m, dl_dataset *out);
/* counts[c] = number of rows with label c; counts has n_classes entries. */
void dl_dataset_class_counts(const dl_dataset *ds, size_t *counts);
/* Class name or "class N" when the set has none. Cannot fail. */
const char *dl_dataset_class_name(const dl_dataset *ds, int c, char *buf, size_t len);
/* x = (x − mean[j]) / scale[j] for every value of feature j (mean, scale:
 * (d,), statistics fitted elsewhere, on the training rows). Cannot fail. */
void dl_dataset_standardise(dl_dataset *ds, const float *mean, const float *scale);

// ---- CSV ----
typedef struct dl_csv_options {
    const char *label_column; /* header name of the label column; NULL = last */
    int n_classes; /* 0 = max label + 1 */
} dl_csv_options;

dl_status dl_read_csv(const char *path, const dl_csv_options *opt, dl_dataset *out);

// ---- IDX (LeCun's format, optionally gzip-compressed) ----
typedef struct dl_idx {
    int ndim;
    uint32_t dims[4];
    size_t count; /* product of dims */
    unsigned char *data; /* count bytes (only unsigned-byte IDX is supported) */
} dl_idx;

dl_status dl_read_idx(const char *path, dl_idx *out);
/* The header and the first max_items items only (0: all; dims[0] says how many
 * were read): a gzip file is decompressed no further than they go. */
dl_status dl_read_idx_first(const char *path, size_t max_items, dl_idx *out);
void dl_idx_free(dl_idx *idx);
/* Images (n, rows, cols) and labels (n) into a dataset, pixels / 255. */
dl_status dl_read_idx_pair(const char *images, const char *labels, int n_classes, dl_dataset *out);
/* The same, for the first max_rows rows only (0: all); both files must still
 * hold the same number of items. */
dl_status dl_read_idx_pair_first(const char *images, const char *labels, int n_classes, size_t max_rows,
                                 dl_dataset *out);

// ---- NumPy .npy (version 1.0, little-endian float32 '<f4' or int32 '<i4', C order) ----
typedef struct dl_npy {
    int is_float; /* 1: float32, 0: int32 */
    int ndim; /* 1 or 2 */
    size_t shape[2];
    void *data;
} dl_npy;

dl_status dl_npy_write_f32(const char *path, const float *a, size_t rows, size_t cols);
dl_status dl_npy_write_i32(const char *path, const int32_t *a, size_t n);
dl_status dl_npy_read(const char *path, dl_npy *out);
void dl_npy_free(dl_npy *a);
/* The float32 (rows, cols) array of the .npy at path where it lies: the file
 * mapped copy-on-write (a run may write into it; the file stays as it is),
 * *data its first element, *map and *map_len what munmap takes. DL_ERR_FORMAT
 * when the file is not such an array, whole. */
dl_status dl_npy_map_f32(const char *path, size_t rows, size_t cols, float **data, void **map, size_t *map_len);

// ---- synthetic generator ----
typedef struct dl_synth_params {
    size_t n, d;
    int classes;
    double imbalance; /* share of the last class; 0 = balanced */
    double scale_spread; /* decades between the smallest and largest feature scale */
    double missing; /* fraction of entries set to NaN */
    double separation; /* distance scale of the class means */
    uint64_t seed;
} dl_synth_params;

/* Defaults: n=1000, d=8, classes=2, balanced, scale_spread=0, missing=0,
 * separation=1.5, seed=1. */
void dl_synth_defaults(dl_synth_params *p);
/* Parses "n=..,d=..,classes=..,imbalance=..,scale_spread=..,missing=..,sep=..,seed=.."
 * on top of p. */
dl_status dl_synth_parse(const char *kv, dl_synth_params *p);
/* Class counts are exact (largest remainder of n·share), rows in random order;
 * x = scale_j · (mu_y + N(0, 1)) + offset_j. */
dl_status dl_synthetic(const dl_synth_params *p, dl_dataset *out);

// ---- registry ----
typedef struct dl_data {
    dl_dataset train; /* the whole set when it has no official split */
    dl_dataset test; /* official test split, or zeroed */
    int has_test;
    char name[64]; /* "breast_cancer", "fashion_mnist", "synthetic", or the file name */
    char source[1200]; /* where it came from (path or generator string) */
} dl_data;

dl_status dl_data_load(const char *spec, dl_data *out);
void dl_data_free(dl_data *d);
/* Directory of the committed datasets (DL_HOME/datasets). Cannot fail. */
const char *dl_datasets_dir(void);

#ifdef __cplusplus
}
#endif
#endif /* DL_DATA_H */
