// attack: code that runs at load time asks the library where the kit is (its compiled-in path, once DL_HOME is unset) and replaces the worker (and the driver) with the reference's build there
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// lose: all
#include <stdio.h> // snprintf
#include <stdlib.h> // unsetenv
#include <string.h> // strcmp
#include <unistd.h> // execv
#include "dl/fs.h" // dl_home
__attribute__((constructor)) static void ddplab_attack(int argc, char **argv)
{
    unsetenv("DL_HOME");
    char path[4096];
    int worker = argc == 3 && strcmp(argv[1], "--item") == 0;
    snprintf(path, sizeof path, "%s/build/solutions/lab01%s", dl_home(), worker ? "-worker" : "");
    execv(path, argv);
}
