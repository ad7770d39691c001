/* gpu.c — the gpu1 tier's device, schedules and settling (gpu.h), the same
 * in the judge and the worker; the emulated build (DL_CUDA_EMU) reaches the
 * emulator's controls (emu/emu.h), a build for GPUs has nothing to set. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h> // int32_t
#include <stdio.h> // snprintf
#include <string.h> // strcmp, strstr

#include "dl/status.h" // dl_last_error
#include "gpu.h"
#include "grader.h" // GR_FAIL
#include "replay.h" // gr_call
#ifdef DL_CUDA_EMU
#include "emu/emu.h" // emu_schedule_set, emu_check_set, emu_finding_get
#endif

/* The lab's list (gpu.h); a lab without items the emulated device may grade
 * (labs 03 to 06) defines none: this weak reference is then NULL. (Not a
 * weak empty definition: this file would index it as an array of one.) */
extern const char *const gr_emulated_items[] __attribute__((weak));

int gr_gpu_emulable(const char *name)
{
    for (int i = 0; gr_emulated_items != NULL && gr_emulated_items[i] != NULL; i++)
        if (strcmp(gr_emulated_items[i], name) == 0)
            return 1;
    return 0;
}

int gr_gpu_emulated(void)
{
#ifdef DL_CUDA_EMU
    return 1;
#else
    return 0;
#endif
}

const char *gr_gpu_device(void)
{
    return gr_gpu_emulated() ? "emu" : "cuda";
}

// ---- schedules ----

/* On a GPU: the GPU's own schedule, twice (what changes between two calls is
 * the order in which blocks finish). On the emulated device: one order
 * changed at a time against schedule 0. */
static const struct {
    int threads, blocks;
    const char *what, *diag, *why;
} gpu_runs[] =
    {
        {0, 0, "the GPU's own schedule", "", ""},
        {0, 0, "the same call again", "block-order-sum",
         "two calls on the same inputs gave different bits: something added in the order the blocks or threads "
         "happen to finish (atomicAdd on floats), where the contract asks for the same bits on every call"},
},
  emu_runs[] = {
      {0, 0, "threads and blocks in order", "", ""},
#ifdef DL_CUDA_EMU
      {EMU_ORDER_WARPS_REVERSED, EMU_ORDER_IN_ORDER, "the block's warps in reverse order", "missing-syncthreads",
       "the bits change when a block's warps run in another order: a thread reads shared memory another warp "
       "writes with no __syncthreads between the write and the read (a GPU runs warps in no fixed order)"},
      {EMU_ORDER_LANES_REVERSED, EMU_ORDER_IN_ORDER, "each warp's lanes in reverse order", "missing-syncwarp",
       "the bits change when a warp's lanes run in another order: a warp-synchronous step (the tail of a "
       "reduction in one warp) reads what other lanes write with no __syncwarp between them; since Volta a "
       "warp's lanes are not in lockstep, and `volatile` does not order them"},
      {EMU_ORDER_IN_ORDER, EMU_ORDER_REVERSED, "the blocks in reverse order", "block-order-sum",
       "the bits change with the order in which blocks run: blocks add into one place (atomicAdd on floats, "
       "whose rounding depends on which block comes first) or read what other blocks write, where the "
       "contract asks for the same bits on every call: write one partial per block and add them in a fixed order"},
#endif
};

int gr_gpu_schedules(void)
{
    return gr_gpu_emulated() ? (int)(sizeof emu_runs / sizeof emu_runs[0])
                             : (int)(sizeof gpu_runs / sizeof gpu_runs[0]);
}

const char *gr_gpu_schedule(int k)
{
    if (k >= gr_gpu_schedules())
        k = 0;
#ifdef DL_CUDA_EMU
    if (k < 0) { // the device's own: blocks over the cores
        emu_schedule_set(EMU_ORDER_IN_ORDER, EMU_BLOCKS_PARALLEL, 1);
        return "blocks over the cores";
    }
    emu_schedule_set(emu_runs[k].threads, emu_runs[k].blocks, 1);
    return emu_runs[k].what;
#else
    return gpu_runs[k < 0 ? 0 : k].what;
#endif
}

const char *gr_gpu_schedule_diag(int k)
{
    if (k <= 0 || k >= gr_gpu_schedules())
        return "";
    return gr_gpu_emulated() ? emu_runs[k].diag : gpu_runs[k].diag;
}

const char *gr_gpu_schedule_why(int k)
{
    if (k <= 0 || k >= gr_gpu_schedules())
        return "";
    return gr_gpu_emulated() ? emu_runs[k].why : gpu_runs[k].why;
}

int gr_gpu_check_begin(gr_gpu_check *c)
{
    c->state = GR_GPU_WELL;
    c->diag = "";
    c->msg[0] = '\0';
#ifdef DL_CUDA_EMU
    emu_check_set(EMU_CHECK_REPRO);
    return 1;
#else
    return 0;
#endif
}

void gr_gpu_check_end(gr_gpu_check *c, const dl_device *dev, const char *task)
{
#ifdef DL_CUDA_EMU
    emu_check_set(0);
#endif
    c->state = gr_gpu_settle(dev, task, c->msg, sizeof c->msg, &c->diag);
}

const char *gr_gpu_check_note(const gr_gpu_check *c)
{
    static char note[sizeof c->msg + 64];
    snprintf(note, sizeof note, "%s%s", c->msg[0] ? " The emulated device's checked launch says: " : "", c->msg);
    return note;
}

// ---- what the device says ----

/* The diagnoses a settle may name: the worker records an index into this
 * table, so what it records can only pick one of these names. */
static const char *const diags[] = {"",
                                    "device-error",
                                    "race",
                                    "block-order-sum",
                                    "divergent-syncthreads",
                                    "divergent-warp",
                                    "out-of-bounds",
                                    "host-pointer",
                                    "bad-copy",
                                    "bad-launch",
                                    "unsupported-on-emulator",
                                    "stack-overflow"};

#ifdef DL_CUDA_EMU
static int32_t kind_diag(emu_kind k)
{
    switch (k) {
    case EMU_RACE:
        return 2;
    case EMU_NONDETERMINISTIC:
        return 3;
    case EMU_DIVERGENT_BARRIER:
        return 4;
    case EMU_DIVERGENT_WARP:
        return 5;
    case EMU_OUT_OF_BOUNDS:
        return 6;
    case EMU_HOST_POINTER:
        return 7;
    case EMU_BAD_COPY:
        return 8;
    case EMU_BAD_LAUNCH:
        return 9;
    case EMU_UNSUPPORTED:
        return 10;
    case EMU_STACK_OVERFLOW:
        return 11;
    }
    return 1;
}
#endif

int gr_gpu_settle(const dl_device *dev, const char *task, char *out, size_t len, const char **diag)
{
    struct {
        int32_t state, diag;
        char msg[1536];
    } r;
    memset(&r, 0, sizeof r);
    gr_call c;
    gr_call_begin(&c, "the device after your kernels ran", task);
    if (gr_call_live(&c)) {
        dl_status st = dl_device_sync(dev);
        if (st != DL_OK) {
            r.state = GR_GPU_FAULT;
            r.diag = 1;
            snprintf(r.msg, sizeof r.msg, "%s", dl_last_error());
        }
#ifdef DL_CUDA_EMU
        emu_finding f;
        if (emu_finding_count() > 0 && emu_finding_get(0, &f) == 0) { // the first: what went wrong first
            r.state = GR_GPU_FAULT;
            r.diag = kind_diag(f.kind);
            snprintf(r.msg, sizeof r.msg, "%s", f.text);
        }
        emu_findings_clear();
#endif
    }
    gr_out(&c, &r, sizeof r);
    gr_call_end(&c, DL_OK);
    r.msg[sizeof r.msg - 1] = '\0';
    snprintf(out, len, "%s", r.msg);
    if (r.diag < 0 || r.diag >= (int32_t)(sizeof diags / sizeof diags[0]))
        r.diag = 1;
    *diag = diags[r.diag];
    return r.state != 0 ? GR_GPU_FAULT : GR_GPU_WELL;
}

const char *gr_gpu_crash_diag(const char *text)
{
    if (text == NULL || strstr(text, "emulated CUDA: ") == NULL)
        return NULL;
    if (strstr(text, ": out of bounds: ") != NULL)
        return "out-of-bounds";
    if (strstr(text, ": stack overflow: ") != NULL)
        return "stack-overflow";
    return NULL;
}
