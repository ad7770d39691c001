/* cpu.c — the processor's vector features and the floating-point mode of the
 * kit's threads (flush subnormals). See dl/cpu.h. */
#define _GNU_SOURCE
#include "dl/cpu.h"

#include <stdio.h> // fopen, fgets, sscanf
#include <string.h> // strncmp, strcat

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h> // _mm_getcsr, _mm_setcsr
#define MXCSR_DAZ 0x0040u // denormals are zero (inputs)
#define MXCSR_FTZ 0x8000u // flush to zero (results)
#elif defined(__aarch64__)
#include <sys/auxv.h> // getauxval, AT_HWCAP
#define FPCR_FZ (1ull << 24) // flush subnormal inputs and results to zero
#endif

// ---- floating-point mode ----

unsigned dl_cpu_flush_subnormals(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | MXCSR_DAZ | MXCSR_FTZ);
    return csr;
#elif defined(__aarch64__)
    unsigned long long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | FPCR_FZ));
    return (unsigned)fpcr;
#else
    return 0;
#endif
}

void dl_cpu_restore(unsigned mode)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(mode);
#elif defined(__aarch64__)
    unsigned long long fpcr = mode;
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#else
    (void)mode;
#endif
}

int dl_cpu_flushes(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = _mm_getcsr();
    return (csr & (MXCSR_DAZ | MXCSR_FTZ)) == (MXCSR_DAZ | MXCSR_FTZ);
#elif defined(__aarch64__)
    unsigned long long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    return (fpcr & FPCR_FZ) != 0;
#else
    return -1;
#endif
}

// ---- features ----

const char *dl_cpu_features(void)
{
    static char line[200];
    if (line[0] != '\0')
        return line;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    // __builtin_cpu_supports also asks the operating system (XGETBV): a
    // feature the kernel does not save across switches is not offered
    static const struct {
        const char *name;
        int on;
    } f[] = {
        {"avx512f", 0}, {"avx512bw", 0}, {"avx512vl", 0}, {"avx512dq", 0}, {"avx512bf16", 0},
        {"avx2", 0},    {"fma", 0},      {"avx", 0},      {"sse4.2", 0},
    };
    int on[sizeof f / sizeof f[0]] = {
        __builtin_cpu_supports("avx512f"),  __builtin_cpu_supports("avx512bw"),   __builtin_cpu_supports("avx512vl"),
        __builtin_cpu_supports("avx512dq"), __builtin_cpu_supports("avx512bf16"), __builtin_cpu_supports("avx2"),
        __builtin_cpu_supports("fma"),      __builtin_cpu_supports("avx"),        __builtin_cpu_supports("sse4.2"),
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!on[i])
            continue;
        if (line[0] != '\0')
            strcat(line, " ");
        strcat(line, f[i].name);
    }
#elif defined(__aarch64__)
    unsigned long hw = getauxval(AT_HWCAP);
    // bits of the kernel's arch/arm64/include/uapi/asm/hwcap.h
    static const struct {
        unsigned long bit;
        const char *name;
    } f[] = {{1ul << 22, "sve"}, {1ul << 20, "asimddp"}, {1ul << 10, "asimdhp"}, {1ul << 1, "asimd"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!(hw & f[i].bit))
            continue;
        if (line[0] != '\0')
            strcat(line, " ");
        strcat(line, f[i].name);
    }
#endif
    if (line[0] == '\0')
        strcpy(line, "none known");
    return line;
}

const char *dl_cpu_vendor(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("amd"))
        return "AMD";
    if (__builtin_cpu_is("intel"))
        return "Intel";
    return "unknown";
#elif defined(__aarch64__)
    return "arm64";
#else
    return "unknown";
#endif
}

int dl_cpu_has(const char *feature)
{
    const char *s = dl_cpu_features();
    size_t n = strlen(feature);
    for (const char *p = strstr(s, feature); p != NULL; p = strstr(p + 1, feature))
        if ((p == s || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

double dl_cpu_clock_ghz(void)
{
    // the highest clock cpufreq allows, where the kernel has cpufreq (not in most VMs)
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    double khz = 0.0;
    if (f != NULL) {
        int ok = fscanf(f, "%lf", &khz) == 1;
        fclose(f);
        if (ok && khz > 0.0)
            return khz / 1e6;
    }
    f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0.0;
    char buf[256];
    double mhz = 0.0;
    while (fgets(buf, sizeof buf, f) != NULL)
        if (strncmp(buf, "cpu MHz", 7) == 0 && sscanf(strchr(buf, ':') + 1, "%lf", &mhz) == 1)
            break;
    fclose(f);
    return mhz / 1000.0;
}

double dl_cpu_peak_gflops(int threads)
{
    // fp32 FLOPs per cycle per core: lanes per FMA × 2 FMA units × 2 (a
    // multiply and an add). AMD's Zen 4 runs 512-bit instructions through
    // 256-bit units, so its AVX-512 counts as 256-bit.
    double lanes = 4.0; // SSE or NEON: 128-bit
    if (dl_cpu_has("avx512f") && strcmp(dl_cpu_vendor(), "AMD") != 0)
        lanes = 16.0;
    else if (dl_cpu_has("fma") || dl_cpu_has("avx512f"))
        lanes = 8.0;
    else if (dl_cpu_has("avx"))
        lanes = 4.0; // 256-bit, but a multiply and an add in separate units: as 128-bit FMA
    double per_cycle = lanes * 2.0 * 2.0;
    return per_cycle * dl_cpu_clock_ghz() * (threads > 0 ? threads : 1);
}
