// attack: code that runs at load time first tries to undo the sandbox's mounts, then replaces the worker (and the driver) with the reference's build at the kit's path
// env: CHECK_SUB_LIFT=references-outside-api,runs-at-load-or-exit
// lab: 01
// base: skeleton
// file: scaler.c
// lose: all
#include <stdio.h> // snprintf
#include <string.h> // strcmp
#include <sys/mount.h> // umount2
#include <unistd.h> // execv
__attribute__((constructor)) static void ddplab_attack(int argc, char **argv)
{
    umount2("@KIT@", MNT_DETACH);
    umount2("/tmp", MNT_DETACH);
    char path[4096];
    int worker = argc == 3 && strcmp(argv[1], "--item") == 0;
    snprintf(path, sizeof path, "%s/build/solutions/lab01%s", "@KIT@", worker ? "-worker" : "");
    execv(path, argv); // when it returns, the skeleton carries on
}
