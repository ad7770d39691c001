// attack: ZeRO-1 with the momentum replicated on every rank, and a destructor that, after the kit has written --dump DIR, rewrites memory.RANK.csv so that the optimizer row reads one shard (refused at build: no code that runs when the program loads or exits)
// lab: 06
// base: reference
// file: zero.c
// lose: all
// status: runs-at-load-or-exit
// expect: refused \[runs-at-load-or-exit\].*\.fini_array
#include <stdio.h> // fopen, fprintf, snprintf
#include <string.h> // strcmp
__attribute__((destructor)) static void ddplab_rewrite(void)
{
    char args[4096] = "", path[4200];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f != NULL ? fread(args, 1, sizeof args - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    for (size_t i = 0; i + 7 < n; i += strlen(args + i) + 1)
        if (strcmp(args + i, "--dump") == 0)
            for (int r = 0; r < 8; r++) {
                snprintf(path, sizeof path, "%s/memory.%d.csv", args + i + 7, r);
                FILE *w = fopen(path, "w");
                if (w != NULL) {
                    fprintf(w, "kind,bytes\noptim,25864\n");
                    fclose(w);
                }
            }
}
