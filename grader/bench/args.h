/* args.h — the bench programs' flags (make bench runs them; a person may
 * too): one table each, --help, and for an unknown flag, a missing value or
 * a number that is not whole or under its least, an error naming the flag
 * and what it expects, with the usage (exit 2). Header-only: each bench is
 * one file of its own. */
#ifndef BENCH_ARGS_H
#define BENCH_ARGS_H

#include <errno.h> // errno
#include <stdio.h> // printf, fprintf
#include <stdlib.h> // strtoll
#include <string.h> // strcmp

typedef struct bench_opt {
    const char *name; /* without "--" */
    char kind; /* 'i' int, 'z' size_t, 's' a string, 'f' a flag (int set to 1) */
    void *dst;
    long long min; /* the least number allowed ('i', 'z') */
    const char *help;
} bench_opt;

static void bench_usage(FILE *f, const char *prog, const char *what, const bench_opt *o, int n)
{
    fprintf(f, "usage: %s [FLAG VALUE]...\n%s\n", prog, what);
    for (int k = 0; k < n; k++) {
        char dflt[64] = "";
        if (o[k].kind == 'i')
            snprintf(dflt, sizeof dflt, " (default %d)", *(int *)o[k].dst);
        else if (o[k].kind == 'z')
            snprintf(dflt, sizeof dflt, " (default %zu)", *(size_t *)o[k].dst);
        else if (o[k].kind == 's' && *(const char **)o[k].dst != NULL)
            snprintf(dflt, sizeof dflt, " (default %.40s)", *(const char **)o[k].dst);
        fprintf(f, "  --%-10s %s %s%s\n", o[k].name, o[k].kind == 'f' ? "     " : "VALUE", o[k].help, dflt);
    }
}

/* -1: go on; otherwise the program's exit status: 0 after the usage --help asked for, 2 after an error. */
static int bench_args(int argc, char **argv, const char *prog, const char *what, const bench_opt *o, int n)
{
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            bench_usage(stdout, prog, what, o, n);
            return 0;
        }
        const bench_opt *opt = NULL;
        for (int k = 0; k < n && opt == NULL; k++)
            if (strncmp(argv[a], "--", 2) == 0 && strcmp(argv[a] + 2, o[k].name) == 0)
                opt = &o[k];
        if (opt == NULL) {
            fprintf(stderr, "%s: error: unknown flag '%s'\n", prog, argv[a]);
            bench_usage(stderr, prog, what, o, n);
            return 2;
        }
        if (opt->kind == 'f') {
            *(int *)opt->dst = 1;
            continue;
        }
        if (a + 1 >= argc) {
            fprintf(stderr, "%s: error: --%s needs a value\n", prog, opt->name);
            return 2;
        }
        const char *v = argv[++a];
        if (opt->kind == 's') {
            *(const char **)opt->dst = v;
            continue;
        }
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end != '\0' || errno != 0 || x < opt->min || (opt->kind == 'i' && x > 2147483647LL)) {
            fprintf(stderr, "%s: error: --%s '%s': expected a whole number of at least %lld\n", prog, opt->name, v,
                    opt->min);
            return 2;
        }
        if (opt->kind == 'i')
            *(int *)opt->dst = (int)x;
        else
            *(size_t *)opt->dst = (size_t)x;
    }
    return -1;
}

#endif /* BENCH_ARGS_H */
