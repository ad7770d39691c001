/* test_idx.c — IDX files, plain and gzip-compressed, and image/label pairs. */
#include "tests.h"

#include <stdint.h> // uint32_t
#include <stdlib.h> // malloc, free
#include <zlib.h> // gzopen, gzwrite

#include "dl/data.h" // dl_read_idx, dl_read_idx_pair

/* IDX bytes: magic 00 00 <type> <ndim>, big-endian dims, then count bytes of data
 * (data may be shorter than the dims say: pass have < product). */
static size_t idx_bytes(unsigned char *buf, unsigned char type, int ndim, const uint32_t *dims,
                        const unsigned char *data, size_t have)
{
    size_t k = 0;
    buf[k++] = 0;
    buf[k++] = 0;
    buf[k++] = type;
    buf[k++] = (unsigned char)ndim;
    for (int i = 0; i < ndim; i++) {
        buf[k++] = (unsigned char)(dims[i] >> 24);
        buf[k++] = (unsigned char)(dims[i] >> 16);
        buf[k++] = (unsigned char)(dims[i] >> 8);
        buf[k++] = (unsigned char)dims[i];
    }
    memcpy(buf + k, data, have);
    return k + have;
}

static void write_gz(const char *path, const unsigned char *data, size_t n)
{
    gzFile f = gzopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(gzwrite(f, data, (unsigned)n), (int)n);
    ck_assert_int_eq(gzclose(f), Z_OK);
}

static void write_idx(const char *path, int gz, int ndim, const uint32_t *dims, const unsigned char *data, size_t have)
{
    unsigned char buf[4096];
    size_t n = idx_bytes(buf, 0x08, ndim, dims, data, have);
    if (gz)
        write_gz(path, buf, n);
    else
        write_bytes(path, buf, n);
}

static void expect_fail(const char *path, dl_status want, const char *reason)
{
    dl_idx idx, zero;
    memset(&idx, 0xab, sizeof idx);
    memset(&zero, 0, sizeof zero);
    dl_status st = dl_read_idx(path, &idx);
    ck_assert_msg(st == want, "%s: got %s (%s)", path, dl_status_name(st), dl_last_error());
    ck_assert_has(dl_last_error(), path);
    ck_assert_has(dl_last_error(), reason);
    ck_assert_msg(memcmp(&idx, &zero, sizeof idx) == 0, "%s: output not zeroed", path);
}

START_TEST(reads_plain_and_gzip)
{
    unsigned char data[24];
    for (int i = 0; i < 24; i++)
        data[i] = (unsigned char)(i * 11);
    const uint32_t dims[3] = {2, 3, 4};
    for (int gz = 0; gz < 2; gz++) {
        const char *p = tpath(gz ? "a.idx.gz" : "a.idx");
        write_idx(p, gz, 3, dims, data, 24);
        dl_idx idx;
        ck_assert_st(dl_read_idx(p, &idx), DL_OK);
        ck_assert_int_eq(idx.ndim, 3);
        ck_assert_uint_eq(idx.dims[0], 2);
        ck_assert_uint_eq(idx.dims[1], 3);
        ck_assert_uint_eq(idx.dims[2], 4);
        ck_assert_uint_eq(idx.count, 24);
        ck_assert_mem_eq(idx.data, data, 24);
        dl_idx_free(&idx);
        ck_assert_ptr_null(idx.data);
    }
    // A dimension above 2^16 checks that the big-endian bytes are put together right.
    const uint32_t one[1] = {70000};
    unsigned char *big = calloc(70000, 1);
    big[69999] = 7;
    unsigned char *buf = malloc(70000 + 8);
    size_t n = idx_bytes(buf, 0x08, 1, one, big, 70000);
    write_gz(tpath("big.gz"), buf, n);
    dl_idx idx;
    ck_assert_st(dl_read_idx(tpath("big.gz"), &idx), DL_OK);
    ck_assert_uint_eq(idx.dims[0], 70000);
    ck_assert_uint_eq(idx.data[69999], 7);
    dl_idx_free(&idx);
    free(big), free(buf);
}
END_TEST

START_TEST(truncated_and_malformed)
{
    unsigned char data[24] = {0};
    const uint32_t dims[3] = {2, 3, 4};
    write_idx(tpath("short.idx"), 0, 3, dims, data, 20);
    expect_fail(tpath("short.idx"), DL_ERR_FORMAT, "truncated: 20 of 24 data bytes");
    write_idx(tpath("short.gz"), 1, 3, dims, data, 5);
    expect_fail(tpath("short.gz"), DL_ERR_FORMAT, "truncated");
    // A gzip stream cut in the middle.
    unsigned char raw[600], gzbuf[4096];
    unsigned char pix[512];
    for (int i = 0; i < 512; i++)
        pix[i] = (unsigned char)(i * 37 + (i >> 3));
    const uint32_t d2[2] = {16, 32};
    size_t n = idx_bytes(raw, 0x08, 2, d2, pix, 512);
    write_gz(tpath("cut.gz"), raw, n);
    size_t gzlen = 0;
    char *whole = slurp(tpath("cut.gz"), &gzlen);
    ck_assert_uint_gt(gzlen, 40);
    memcpy(gzbuf, whole, gzlen);
    free(whole);
    write_bytes(tpath("cut.gz"), gzbuf, gzlen / 2);
    expect_fail(tpath("cut.gz"), DL_ERR_FORMAT, "truncated");
    // Header problems.
    write_bytes(tpath("empty.idx"), "", 0);
    expect_fail(tpath("empty.idx"), DL_ERR_FORMAT, "truncated");
    write_bytes(tpath("dims.idx"), "\0\0\x08\x03\0\0\0\x02\0\0", 10);
    expect_fail(tpath("dims.idx"), DL_ERR_FORMAT, "truncated: the header ends inside dimension 1");
    write_bytes(tpath("magic.idx"), "\x01\x02\x08\x01\0\0\0\x01x", 9);
    expect_fail(tpath("magic.idx"), DL_ERR_FORMAT, "not an IDX file: magic 01 02 08 01");
    write_bytes(tpath("ndim.idx"), "\0\0\x08\x05\0\0\0\x01x", 9);
    expect_fail(tpath("ndim.idx"), DL_ERR_FORMAT, "not an IDX file");
    write_bytes(tpath("float.idx"), "\0\0\x0d\x01\0\0\0\x01xxxx", 12);
    expect_fail(tpath("float.idx"), DL_ERR_FORMAT, "0x0d is not supported");
    write_bytes(tpath("zero.idx"), "\0\0\x08\x01\0\0\0\0", 8);
    expect_fail(tpath("zero.idx"), DL_ERR_FORMAT, "dimension 0 is 0");
    expect_fail(tpath("absent.idx"), DL_ERR_IO, "cannot open");
}
END_TEST

START_TEST(image_label_pairs)
{
    unsigned char pix[3 * 2 * 2], lab[3] = {2, 0, 9};
    for (int i = 0; i < 12; i++)
        pix[i] = (unsigned char)(i * 23);
    pix[11] = 255;
    const uint32_t di[3] = {3, 2, 2}, dl[1] = {3};
    write_idx(tpath("im.gz"), 1, 3, di, pix, 12);
    write_idx(tpath("lb"), 0, 1, dl, lab, 3);
    dl_dataset ds;
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("lb"), 10, &ds), DL_OK);
    ck_assert_uint_eq(ds.n, 3);
    ck_assert_uint_eq(ds.d, 4);
    ck_assert_int_eq(ds.n_classes, 10);
    for (int i = 0; i < 12; i++)
        ck_assert_float_eq_tol(ds.X[i], pix[i] / 255.0f, 1e-7f);
    ck_assert_float_eq(ds.X[11], 1.0f);
    ck_assert_float_eq(ds.X[0], 0.0f);
    ck_assert_int_eq(ds.y[0], 2);
    ck_assert_int_eq(ds.y[2], 9);
    dl_dataset_free(&ds);

    dl_dataset zero;
    memset(&zero, 0, sizeof zero);
    // Label 9 with only 9 classes.
    memset(&ds, 0xab, sizeof ds);
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("lb"), 9, &ds), DL_ERR_RANGE);
    ck_assert_has(dl_last_error(), "label 9 of item 2 is out of range [0, 9)");
    ck_assert_has(dl_last_error(), tpath("lb"));
    ck_assert(memcmp(&ds, &zero, sizeof ds) == 0);
    // Two labels for three images.
    const uint32_t d2[1] = {2};
    write_idx(tpath("lb2"), 0, 1, d2, lab, 2);
    memset(&ds, 0xab, sizeof ds);
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("lb2"), 10, &ds), DL_ERR_FORMAT);
    ck_assert_has(dl_last_error(), "3 images");
    ck_assert_has(dl_last_error(), "2 labels");
    ck_assert(memcmp(&ds, &zero, sizeof ds) == 0);
    // Labels with two dimensions, and a missing labels file.
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("im.gz"), 10, &ds), DL_ERR_FORMAT);
    ck_assert_has(dl_last_error(), "dimensions");
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("nope"), 10, &ds), DL_ERR_IO);
    ck_assert(memcmp(&ds, &zero, sizeof ds) == 0);
}
END_TEST

START_TEST(first_rows_only)
{
    unsigned char pix[3 * 2 * 2], lab[3] = {2, 0, 9};
    for (int i = 0; i < 12; i++)
        pix[i] = (unsigned char)(i * 23);
    const uint32_t di[3] = {3, 2, 2}, dl[1] = {3};
    write_idx(tpath("im.gz"), 1, 3, di, pix, 12);
    write_idx(tpath("lb"), 0, 1, dl, lab, 3);
    // the first two items: dims[0] says how many were read
    dl_idx idx;
    ck_assert_st(dl_read_idx_first(tpath("im.gz"), 2, &idx), DL_OK);
    ck_assert_uint_eq(idx.dims[0], 2);
    ck_assert_uint_eq(idx.dims[1], 2);
    ck_assert_uint_eq(idx.count, 8);
    ck_assert_mem_eq(idx.data, pix, 8);
    dl_idx_free(&idx);
    // 0, or more than the file holds: all of it
    for (size_t max = 0; max < 6; max += 5) {
        ck_assert_st(dl_read_idx_first(tpath("im.gz"), max, &idx), DL_OK);
        ck_assert_uint_eq(idx.dims[0], 3);
        ck_assert_uint_eq(idx.count, 12);
        ck_assert_mem_eq(idx.data, pix, 12);
        dl_idx_free(&idx);
    }
    // the first rows of a pair are the first rows of the whole pair, bit for bit
    dl_dataset all, first;
    ck_assert_st(dl_read_idx_pair(tpath("im.gz"), tpath("lb"), 10, &all), DL_OK);
    ck_assert_st(dl_read_idx_pair_first(tpath("im.gz"), tpath("lb"), 10, 2, &first), DL_OK);
    ck_assert_uint_eq(first.n, 2);
    ck_assert_uint_eq(first.d, 4);
    ck_assert_mem_eq(first.X, all.X, 2 * 4 * sizeof(float));
    ck_assert_int_eq(first.y[0], 2);
    ck_assert_int_eq(first.y[1], 0);
    dl_dataset_free(&first);
    dl_dataset_free(&all);
    // a data part cut short within the rows asked for is still an error
    write_idx(tpath("short.gz"), 1, 3, di, pix, 6);
    dl_idx zero;
    memset(&zero, 0, sizeof zero);
    memset(&idx, 0xab, sizeof idx);
    ck_assert_st(dl_read_idx_first(tpath("short.gz"), 2, &idx), DL_ERR_FORMAT);
    ck_assert_has(dl_last_error(), "truncated: 6 of 8 data bytes");
    ck_assert(memcmp(&idx, &zero, sizeof idx) == 0);
    // files that disagree on their number of items, beyond the rows read too
    const uint32_t d2[1] = {2};
    write_idx(tpath("lb2"), 0, 1, d2, lab, 2);
    dl_dataset dz;
    memset(&dz, 0, sizeof dz);
    memset(&first, 0xab, sizeof first);
    ck_assert_st(dl_read_idx_pair_first(tpath("im.gz"), tpath("lb2"), 10, 1, &first), DL_ERR_FORMAT);
    ck_assert_has(dl_last_error(), "3 images");
    ck_assert_has(dl_last_error(), "2 labels");
    ck_assert(memcmp(&first, &dz, sizeof first) == 0);
    // a label out of range among the rows read
    ck_assert_st(dl_read_idx_pair_first(tpath("im.gz"), tpath("lb"), 2, 1, &first), DL_ERR_RANGE);
    ck_assert_has(dl_last_error(), "label 2 of item 0 is out of range [0, 2)");
}
END_TEST

Suite *idx_suite(void)
{
    return suite_of("idx", tcase_with_tmp("idx", 20),
                    TESTS(reads_plain_and_gzip, truncated_and_malformed, image_label_pairs, first_rows_only));
}
