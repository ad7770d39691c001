/* cli.c — the shared driver command line: common flags plus a lab's own. */
#define _POSIX_C_SOURCE 200809L
#include "dl/cli.h"

#include "dl/launch.h" // dl_comm_launcher, dl_comm_slurm_tasks
#include "dl/fs.h" // dl_check_writable

#include <errno.h> // errno, ERANGE
#include <math.h> // isfinite, llround
#include <stdint.h> // SIZE_MAX
#include <stdio.h> // fprintf, snprintf
#include <stdlib.h> // strtol, strtod, getenv
#include <string.h> // strcmp, strncmp, strlen

void dl_args_defaults(dl_args *a)
{
    memset(a, 0, sizeof *a);
    a->data = "breast_cancer";
    a->device = dl_device_env();
    dl_device_parse("auto", &a->dev);
    a->epochs = 100;
    a->batch_size = 0;
    a->lr = 0.1;
    a->seed = 1;
    a->out = "build/run";
    a->json = NULL;
    a->plot = "png";
    a->quiet = 0;
}

/* The common options, pointing into a. */
static size_t common_opts(dl_args *a, dl_opt *o)
{
    dl_opt t[] = {
        {"data", DL_OPT_STRING, &a->data, "SPEC",
         "dataset: breast_cancer, fashion_mnist, synthetic:k=v,... or a .csv file", NULL, 1, 0},
        {"device", DL_OPT_STRING, &a->device, "DEV",
         "auto, cpu, cuda, cuda:N, or emu in an EMU=1 build (env DL_DEVICE)", NULL, 1, 0},
        {"epochs", DL_OPT_INT, &a->epochs, "N", "passes over the training data", NULL, 1, 1e7},
        {"batch-size", DL_OPT_LONG, &a->batch_size, "N", "rows per step; 0 = full batch", NULL, 0, 1e9},
        {"lr", DL_OPT_DOUBLE, &a->lr, "X", "learning rate (> 0)", NULL, 1e-12, 1e6},
        {"seed", DL_OPT_U64, &a->seed, "N", "seed of every random choice (split, order, init)", NULL, 1, 0},
        {"out", DL_OPT_STRING, &a->out, "DIR", "where metrics.csv, summary.json and plots go", NULL, 1, 0},
        {"json", DL_OPT_STRING, &a->json, "FILE", "also write summary.json to FILE", NULL, 1, 0},
        {"plot", DL_OPT_CHOICE, &a->plot, "FMT", "plots as png, svg, dumb (terminal) or none", "png|svg|dumb|none", 1,
         0},
        {"quiet", DL_OPT_FLAG, &a->quiet, NULL, "no progress output", NULL, 1, 0},
    };
    memcpy(o, t, sizeof t);
    return sizeof t / sizeof t[0];
}

static void format_value(const dl_opt *o, char *buf, size_t len)
{
    buf[0] = '\0';
    switch (o->kind) {
    case DL_OPT_FLAG:
        break;
    case DL_OPT_INT:
        snprintf(buf, len, "%d", *(int *)o->dst);
        break;
    case DL_OPT_LONG:
        snprintf(buf, len, "%ld", *(long *)o->dst);
        break;
    case DL_OPT_DOUBLE:
        snprintf(buf, len, "%g", *(double *)o->dst);
        break;
    case DL_OPT_U64:
        snprintf(buf, len, "%llu", (unsigned long long)*(uint64_t *)o->dst);
        break;
    case DL_OPT_SIZE: {
        size_t v = *(size_t *)o->dst;
        const char *suffix[] = {"", "K", "M", "G"};
        int k = 0;
        while (k < 3 && v >= 1024 && v % 1024 == 0) {
            v /= 1024;
            k++;
        }
        snprintf(buf, len, "%zu%s", v, suffix[k]);
        break;
    }
    case DL_OPT_STRING:
    case DL_OPT_CHOICE: {
        const char *s = *(const char **)o->dst;
        if (s != NULL)
            snprintf(buf, len, "%s", s);
        break;
    }
    case DL_OPT_ENUM:
        dl_cli_choice(o->choices, *(int *)o->dst, buf, len);
        break;
    case DL_OPT_MIB: // the same bytes as its DL_OPT_SIZE spelling, whose default the usage shows
        break;
    }
}

/* The defaults as they were before parsing (the usage shows these). */
#define MAX_OPTS 64
static char defaults[2][MAX_OPTS][128];

static void remember_defaults(const dl_opt *common, size_t nc, const dl_opt *extra, size_t ne)
{
    for (size_t i = 0; i < nc && i < MAX_OPTS; i++)
        format_value(&common[i], defaults[0][i], sizeof defaults[0][i]);
    for (size_t i = 0; i < ne && i < MAX_OPTS; i++)
        format_value(&extra[i], defaults[1][i], sizeof defaults[1][i]);
}

static void print_opts(FILE *f, const dl_opt *opts, size_t n, int which)
{
    for (size_t i = 0; i < n; i++) {
        char left[64], shrt[8] = "";
        const char *def = i < MAX_OPTS ? defaults[which][i] : "";
        if (opts[i].short_name)
            snprintf(shrt, sizeof shrt, "-%c, ", opts[i].short_name);
        snprintf(left, sizeof left, "%s--%s%s%s", shrt, opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "");
        fprintf(f, "  %-20s %s", left, opts[i].help);
        if (def[0])
            fprintf(f, " (default: %s)", def);
        fputc('\n', f);
    }
}

static void usage(FILE *f, const char *prog, const char *summary, const dl_opt *common, size_t nc, const dl_opt *extra,
                  size_t ne)
{
    fprintf(f, "usage: %s [options]\n", prog);
    if (summary != NULL)
        fprintf(f, "%s\n", summary);
    fprintf(f, "\ncommon options:\n");
    print_opts(f, common, nc, 0);
    if (ne > 0) {
        fprintf(f, "\n%s options:\n", prog);
        print_opts(f, extra, ne, 1);
    }
    fprintf(f, "  %-20s %s\n", "--help", "show this help and exit");
}

/* v's index among choices ("a|b|c"), or -1 when it is none of them. */
static int choice_index(const char *v, const char *choices)
{
    size_t len = strlen(v);
    const char *p = choices;
    for (int i = 0; *p; i++) {
        size_t k = strcspn(p, "|");
        if (k == len && strncmp(p, v, len) == 0)
            return i;
        p += k;
        if (*p == '|')
            p++;
    }
    return -1;
}

const char *dl_cli_choice(const char *choices, int k, char *buf, size_t len)
{
    const char *p = choices != NULL ? choices : "";
    for (int i = 0; i < k && *p; i++) {
        p += strcspn(p, "|");
        if (*p == '|')
            p++;
    }
    snprintf(buf, len, "%.*s", k >= 0 ? (int)strcspn(p, "|") : 0, p);
    return buf;
}

/* Stores text into o->dst: 1. On failure writes the reason into err and
 * returns 0 (a flag's spelling: the usage follows) or -1 (a value that
 * parses but cannot be used: the reason alone). */
static int set_value(const dl_opt *o, const char *text, char *err, size_t len)
{
    char *end = NULL;
    int bounded = o->min <= o->max;
    errno = 0;
    switch (o->kind) {
    case DL_OPT_FLAG:
        *(int *)o->dst = 1;
        return 1;
    case DL_OPT_STRING:
        if (text[0] == '\0') {
            snprintf(err, len, "--%s: expected a non-empty %s", o->name, o->metavar);
            return 0;
        }
        *(const char **)o->dst = text;
        return 1;
    case DL_OPT_CHOICE:
    case DL_OPT_ENUM: {
        int k = choice_index(text, o->choices);
        if (k < 0) {
            snprintf(err, len, "--%s: '%s' is not one of %s", o->name, text, o->choices);
            return 0;
        }
        if (o->kind == DL_OPT_ENUM)
            *(int *)o->dst = k;
        else
            *(const char **)o->dst = text;
        return 1;
    }
    case DL_OPT_U64: { // strtoull takes all 64 bits, but reads "-1" as 2^64-1: refuse a '-'
        unsigned long long v = strtoull(text, &end, 10);
        if (end == text || *end != '\0' || errno == ERANGE || strchr(text, '-') != NULL) {
            snprintf(err, len, "--%s: '%s' is not a non-negative integer", o->name, text);
            return 0;
        }
        if (bounded && ((double)v < o->min || (double)v > o->max)) {
            snprintf(err, len, "--%s: %llu is out of range, expected %.0f to %.0f", o->name, v, o->min, o->max);
            return 0;
        }
        *(uint64_t *)o->dst = (uint64_t)v;
        return 1;
    }
    case DL_OPT_INT:
    case DL_OPT_LONG: {
        long long v = strtoll(text, &end, 10);
        if (end == text || *end != '\0' || errno == ERANGE) {
            snprintf(err, len, "--%s: '%s' is not an integer", o->name, text);
            return 0;
        }
        if (bounded && ((double)v < o->min || (double)v > o->max)) {
            snprintf(err, len, "--%s: %lld is out of range, expected %.0f to %.0f", o->name, v, o->min, o->max);
            return 0;
        }
        if (o->kind == DL_OPT_INT) {
            if (v < -2147483647LL || v > 2147483647LL) {
                snprintf(err, len, "--%s: %lld does not fit an int", o->name, v);
                return 0;
            }
            *(int *)o->dst = (int)v;
        } else {
            *(long *)o->dst = (long)v;
        }
        return 1;
    }
    case DL_OPT_SIZE: {
        unsigned long long v = strtoull(text, &end, 10), mult = 1;
        if (end != text && *end != '\0' && end[1] == '\0') {
            char u = *end;
            mult = u == 'K' || u == 'k'   ? 1ULL << 10
                   : u == 'M' || u == 'm' ? 1ULL << 20
                   : u == 'G' || u == 'g' ? 1ULL << 30
                                          : 0;
            end += mult ? 1 : 0;
        }
        if (end == text || *end != '\0' || errno == ERANGE || strchr(text, '-') != NULL || mult == 0 ||
            v > (unsigned long long)(SIZE_MAX / mult)) {
            snprintf(err, len, "--%s: '%s' is not a size (bytes, with an optional K, M or G: 8, 64K, 256M)", o->name,
                     text);
            return 0;
        }
        v *= mult;
        if (bounded && ((double)v < o->min || (double)v > o->max)) {
            snprintf(err, len, "--%s: %llu bytes is out of range, expected %.0f to %.0f", o->name, v, o->min, o->max);
            return 0;
        }
        *(size_t *)o->dst = (size_t)v;
        return 1;
    }
    case DL_OPT_DOUBLE:
    case DL_OPT_MIB: {
        double v = strtod(text, &end);
        if (end == text || *end != '\0' || !isfinite(v)) {
            snprintf(err, len, "--%s: '%s' is not a finite number", o->name, text);
            return 0;
        }
        if (bounded && (v < o->min || v > o->max)) {
            snprintf(err, len, "--%s: %g is out of range, expected %g to %g", o->name, v, o->min, o->max);
            return 0;
        }
        if (o->kind == DL_OPT_DOUBLE) {
            *(double *)o->dst = v;
            return 1;
        }
        double bytes = v * 1048576.0;
        if (bytes < 0.5) {
            snprintf(err, len, "--%s %g is %.3g bytes: a cap is at least 1 byte", o->name, v, bytes);
            return -1;
        }
        *(size_t *)o->dst = (size_t)llround(bytes);
        return 1;
    }
    }
    return 0;
}

static const dl_opt *find_short(char s, const dl_opt *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++) {
        if (b[i].short_name != 0 && b[i].short_name == s)
            return &b[i];
    }
    return NULL;
}

static const dl_opt *find(const char *name, size_t len, const dl_opt *a, size_t na, const dl_opt *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++) { // a lab's own flag overrides a common one
        if (strlen(b[i].name) == len && strncmp(b[i].name, name, len) == 0)
            return &b[i];
    }
    for (size_t i = 0; i < na; i++) {
        if (strlen(a[i].name) == len && strncmp(a[i].name, name, len) == 0)
            return &a[i];
    }
    return NULL;
}

int dl_cli_single_process(const char *prog)
{
    const char *var = NULL;
    int ranks = dl_comm_launcher(&var, NULL); // mpirun, mpiexec, dlrun, torchrun: one list, in dl/launch.h
    if (ranks > 1) {
        fprintf(stderr,
                "%s: error: this lab runs as one process, but it was started as one of %d ranks (%s=%s): "
                "run it without dlrun or mpirun\n",
                prog, ranks, var, getenv(var));
        return DL_CLI_ERROR;
    }
    int tasks = dl_comm_slurm_tasks(); // srun -n N without dlrun; 0 in a batch script's own process
    if (tasks > 1) {
        fprintf(stderr,
                "%s: error: this lab runs as one process, but srun started it as one of %d tasks "
                "(SLURM_STEP_NUM_TASKS=%d): run it with srun -n 1, or on its own in the batch script\n",
                prog, tasks, tasks);
        return DL_CLI_ERROR;
    }
    return DL_CLI_RUN;
}

int dl_cli_parse(int argc, char **argv, const char *prog, const char *summary, dl_args *a, const dl_opt *extra,
                 size_t n_extra)
{
    dl_opt common[16];
    size_t nc = common_opts(a, common);
    char err[512];
    remember_defaults(common, nc, extra, n_extra);
    const dl_opt *spelled[MAX_OPTS]; // the grouped flags given so far (one per group)
    size_t n_spelled = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, prog, summary, common, nc, extra, n_extra);
            return DL_CLI_HELP;
        }
        const dl_opt *o = NULL;
        const char *eq = NULL;
        if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && arg[2] == '\0') { // -x: a short name
            o = find_short(arg[1], extra, n_extra);
            if (o == NULL) {
                snprintf(err, sizeof err, "unknown option '%s'", arg);
                goto fail;
            }
        } else if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, sizeof err, "unexpected argument '%s' (options start with --)", arg);
            goto fail;
        } else {
            const char *name = arg + 2;
            eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find(name, len, common, nc, extra, n_extra);
            if (o == NULL) {
                snprintf(err, sizeof err, "unknown option '--%.*s'", (int)len, name);
                goto fail;
            }
        }
        const char *value = NULL;
        if (o->kind == DL_OPT_FLAG) {
            if (eq != NULL) {
                snprintf(err, sizeof err, "--%s takes no value", o->name);
                goto fail;
            }
        } else if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(err, sizeof err, "--%s needs a value (%s)", o->name, o->metavar);
            goto fail;
        }
        int set = set_value(o, value, err, sizeof err);
        if (set < 0)
            goto refused;
        if (set == 0)
            goto fail;
        if (o->group != 0) { // one value, two spellings: both given is refused (one would silently lose)
            size_t k = 0;
            while (k < n_spelled && spelled[k]->group != o->group)
                k++;
            if (k < n_spelled && spelled[k] != o) {
                snprintf(err, sizeof err, "--%s and --%s both given: they set the same value; give one of them",
                         spelled[k]->name, o->name);
                goto fail;
            }
            if (k == n_spelled && n_spelled < MAX_OPTS)
                spelled[n_spelled++] = o;
        }
    }
    // --device, parsed once: the driver opens the spec
    if (dl_device_parse(a->device, &a->dev) != DL_OK) {
        const char *m = dl_last_error(), *env = getenv("DL_DEVICE");
        snprintf(err, sizeof err, "%s %s", env != NULL && a->device == env ? "DL_DEVICE" : "--device",
                 strncmp(m, "device ", 7) == 0 ? m + 7 : m);
        goto fail;
    }
    // nothing is written before every flag is known to be usable
    if (dl_check_writable("--out", a->out, 1) != DL_OK ||
        (a->json != NULL && dl_check_writable("--json", a->json, 0) != DL_OK)) {
        snprintf(err, sizeof err, "%s", dl_last_error());
        goto refused;
    }
    return DL_CLI_RUN;
refused: // the flags are spelled right: the reason alone
    fprintf(stderr, "%s: error: %s\n", prog, err);
    return DL_CLI_ERROR;
fail:
    fprintf(stderr, "%s: error: %s\n\n", prog, err);
    usage(stderr, prog, summary, common, nc, extra, n_extra);
    return DL_CLI_ERROR;
}
