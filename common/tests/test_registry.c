/* test_registry.c — dataset specs: the committed breast_cancer, Debian's
 * Fashion-MNIST, synthetic:..., CSV paths, and the errors for bad specs. */
#include "tests.h"

#include <fcntl.h> // AT_FDCWD
#include <stdio.h> // snprintf
#include <stdlib.h> // free
#include <string.h> // memcmp
#include <sys/stat.h> // mkdir, utimensat
#include <zlib.h> // gzopen, gzread

#include "dl/data.h" // dl_data_load, dl_dataset_class_counts

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

static void require_fashion(void)
{
    ck_assert_msg(path_exists(FASHION_DIR "/train-images-idx3-ubyte.gz"),
                  "Debian's dataset-fashion-mnist is not installed (make deps)");
}

START_TEST(breast_cancer)
{
    dl_data d;
    ck_assert_st(dl_data_load("breast_cancer", &d), DL_OK);
    ck_assert_str_eq(d.name, "breast_cancer");
    ck_assert_has(d.source, "datasets/breast_cancer.csv");
    ck_assert_int_eq(d.has_test, 0);
    ck_assert_uint_eq(d.test.n, 0);
    const dl_dataset *t = &d.train;
    ck_assert_uint_eq(t->n, 569);
    ck_assert_uint_eq(t->d, 30);
    ck_assert_int_eq(t->n_classes, 2);
    size_t counts[2];
    dl_dataset_class_counts(t, counts);
    ck_assert_uint_eq(counts[0], 212);
    ck_assert_uint_eq(counts[1], 357);
    ck_assert_str_eq(t->feature_names[0], "mean_radius");
    ck_assert_str_eq(t->feature_names[29], "worst_fractal_dimension");
    ck_assert_str_eq(t->class_names[0], "malignant");
    ck_assert_str_eq(t->class_names[1], "benign");
    // First row of WDBC, and the feature-scale spread the lab is about.
    ck_assert_float_eq(t->X[0], 17.99f);
    ck_assert_float_eq(t->X[3], 1001.0f);
    float lo = 1e30f, hi = 0;
    size_t nan = 0;
    for (size_t i = 0; i < t->n * t->d; i++) {
        nan += t->X[i] != t->X[i];
        if (t->X[i] > hi)
            hi = t->X[i];
        if (t->X[i] > 0 && t->X[i] < lo)
            lo = t->X[i];
    }
    ck_assert_uint_eq(nan, 0);
    ck_assert_float_gt(hi, 3000.0f);
    ck_assert_float_lt(lo, 0.01f);
    dl_data_free(&d);
    ck_assert_uint_eq(d.train.n, 0);
}
END_TEST

START_TEST(fashion_mnist_full)
{
    require_fashion();
    env_saved e = env_set("DL_DATA_DIR", NULL);
    dl_data d;
    ck_assert_st(dl_data_load("fashion_mnist", &d), DL_OK);
    ck_assert_str_eq(d.name, "fashion_mnist");
    ck_assert_str_eq(d.source, FASHION_DIR);
    ck_assert_int_eq(d.has_test, 1);
    const dl_dataset *parts[2] = {&d.train, &d.test};
    const size_t n[2] = {60000, 10000};
    for (int p = 0; p < 2; p++) {
        const dl_dataset *t = parts[p];
        ck_assert_uint_eq(t->n, n[p]);
        ck_assert_uint_eq(t->d, 784);
        ck_assert_int_eq(t->n_classes, 10);
        ck_assert_ptr_nonnull(t->class_names);
        ck_assert_str_eq(t->class_names[0], "T-shirt/top");
        ck_assert_str_eq(t->class_names[9], "Ankle boot");
        size_t counts[10];
        dl_dataset_class_counts(t, counts);
        for (int c = 0; c < 10; c++) // Fashion-MNIST is balanced in both splits
            ck_assert_uint_eq(counts[c], n[p] / 10);
        float lo = 1, hi = 0;
        size_t outside = 0;
        for (size_t i = 0; i < t->n * t->d; i++) {
            float v = t->X[i];
            outside += !(v >= 0.0f && v <= 1.0f);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        ck_assert_uint_eq(outside, 0);
        ck_assert_float_eq(lo, 0.0f);
        ck_assert_float_eq(hi, 1.0f);
    }
    char buf[16];
    ck_assert_str_eq(dl_dataset_class_name(&d.test, 7, buf, sizeof buf), "Sneaker");
    dl_data_free(&d);
    env_restore(&e);
}
END_TEST

START_TEST(fashion_mnist_truncated)
{
    require_fashion();
    env_saved e = env_set("DL_DATA_DIR", NULL);
    dl_data d;
    ck_assert_st(dl_data_load("fashion_mnist:train=1000,test=200", &d), DL_OK);
    ck_assert_uint_eq(d.train.n, 1000);
    ck_assert_uint_eq(d.test.n, 200);
    ck_assert_uint_eq(d.train.d, 784);
    ck_assert_int_eq(d.has_test, 1);
    dl_data_free(&d);
    ck_assert_st(dl_data_load("fashion_mnist:test=50", &d), DL_OK);
    ck_assert_uint_eq(d.train.n, 60000);
    ck_assert_uint_eq(d.test.n, 50);
    dl_data_free(&d);
    const char *bad[] = {"fashion_mnist:train=x", "fashion_mnist:colour=3", "fashion_mnist:train=5;",
                         "fashion_mnist:train"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_st(dl_data_load(bad[i], &d), DL_ERR_ARG);
        ck_assert_has(dl_last_error(), "fashion_mnist:");
    }
    ck_assert_has(dl_last_error(), "train");
    env_restore(&e);
}
END_TEST

/* The first `bytes` bytes of Debian's FASHION_DIR/name.gz, decompressed into dir/name. */
static void plain_head(const char *dir, const char *name, size_t bytes)
{
    char src[4200], dst[4200];
    snprintf(src, sizeof src, "%s/%s.gz", FASHION_DIR, name);
    snprintf(dst, sizeof dst, "%s/%s", dir, name);
    unsigned char *buf = malloc(bytes);
    gzFile f = gzopen(src, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(gzread(f, buf, (unsigned)bytes), (int)bytes);
    gzclose(f);
    write_bytes(dst, buf, bytes);
    free(buf);
}

START_TEST(fashion_mnist_plain_copy)
{
    // a folder with the files decompressed (the build's copy) is read as they are, and gives the
    // same rows as Debian's .gz; a .gz beside a plain file is not looked at
    require_fashion();
    const char *dir = tpath("fm-plain");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    plain_head(dir, "train-images-idx3-ubyte", 16 + 300 * 784);
    plain_head(dir, "train-labels-idx1-ubyte", 8 + 300);
    plain_head(dir, "t10k-images-idx3-ubyte", 16 + 40 * 784);
    plain_head(dir, "t10k-labels-idx1-ubyte", 8 + 40);
    char junk[4200];
    snprintf(junk, sizeof junk, "%s/train-images-idx3-ubyte.gz", dir);
    write_text(junk, "not this file\n");
    env_saved e = env_set("DL_DATA_DIR", dir);
    dl_data plain, gz;
    ck_assert_msg(dl_data_load("fashion_mnist:train=300,test=40", &plain) == DL_OK, "%s", dl_last_error());
    env_restore(&e);
    e = env_set("DL_DATA_DIR", NULL);
    ck_assert_st(dl_data_load("fashion_mnist:train=300,test=40", &gz), DL_OK);
    env_restore(&e);
    ck_assert_str_eq(plain.source, dir);
    ck_assert_uint_eq(plain.train.n, 300);
    ck_assert_uint_eq(plain.test.n, 40);
    ck_assert_int_eq(memcmp(plain.train.X, gz.train.X, 300 * 784 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(plain.test.X, gz.test.X, 40 * 784 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(plain.train.y, gz.train.y, 300 * sizeof *gz.train.y), 0);
    ck_assert_int_eq(memcmp(plain.test.y, gz.test.y, 40 * sizeof *gz.test.y), 0);
    dl_data_free(&plain);
    dl_data_free(&gz);
}
END_TEST

/* An IDX pair of the first n rows of Debian's files, its headers saying n. */
static void idx_head(const char *dir, const char *name, size_t head, size_t item, size_t n)
{
    plain_head(dir, name, head + n * item);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    unsigned char count[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                              (unsigned char)n};
    ck_assert_int_eq(fseek(f, 4, SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(count, 1, 4, f), 4);
    fclose(f);
}

START_TEST(fashion_mnist_float_copy)
{
    // IMAGES.f32.npy beside a plain IMAGES (make writes it with tools/idx2npy) is mapped instead of
    // converting the bytes: the same floats bit for bit, written to without touching the file; a copy
    // older than IMAGES, or of another shape, is not used
    require_fashion();
    // make's copy (build/data/fashion-mnist, where make test's DL_DATA_DIR points): Debian's rows, bit for bit
    const char *made = getenv("DL_DATA_DIR");
    char made_npy[4200];
    snprintf(made_npy, sizeof made_npy, "%s/train-images-idx3-ubyte.f32.npy", made != NULL ? made : "");
    if (made != NULL && path_exists(made_npy)) {
        dl_data copy, gz;
        ck_assert_st(dl_data_load("fashion_mnist:train=2000,test=300", &copy), DL_OK);
        ck_assert_ptr_nonnull(copy.train.map);
        env_saved e0 = env_set("DL_DATA_DIR", NULL);
        ck_assert_st(dl_data_load("fashion_mnist:train=2000,test=300", &gz), DL_OK);
        env_restore(&e0);
        ck_assert_ptr_null(gz.train.map);
        ck_assert_int_eq(memcmp(copy.train.X, gz.train.X, 2000 * 784 * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(copy.test.X, gz.test.X, 300 * 784 * sizeof(float)), 0);
        dl_data_free(&copy);
        dl_data_free(&gz);
    }
    const char *dir = tpath("fm-float");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    idx_head(dir, "train-images-idx3-ubyte", 16, 784, 300);
    idx_head(dir, "train-labels-idx1-ubyte", 8, 1, 300);
    idx_head(dir, "t10k-images-idx3-ubyte", 16, 784, 40);
    idx_head(dir, "t10k-labels-idx1-ubyte", 8, 1, 40);
    env_saved e = env_set("DL_DATA_DIR", dir);
    dl_data bytes, mapped;
    ck_assert_msg(dl_data_load("fashion_mnist", &bytes) == DL_OK, "%s", dl_last_error());
    ck_assert_ptr_null(bytes.train.map);
    char npy[4300], idx[4200];
    snprintf(idx, sizeof idx, "%s/train-images-idx3-ubyte", dir);
    snprintf(npy, sizeof npy, "%s.f32.npy", idx);
    ck_assert_st(dl_npy_write_f32(npy, bytes.train.X, 300, 784), DL_OK);
    ck_assert_st(dl_data_load("fashion_mnist:train=120", &mapped), DL_OK);
    ck_assert_ptr_nonnull(mapped.train.map);
    ck_assert_ptr_null(mapped.test.map); // (no copy beside the test images)
    ck_assert_uint_eq(mapped.train.n, 120);
    ck_assert_int_eq(memcmp(mapped.train.X, bytes.train.X, 120 * 784 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(mapped.train.y, bytes.train.y, 120 * sizeof *bytes.train.y), 0);
    mapped.train.X[0] = 42.0f; // copy on write: the file keeps its floats
    dl_data_free(&mapped);
    ck_assert_st(dl_data_load("fashion_mnist", &mapped), DL_OK);
    ck_assert_ptr_nonnull(mapped.train.map);
    ck_assert_int_eq(memcmp(mapped.train.X, bytes.train.X, 300 * 784 * sizeof(float)), 0);
    dl_data_free(&mapped);
    // older than the images: not used
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, npy, old, 0), 0);
    ck_assert_st(dl_data_load("fashion_mnist", &mapped), DL_OK);
    ck_assert_ptr_null(mapped.train.map);
    ck_assert_int_eq(memcmp(mapped.train.X, bytes.train.X, 300 * 784 * sizeof(float)), 0);
    dl_data_free(&mapped);
    // another shape (a copy of other files): not used
    ck_assert_st(dl_npy_write_f32(npy, bytes.train.X, 299, 784), DL_OK);
    ck_assert_st(dl_data_load("fashion_mnist", &mapped), DL_OK);
    ck_assert_ptr_null(mapped.train.map);
    ck_assert_int_eq(memcmp(mapped.train.X, bytes.train.X, 300 * 784 * sizeof(float)), 0);
    ck_assert_str_eq(dl_last_error(), "");
    dl_data_free(&mapped);
    env_restore(&e);
    dl_data_free(&bytes);
}
END_TEST

START_TEST(fashion_mnist_missing)
{
    env_saved e = env_set("DL_DATA_DIR", t_dir);
    dl_data d;
    memset(&d, 0xab, sizeof d);
    ck_assert_st(dl_data_load("fashion_mnist", &d), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "dataset-fashion-mnist");
    ck_assert_has(dl_last_error(), t_dir);
    ck_assert_has(dl_last_error(), "DL_DATA_DIR");
    ck_assert_ptr_null(d.train.X);
    ck_assert_ptr_null(d.test.X);
    env_restore(&e);
}
END_TEST

START_TEST(synthetic_and_csv_specs)
{
    dl_data d;
    ck_assert_st(dl_data_load("synthetic:n=500,d=3,classes=4,seed=7", &d), DL_OK);
    ck_assert_str_eq(d.name, "synthetic");
    ck_assert_str_eq(d.source, "synthetic:n=500,d=3,classes=4,seed=7");
    ck_assert_uint_eq(d.train.n, 500);
    ck_assert_uint_eq(d.train.d, 3);
    ck_assert_int_eq(d.train.n_classes, 4);
    ck_assert_int_eq(d.has_test, 0);
    dl_data_free(&d);
    ck_assert_st(dl_data_load("synthetic", &d), DL_OK);
    ck_assert_uint_eq(d.train.n, 1000);
    ck_assert_uint_eq(d.train.d, 8);
    dl_data_free(&d);
    const char *p = tpath("mine.csv");
    write_text(p, "a,b,y\n1,2,0\n3,4,1\n5,6,1\n");
    ck_assert_st(dl_data_load(p, &d), DL_OK);
    ck_assert_str_eq(d.name, "mine.csv");
    ck_assert_str_eq(d.source, p);
    ck_assert_uint_eq(d.train.n, 3);
    ck_assert_int_eq(d.train.n_classes, 2);
    ck_assert_float_eq(d.train.X[5], 6.0f);
    dl_data_free(&d);
    ck_assert_st(dl_data_load(tpath("absent.csv"), &d), DL_ERR_IO);
}
END_TEST

START_TEST(bad_specs)
{
    dl_data d;
    ck_assert_st(dl_data_load("mnist", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "'mnist': unknown dataset");
    ck_assert_st(dl_data_load("", &d), DL_ERR_ARG);
    ck_assert_st(dl_data_load(NULL, &d), DL_ERR_ARG);
    ck_assert_st(dl_data_load("breast_cancer.txt", &d), DL_ERR_ARG);
    ck_assert_st(dl_data_load("synthetic:colour=3", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "unknown key 'colour'");
    ck_assert_st(dl_data_load("synthetic:n=abc", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "n=abc");
    ck_assert_st(dl_data_load("synthetic:classes=1", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "classes=1");
    ck_assert_st(dl_data_load("synthetic:n=10.5", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "an integer");
    ck_assert_st(dl_data_load("synthetic:imbalance=2", &d), DL_ERR_ARG);
    ck_assert_st(dl_data_load("synthetic:n", &d), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "not key=value");
    ck_assert_ptr_null(d.train.X);
}
END_TEST

START_TEST(datasets_dir)
{
    ck_assert_has(dl_datasets_dir(), "/datasets");
    char want[4200];
    snprintf(want, sizeof want, "%s/breast_cancer.csv", dl_datasets_dir());
    ck_assert(path_exists(want));
}
END_TEST

Suite *registry_suite(void)
{
    return suite_of("registry", tcase_with_tmp("registry", 120),
                    TESTS(breast_cancer, fashion_mnist_full, fashion_mnist_truncated, fashion_mnist_missing,
                          fashion_mnist_plain_copy, fashion_mnist_float_copy, synthetic_and_csv_specs, bad_specs,
                          datasets_dir));
}
