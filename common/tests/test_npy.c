/* test_npy.c — .npy round trips, the header layout numpy expects, and rejected files. */
#include "tests.h"

#include <stdint.h> // int32_t
#include <stdio.h> // snprintf
#include <stdlib.h> // free
#include <unistd.h> // truncate

#include "dl/data.h" // dl_npy_write_*, dl_npy_read

/* Checks the v1.0 layout: magic, header length, padding to 64, final newline. */
static size_t check_header(const char *path, const char *descr, const char *shape, size_t data_bytes)
{
    size_t len = 0;
    char *b = slurp(path, &len);
    ck_assert_ptr_nonnull(b);
    ck_assert_mem_eq(b, "\x93NUMPY\x01\x00", 8);
    size_t hlen = (unsigned char)b[8] | ((size_t)(unsigned char)b[9] << 8);
    ck_assert_uint_eq((10 + hlen) % 64, 0);
    ck_assert_uint_eq(len, 10 + hlen + data_bytes);
    ck_assert_int_eq(b[10 + hlen - 1], '\n');
    char want[128];
    snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    ck_assert_msg(strncmp(b + 10, want, strlen(want)) == 0, "header is '%.*s'", (int)hlen, b + 10);
    for (size_t i = 10 + strlen(want); i < 10 + hlen - 1; i++)
        ck_assert_int_eq(b[i], ' ');
    free(b);
    return 10 + hlen;
}

START_TEST(float32_2d_round_trip)
{
    float a[3 * 4];
    for (int i = 0; i < 12; i++)
        a[i] = (float)i * 0.5f - 2.0f;
    a[5] = -0.0f;
    const char *p = tpath("a.npy");
    ck_assert_st(dl_npy_write_f32(p, a, 3, 4), DL_OK);
    ck_assert(!path_exists(tpath("a.npy.tmp")));
    check_header(p, "<f4", "(3, 4)", sizeof a);
    dl_npy n;
    ck_assert_st(dl_npy_read(p, &n), DL_OK);
    ck_assert_int_eq(n.is_float, 1);
    ck_assert_int_eq(n.ndim, 2);
    ck_assert_uint_eq(n.shape[0], 3);
    ck_assert_uint_eq(n.shape[1], 4);
    ck_assert_mem_eq(n.data, a, sizeof a);
    dl_npy_free(&n);
    ck_assert_ptr_null(n.data);
}
END_TEST

START_TEST(int32_1d_round_trip)
{
    int32_t v[5] = {0, -1, 2147483647, -2147483647 - 1, 42};
    const char *p = tpath("v.npy");
    ck_assert_st(dl_npy_write_i32(p, v, 5), DL_OK);
    check_header(p, "<i4", "(5,)", sizeof v);
    dl_npy n;
    ck_assert_st(dl_npy_read(p, &n), DL_OK);
    ck_assert_int_eq(n.is_float, 0);
    ck_assert_int_eq(n.ndim, 1);
    ck_assert_uint_eq(n.shape[0], 5);
    ck_assert_mem_eq(n.data, v, sizeof v);
    dl_npy_free(&n);
}
END_TEST

/* A v1.0 file with the given header dictionary and data bytes. */
static void write_npy_raw(const char *path, const char *dict, const void *data, size_t n)
{
    unsigned char buf[512];
    size_t dl = strlen(dict), hlen = 64 - 10;
    while (hlen < dl + 1)
        hlen += 64;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, dl);
    buf[10 + hlen - 1] = '\n';
    memcpy(buf + 10 + hlen, data, n);
    write_bytes(path, buf, 10 + hlen + n);
}

static void expect_fail(const char *path, dl_status want, const char *reason)
{
    dl_npy n, zero;
    memset(&n, 0xab, sizeof n);
    memset(&zero, 0, sizeof zero);
    dl_status st = dl_npy_read(path, &n);
    ck_assert_msg(st == want, "%s: got %s (%s)", path, dl_status_name(st), dl_last_error());
    ck_assert_has(dl_last_error(), path);
    ck_assert_has(dl_last_error(), reason);
    ck_assert(memcmp(&n, &zero, sizeof n) == 0);
}

START_TEST(rejects_bad_files)
{
    double d[2] = {1, 2};
    float f[4] = {1, 2, 3, 4};
    // A hand-made valid file first, so the rejections below are about one thing each.
    write_npy_raw(tpath("ok.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f, sizeof f);
    dl_npy n;
    ck_assert_st(dl_npy_read(tpath("ok.npy"), &n), DL_OK);
    ck_assert_uint_eq(n.shape[1], 2);
    dl_npy_free(&n);
    write_npy_raw(tpath("f8.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d, sizeof d);
    expect_fail(tpath("f8.npy"), DL_ERR_FORMAT, "<f8");
    write_npy_raw(tpath("fo.npy"), "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", f, sizeof f);
    expect_fail(tpath("fo.npy"), DL_ERR_FORMAT, "Fortran");
    write_npy_raw(tpath("3d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", f, sizeof f);
    expect_fail(tpath("3d.npy"), DL_ERR_FORMAT, "1 or 2");
    write_npy_raw(tpath("scalar.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", f, 4);
    expect_fail(tpath("scalar.npy"), DL_ERR_FORMAT, "scalar");
    write_npy_raw(tpath("nodescr.npy"), "{'fortran_order': False, 'shape': (2,), }", f, 8);
    expect_fail(tpath("nodescr.npy"), DL_ERR_FORMAT, "lacks");
    // Data shorter than the shape says.
    ck_assert_st(dl_npy_write_f32(tpath("cut.npy"), f, 2, 2), DL_OK);
    size_t len = 0;
    free(slurp(tpath("cut.npy"), &len));
    ck_assert_int_eq(truncate(tpath("cut.npy"), (off_t)(len - 5)), 0);
    expect_fail(tpath("cut.npy"), DL_ERR_FORMAT, "truncated: 2 of 4 elements");
    ck_assert_int_eq(truncate(tpath("cut.npy"), 30), 0);
    expect_fail(tpath("cut.npy"), DL_ERR_FORMAT, "truncated header");
    write_bytes(tpath("magic.npy"), "\x93NUMPX\x01\x00\x10\x00", 10);
    expect_fail(tpath("magic.npy"), DL_ERR_FORMAT, "bad magic");
    write_bytes(tpath("v9.npy"), "\x93NUMPY\x09\x00\x10\x00", 10);
    expect_fail(tpath("v9.npy"), DL_ERR_FORMAT, "version 9.0");
    expect_fail(tpath("absent.npy"), DL_ERR_IO, "cannot open");
    // Writing into a missing directory fails and names the file.
    ck_assert_st(dl_npy_write_f32(tpath("no/such/dir.npy"), f, 2, 2), DL_ERR_IO);
    ck_assert_has(dl_last_error(), "dir.npy");
}
END_TEST

Suite *npy_suite(void)
{
    return suite_of("npy", tcase_with_tmp("npy", 20),
                    TESTS(float32_2d_round_trip, int32_1d_round_trip, rejects_bad_files));
}
