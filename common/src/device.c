/* device.c — the backend-neutral device API: CPU inline, CUDA via backend.h. */
#define _POSIX_C_SOURCE 200809L
#include "dl/device.h"

#include <stdatomic.h> // atomic counters
#include <stdio.h> // snprintf
#include <stdlib.h> // malloc, free, getenv, strtol
#include <string.h> // memcpy, memset, strcmp

#include "backend.h" // dl_cuda_*_
#include "dl/timer.h" // dl_now

int dl_built_with_cuda(void)
{
#ifdef DL_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int dl_built_with_emu(void)
{
    return dl_cuda_emulated_();
}

int dl_cuda_device_count(void)
{
    return dl_cuda_emulated_() ? 0 : dl_cuda_count_();
}

int dl_emu_device_count(void)
{
    return dl_cuda_emulated_() ? dl_cuda_count_() : 0;
}

int dl_device_is_gpu(const dl_device *dev)
{
    return dev->kind == DL_DEVICE_CUDA && !dev->emulated;
}

const char *dl_device_kind_name(const dl_device *dev)
{
    return dev->kind == DL_DEVICE_CPU ? "cpu" : dev->emulated ? "emu" : "cuda";
}

static char runtime_version[32], driver_version[32];

static void load_versions(void)
{
    if (runtime_version[0] == '\0')
        dl_cuda_versions_(runtime_version, driver_version, sizeof runtime_version);
}

const char *dl_cuda_runtime_version(void)
{
    load_versions();
    return runtime_version;
}

const char *dl_cuda_driver_version(void)
{
    load_versions();
    return driver_version;
}

const char *dl_nccl_version(void)
{
    static char buf[32];
    if (buf[0] == '\0')
        dl_nccl_version_(buf, sizeof buf);
    return buf;
}

const char *dl_device_env(void)
{
    const char *e = getenv("DL_DEVICE");
    return e != NULL && e[0] != '\0' ? e : "auto";
}

/* Where the emulated device is, for a build without it. */
#define EMU_HOWTO                                                                                       \
    "it runs CUDA code on the CPU, with checks for races, barriers and bounds, in a build of its own: " \
    "`make EMU=1`, then run the programs of build/emucuda/ (for example build/emucuda/labs/lab01 "      \
    "--device emu)"

/* "cuda" or "emu" (the first len characters of text) with an optional ":N". */
static dl_status parse_ordinal(const char *text, size_t len, const char *what, dl_device_spec *s)
{
    s->kind = DL_DEVICE_CUDA;
    s->any_gpu = text[len] == '\0';
    if (text[len] == ':') {
        char *end = NULL;
        long v = strtol(text + len + 1, &end, 10);
        if (end == text + len + 1 || *end != '\0' || v < 0 || v > 1023)
            return dl_error_set(DL_ERR_ARG, "device '%s': expected %.*s:N with N %s (0, 1, ...)", text, (int)len, text,
                                what);
        s->ordinal = (int)v;
    }
    return DL_OK;
}

dl_status dl_device_parse(const char *text, dl_device_spec *spec)
{
    if (text == NULL || text[0] == '\0')
        text = "auto";
    dl_device_spec s = {DL_DEVICE_CPU, 0, 0, 0, 0};
    if (strcmp(text, "auto") == 0) {
        s.is_auto = 1;
    } else if (strcmp(text, "cpu") == 0) {
        // the CPU
    } else if (strncmp(text, "cuda", 4) == 0 && (text[4] == '\0' || text[4] == ':')) {
        DL_TRY(parse_ordinal(text, 4, "a GPU index", &s));
    } else if (strncmp(text, "emu", 3) == 0 && (text[3] == '\0' || text[3] == ':')) {
        DL_TRY(parse_ordinal(text, 3, "an ordinal of the emulated device", &s));
        s.emu = 1;
        if (!dl_built_with_emu())
            return dl_error_set(DL_ERR_ARG, "device '%s': this build has no emulated CUDA device; %s", text, EMU_HOWTO);
    } else {
        return dl_error_set(DL_ERR_ARG,
                            "device '%s': expected auto, cpu, cuda or cuda:N; or emu, emu:N (the emulated "
                            "CUDA device%s)",
                            text, dl_built_with_emu() ? "" : ", in the build of `make EMU=1`");
    }
    *spec = s;
    return DL_OK;
}

dl_status dl_device_open(const char *text, dl_device *dev)
{
    dl_device_spec spec;
    DL_TRY(dl_device_parse(text != NULL && text[0] != '\0' ? text : dl_device_env(), &spec));
    return dl_device_open_spec(&spec, dev);
}

/* The emulated device's ordinal (built with it: dl_device_parse refused it otherwise). */
static dl_status open_emu(int ordinal, dl_device *dev)
{
    if (!dl_built_with_emu())
        return dl_error_set(DL_ERR_NO_CUDA, "--device emu: this build has no emulated CUDA device; %s", EMU_HOWTO);
    dl_error_clear();
    int count = dl_emu_device_count();
    if (count == 0) // DL_EMU_DEVICES is no count (the emulator's words)
        return dl_error_set(DL_ERR_NO_DEVICE, "--device emu: %s", dl_last_error());
    if (ordinal >= count)
        return dl_error_set(DL_ERR_NO_DEVICE,
                            "--device emu:%d: the emulated CUDA device has %d ordinal(s) here (0..%d); "
                            "DL_EMU_DEVICES=N gives it N (one per rank of a machine)",
                            ordinal, count, count - 1);
    return dl_cuda_open_(ordinal, dev);
}

dl_status dl_device_open_spec(const dl_device_spec *spec, dl_device *dev)
{
    dl_device_kind kind = spec->kind;
    int ordinal = spec->ordinal;
    memset(dev, 0, sizeof *dev);
    if (spec->is_auto && dl_built_with_cuda() && dl_cuda_device_count() > 0)
        kind = DL_DEVICE_CUDA;
    if (kind == DL_DEVICE_CPU) {
        dev->kind = DL_DEVICE_CPU;
        snprintf(dev->name, sizeof dev->name, "cpu");
        return DL_OK;
    }
    if (spec->emu)
        return open_emu(ordinal, dev);
    if (dl_built_with_emu())
        return dl_error_set(DL_ERR_NO_DEVICE,
                            "--device cuda: this is the emulated-CUDA build (make EMU=1), which runs CUDA code on the "
                            "CPU as --device emu and has no GPU; a GPU needs the normal build (make), where nvcc is "
                            "found; or use --device emu or --device cpu");
    if (!dl_built_with_cuda())
        return dl_error_set(DL_ERR_NO_CUDA, "--device cuda: this build has no CUDA (nvcc was not found when "
                                            "it was built); rebuild where nvcc is on PATH, or use --device cpu");
    dl_error_clear();
    int count = dl_cuda_count_();
    if (count == 0) {
        char why[256];
        snprintf(why, sizeof why, "%s", dl_last_error()[0] ? dl_last_error() : "no driver or no device");
        return dl_error_set(DL_ERR_NO_DEVICE,
                            "--device cuda: no CUDA GPU answers on this machine: %s; use "
                            "--device cpu or auto (or the emulated device: make EMU=1, --device emu)",
                            why);
    }
    if (ordinal >= count)
        return dl_error_set(DL_ERR_NO_DEVICE, "--device cuda:%d: only %d GPU(s) here (0..%d)", ordinal, count,
                            count - 1);
    return dl_cuda_open_(ordinal, dev);
}

const dl_device *dl_cpu(void)
{
    static const dl_device cpu = {DL_DEVICE_CPU, 0, NULL, NULL, "cpu", 0, 0, 0};
    return &cpu;
}

void dl_device_close(dl_device *dev)
{
    if (dev->kind == DL_DEVICE_CUDA)
        dl_cuda_close_(dev);
    memset(dev, 0, sizeof *dev);
}

const char *dl_device_describe(const dl_device *dev)
{
    static _Thread_local char buf[320];
    if (dev->kind == DL_DEVICE_CPU)
        return "cpu";
    if (dev->emulated)
        snprintf(buf, sizeof buf, "emu:%d (%s)", dev->ordinal, dev->name);
    else
        snprintf(buf, sizeof buf, "cuda:%d (%s, sm_%d%d)", dev->ordinal, dev->name, dev->cc_major, dev->cc_minor);
    return buf;
}

// ---- counters (see dl/device.h) ----

static _Atomic uint64_t n_h2d, b_h2d, n_d2h, b_d2h, n_sync, n_launch, n_alloc, b_alloc;
static _Atomic uint64_t kbytes; // kernel bytes, whole bytes (a double's fraction is never counted)

void dl_dev_stats_get(dl_dev_stats *s)
{
    s->h2d_calls = atomic_load(&n_h2d);
    s->h2d_bytes = atomic_load(&b_h2d);
    s->d2h_calls = atomic_load(&n_d2h);
    s->d2h_bytes = atomic_load(&b_d2h);
    s->syncs = atomic_load(&n_sync);
    s->launches = atomic_load(&n_launch);
    s->allocs = atomic_load(&n_alloc);
    s->alloc_bytes = atomic_load(&b_alloc);
    s->kernel_bytes = (double)atomic_load(&kbytes);
}

void dl_dev_stats_reset(void)
{
    _Atomic uint64_t *all[] = {&n_h2d, &n_d2h, &b_h2d, &b_d2h, &n_sync, &n_launch, &n_alloc, &b_alloc, &kbytes};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        atomic_store(all[i], 0);
}

void dl_dev_count_launch(double bytes)
{
    atomic_fetch_add(&n_launch, 1);
    if (bytes > 0)
        atomic_fetch_add(&kbytes, (uint64_t)bytes);
}

void dl_dev_count_sync(void)
{
    atomic_fetch_add(&n_sync, 1);
}

void dl_dev_count_upload(size_t bytes)
{
    atomic_fetch_add(&n_h2d, 1);
    atomic_fetch_add(&b_h2d, bytes);
    dl_dev_count_sync();
}

dl_status dl_device_sync(const dl_device *dev)
{
    dl_dev_count_sync();
    if (dev->kind == DL_DEVICE_CPU)
        return DL_OK;
    return dl_cuda_sync_(dev);
}

// ---- memory ----

dl_status dl_malloc(const dl_device *dev, void **p, size_t bytes)
{
    *p = NULL;
    atomic_fetch_add(&n_alloc, 1);
    atomic_fetch_add(&b_alloc, bytes);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_malloc_(dev, p, bytes);
    void *q = malloc(bytes ? bytes : 1);
    if (q == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of host memory allocating %zu bytes", bytes);
    *p = q;
    return DL_OK;
}

void dl_free(const dl_device *dev, void *p)
{
    if (p == NULL)
        return;
    if (dev->kind == DL_DEVICE_CUDA)
        dl_cuda_free_(dev, p);
    else
        free(p);
}

static dl_status copy(const dl_device *dev, void *dst, const void *src, size_t bytes, int kind)
{
    if (bytes == 0)
        return DL_OK;
    if (dst == NULL || src == NULL)
        return dl_error_set(DL_ERR_ARG, "memcpy of %zu bytes with a NULL pointer", bytes);
    if (kind == DL_COPY_H2D) {
        atomic_fetch_add(&n_h2d, 1);
        atomic_fetch_add(&b_h2d, bytes);
    } else if (kind == DL_COPY_D2H) {
        atomic_fetch_add(&n_d2h, 1);
        atomic_fetch_add(&b_d2h, bytes);
    } else {
        dl_dev_count_launch(2.0 * (double)bytes);
    }
    if (kind != DL_COPY_D2D)
        dl_dev_count_sync(); // host memory is pageable: the copy waits for the device
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_memcpy_(dev, dst, src, bytes, kind);
    memmove(dst, src, bytes);
    return DL_OK;
}

dl_status dl_memcpy_h2d(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    return copy(dev, dst, src, bytes, DL_COPY_H2D);
}

dl_status dl_memcpy_d2h(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    return copy(dev, dst, src, bytes, DL_COPY_D2H);
}

dl_status dl_memcpy_d2d(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    return copy(dev, dst, src, bytes, DL_COPY_D2D);
}

dl_status dl_memset0(const dl_device *dev, void *p, size_t bytes)
{
    if (bytes == 0)
        return DL_OK;
    dl_dev_count_launch((double)bytes);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_memset0_(dev, p, bytes);
    memset(p, 0, bytes);
    return DL_OK;
}

dl_status dl_host_alloc(const dl_device *dev, void **p, size_t bytes)
{
    *p = NULL;
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_host_alloc_(p, bytes);
    void *q = malloc(bytes ? bytes : 1);
    if (q == NULL)
        return dl_error_set(DL_ERR_NOMEM, "out of host memory allocating %zu bytes", bytes);
    *p = q;
    return DL_OK;
}

void dl_host_free(const dl_device *dev, void *p)
{
    if (p == NULL)
        return;
    if (dev->kind == DL_DEVICE_CUDA)
        dl_cuda_host_free_(p);
    else
        free(p);
}

dl_status dl_memcpy_h2d_async(const dl_device *dev, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return DL_OK;
    if (dst == NULL || src == NULL)
        return dl_error_set(DL_ERR_ARG, "memcpy of %zu bytes with a NULL pointer", bytes);
    atomic_fetch_add(&n_h2d, 1);
    atomic_fetch_add(&b_h2d, bytes);
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_memcpy_async_(dev, dst, src, bytes);
    memmove(dst, src, bytes);
    return DL_OK;
}

// ---- streams ----

dl_status dl_stream_create(const dl_device *dev, dl_stream *s)
{
    *s = NULL;
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_stream_create_(dev, s);
    return DL_OK;
}

void dl_stream_destroy(const dl_device *dev, dl_stream s)
{
    if (dev->kind == DL_DEVICE_CUDA && s != NULL)
        dl_cuda_stream_destroy_(dev, s);
}

dl_status dl_stream_sync(const dl_device *dev, dl_stream s)
{
    dl_dev_count_sync();
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_stream_sync_(dev, s);
    return DL_OK;
}

// ---- events ----

dl_status dl_event_create(const dl_device *dev, dl_event *e)
{
    e->ev = NULL;
    e->t_host = 0.0;
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_event_create_(dev, e);
    return DL_OK;
}

void dl_event_destroy(const dl_device *dev, dl_event *e)
{
    if (dev->kind == DL_DEVICE_CUDA && e->ev != NULL)
        dl_cuda_event_destroy_(dev, e);
    e->ev = NULL;
}

dl_status dl_event_record(const dl_device *dev, dl_event *e, dl_stream s)
{
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_event_record_(dev, e, s);
    e->t_host = dl_now();
    return DL_OK;
}

dl_status dl_stream_wait_event(const dl_device *dev, dl_stream s, const dl_event *e)
{
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_stream_wait_event_(dev, s, e);
    return DL_OK;
}

dl_status dl_event_sync(const dl_device *dev, const dl_event *e)
{
    dl_dev_count_sync();
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_event_sync_(dev, e);
    return DL_OK;
}

int dl_event_done(const dl_device *dev, const dl_event *e)
{
    if (dev->kind == DL_DEVICE_CUDA && e->ev != NULL)
        return dl_cuda_event_done_(dev, e);
    return 1;
}

dl_status dl_event_elapsed_ms(const dl_device *dev, const dl_event *a, const dl_event *b, float *ms)
{
    if (dev->kind == DL_DEVICE_CUDA)
        return dl_cuda_event_elapsed_(dev, a, b, ms);
    *ms = (float)(1e3 * (b->t_host - a->t_host));
    return DL_OK;
}
