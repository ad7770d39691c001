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

/* Every test starts with DL_GNUPLOT unset (the system's gnuplot, if any)
 * and ends with it as it was (a checked fixture: tests also run with
 * CK_FORK=no). */
static env_saved gnuplot_env;

static void system_gnuplot(void)
{
    gnuplot_env = env_set("DL_GNUPLOT", NULL);
}

static void gnuplot_restore(void)
{
    env_restore(&gnuplot_env);
}

#define LIST_CAP 64 /* a test's list of drawn files */

/* dl_plot_listed as the tests call it: script gp drawn as fmt into t_dir/name,
 * for lab "labX", listed in list (LIST_CAP bytes). */
static void listed(const char *gp, const char *fmt, const char *name, char *list)
{
    dl_plot_listed(gp, fmt, t_dir, name, NULL, "labX", list, LIST_CAP);
}

/* listed of a script gnuplot refuses, as png: returns what it said on
 * stderr (malloc'ed). */
static char *listed_broken(const char *name, char *list)
{
    write_text(tpath("broken.gp"), "plot this is not gnuplot\n");
    capture err;
    capture_start(&err, 2);
    listed(tpath("broken.gp"), "png", name, list);
    return capture_stop(&err);
}

START_TEST(png_and_svg)
{
    if (!dl_plot_available())
        return; // gnuplot is optional: the kit keeps the CSV data and draws nothing
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
}
END_TEST

START_TEST(dumb_draws_on_stdout)
{
    if (!dl_plot_available())
        return;
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
}
END_TEST

START_TEST(none_and_bad_requests)
{
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
    if (!dl_plot_available())
        return;
    const char *gp = script();
    char list[LIST_CAP] = "";
    listed(gp, "png", "a", list);
    listed(gp, "svg", "b", list);
    ck_assert_str_eq(list, "a.png,b.svg");
    ck_assert(path_exists(tpath("a.png")) && path_exists(tpath("b.svg")));
    capture drawn; // the terminal drawing, kept out of the test log
    capture_start(&drawn, 1);
    listed(gp, "dumb", "c", list); // draws no file: not listed
    free(capture_stop(&drawn));
    ck_assert_str_eq(list, "a.png,b.svg");
    char *err = listed_broken("d", list);
    ck_assert_has(err, "labX: plot: gnuplot failed on");
    free(err);
    ck_assert_str_eq(list, "a.png,b.svg");
    ck_assert(!path_exists(tpath("d.png")));
}
END_TEST

START_TEST(a_drivers_set)
{
    if (!dl_plot_available())
        return;
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
}
END_TEST

START_TEST(stale_plots_go)
{
    if (!dl_plot_available())
        return;
    const char *gp = script();
    char list[LIST_CAP] = "";
    listed(gp, "png", "a", list);
    ck_assert(path_exists(tpath("a.png")));
    list[0] = '\0';
    listed(gp, "svg", "a", list); // another run, another format
    ck_assert_str_eq(list, "a.svg");
    ck_assert(path_exists(tpath("a.svg")) && !path_exists(tpath("a.png")));
    listed(gp, "none", "a", list); // a run that draws nothing
    ck_assert(!path_exists(tpath("a.svg")));
    listed(gp, "png", "b", list);
    free(listed_broken("b", list)); // drawing fails
    ck_assert(!path_exists(tpath("b.png")));
    listed(gp, "svg", "c", list);
    dl_plots p = {t_dir, "png", t_dir, "labX", ""};
    dl_plots_skip(&p, "c"); // this run does not draw c
    ck_assert(!path_exists(tpath("c.svg")));
    dl_plot_forget(t_dir, "never-drawn"); // nothing to remove: fine
}
END_TEST

Suite *plot_suite(void)
{
    TCase *tc = tcase_with_tmp("plot", 30);
    tcase_add_checked_fixture(tc, system_gnuplot, gnuplot_restore);
    return suite_of("plot", tc,
                    TESTS(png_and_svg, dumb_draws_on_stdout, none_and_bad_requests, without_gnuplot,
                          listed_for_summaries, a_drivers_set, stale_plots_go));
}
