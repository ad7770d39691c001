/* test_cli.c — the shared driver command line. */
#include "tests.h"

#include <stdint.h> // uint64_t, UINT64_MAX
#include <stdio.h> // snprintf
#include <stdlib.h> // free, setenv, mkdtemp
#include <unistd.h> // rmdir

#include "dl/cli.h" // dl_cli_parse, dl_args, dl_opt

typedef struct lab_opts {
    int hidden, verbose;
    long steps;
    double momentum;
    uint64_t budget;
    const char *mode, *tag;
    size_t bytes;
    double kib;
    int algo; /* DL_OPT_ENUM: 0 ring, 1 tree, 2 star */
} lab_opts;

static lab_opts L;

static const dl_opt extra[] = {
    {"hidden", DL_OPT_INT, &L.hidden, "N", "hidden units", NULL, 1, 4096},
    {"verbose", DL_OPT_FLAG, &L.verbose, NULL, "say more", NULL, 1, 0},
    {"steps", DL_OPT_LONG, &L.steps, "N", "steps", NULL, 1, 0},
    {"momentum", DL_OPT_DOUBLE, &L.momentum, "X", "momentum", NULL, 0, 1},
    {"budget", DL_OPT_U64, &L.budget, "N", "bytes", NULL, 1, 0},
    {"mode", DL_OPT_CHOICE, &L.mode, "M", "how to train", "naive|ddp|ring", 1, 0},
    {"tag", DL_OPT_STRING, &L.tag, "S", "a label", NULL, 1, 0},
    {"bytes", DL_OPT_SIZE, &L.bytes, "SIZE", "message size", NULL, 1, 1ULL << 40, 'b', 1},
    {"kib", DL_OPT_DOUBLE, &L.kib, "X", "message size in KiB instead", NULL, 0, 1e9, 0, 1},
    {"algo", DL_OPT_ENUM, &L.algo, "A", "the algorithm", "ring|tree|star", 1, 0},
};
#define N_EXTRA (sizeof extra / sizeof extra[0])

typedef struct result {
    int rc;
    char *out, *err;
} result;

/* Parses a NULL-terminated argv with captured stdout and stderr. */
static result parse(dl_args *a, char **argv)
{
    int argc = 0;
    while (argv[argc] != NULL)
        argc++;
    dl_args_defaults(a);
    memset(&L, 0, sizeof L);
    L.mode = "naive";
    L.algo = 1; // tree: the default the usage shows, by name
    capture out, err;
    capture_start(&out, 1);
    capture_start(&err, 2);
    result r;
    r.rc = dl_cli_parse(argc, argv, "labXX", "Trains a thing.", a, extra, N_EXTRA);
    r.err = capture_stop(&err);
    r.out = capture_stop(&out);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

START_TEST(defaults)
{
    env_saved e = env_set("DL_DEVICE", NULL);
    dl_args a;
    char *argv[] = {"labXX", NULL};
    result r = parse(&a, argv);
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(a.data, "breast_cancer");
    ck_assert_str_eq(a.device, "auto");
    ck_assert(a.dev.is_auto == 1 && a.dev.kind == DL_DEVICE_CPU); // parsed with the flags
    ck_assert_int_eq(a.epochs, 100);
    ck_assert_int_eq(a.batch_size, 0);
    ck_assert_double_eq(a.lr, 0.1);
    ck_assert_uint_eq(a.seed, 1);
    ck_assert_str_eq(a.out, "build/run");
    ck_assert_ptr_null(a.json);
    ck_assert_str_eq(a.plot, "png");
    ck_assert_int_eq(a.quiet, 0);
    result_free(&r);
    setenv("DL_DEVICE", "cpu", 1);
    dl_args_defaults(&a);
    ck_assert_str_eq(a.device, "cpu");
    env_restore(&e);
}
END_TEST

START_TEST(both_spellings)
{
    dl_args a;
    char *sp[] = {"labXX", "--epochs", "5", "--lr", "0.25", "--data", "synthetic:n=10", NULL};
    result r = parse(&a, sp);
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_int_eq(a.epochs, 5);
    ck_assert_double_eq(a.lr, 0.25);
    ck_assert_str_eq(a.data, "synthetic:n=10");
    result_free(&r);
    char *eq[] = {"labXX", "--epochs=5", "--lr=0.25", "--data=a=b.csv", "--batch-size=64", NULL};
    r = parse(&a, eq);
    ck_assert_int_eq(r.rc, DL_CLI_RUN);
    ck_assert_int_eq(a.epochs, 5);
    ck_assert_double_eq(a.lr, 0.25);
    ck_assert_str_eq(a.data, "a=b.csv"); // split at the first '='
    ck_assert_int_eq(a.batch_size, 64);
    result_free(&r);
}
END_TEST

START_TEST(flags_choices_and_extras)
{
    dl_args a;
    char dir[] = "/tmp/dl-cli-XXXXXX", out[64]; // --out is checked for room to write: a folder of the test's own
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/o", dir);
    char *argv[] = {"labXX",
                    "--quiet",
                    "--plot",
                    "svg",
                    "--device",
                    "cuda:1",
                    "--seed",
                    "18446744073709551615",
                    "--out",
                    out,
                    "--json=s.json",
                    "--hidden",
                    "128",
                    "--verbose",
                    "--steps=9000000000",
                    "--momentum",
                    "0.9",
                    "--budget",
                    "65536",
                    "--mode=ring",
                    "--tag",
                    "x y",
                    "--algo=star",
                    NULL};
    result r = parse(&a, argv);
    ck_assert_msg(r.rc == DL_CLI_RUN, "rc %d: %s", r.rc, r.err);
    ck_assert_int_eq(a.quiet, 1);
    ck_assert_str_eq(a.plot, "svg");
    ck_assert_str_eq(a.device, "cuda:1");
    ck_assert(a.dev.kind == DL_DEVICE_CUDA && a.dev.ordinal == 1 && !a.dev.any_gpu && !a.dev.is_auto);
    ck_assert_uint_eq(a.seed, UINT64_MAX);
    ck_assert_str_eq(a.out, out);
    ck_assert_str_eq(a.json, "s.json");
    ck_assert_int_eq(L.hidden, 128);
    ck_assert_int_eq(L.verbose, 1);
    ck_assert_int_eq(L.steps, 9000000000L);
    ck_assert_double_eq(L.momentum, 0.9);
    ck_assert_uint_eq(L.budget, 65536);
    ck_assert_str_eq(L.mode, "ring");
    ck_assert_str_eq(L.tag, "x y");
    ck_assert_int_eq(L.algo, 2); // an enum option: the word's index among its choices
    result_free(&r);
    rmdir(out); // if the check made it
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static void expect_error(char **argv, const char *what)
{
    dl_args a;
    result r = parse(&a, argv);
    ck_assert_msg(r.rc == DL_CLI_ERROR, "%s: rc %d", argv[1], r.rc);
    ck_assert_has(r.err, "labXX: error: ");
    ck_assert_has(r.err, what);
    ck_assert_has(r.err, "usage: labXX [options]");
    ck_assert_str_eq(r.out, "");
    result_free(&r);
}

START_TEST(errors)
{
    char *unknown[] = {"labXX", "--nope", "3", NULL};
    expect_error(unknown, "unknown option '--nope'");
    char *unknown_eq[] = {"labXX", "--epochz=3", NULL};
    expect_error(unknown_eq, "unknown option '--epochz'");
    char *badint[] = {"labXX", "--epochs", "5x", NULL};
    expect_error(badint, "--epochs: '5x' is not an integer");
    char *empty[] = {"labXX", "--epochs=", NULL};
    expect_error(empty, "--epochs: '' is not an integer");
    char *range[] = {"labXX", "--epochs", "0", NULL};
    expect_error(range, "--epochs: 0 is out of range, expected 1 to 10000000");
    char *xrange[] = {"labXX", "--hidden", "5000", NULL};
    expect_error(xrange, "--hidden: 5000 is out of range");
    char *huge[] = {"labXX", "--epochs", "99999999999999999999", NULL};
    expect_error(huge, "--epochs");
    char *lr[] = {"labXX", "--lr", "0", NULL};
    expect_error(lr, "--lr: 0 is out of range");
    char *lrnan[] = {"labXX", "--lr", "nan", NULL};
    expect_error(lrnan, "--lr: 'nan' is not a finite number");
    char *mom[] = {"labXX", "--momentum", "1.5", NULL};
    expect_error(mom, "--momentum: 1.5 is out of range");
    char *negseed[] = {"labXX", "--seed", "-1", NULL};
    expect_error(negseed, "--seed: '-1' is not a non-negative integer");
    char *bigseed[] = {"labXX", "--seed", "18446744073709551616", NULL};
    expect_error(bigseed, "--seed");
    char *missing[] = {"labXX", "--lr", "0.1", "--epochs", NULL};
    expect_error(missing, "--epochs needs a value (N)");
    char *positional[] = {"labXX", "data.csv", NULL};
    expect_error(positional, "unexpected argument 'data.csv'");
    char *choice[] = {"labXX", "--plot", "jpg", NULL};
    expect_error(choice, "--plot: 'jpg' is not one of png|svg|dumb|none");
    char *prefix[] = {"labXX", "--plot", "pn", NULL};
    expect_error(prefix, "'pn' is not one of");
    char *mode[] = {"labXX", "--mode", "ddpx", NULL};
    expect_error(mode, "--mode: 'ddpx' is not one of naive|ddp|ring");
    char *algo[] = {"labXX", "--algo", "rin", NULL};
    expect_error(algo, "--algo: 'rin' is not one of ring|tree|star");
    char *flagval[] = {"labXX", "--quiet=1", NULL};
    expect_error(flagval, "--quiet takes no value");
    char *emptystr[] = {"labXX", "--out=", NULL};
    expect_error(emptystr, "--out: expected a non-empty DIR");
    char *single[] = {"labXX", "-epochs", "5", NULL};
    expect_error(single, "unexpected argument '-epochs'");
    char *device[] = {"labXX", "--device", "gpu", NULL}; // refused with the flags, before anything opens
    expect_error(device, "--device 'gpu': expected auto, cpu, cuda or cuda:N");
    char *ordinal[] = {"labXX", "--device=cuda:x", NULL};
    expect_error(ordinal, "--device 'cuda:x': expected cuda:N with N a GPU index");
    // two spellings of one value: refused whatever the values (the default's value too), naming both
    char *two[] = {"labXX", "--bytes", "64K", "--kib", "2", NULL};
    expect_error(two, "--bytes and --kib both given: they set the same value; give one of them");
    char *two_short[] = {"labXX", "--kib=64", "-b", "64K", NULL};
    expect_error(two_short, "--kib and --bytes both given");
    {
        char *twice[] = {"labXX", "--kib", "2", "--kib", "3", "--epochs", "4", "--epochs", "5", NULL};
        dl_args t;
        result r = parse(&t, twice); // one spelling twice: the last value (a script appends to a line)
        ck_assert_msg(r.rc == DL_CLI_RUN, "rc %d: %s", r.rc, r.err);
        ck_assert_double_eq(L.kib, 3);
        ck_assert_int_eq(t.epochs, 5);
        result_free(&r);
    }
    env_saved e = env_set("DL_DEVICE", "tpu"); // a bad default is named as the variable it came from
    char *none[] = {"labXX", "--quiet", NULL};
    expect_error(none, "DL_DEVICE 'tpu': expected auto, cpu, cuda or cuda:N");
    char *given[] = {"labXX", "--device", "cpu", NULL}; // the flag wins over the variable
    dl_args a;
    result r = parse(&a, given);
    ck_assert_msg(r.rc == DL_CLI_RUN, "rc %d: %s", r.rc, r.err);
    ck_assert(a.dev.kind == DL_DEVICE_CPU && !a.dev.is_auto);
    result_free(&r);
    env_restore(&e);
}
END_TEST

START_TEST(unwritable_outputs_and_ranks)
{
    // refused before anything is written: a driver never leaves a summary.json
    // in --out and then fails on --json
    dl_args a;
    write_text(tpath("file"), "x");
    char out_is_file[600], json_in_file[600];
    snprintf(out_is_file, sizeof out_is_file, "--out=%s", tpath("file"));
    snprintf(json_in_file, sizeof json_in_file, "--json=%s", tpath("file/s.json"));
    char *bad_out[] = {"labXX", out_is_file, NULL};
    result r = parse(&a, bad_out);
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "labXX: error: --out '");
    ck_assert_has(r.err, "exists and is not a directory");
    result_free(&r);
    char ok_out[600];
    snprintf(ok_out, sizeof ok_out, "--out=%s", tpath("fresh"));
    char *bad_json[] = {"labXX", ok_out, json_in_file, NULL};
    r = parse(&a, bad_json);
    ck_assert_int_eq(r.rc, DL_CLI_ERROR);
    ck_assert_has(r.err, "--json '");
    ck_assert_msg(!path_exists(tpath("fresh")), "--out was created although --json is unusable");
    result_free(&r);
    // a single-process lab started as one of several ranks says so
    ck_assert_int_eq(dl_cli_single_process("labXX"), DL_CLI_RUN);
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    capture err;
    capture_start(&err, 2);
    int rc = dl_cli_single_process("labXX");
    char *text = capture_stop(&err);
    unsetenv("OMPI_COMM_WORLD_SIZE");
    ck_assert_int_eq(rc, DL_CLI_ERROR);
    ck_assert_has(text, "labXX: error: this lab runs as one process, but it was started as one of 2 ranks");
    free(text);
}
END_TEST

START_TEST(short_names_and_sizes)
{
    dl_args a;
    const struct {
        const char *text;
        size_t want;
    } ok[] = {{"8", 8}, {"64K", 65536}, {"256M", 256u << 20}, {"1G", 1u << 30}, {"3k", 3072}, {"1024", 1024}};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        char *argv[] = {"labXX", "-b", (char *)ok[k].text, NULL};
        result r = parse(&a, argv);
        ck_assert_msg(r.rc == DL_CLI_RUN, "-b %s: %s", ok[k].text, r.err);
        ck_assert_uint_eq(L.bytes, ok[k].want);
        result_free(&r);
        char eq[32];
        snprintf(eq, sizeof eq, "--bytes=%s", ok[k].text);
        char *argv2[] = {"labXX", eq, NULL};
        r = parse(&a, argv2);
        ck_assert_uint_eq(L.bytes, ok[k].want);
        result_free(&r);
    }
    char *garbage[] = {"labXX", "-b", "12Q", NULL};
    expect_error(garbage, "--bytes: '12Q' is not a size (bytes, with an optional K, M or G");
    char *neg[] = {"labXX", "-b", "-3", NULL};
    expect_error(neg, "--bytes: '-3' is not a size");
    char *frac[] = {"labXX", "--bytes", "1.5M", NULL};
    expect_error(frac, "is not a size");
    char *two[] = {"labXX", "-b", "8MM", NULL};
    expect_error(two, "is not a size");
    char *zero[] = {"labXX", "-b", "0", NULL};
    expect_error(zero, "--bytes: 0 bytes is out of range");
    char *huge[] = {"labXX", "-b", "2048G", NULL};
    expect_error(huge, "is out of range");
    char *unknown[] = {"labXX", "-z", "3", NULL};
    expect_error(unknown, "unknown option '-z'");
    char *help[] = {"labXX", "--help", NULL};
    result r = parse(&a, help);
    ck_assert_has(r.out, "-b, --bytes SIZE");
    result_free(&r);
}
END_TEST

START_TEST(help)
{
    dl_args a;
    char *argv[] = {"labXX", "--epochs", "7", "--help", "--nope", NULL};
    result r = parse(&a, argv);
    ck_assert_int_eq(r.rc, DL_CLI_HELP);
    ck_assert_str_eq(r.err, "");
    ck_assert_has(r.out, "usage: labXX [options]\nTrains a thing.\n");
    ck_assert_has(r.out, "common options:");
    ck_assert_has(r.out, "--epochs N");
    ck_assert_has(r.out, "(default: 100)"); // the defaults, not the values parsed so far
    ck_assert_msg(strstr(r.out, "(default: 7)") == NULL, "the usage shows a parsed value as the default");
    ck_assert_has(r.out, "--plot FMT");
    ck_assert_has(r.out, "labXX options:");
    ck_assert_has(r.out, "--mode M");
    ck_assert_has(r.out, "--algo A             the algorithm (default: tree)"); // an enum's default by its name
    ck_assert_has(r.out, "--help");
    char buf[16];
    ck_assert_str_eq(dl_cli_choice("ring|tree|star", 0, buf, sizeof buf), "ring");
    ck_assert_str_eq(dl_cli_choice("ring|tree|star", 2, buf, sizeof buf), "star");
    ck_assert_str_eq(dl_cli_choice("ring|tree|star", 3, buf, sizeof buf), "");
    ck_assert_str_eq(dl_cli_choice("ring|tree|star", -1, buf, sizeof buf), "");
    result_free(&r);
    char *h[] = {"labXX", "-h", NULL};
    r = parse(&a, h);
    ck_assert_int_eq(r.rc, DL_CLI_HELP);
    ck_assert_has(r.out, "usage: labXX");
    result_free(&r);
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_of("cli", tcase_with_timeout("cli", 10),
                        TESTS(defaults, both_spellings, flags_choices_and_extras, errors, help, short_names_and_sizes));
    suite_add_tcase(s, tcase_of(tcase_with_tmp("cli_files", 10), TESTS(unwritable_outputs_and_ranks)));
    return s;
}
