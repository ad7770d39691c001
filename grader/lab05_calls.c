/* lab05_calls.c — lab 05's student functions as the grader calls them:
 * recorded in the worker, replayed in the judge (see replay.h). The bucket
 * assignment, the loss scaler and the checkpoint's save and load are called
 * in-process; the reducer and the AMP step are judged from the driver's runs
 * (its dumps and the kit's trace). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h> // signal, SIGXFSZ
#include <sys/resource.h> // setrlimit, RLIMIT_FSIZE

#include "amp.h"
#include "ckpt.h"
#include "replay.h"

#define T1 "lab05 task 1"
#define T4 "lab05 task 4"
#define T6 "lab05 task 6"

GR_DECLARE(ddp_assign_buckets);
dl_status GR_FN(ddp_assign_buckets)(const size_t *counts, int n, size_t elem_size, size_t first_cap, size_t cap,
                                    ddp_bucket *out, int *n_buckets)
{
    gr_call c;
    gr_call_begin(&c, "ddp_assign_buckets", T1);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ddp_assign_buckets)(counts, n, elem_size, first_cap, cap, out, n_buckets);
    gr_out(&c, n_buckets, sizeof *n_buckets);
    gr_out(&c, out, (n > 0 && n <= DDP_MAX_PARAMS ? (size_t)n : 0) * sizeof *out);
    return gr_call_end(&c, st);
}

GR_DECLARE(amp_scaler_update);
dl_status GR_FN(amp_scaler_update)(amp_scaler *s, int found_inf, int *skip)
{
    gr_call c;
    gr_call_begin(&c, "amp_scaler_update", T4);
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(amp_scaler_update)(s, found_inf, skip);
    if (s != NULL)
        gr_out(&c, s, sizeof *s);
    if (skip != NULL)
        gr_out(&c, skip, sizeof *skip);
    return gr_call_end(&c, st);
}

// ---- task 6: checkpoints ----

/* Set by test_ckpt_atomic: the largest file (bytes) the next ckpt_save may
 * write in the worker, 0 for the sandbox's own limit. It is lowered around
 * the real call only (the recording is a file too), with SIGXFSZ ignored,
 * so a write past it fails with EFBIG instead of killing the worker. */
size_t gr_ckpt_fsize_limit;

GR_DECLARE(ckpt_save);
dl_status GR_FN(ckpt_save)(const char *path, const ckpt_state *s)
{
    gr_call c;
    gr_call_begin(&c, "ckpt_save", T6);
    dl_status st = DL_OK;
    if (gr_call_live(&c)) {
        struct rlimit old, low;
        void (*handler)(int) = SIG_DFL;
        int limited = gr_ckpt_fsize_limit > 0 && getrlimit(RLIMIT_FSIZE, &old) == 0;
        if (limited) {
            low = old;
            low.rlim_cur = (rlim_t)gr_ckpt_fsize_limit;
            handler = signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &low);
        }
        st = GR_REAL(ckpt_save)(path, s);
        if (limited) {
            setrlimit(RLIMIT_FSIZE, &old);
            signal(SIGXFSZ, handler);
        }
    }
    return gr_call_end(&c, st); // what it wrote is read back by the test (fs_read)
}

/* Outputs: every field of *s as the call left it, then the caller's arrays
 * (n_params floats each, the count the caller passed in). The array
 * pointers are the caller's again afterwards, in both programs. */
GR_DECLARE(ckpt_load);
dl_status GR_FN(ckpt_load)(const char *path, ckpt_state *s, int allow_reshard)
{
    gr_call c;
    gr_call_begin(&c, "ckpt_load", T6);
    ckpt_state in = {0};
    if (s != NULL)
        in = *s;
    dl_status st = DL_OK;
    if (gr_call_live(&c))
        st = GR_REAL(ckpt_load)(path, s, allow_reshard);
    if (s != NULL) {
        gr_out(&c, s, sizeof *s);
        s->params = in.params;
        s->velocity = in.velocity;
        gr_out(&c, in.params, in.n_params * sizeof *in.params);
        gr_out(&c, in.velocity, in.n_params * sizeof *in.velocity);
    }
    return gr_call_end(&c, st);
}
