/* jsonq.c — prints values from a JSON file, for the kit's shell scripts.
 *
 *   jsonq FILE PATH      PATH: keys separated by dots; a number indexes an
 *                        array; '*' takes every element (one line each).
 *   jsonq FILE           checks that FILE parses (exit 0) or says where not.
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

int main(int argc, char **argv)
{
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
