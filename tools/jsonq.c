/* jsonq.c — prints values from a JSON file, for the kit's shell scripts.
 *
 *   jsonq FILE PATH      PATH: keys separated by dots; a number indexes an
 *                        array; '*' takes every element (one line each).
 *   jsonq FILE           checks that FILE parses (exit 0) or says where not.
 *   jsonq --gradescope FILE   checks FILE against Gradescope's documented
 *                        results.json (the autograder specification): only
 *                        its keys, each of its type, status "passed" or
 *                        "failed", a known visibility — and no test that
 *                        says "failed" for 0 points (work nobody graded
 *                        would show red). Says each problem; exit 1 if any.
 *
 * Scalars print as themselves (integers without a decimal point, strings
 * without quotes); objects and arrays print their sizes. Exit 1 when the
 * path is missing, 2 when the file does not parse. */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // floor
#include <stdio.h> // printf
#include <stdlib.h> // strtol
#include <string.h> // strcspn

#include "dl/json.h"

static void print_value(const dl_jv *v)
{
    switch (v->type) {
    case DL_JNULL:
        printf("null\n");
        break;
    case DL_JBOOL:
        printf("%s\n", v->num ? "true" : "false");
        break;
    case DL_JNUM:
        if (v->num == floor(v->num) && v->num > -1e15 && v->num < 1e15)
            printf("%.0f\n", v->num);
        else
            printf("%.17g\n", v->num);
        break;
    case DL_JSTR:
        printf("%s\n", v->str);
        break;
    case DL_JARR:
        printf("[array of %zu]\n", v->n);
        break;
    case DL_JOBJ:
        printf("{object of %zu}\n", v->n);
        break;
    }
}

/* Walks path from v; returns the number of values printed. */
static int walk(const dl_jv *v, const char *path)
{
    if (v == NULL)
        return 0;
    if (*path == '\0') {
        print_value(v);
        return 1;
    }
    size_t len = strcspn(path, ".");
    const char *rest = path[len] == '.' ? path + len + 1 : path + len;
    if (len == 1 && path[0] == '*') {
        int n = 0;
        for (size_t i = 0; i < v->n; i++)
            n += walk(&v->items[i], rest);
        return n;
    }
    if (v->type == DL_JARR) {
        char *end = NULL;
        long k = strtol(path, &end, 10);
        if (end != path + len || k < 0 || (size_t)k >= v->n)
            return 0;
        return walk(&v->items[k], rest);
    }
    if (v->type != DL_JOBJ)
        return 0;
    for (size_t i = 0; i < v->n; i++) {
        if (strlen(v->keys[i]) == len && strncmp(v->keys[i], path, len) == 0)
            return walk(&v->items[i], rest);
    }
    return 0;
}

// ---- --gradescope ----

/* Gradescope's keys: name and JSON type ('n' number, 's' string, 'o' object, 'a' array). */
typedef struct key_type {
    const char *key;
    char type;
} key_type;

static const key_type top_keys[] = {{"score", 'n'},         {"execution_time", 'n'},     {"output", 's'},
                                    {"output_format", 's'}, {"test_output_format", 's'}, {"test_name_format", 's'},
                                    {"visibility", 's'},    {"stdout_visibility", 's'},  {"extra_data", 'o'},
                                    {"tests", 'a'},         {"leaderboard", 'a'}};
static const key_type test_keys[] = {{"score", 'n'},      {"max_score", 'n'},     {"status", 's'},
                                     {"name", 's'},       {"name_format", 's'},   {"number", 's'},
                                     {"output", 's'},     {"output_format", 's'}, {"tags", 'a'},
                                     {"visibility", 's'}, {"extra_data", 'o'}};

static int type_is(const dl_jv *v, char t)
{
    return (t == 'n' && v->type == DL_JNUM) || (t == 's' && v->type == DL_JSTR) || (t == 'o' && v->type == DL_JOBJ) ||
           (t == 'a' && v->type == DL_JARR);
}

static int one_of(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

/* The keys of object o against the table: problems printed, counted. */
static int check_keys(const char *file, const char *where, const dl_jv *o, const key_type *keys, size_t nk)
{
    static const char *const vis[] = {"hidden", "after_due_date", "after_published", "visible", NULL};
    int bad = 0;
    for (size_t i = 0; i < o->n; i++) {
        size_t k = 0;
        while (k < nk && strcmp(keys[k].key, o->keys[i]) != 0)
            k++;
        if (k == nk) {
            printf("%s: %s: '%s' is not a Gradescope field\n", file, where, o->keys[i]);
            bad++;
        } else if (!type_is(&o->items[i], keys[k].type)) {
            printf("%s: %s: '%s' has the wrong type\n", file, where, o->keys[i]);
            bad++;
        } else if ((strcmp(o->keys[i], "visibility") == 0 || strcmp(o->keys[i], "stdout_visibility") == 0) &&
                   !one_of(o->items[i].str, vis)) {
            printf("%s: %s: visibility '%s' is not one Gradescope knows\n", file, where, o->items[i].str);
            bad++;
        }
    }
    return bad;
}

static int gradescope(const char *file, const dl_jv *root)
{
    static const char *const status[] = {"passed", "failed", NULL};
    if (root->type != DL_JOBJ) {
        printf("%s: not a JSON object\n", file);
        return 1;
    }
    int bad = check_keys(file, "top level", root, top_keys, sizeof top_keys / sizeof top_keys[0]);
    const dl_jv *tests = dl_jv_get(root, "tests");
    if (tests == NULL && dl_jv_get(root, "score") == NULL) {
        printf("%s: neither 'score' nor 'tests'\n", file);
        bad++;
    }
    for (size_t i = 0; tests != NULL && tests->type == DL_JARR && i < tests->n; i++) {
        const dl_jv *t = &tests->items[i];
        char where[64];
        snprintf(where, sizeof where, "tests[%zu]", i);
        if (t->type != DL_JOBJ) {
            printf("%s: %s is not an object\n", file, where);
            bad++;
            continue;
        }
        bad += check_keys(file, where, t, test_keys, sizeof test_keys / sizeof test_keys[0]);
        const dl_jv *st = dl_jv_get(t, "status"), *mx = dl_jv_get(t, "max_score");
        if (st != NULL && st->type == DL_JSTR && !one_of(st->str, status)) {
            printf("%s: %s: status '%s' (Gradescope knows passed and failed)\n", file, where, st->str);
            bad++;
        }
        if (st != NULL && st->type == DL_JSTR && strcmp(st->str, "failed") == 0 && mx != NULL && mx->type == DL_JNUM &&
            mx->num == 0) {
            printf("%s: %s: 'failed' for 0 points: it shows red for work nobody graded\n", file, where);
            bad++;
        }
    }
    return bad > 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--gradescope") == 0) {
        dl_jv *root = NULL;
        if (dl_json_parse_file(argv[2], &root) != DL_OK) {
            fprintf(stderr, "jsonq: %s\n", dl_last_error());
            return 2;
        }
        int rc = gradescope(argv[2], root);
        dl_jv_free(root);
        return rc;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: jsonq FILE [PATH]\n");
        return 2;
    }
    dl_jv *root = NULL;
    if (dl_json_parse_file(argv[1], &root) != DL_OK) {
        fprintf(stderr, "jsonq: %s\n", dl_last_error());
        return 2;
    }
    int n = argc == 3 ? walk(root, argv[2]) : 1;
    dl_jv_free(root);
    if (n == 0) {
        fprintf(stderr, "jsonq: %s: no value at '%s'\n", argv[1], argv[2]);
        return 1;
    }
    return 0;
}
