/* gpu.h — what the gpu1 tier's items share: the CUDA device they run on (a
 * GPU, or the emulated device of common/emu), the schedules a result must
 * not depend on, and what the device says after the student's kernels ran.
 *
 * Contract
 * - An item of the gpu1 tier opens gr_gpu_device(): "cuda" in a build for
 *   GPUs, "emu" in the emulated build (make EMU=1), which grades such an item
 *   where no GPU answers (runner.c: GR_CUDA, --emu-code). Its judge is the
 *   emulated build's judge, run by the main judge for that item alone.
 * - gr_gpu_schedule(k), k < gr_gpu_schedules(): from now on the device runs
 *   kernels in schedule k. On a GPU there is one schedule, the GPU's own; on
 *   the emulated device schedule 0 runs threads and blocks in order, and each
 *   later one changes one order (the warps', the lanes', the blocks'), so a
 *   result whose bits change from schedule 0 to schedule k has the mistake
 *   gr_gpu_schedule_diag(k) names. The same call in both programs (worker and
 *   judge): it changes how kernels run, it records nothing.
 * - gr_gpu_settle(dev, task, out): a recorded call (replay.h): in the worker
 *   it waits for the device and reads what went wrong there (the status, the
 *   error string, the emulator's first finding); the judge replays it. It
 *   returns 0 when the device is well, else the finding's diagnosis code, and
 *   out holds the message. What it says can only fail an item, never pass one:
 *   every verdict that passes rests on values the judge compares.
 * - The call once more under checked launches (emu/emu.h, EMU_CHECK_REPRO),
 *   for the kernel and the line of what the schedules show:
 *       gr_gpu_check c;
 *       if (gr_gpu_check_begin(&c)) {   // 0 on a GPU: nothing to do
 *           GR_OK(the_call(...));
 *           gr_gpu_check_end(&c, &dev, "lab01 task 5");   // its settle, into c
 *       }
 *   c.state is GR_GPU_WELL or the settle's verdict, c.diag and c.msg its
 *   diagnosis and message; gr_gpu_check_note(&c) is c.msg as a sentence to
 *   append to another message ("" when there is none). The verdict rests on
 *   the schedules' bits, compared by the item; c only names where.
 * - gr_emulated_items: the names of a lab's gpu1 items the emulated device
 *   may grade (correctness and reproducibility, never speed), NULL-ended; a
 *   lab that has none need not define it.
 */
#ifndef GRADER_GPU_H
#define GRADER_GPU_H

#include <stddef.h> // size_t

#include "dl/device.h" // dl_device

/* "cuda" or "emu". */
const char *gr_gpu_device(void);
/* 1 in the emulated build. */
int gr_gpu_emulated(void);

int gr_gpu_schedules(void);
/* Sets schedule k (-1: the device's own again); returns what it is ("the block's warps in
 * reverse order"). */
const char *gr_gpu_schedule(int k);
/* The diagnosis of a result that changes in schedule k (k >= 1), and why. */
const char *gr_gpu_schedule_diag(int k);
const char *gr_gpu_schedule_why(int k);

enum { GR_GPU_WELL = 0, GR_GPU_FAULT = 1 };

/* The call once more under checked launches (above). */
typedef struct gr_gpu_check {
    int state; /* GR_GPU_WELL, or the settle's verdict */
    const char *diag; /* its diagnosis name, "" when none */
    char msg[1600]; /* what the device said, "" when nothing */
} gr_gpu_check;
/* Clears c; on the emulated device turns checked launches on and returns 1. */
int gr_gpu_check_begin(gr_gpu_check *c);
/* Checked launches off; the device settled into c (task: the item's task, as gr_gpu_settle's). */
void gr_gpu_check_end(gr_gpu_check *c, const dl_device *dev, const char *task);
/* " The emulated device's checked launch says: MSG", or "" when c has no message. */
const char *gr_gpu_check_note(const gr_gpu_check *c);
/* 0 (well) or GR_GPU_FAULT; *diag the diagnosis name ("" when none known). */
int gr_gpu_settle(const dl_device *dev, const char *task, char *out, size_t len, const char **diag);

/* The diagnosis name of the emulator's report in a crashed worker's output
 * (an access past an array's end: "out-of-bounds"), or NULL. */
const char *gr_gpu_crash_diag(const char *worker_output);

extern const char *const gr_emulated_items[];
/* 1 when item name is in gr_emulated_items. */
int gr_gpu_emulable(const char *name);

#endif /* GRADER_GPU_H */
