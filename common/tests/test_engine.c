/* test_engine.c — the driver engine's one flag table (dl/engine.h): the
 * lab's own flags beside the shared ones, a choice that yields an enum, a
 * value with two spellings given twice, and a lab's table that names a
 * shared flag the kit lacks. */
#include "tests.h"

#include <stdlib.h> // free

#include "dl/engine.h" // dl_engine, dl_lab, dl_engine_parse

typedef enum toy_mode { TOY_DDP, TOY_NAIVE, TOY_STAR } toy_mode;

typedef struct toy {
    int mode; /* toy_mode (DL_OPT_ENUM) */
    size_t cap; /* --cap SIZE or --cap-mb X: one value, two spellings */
    int quick;
} toy;

static void toy_defaults(dl_engine *E)
{
    toy *T = E->ctx;
    E->a.epochs = 7;
    E->a.out = ".";
    E->t.hidden = "16,16";
    T->mode = TOY_NAIVE;
    T->cap = (size_t)25 << 20;
}

static int toy_options(dl_engine *E, dl_opt *out)
{
    toy *T = E->ctx;
    const dl_opt o[] = {
        {"mode", DL_OPT_ENUM, &T->mode, "MODE", "how to train", "ddp|naive|star", 1, 0},
        {"cap", DL_OPT_SIZE, &T->cap, "SIZE", "a cap in bytes", NULL, 1, 1e12, 0, 1},
        {"cap-mb", DL_OPT_MIB, &T->cap, "X", "the cap in MiB instead", NULL, 0, 1e6, 0, 1},
        {"quick", DL_OPT_FLAG, &T->quick, NULL, "fewer steps", NULL, 1, 0},
    };
    memcpy(out, o, sizeof o);
    return (int)(sizeof o / sizeof o[0]);
}

static dl_lab toy_lab = {.prog = "labZZ",
                         .dir = "zz-toy",
                         .about = "A toy lab.",
                         .train_opts = "hidden,warmup",
                         .defaults = toy_defaults,
                         .options = toy_options};

typedef struct run {
    int rc;
    char *out, *err;
    dl_engine E;
    toy T;
} run;

/* dl_engine_parse of a NULL-terminated argv (after "labZZ"), output captured. */
static void parse(run *r, char **args)
{
    char *argv[16] = {"labZZ"};
    int argc = 1;
    while (args[argc - 1] != NULL && argc < 15) {
        argv[argc] = args[argc - 1];
        argc++;
    }
    memset(r, 0, sizeof *r);
    r->E.lab = &toy_lab;
    r->E.ctx = &r->T;
    capture out, err;
    capture_start(&out, 1);
    capture_start(&err, 2);
    r->rc = dl_engine_parse(&r->E, argc, argv);
    r->err = capture_stop(&err);
    r->out = capture_stop(&out);
}

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

START_TEST(defaults_and_shared_flags)
{
    run r;
    parse(&r, (char *[]){NULL});
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_int_eq(r.E.a.epochs, 7); // the lab's default over the common one
    ck_assert_int_eq(r.T.mode, TOY_NAIVE);
    ck_assert_uint_eq(r.T.cap, (size_t)25 << 20);
    ck_assert_int_eq(r.E.t.warmup, 10); // the shared default (dl/trainopt.h)
    run_free(&r);
    parse(&r, (char *[]){"--warmup", "3", "--hidden", "8", "--epochs=2", "--quick", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_int_eq(r.E.t.warmup, 3);
    ck_assert_str_eq(r.E.t.hidden, "8");
    ck_assert_int_eq(r.E.a.epochs, 2);
    ck_assert_int_eq(r.T.quick, 1);
    run_free(&r);
    // a shared flag the lab does not take is unknown to it
    parse(&r, (char *[]){"--cosine", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "labZZ: error: unknown option '--cosine'");
    run_free(&r);
}
END_TEST

START_TEST(choice_yields_enum)
{
    run r;
    parse(&r, (char *[]){"--mode", "star", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_int_eq(r.T.mode, TOY_STAR);
    run_free(&r);
    parse(&r, (char *[]){"--mode=ddp", NULL});
    ck_assert_int_eq(r.T.mode, TOY_DDP);
    run_free(&r);
    parse(&r, (char *[]){"--mode", "ring", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "--mode: 'ring' is not one of ddp|naive|star");
    ck_assert_int_eq(r.T.mode, TOY_NAIVE); // untouched
    run_free(&r);
    parse(&r, (char *[]){"--help", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_HELP);
    ck_assert_has(r.out, "A toy lab.");
    ck_assert_has(r.out, "(default: naive)"); // the enum's default, by its word
    ck_assert_has(r.out, "--warmup N");
    run_free(&r);
}
END_TEST

START_TEST(two_spellings_given_twice)
{
    run r;
    parse(&r, (char *[]){"--cap-mb", "2", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_uint_eq(r.T.cap, (size_t)2 << 20);
    run_free(&r);
    parse(&r, (char *[]){"--cap-mb", "0.5", NULL}); // rounded to the nearest byte
    ck_assert_uint_eq(r.T.cap, (size_t)1 << 19);
    run_free(&r);
    // the default's value given in the other spelling is still a second spelling
    parse(&r, (char *[]){"--cap", "25M", "--cap-mb", "2", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "--cap and --cap-mb both given");
    run_free(&r);
    parse(&r, (char *[]){"--cap-mb", "25", "--cap=25M", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "--cap-mb and --cap both given");
    run_free(&r);
    // one spelling twice: the last value (a script may append to a command line)
    parse(&r, (char *[]){"--cap", "1K", "--cap", "2K", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_uint_eq(r.T.cap, 2048);
    run_free(&r);
    // under half a byte: refused, the reason alone
    parse(&r, (char *[]){"--cap-mb", "1e-9", NULL});
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "labZZ: error: --cap-mb 1e-09 is 0.00105 bytes: a cap is at least 1 byte");
    ck_assert_ptr_null(strstr(r.err, "usage:"));
    run_free(&r);
}
END_TEST

START_TEST(lab_table_bug)
{
    dl_lab bad = toy_lab;
    bad.train_opts = "hidden,no-such-flag";
    run r;
    memset(&r, 0, sizeof r);
    r.E.lab = &bad;
    r.E.ctx = &r.T;
    capture err;
    capture_start(&err, 2);
    r.rc = dl_engine_parse(&r.E, 1, (char *[]){"labZZ", NULL});
    r.err = capture_stop(&err);
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "a kit bug");
    free(r.err);
}
END_TEST

// ---- a whole run: a host lab on the engine ----

#define STEPS(X) X(S_EPOCH, "epoch") X(S_SQUARE, "square")
DL_CSV_SCHEMA(steps, STEPS);

typedef struct counted {
    int started, epochs, teardowns, fail_at; /* fail_at: the epoch that fails (-1: none) */
} counted;

static dl_status count_start(dl_engine *E)
{
    ((counted *)E->ctx)->started++;
    return DL_OK;
}

static dl_status count_epoch(dl_engine *E, int e)
{
    counted *c = E->ctx;
    if (e == c->fail_at)
        return dl_error_set(DL_ERR_NUMERIC, "epoch %d diverged", e + 1);
    c->epochs++;
    E->stop = e == 2; // three epochs, whatever --epochs says
    double row[STEPS_NCOLS] = {e + 1, (e + 1) * (e + 1)};
    return dl_table_add(&E->metrics, row);
}

static void count_summary(dl_json *j, const void *engine)
{
    dl_json_int(j, "epochs_run", ((const dl_engine *)engine)->metrics.n);
}

static void count_teardown(dl_engine *E)
{
    ((counted *)E->ctx)->teardowns++;
}

static const dl_lab count_lab = {.prog = "labYY",
                                 .dir = "yy-count",
                                 .about = "Counts.",
                                 .flags = DL_LAB_HOST,
                                 .epochs = 5,
                                 .metrics = steps,
                                 .start = count_start,
                                 .epoch = count_epoch,
                                 .summary = count_summary,
                                 .teardown = count_teardown};

/* dl_engine_main on --out t_dir/NAME and the extra flags; output captured. */
static int run_main(counted *c, const char *name, const char *extra, char **err)
{
    char *argv[8] = {"labYY", "--out", (char *)tpath(name), "--plot", "none", "--quiet", (char *)extra, NULL};
    int argc = extra != NULL ? 7 : 6;
    capture out, e;
    capture_start(&out, 1);
    capture_start(&e, 2);
    int rc = dl_engine_main(&count_lab, c, argc, argv);
    *err = capture_stop(&e);
    free(capture_stop(&out));
    return rc;
}

START_TEST(a_whole_run)
{
    counted c = {0, 0, 0, -1};
    char *err;
    ck_assert_int_eq(run_main(&c, "ok", NULL, &err), 0);
    free(err);
    ck_assert_int_eq(c.started, 1);
    ck_assert_int_eq(c.epochs, 3); // the lab's stop, before the default 5 epochs
    ck_assert_int_eq(c.teardowns, 1);
    char *csv = slurp(tpath("ok/metrics.csv"), NULL), *json = slurp(tpath("ok/summary.json"), NULL);
    ck_assert_ptr_nonnull(csv);
    ck_assert_str_eq(csv, "epoch,square\n1,1\n2,4\n3,9\n");
    ck_assert_ptr_nonnull(json);
    ck_assert_has(json, "\"epochs_run\": 3");
    ck_assert_has(json, "\"plots\": \"\""); // the engine ends the lab's body with what it drew: nothing here
    free(csv), free(json);
}
END_TEST

START_TEST(failures_and_exit_statuses)
{
    counted c = {0, 0, 0, 1};
    char *err;
    ck_assert_int_eq(run_main(&c, "bad", NULL, &err), dl_exit_code(DL_ERR_NUMERIC));
    ck_assert_has(err, "labYY: error: epoch 2 diverged");
    ck_assert_int_eq(c.teardowns, 1); // the lab's state freed after a failure too
    ck_assert(!path_exists(tpath("bad/summary.json")));
    free(err);
    counted d = {0, 0, 0, -1};
    ck_assert_int_eq(run_main(&d, "flag", "--nope", &err), 2);
    ck_assert_has(err, "labYY: error: unknown option '--nope'");
    ck_assert_int_eq(d.started + d.teardowns, 0); // nothing ran
    free(err);
    ck_assert_int_eq(run_main(&d, "help", "--help", &err), 0);
    free(err);
}
END_TEST

Suite *engine_suite(void)
{
    Suite *s = suite_of("engine", tcase_with_timeout("engine", 10),
                        TESTS(defaults_and_shared_flags, choice_yields_enum, two_spellings_given_twice, lab_table_bug));
    suite_add_tcase(s, tcase_of(tcase_with_tmp("engine_main", 20), TESTS(a_whole_run, failures_and_exit_statuses)));
    return s;
}
