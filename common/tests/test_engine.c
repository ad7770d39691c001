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

Suite *engine_suite(void)
{
    return suite_of("engine", tcase_with_timeout("engine", 10),
                    TESTS(defaults_and_shared_flags, choice_yields_enum, two_spellings_given_twice, lab_table_bug));
}
