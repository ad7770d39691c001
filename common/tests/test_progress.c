/* test_progress.c — progress output when stderr is not a terminal. */
#include "tests.h"

#include <stdlib.h> // free

#include "dl/progress.h" // dl_progress_*

START_TEST(not_a_tty)
{
    capture out, err;
    capture_start(&out, 1);
    capture_start(&err, 2); // a file: not a TTY
    dl_progress p;
    dl_progress_begin(&p, 3, 10, 0);
    int tty = p.tty;
    for (int e = 0; e < 3; e++) {
        for (size_t s = 0; s < 10; s++)
            dl_progress_step(&p, e, s, 32, 0.5);
        dl_progress_line(&p, 0, "epoch %d loss %.3f", e + 1, 0.25);
    }
    size_t samples = p.samples_done, steps = p.steps_done;
    dl_progress_end(&p);
    char *e_text = capture_stop(&err);
    char *o_text = capture_stop(&out);
    ck_assert_int_eq(tty, 0);
    ck_assert_str_eq(e_text, "");
    ck_assert_str_eq(o_text, "epoch 1 loss 0.250\nepoch 2 loss 0.250\nepoch 3 loss 0.250\n");
    ck_assert_uint_eq(samples, 3 * 10 * 32);
    ck_assert_uint_eq(steps, 30);
    free(e_text);
    free(o_text);
}
END_TEST

START_TEST(quiet_keeps_forced_lines)
{
    capture out, err;
    capture_start(&out, 1);
    capture_start(&err, 2);
    dl_progress p;
    dl_progress_begin(&p, 1, 0, 1);
    dl_progress_step(&p, 0, 0, 8, 1.0);
    dl_progress_line(&p, 0, "hidden %d", 1);
    dl_progress_line(&p, 1, "final accuracy %.2f", 0.9);
    dl_progress_end(&p);
    char *e_text = capture_stop(&err);
    char *o_text = capture_stop(&out);
    ck_assert_str_eq(e_text, "");
    ck_assert_str_eq(o_text, "final accuracy 0.90\n");
    ck_assert_uint_eq(p.steps_per_epoch, 1); // 0 steps per epoch is taken as 1
    free(e_text);
    free(o_text);
}
END_TEST

Suite *progress_suite(void)
{
    return suite_of("progress", tcase_with_timeout("progress", 10), TESTS(not_a_tty, quiet_keeps_forced_lines));
}
