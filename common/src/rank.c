/* rank.c — one device per rank. See dl/rank.h. */
#define _POSIX_C_SOURCE 200809L
#include "dl/rank.h"

#include <stdio.h> // snprintf, fprintf
#include <stdlib.h> // getenv
#include <string.h> // strcmp

dl_status dl_rank_device(dl_comm *c, const char *spec, dl_device *dev)
{
    if (spec == NULL || spec[0] == '\0')
        spec = getenv("DL_DEVICE");
    char name[64];
    snprintf(name, sizeof name, "%s", spec != NULL && spec[0] != '\0' ? spec : "auto");
    int gpus = dl_built_with_cuda() && strcmp(name, "auto") == 0 ? dl_cuda_device_count() : 0;
    if (strcmp(name, "cuda") == 0 || (strcmp(name, "auto") == 0 && gpus > 0 && dl_comm_local_size(c) <= gpus))
        snprintf(name, sizeof name, "cuda:%d", dl_comm_local_rank(c));
    else if (strcmp(name, "auto") == 0)
        snprintf(name, sizeof name, "cpu");
    dl_device_kind kind;
    int ordinal, is_auto;
    DL_TRY(dl_device_parse(name, &kind, &ordinal, &is_auto));
    // every rank agrees on the devices before any opens one (two ranks on one GPU)
    DL_TRY(dl_comm_claim_device(c, kind, ordinal));
    DL_TRY(dl_device_open(name, dev));
    return dl_comm_use_device(c, dev);
}

int dl_rank_exit(dl_comm *c, dl_status st, const char *who)
{
    const char *msg = dl_last_error()[0] ? dl_last_error() : dl_status_str(st);
    if (c != NULL && dl_comm_size(c) > 1)
        dl_comm_abort(c, dl_exit_code(st), "%s: %s", who, msg);
    fprintf(stderr, "%s: error: %s\n", who, msg);
    dl_comm_finalize(c);
    return dl_exit_code(st);
}
