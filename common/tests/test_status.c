/* test_status.c — status names, the last error, exit codes, DL_TODO. */
#include "tests.h"

#include <stdio.h> // snprintf
#include <stdlib.h> // free

START_TEST(names_and_descriptions)
{
    ck_assert_str_eq(dl_status_name(DL_OK), "DL_OK");
    ck_assert_str_eq(dl_status_name(DL_ERR_ARG), "DL_ERR_ARG");
    ck_assert_str_eq(dl_status_name(DL_ERR_NO_CUDA), "DL_ERR_NO_CUDA");
    ck_assert_str_eq(dl_status_name(DL_ERR_TODO), "DL_ERR_TODO");
    ck_assert_str_eq(dl_status_name(DL_ERR_UNSUPPORTED), "DL_ERR_UNSUPPORTED");
    ck_assert_str_eq(dl_status_name(DL_STATUS_COUNT), "DL_ERR_?");
    ck_assert_str_eq(dl_status_name((dl_status)-1), "DL_ERR_?");
    ck_assert_str_eq(dl_status_str(DL_OK), "ok");
    ck_assert_str_eq(dl_status_str(DL_ERR_ARG), "bad argument");
    ck_assert_str_eq(dl_status_str(DL_ERR_TODO), "not implemented yet");
    ck_assert_str_eq(dl_status_str(DL_STATUS_COUNT), "unknown status");
    // Every status has its own name, spelled after its enumerator, and a description.
    for (int a = 0; a < DL_STATUS_COUNT; a++) {
        const char *na = dl_status_name((dl_status)a);
        ck_assert_msg(strncmp(na, a == 0 ? "DL_OK" : "DL_ERR_", a == 0 ? 5 : 7) == 0, "%s", na);
        ck_assert_int_gt((int)strlen(dl_status_str((dl_status)a)), 1);
        for (int b = 0; b < a; b++) {
            ck_assert_str_ne(na, dl_status_name((dl_status)b));
            ck_assert_str_ne(dl_status_str((dl_status)a), dl_status_str((dl_status)b));
        }
    }
}
END_TEST

START_TEST(error_set_and_last_error)
{
    dl_error_clear();
    ck_assert_str_eq(dl_last_error(), "");
    ck_assert_int_eq(dl_error_set(DL_ERR_FORMAT, "%s:%d:%d: not a number: '%s'", "data.csv", 12, 3, "abc"),
                     DL_ERR_FORMAT);
    ck_assert_str_eq(dl_last_error(), "data.csv:12:3: not a number: 'abc'");
    ck_assert_int_eq(dl_error_set(DL_ERR_IO, "second"), DL_ERR_IO);
    ck_assert_str_eq(dl_last_error(), "second");
    dl_error_clear();
    ck_assert_str_eq(dl_last_error(), "");
    // A very long message is truncated, not overflowed.
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dl_error_set(DL_ERR_ARG, "%s", big);
    size_t n = strlen(dl_last_error());
    ck_assert_uint_gt(n, 100);
    ck_assert_uint_lt(n, sizeof big - 1);
    // wrapping the last error in a new one (the argument is the buffer being written)
    dl_error_set(DL_ERR_IO, "No such file or directory");
    dl_error_set(DL_ERR_IO, "checkpoint %s: cannot read: %s", "ck/latest", dl_last_error());
    ck_assert_str_eq(dl_last_error(), "checkpoint ck/latest: cannot read: No such file or directory");
}
END_TEST

START_TEST(exit_codes)
{
    ck_assert_int_eq(dl_exit_code(DL_OK), 0);
    const dl_status bad_input[] = {DL_ERR_ARG,   DL_ERR_FORMAT,    DL_ERR_IO,
                                   DL_ERR_RANGE, DL_ERR_NO_DEVICE, DL_ERR_NO_CUDA};
    for (size_t i = 0; i < sizeof bad_input / sizeof bad_input[0]; i++)
        ck_assert_msg(dl_exit_code(bad_input[i]) == 2, "%s", dl_status_name(bad_input[i]));
    const dl_status other[] = {DL_ERR_NOMEM, DL_ERR_NUMERIC, DL_ERR_CUDA, DL_ERR_CUBLAS,
                               DL_ERR_NCCL,  DL_ERR_MPI,     DL_ERR_TODO, DL_ERR_UNSUPPORTED};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        ck_assert_msg(dl_exit_code(other[i]) == 1, "%s", dl_status_name(other[i]));
}
END_TEST

static dl_status try_twice(int fail_first)
{
    DL_TRY(fail_first ? dl_error_set(DL_ERR_RANGE, "first") : DL_OK);
    return dl_error_set(DL_ERR_NUMERIC, "second");
}

START_TEST(try_returns_the_failure)
{
    ck_assert_int_eq(try_twice(1), DL_ERR_RANGE);
    ck_assert_str_eq(dl_last_error(), "first");
    ck_assert_int_eq(try_twice(0), DL_ERR_NUMERIC);
    ck_assert_str_eq(dl_last_error(), "second");
}
END_TEST

START_TEST(todo_logs_once_per_message)
{
    // The counter is per process; with CK_FORK=no earlier tests may have used it.
    int base = dl_todo_count();
    capture cap;
    capture_start(&cap, 2);
    dl_status a = DL_TODO("unit task 1: fit the scaler");
    dl_status b = DL_TODO("unit task 1: fit the scaler");
    char other[64];
    snprintf(other, sizeof other, "unit task %d: the loss", 2); // same text, different pointer
    dl_status c = DL_TODO(other);
    char *err = capture_stop(&cap);
    ck_assert_int_eq(a, DL_ERR_TODO);
    ck_assert_int_eq(b, DL_ERR_TODO);
    ck_assert_int_eq(c, DL_ERR_TODO);
    ck_assert_str_eq(dl_last_error(), "not implemented yet: unit task 2: the loss");
    ck_assert_int_eq(dl_todo_count(), base + 2);
    // Logged once each, naming this file.
    const char *first = strstr(err, "not implemented yet: unit task 1: fit the scaler");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, "not implemented yet: unit task 1"));
    ck_assert_has(err, "not implemented yet: unit task 2: the loss");
    ck_assert_has(err, "test_status.c:");
    free(err);
    DL_TODO("unit task 1: fit the scaler");
    ck_assert_str_eq(dl_last_error(), "not implemented yet: unit task 1: fit the scaler");
    ck_assert_int_eq(dl_todo_count(), base + 2);
}
END_TEST

Suite *status_suite(void)
{
    return suite_of("status", tcase_with_timeout("status", 10),
                    TESTS(names_and_descriptions, error_set_and_last_error, exit_codes, try_returns_the_failure,
                          todo_logs_once_per_message));
}
