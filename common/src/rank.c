/* rank.c — one device per rank. See dl/rank.h. */
#define _POSIX_C_SOURCE 200809L
#include "dl/rank.h"

#include <stdio.h> // fprintf

dl_status dl_rank_device(dl_comm *c, const dl_device_spec *spec, dl_device *dev)
{
    // this rank's device, decided here: auto and cuda become cuda:LOCAL_RANK or cpu, emu emu:LOCAL_RANK
    // (auto never takes the emulated device: dl_cuda_device_count counts GPUs only)
    dl_device_spec mine = *spec;
    int gpus = dl_built_with_cuda() && spec->is_auto ? dl_cuda_device_count() : 0;
    if (spec->any_gpu || (spec->is_auto && gpus > 0 && dl_comm_local_size(c) <= gpus))
        mine = (dl_device_spec){DL_DEVICE_CUDA, dl_comm_local_rank(c), 0, 0, spec->emu};
    else if (spec->is_auto)
        mine = (dl_device_spec){DL_DEVICE_CPU, 0, 0, 0, 0};
    // every rank agrees on the devices before any opens one (two ranks on one GPU)
    DL_TRY(dl_comm_claim_device(c, mine.kind, mine.ordinal));
    DL_TRY(dl_device_open_spec(&mine, dev));
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
