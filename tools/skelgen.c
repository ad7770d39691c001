/* skelgen.c — makes a student skeleton from a reference solution file.
 *
 *   skelgen SOLUTION_FILE OUTPUT_FILE
 *
 * Lines from a line holding only "BEGIN SOLUTION" in a C comment through
 * the matching "END SOLUTION" line are dropped. A line of the form
 *     <indent>STUDENT: code   (inside a C comment)
 * becomes "<indent>code": that is what the skeleton does instead (usually a
 * DL_TODO return). Everything else is copied unchanged. Unbalanced markers,
 * a STUDENT line inside a solution block, or a solution block without a
 * STUDENT line after it are errors (exit 2, with file:line). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h> // fopen, fgets
#include <stdlib.h> // exit
#include <string.h> // strncmp, strstr

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* 1 when the line is exactly "<indent>/" "* tag *" "/" (trailing blanks allowed). */
static int is_marker(const char *line, const char *tag)
{
    const char *p = skip_blanks(line);
    char want[64];
    snprintf(want, sizeof want, "/* %s */", tag);
    size_t k = strlen(want);
    if (strncmp(p, want, k) != 0)
        return 0;
    return *skip_blanks(p + k) == '\0' || *skip_blanks(p + k) == '\n';
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: skelgen SOLUTION_FILE OUTPUT_FILE\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (in == NULL) {
        perror(argv[1]);
        return 2;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *out = fopen(tmp, "w");
    if (out == NULL) {
        perror(tmp);
        fclose(in);
        return 2;
    }
    char line[8192];
    int lineno = 0, in_solution = 0, begin_line = 0, want_student = 0, blocks = 0;
    int bad = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        lineno++;
        if (is_marker(line, "BEGIN SOLUTION")) {
            if (in_solution) {
                fprintf(stderr, "%s:%d: BEGIN SOLUTION inside the block opened at line %d\n", argv[1], lineno,
                        begin_line);
                bad = 1;
            }
            in_solution = 1;
            begin_line = lineno;
            blocks++;
            continue;
        }
        if (is_marker(line, "END SOLUTION")) {
            if (!in_solution) {
                fprintf(stderr, "%s:%d: END SOLUTION without BEGIN SOLUTION\n", argv[1], lineno);
                bad = 1;
            }
            in_solution = 0;
            want_student = lineno;
            continue;
        }
        const char *p = skip_blanks(line);
        if (strncmp(p, "/* STUDENT: ", 12) == 0) {
            if (in_solution) {
                fprintf(stderr, "%s:%d: STUDENT line inside a solution block\n", argv[1], lineno);
                bad = 1;
            }
            const char *code = p + 12;
            const char *end = strstr(code, " */");
            if (end == NULL) {
                fprintf(stderr, "%s:%d: STUDENT line must end with ' */' on the same line\n", argv[1], lineno);
                bad = 1;
                continue;
            }
            fprintf(out, "%.*s%.*s\n", (int)(p - line), line, (int)(end - code), code);
            want_student = 0;
            continue;
        }
        if (in_solution)
            continue;
        if (want_student && *p != '\n' && *p != '\0') {
            // a block inside a function needs its replacement; one at file scope (a helper) does not
            if (*p != '}') {
                want_student = 0;
            } else {
                fprintf(stderr, "%s:%d: the solution block ending at line %d has no STUDENT line after it\n", argv[1],
                        lineno, want_student);
                bad = 1;
                want_student = 0;
            }
        }
        fputs(line, out);
    }
    if (in_solution) {
        fprintf(stderr, "%s:%d: BEGIN SOLUTION never closed\n", argv[1], begin_line);
        bad = 1;
    }
    fclose(in);
    if (fclose(out) != 0 || bad) {
        remove(tmp);
        return 2;
    }
    if (blocks == 0) {
        fprintf(stderr, "%s: no BEGIN SOLUTION blocks: is this a student file?\n", argv[1]);
        remove(tmp);
        return 2;
    }
    if (rename(tmp, argv[2]) != 0) {
        perror(argv[2]);
        remove(tmp);
        return 2;
    }
    return 0;
}
