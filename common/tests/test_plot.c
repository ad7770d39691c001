/* test_plot.c — gnuplot runs with the shared style; files appear only on success, and an
 * earlier run's plots that this run does not draw go. */
#include "tests.h"

#include <stdlib.h> // free

#include "dl/plot.h" // dl_plot, dl_plot_available, dl_plot_ext, dl_plot_forget

static const char *script(void)
{
    const char *p = tpath("tiny.gp");
    write_text(p, "set xrange [0:1]\nplot x title 'x', x*x title 'x^2'\n");
    return p;
}

START_TEST(png_and_svg)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    if (!dl_plot_available()) {
        env_restore(&e);
        return; // gnuplot is optional: the kit keeps CSV data without it
    }
    const char *gp = script();
    ck_assert_st(dl_plot(gp, "png", tpath("fig"), NULL), DL_OK);
    size_t len = 0;
    char *png = slurp(tpath("fig.png"), &len);
    ck_assert_ptr_nonnull(png);
    ck_assert_uint_gt(len, 100);
    ck_assert_mem_eq(png, "\x89PNG\r\n\x1a\n", 8);
    free(png);
    ck_assert(!path_exists(tpath("fig.tmp.png")));
    ck_assert_st(dl_plot(gp, "svg", tpath("fig"), "title_text='a test'"), DL_OK);
    char *svg = slurp(tpath("fig.svg"), NULL);
    ck_assert_ptr_nonnull(svg);
    ck_assert_has(svg, "<svg");
    free(svg);
    ck_assert(!path_exists(tpath("fig.tmp.svg")));
    env_restore(&e);
}
END_TEST

START_TEST(dumb_draws_on_stdout)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    if (!dl_plot_available()) {
        env_restore(&e);
        return;
    }
    const char *gp = script();
    int before = dir_entries(t_dir);
    capture out;
    capture_start(&out, 1);
    dl_status st = dl_plot(gp, "dumb", tpath("fig"), NULL);
    char *text = capture_stop(&out);
    ck_assert_st(st, DL_OK);
    ck_assert_uint_gt(strlen(text), 500); // a 110x32 character drawing
    ck_assert_has(text, "x^2");
    free(text);
    ck_assert_int_eq(dir_entries(t_dir), before); // no file for dumb
    env_restore(&e);
}
END_TEST

START_TEST(none_and_bad_requests)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    const char *gp = script();
    ck_assert_st(dl_plot(gp, "none", tpath("fig"), NULL), DL_OK);
    ck_assert_int_eq(dir_entries(t_dir), 1); // only the script
    ck_assert_st(dl_plot(gp, "jpg", tpath("fig"), NULL), DL_ERR_ARG);
    ck_assert_has(dl_last_error(), "'jpg'");
    ck_assert_ptr_eq(dl_plot_ext("none"), NULL);
    ck_assert_ptr_eq(dl_plot_ext("dumb"), NULL);
    ck_assert_str_eq(dl_plot_ext("png"), "png");
    ck_assert_str_eq(dl_plot_ext("svg"), "svg");
    if (dl_plot_available()) {
        ck_assert_st(dl_plot(tpath("absent.gp"), "png", tpath("fig"), NULL), DL_ERR_IO);
        ck_assert_has(dl_last_error(), "absent.gp not found");
        ck_assert_st(dl_plot(gp, "png", tpath("it's"), NULL), DL_ERR_ARG);
        // A script gnuplot rejects: an error, and neither the file nor its temporary.
        write_text(tpath("broken.gp"), "plot sin(x\n");
        capture err;
        capture_start(&err, 2);
        dl_status st = dl_plot(tpath("broken.gp"), "png", tpath("broken"), NULL);
        free(capture_stop(&err));
        ck_assert_st(st, DL_ERR_IO);
        ck_assert_has(dl_last_error(), "gnuplot failed");
        ck_assert(!path_exists(tpath("broken.png")));
        ck_assert(!path_exists(tpath("broken.tmp.png")));
    }
    env_restore(&e);
}
END_TEST

START_TEST(without_gnuplot)
{
    env_saved e = env_set("DL_GNUPLOT", "/nonexistent/gnuplot");
    ck_assert_int_eq(dl_plot_available(), 0);
    const char *gp = script();
    capture err;
    capture_start(&err, 2);
    dl_status a = dl_plot(gp, "png", tpath("fig"), NULL);
    dl_status b = dl_plot(gp, "svg", tpath("fig"), NULL);
    dl_status c = dl_plot(gp, "none", tpath("fig"), NULL);
    char *text = capture_stop(&err);
    ck_assert_st(a, DL_ERR_UNSUPPORTED);
    ck_assert_st(b, DL_ERR_UNSUPPORTED);
    ck_assert_st(c, DL_OK);
    ck_assert_has(dl_last_error(), "gnuplot is not installed");
    // Said once on stderr, however many plots are skipped.
    const char *first = strstr(text, "gnuplot is not installed");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, "gnuplot is not installed"));
    free(text);
    ck_assert_int_eq(dir_entries(t_dir), 1);
    env_restore(&e);
}
END_TEST

START_TEST(listed_for_summaries)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    if (!dl_plot_available()) {
        env_restore(&e);
        return;
    }
    const char *gp = script();
    char list[64] = "";
    dl_plot_listed(gp, "png", t_dir, "a", NULL, "labX", list, sizeof list);
    dl_plot_listed(gp, "svg", t_dir, "b", NULL, "labX", list, sizeof list);
    ck_assert_str_eq(list, "a.png,b.svg");
    ck_assert(path_exists(tpath("a.png")) && path_exists(tpath("b.svg")));
    capture drawn; // the terminal drawing, kept out of the test log
    capture_start(&drawn, 1);
    dl_plot_listed(gp, "dumb", t_dir, "c", NULL, "labX", list, sizeof list); // draws no file: not listed
    free(capture_stop(&drawn));
    ck_assert_str_eq(list, "a.png,b.svg");
    write_text(tpath("broken.gp"), "plot this is not gnuplot\n");
    capture cap;
    capture_start(&cap, 2);
    dl_plot_listed(tpath("broken.gp"), "png", t_dir, "d", NULL, "labX", list, sizeof list);
    char *err = capture_stop(&cap);
    ck_assert_has(err, "labX: plot: gnuplot failed on");
    free(err);
    ck_assert_str_eq(list, "a.png,b.svg");
    ck_assert(!path_exists(tpath("d.png")));
    env_restore(&e);
}
END_TEST

START_TEST(a_drivers_set)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    if (!dl_plot_available()) {
        env_restore(&e);
        return;
    }
    write_text(tpath("curve.gp"), "set title sprintf('%d ranks', P)\nplot [0:n] x\n");
    dl_plots p = {t_dir, "png", t_dir, "labX", ""};
    dl_plots_draw(&p, "curve", "P=%d; n=%d", 4, 3);
    ck_assert_str_eq(p.list, "curve.png");
    ck_assert(path_exists(tpath("curve.png")));
    capture cap;
    capture_start(&cap, 2);
    dl_plots_draw(&p, "absent", "P=1"); // no such script: said, not listed
    char *err = capture_stop(&cap);
    ck_assert_has(err, "labX: plot:");
    free(err);
    ck_assert_str_eq(p.list, "curve.png");
    env_restore(&e);
}
END_TEST

START_TEST(stale_plots_go)
{
    env_saved e = env_set("DL_GNUPLOT", NULL);
    if (!dl_plot_available()) {
        env_restore(&e);
        return;
    }
    const char *gp = script();
    char list[64] = "";
    dl_plot_listed(gp, "png", t_dir, "a", NULL, "labX", list, sizeof list);
    ck_assert(path_exists(tpath("a.png")));
    list[0] = '\0';
    dl_plot_listed(gp, "svg", t_dir, "a", NULL, "labX", list, sizeof list); // another run, another format
    ck_assert_str_eq(list, "a.svg");
    ck_assert(path_exists(tpath("a.svg")) && !path_exists(tpath("a.png")));
    dl_plot_listed(gp, "none", t_dir, "a", NULL, "labX", list, sizeof list); // a run that draws nothing
    ck_assert(!path_exists(tpath("a.svg")));
    dl_plot_listed(gp, "png", t_dir, "b", NULL, "labX", list, sizeof list);
    write_text(tpath("broken.gp"), "plot this is not gnuplot\n");
    capture cap;
    capture_start(&cap, 2);
    dl_plot_listed(tpath("broken.gp"), "png", t_dir, "b", NULL, "labX", list, sizeof list); // drawing fails
    free(capture_stop(&cap));
    ck_assert(!path_exists(tpath("b.png")));
    dl_plot_listed(gp, "svg", t_dir, "c", NULL, "labX", list, sizeof list);
    dl_plots p = {t_dir, "png", t_dir, "labX", ""};
    dl_plots_skip(&p, "c"); // this run does not draw c
    ck_assert(!path_exists(tpath("c.svg")));
    dl_plot_forget(t_dir, "never-drawn"); // nothing to remove: fine
    env_restore(&e);
}
END_TEST

Suite *plot_suite(void)
{
    return suite_of("plot", tcase_with_tmp("plot", 30),
                    TESTS(png_and_svg, dumb_draws_on_stdout, none_and_bad_requests, without_gnuplot,
                          listed_for_summaries, a_drivers_set, stale_plots_go));
}
