/* registry.c — dataset names to data: breast_cancer, fashion_mnist, synthetic:..., PATH.csv. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // snprintf
#include <stdlib.h> // getenv, strtoull
#include <string.h> // strcmp, strncmp, strdup

#include "dl/data.h"
#include "dl/fs.h" // dl_home, dl_file_exists

static const char *const fashion_classes[10] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
};
static const char *const cancer_classes[2] = {"malignant", "benign"};

const char *dl_datasets_dir(void)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/datasets", dl_home());
    return buf;
}

static void set_class_names(dl_dataset *ds, const char *const *names, int n)
{
    ds->class_names = calloc((size_t)n, sizeof *ds->class_names);
    if (ds->class_names == NULL)
        return;
    for (int c = 0; c < n; c++)
        ds->class_names[c] = strdup(names[c]);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Keeps the first m rows of ds (m = 0 keeps all). */
static void truncate_rows(dl_dataset *ds, size_t m)
{
    if (m > 0 && m < ds->n)
        ds->n = m;
}

static dl_status parse_fashion_opts(const char *kv, size_t *n_train, size_t *n_test)
{
    while (kv != NULL && *kv) {
        char key[32];
        unsigned long long v = 0;
        int used = 0;
        if (sscanf(kv, "%31[a-z_]=%llu%n", key, &v, &used) != 2)
            return dl_error_set(DL_ERR_ARG, "fashion_mnist: '%s' is not key=N (keys: train, test)", kv);
        if (strcmp(key, "train") == 0)
            *n_train = (size_t)v;
        else if (strcmp(key, "test") == 0)
            *n_test = (size_t)v;
        else
            return dl_error_set(DL_ERR_ARG, "fashion_mnist: unknown key '%s' (expected train=N or test=N)", key);
        kv += used;
        if (*kv == ',')
            kv++;
        else if (*kv != '\0')
            return dl_error_set(DL_ERR_ARG, "fashion_mnist: unexpected '%s'", kv);
    }
    return DL_OK;
}

/* base/NAME where the folder holds it decompressed (the kit's build makes such
 * a copy: make's runs read it with no inflating), else base/NAME.gz. */
static void idx_file(char *path, size_t len, const char *base, const char *name)
{
    snprintf(path, len, "%s/%s", base, name);
    if (!dl_file_exists(path))
        snprintf(path, len, "%s/%s.gz", base, name);
}

static dl_status load_fashion(const char *opts, dl_data *out)
{
    size_t n_train = 0, n_test = 0;
    DL_TRY(parse_fashion_opts(opts, &n_train, &n_test));
    const char *dir = getenv("DL_DATA_DIR");
    char base[1024];
    if (dir != NULL && dir[0] != '\0')
        snprintf(base, sizeof base, "%s", dir);
    else
        snprintf(base, sizeof base, "/usr/share/datasets/fashion-mnist");
    char ti[1100], tl[1100], vi[1100], vl[1100];
    idx_file(ti, sizeof ti, base, "train-images-idx3-ubyte");
    idx_file(tl, sizeof tl, base, "train-labels-idx1-ubyte");
    idx_file(vi, sizeof vi, base, "t10k-images-idx3-ubyte");
    idx_file(vl, sizeof vl, base, "t10k-labels-idx1-ubyte");
    if (!dl_file_exists(ti))
        return dl_error_set(DL_ERR_IO,
                            "fashion_mnist: %s not found. Install Debian's dataset-fashion-mnist "
                            "package (`make deps`, or sudo apt-get install dataset-fashion-mnist), "
                            "or set DL_DATA_DIR to a folder with the four Fashion-MNIST files (.gz or not)",
                            ti);
    // train=N, test=N: only the first N rows are read (and decompressed)
    DL_TRY(dl_read_idx_pair_first(ti, tl, 10, n_train, &out->train));
    dl_status st = dl_read_idx_pair_first(vi, vl, 10, n_test, &out->test);
    if (st != DL_OK) {
        dl_dataset_free(&out->train);
        return st;
    }
    truncate_rows(&out->train, n_train);
    truncate_rows(&out->test, n_test);
    out->has_test = 1;
    set_class_names(&out->train, fashion_classes, 10);
    set_class_names(&out->test, fashion_classes, 10);
    snprintf(out->name, sizeof out->name, "fashion_mnist");
    snprintf(out->source, sizeof out->source, "%s", base);
    return DL_OK;
}

dl_status dl_data_load(const char *spec, dl_data *out)
{
    memset(out, 0, sizeof *out);
    if (spec == NULL || spec[0] == '\0')
        return dl_error_set(DL_ERR_ARG, "--data: empty dataset name");
    if (strcmp(spec, "breast_cancer") == 0) {
        char path[1100];
        snprintf(path, sizeof path, "%s/breast_cancer.csv", dl_datasets_dir());
        dl_csv_options opt = {"target", 2};
        DL_TRY(dl_read_csv(path, &opt, &out->train));
        set_class_names(&out->train, cancer_classes, 2);
        snprintf(out->name, sizeof out->name, "breast_cancer");
        snprintf(out->source, sizeof out->source, "%s", path);
        return DL_OK;
    }
    if (strcmp(spec, "fashion_mnist") == 0)
        return load_fashion(NULL, out);
    if (strncmp(spec, "fashion_mnist:", 14) == 0)
        return load_fashion(spec + 14, out);
    if (strcmp(spec, "synthetic") == 0 || strncmp(spec, "synthetic:", 10) == 0) {
        dl_synth_params p;
        dl_synth_defaults(&p);
        if (spec[9] == ':')
            DL_TRY(dl_synth_parse(spec + 10, &p));
        DL_TRY(dl_synthetic(&p, &out->train));
        snprintf(out->name, sizeof out->name, "synthetic");
        snprintf(out->source, sizeof out->source, "%s", spec);
        return DL_OK;
    }
    if (ends_with(spec, ".csv")) {
        DL_TRY(dl_read_csv(spec, NULL, &out->train));
        const char *slash = strrchr(spec, '/');
        snprintf(out->name, sizeof out->name, "%s", slash ? slash + 1 : spec);
        snprintf(out->source, sizeof out->source, "%s", spec);
        return DL_OK;
    }
    return dl_error_set(DL_ERR_ARG,
                        "--data '%s': unknown dataset; expected breast_cancer, "
                        "fashion_mnist, synthetic:k=v,... or a path to a .csv file",
                        spec);
}

void dl_data_free(dl_data *d)
{
    dl_dataset_free(&d->train);
    dl_dataset_free(&d->test);
    memset(d, 0, sizeof *d);
}
