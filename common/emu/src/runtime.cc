/* runtime.cc — the emulated CUDA device's errors, findings, device queries,
 * streams and events.
 *
 * A stream is a FIFO of operations, each with a global issue number; an
 * operation may depend on other streams having run up to a number (the
 * legacy stream's implicit ordering, cudaStreamWaitEvent). Nothing runs at
 * issue: a stream drains when the host waits for it, or when it holds more
 * than 1024 operations. */
#include <deque> // std::deque
#include <pthread.h> // pthread_mutex_t
#include <set> // std::set
#include <stdio.h> // vsnprintf, fputs
#include <stdlib.h> // getenv, calloc
#include <string.h> // strcpy
#include <time.h> // clock_gettime
#include <unistd.h> // sysconf
#include <vector> // std::vector

#include "internal.h"

// ---- errors ----

static __thread cudaError_t last_error;
static __thread cudaError_t msg_code; /* the error last_msg explains */
static __thread char last_msg[2048];
static __thread char string_buf[2400];
static cudaError_t sticky_code;
static char sticky_msg[2048];
static pthread_mutex_t err_mu = PTHREAD_MUTEX_INITIALIZER;
static int quiet = -1;

int emu_quiet(void)
{
    if (quiet < 0) {
        const char *q = getenv("DL_EMU_QUIET");
        quiet = q != NULL && q[0] == '1';
    }
    return quiet;
}

int emu_set_quiet(int q)
{
    int old = emu_quiet();
    quiet = q != 0;
    return old;
}

void emu_print_always(const char *text)
{
    fputs(text, stderr);
    fflush(stderr);
}

cudaError_t emu_error(cudaError_t e, int kind, const char *kernel, const char *site, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    last_error = e;
    if (msg[0] != '\0') {
        msg_code = e;
        snprintf(last_msg, sizeof last_msg, "%s", msg);
    }
    if (kind != 0)
        emu_finding_add(kind, kernel != NULL ? kernel : "", site != NULL ? site : "", msg);
    return e;
}

void emu_set_sticky(cudaError_t e, const char *msg)
{
    pthread_mutex_lock(&err_mu);
    if (sticky_code == cudaSuccess) {
        sticky_code = e;
        snprintf(sticky_msg, sizeof sticky_msg, "%s", msg);
    }
    pthread_mutex_unlock(&err_mu);
}

void emu_sticky_clear(void)
{
    pthread_mutex_lock(&err_mu);
    sticky_code = cudaSuccess;
    sticky_msg[0] = '\0';
    pthread_mutex_unlock(&err_mu);
}

cudaError_t emu_sticky(void)
{
    return __atomic_load_n(&sticky_code, __ATOMIC_SEQ_CST);
}

static const struct {
    cudaError_t e;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorHardwareStackError, "cudaErrorHardwareStackError", "hardware stack error"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const char *cudaGetErrorName(cudaError_t e)
{
    for (const auto &x : errors)
        if (x.e == e)
            return x.name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
    const char *text = "unrecognized error code";
    for (const auto &x : errors)
        if (x.e == e)
            text = x.text;
    const char *why = e != cudaSuccess && e == msg_code && last_msg[0] ? last_msg : NULL;
    if (why == NULL && e != cudaSuccess && e == emu_sticky())
        why = sticky_msg;
    if (why == NULL || why[0] == '\0')
        return text;
    snprintf(string_buf, sizeof string_buf, "%s (emulated CUDA device: %s)", text, why);
    return string_buf;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e != cudaSuccess ? e : emu_sticky();
}

cudaError_t cudaPeekAtLastError(void)
{
    return last_error != cudaSuccess ? last_error : emu_sticky();
}

// ---- findings ----

static emu_finding findings[EMU_MAX_FINDINGS];
static int n_findings;
static const char *const kind_names[] = {"?",
                                         "race",
                                         "nondeterministic",
                                         "divergent barrier",
                                         "divergent warp",
                                         "out of bounds",
                                         "host pointer",
                                         "bad copy",
                                         "bad launch",
                                         "unsupported",
                                         "stack overflow"};

const char *emu_kind_name(emu_kind k)
{
    return (int)k > 0 && (int)k <= EMU_STACK_OVERFLOW ? kind_names[k] : "?";
}

void emu_finding_add(int kind, const char *kernel, const char *site, const char *text)
{
    pthread_mutex_lock(&err_mu);
    if (n_findings < EMU_MAX_FINDINGS) {
        emu_finding *f = &findings[n_findings];
        f->kind = (emu_kind)kind;
        snprintf(f->kernel, sizeof f->kernel, "%s", kernel);
        snprintf(f->site, sizeof f->site, "%s", site);
        snprintf(f->text, sizeof f->text, "%s", text);
    }
    n_findings++;
    pthread_mutex_unlock(&err_mu);
    if (!emu_quiet())
        fprintf(stderr, "emulated CUDA: %s: %s\n", emu_kind_name((emu_kind)kind), text);
}

int emu_finding_count(void)
{
    pthread_mutex_lock(&err_mu);
    int n = n_findings;
    pthread_mutex_unlock(&err_mu);
    return n;
}

int emu_finding_get(int i, emu_finding *out)
{
    pthread_mutex_lock(&err_mu);
    int ok = i >= 0 && i < n_findings && i < EMU_MAX_FINDINGS;
    if (ok)
        *out = findings[i];
    pthread_mutex_unlock(&err_mu);
    return ok ? 0 : -1;
}

void emu_findings_clear(void)
{
    pthread_mutex_lock(&err_mu);
    n_findings = 0;
    pthread_mutex_unlock(&err_mu);
}

// ---- the device ----

static __thread int current_device;

const char *emu_device_name(void)
{
    return EMU_DEVICE_NAME;
}

/* DL_EMU_DEVICES (default 1): several ranks of one node each take their own ordinal. 0 for a
 * value that is not a count from 1 to 64 (cudaGetDeviceCount says why). */
static int device_count(void)
{
    const char *s = getenv("DL_EMU_DEVICES");
    if (s == NULL || s[0] == '\0')
        return 1;
    char *end = NULL;
    long n = strtol(s, &end, 10);
    return *end == '\0' && n >= 1 && n <= 64 ? (int)n : 0;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaGetDeviceCount: count is NULL");
    *count = device_count();
    if (*count == 0)
        return emu_error(cudaErrorNoDevice, 0, NULL, NULL,
                         "DL_EMU_DEVICES='%s': expected the number of the emulated device's ordinals, 1 to 64",
                         getenv("DL_EMU_DEVICES"));
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= device_count())
        return emu_error(cudaErrorInvalidDevice, 0, NULL, NULL,
                         "cudaSetDevice(%d): the emulated device has ordinals 0..%d (DL_EMU_DEVICES)", device,
                         device_count() - 1);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaGetDevice: device is NULL");
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (p == NULL || device < 0 || device >= device_count())
        return emu_error(p == NULL ? cudaErrorInvalidValue : cudaErrorInvalidDevice, 0, NULL, NULL,
                         "cudaGetDeviceProperties: no device %d", device);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", EMU_DEVICE_NAME);
    p->totalGlobalMem = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    p->sharedMemPerBlock = p->sharedMemPerBlockOptin = EMU_SHARED_LIMIT;
    p->sharedMemPerMultiprocessor = EMU_SHARED_LIMIT;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->major = 8;
    p->minor = 0;
    p->multiProcessorCount = emu_workers();
    p->maxThreadsPerMultiProcessor = 1024;
    p->unifiedAddressing = 1;
    p->pciDeviceID = device;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    struct cudaDeviceProp p;
    if (value == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaDeviceGetAttribute: value is NULL");
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return e;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
    case cudaDevAttrMaxBlockDimX:
        *value = 1024;
        return cudaSuccess;
    case cudaDevAttrMaxGridDimX:
        *value = p.maxGridSize[0];
        return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        *value = (int)p.sharedMemPerBlock;
        return cudaSuccess;
    case cudaDevAttrWarpSize:
        *value = 32;
        return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
        *value = p.multiProcessorCount;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
        *value = p.major;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
        *value = p.minor;
        return cudaSuccess;
    }
    return emu_error(cudaErrorNotSupported, EMU_UNSUPPORTED, "cudaDeviceGetAttribute", "",
                     "cudaDeviceGetAttribute: attribute %d is not implemented by the emulated CUDA device", (int)attr);
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    if (version == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaRuntimeGetVersion: NULL");
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version)
{
    if (version == NULL)
        return emu_error(cudaErrorInvalidValue, 0, NULL, NULL, "cudaDriverGetVersion: NULL");
    *version = 0; // no driver: the device is this library
    return cudaSuccess;
}

long long clock64(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
