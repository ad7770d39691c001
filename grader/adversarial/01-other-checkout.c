// attack: the reference, but logreg_scaler_transform prints what it can read of another checkout of the kit beside this one (its solutions/06-sharded/zero.c, through the kit's own file reader), of this checkout's solutions, and of the grader's environment, then aborts (so the table shows what it printed): nothing of them may reach the table or results.json
// lab: 01
// base: reference
// file: scaler.c
// override: logreg_scaler_transform
// lose: scaler_transform
// expect: SIGABRT
#include <stdio.h> // printf
#include <stdlib.h> // abort, free
#include <string.h> // strstr
#include "dl/fs.h" // dl_read_file
static void show(const char *path)
{
    char *text = NULL;
    size_t n = 0;
    if (dl_read_file(path, &text, &n) != DL_OK) {
        printf("cannot read %s\n", path);
        return;
    }
    for (size_t k = 0; k + 1 < n; k++) // /proc/self/environ: one variable a line
        text[k] = text[k] ? text[k] : '\n';
    printf("%s:\n%s\n", path, text);
    free(text);
}
dl_status logreg_scaler_transform(const logreg_scaler *s, const float *X, size_t n, float *out)
{
    show("@OTHER@/solutions/06-sharded/zero.c");
    show("/proc/1/root@OTHER@/solutions/06-sharded/zero.c");
    show("/proc/self/environ");
    show("@KIT@/solutions/01-logreg/scaler.c");
    fflush(stdout);
    abort();
    return ddplab_overridden_logreg_scaler_transform(s, X, n, out);
}
