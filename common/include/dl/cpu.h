/* dl/cpu.h — what the processor can do, and the floating-point mode every
 * thread of the kit computes in.
 *
 * Contract
 * - dl_cpu_flush_subnormals() sets flush-to-zero and denormals-are-zero in the
 *   calling thread (x86-64: MXCSR's FTZ and DAZ bits; arm64: FPCR.FZ; elsewhere
 *   nothing) and returns the mode it replaced; dl_cpu_restore(mode) puts that
 *   back. With the mode set, a subnormal result is written as 0 and a
 *   subnormal input read as 0, instead of taking the processor's slow path (a
 *   hundred cycles and more per operation on x86). Threads created while it is
 *   set inherit it (POSIX: a new thread starts with its creator's
 *   floating-point environment). Cannot fail.
 *   The kit sets it around every call into the CPU BLAS (dl/blas.h), so the
 *   BLAS's own threads, which it starts from inside such a call, flush too,
 *   and keeps IEEE behaviour everywhere else: the kit's element-wise code and
 *   the student's keep subnormals, as a GPU does (bfloat16's subnormals are
 *   fp32 subnormals, and the kit's bf16 arithmetic rounds them as CUDA's does).
 *   A GEMM's results differ by it only below 1.2e-38 per product: inside
 *   every tolerance of the kit, and the same bits run to run.
 * - dl_cpu_flushes() is 1 when the calling thread flushes (both bits set), 0
 *   when it does not, -1 on a processor this file does not know.
 * - dl_cpu_features() names the vector extensions the processor and the
 *   operating system offer, from the widest down, as one line ("avx512f
 *   avx512bw avx512vl avx512dq avx512_bf16 avx2 fma avx" on a recent x86-64,
 *   "asimd asimddp sve" on arm64), and dl_cpu_vendor() the maker ("AMD",
 *   "Intel", "arm64", "unknown"). Static strings; cannot fail.
 *   dl_cpu_has(name) is 1 when dl_cpu_features() lists name, else 0.
 * - dl_cpu_clock_ghz() is the clock the kernel reports: cpufreq's highest where
 *   it has cpufreq, else /proc/cpuinfo's "cpu MHz" (in a virtual machine the
 *   base clock: a core may run faster); 0 when neither says.
 *   dl_cpu_peak_gflops(threads) is the fp32 peak the vector units allow at that
 *   clock (lanes per FMA × 2 FMA units × 2 FLOPs × GHz × threads; AMD's AVX-512
 *   counted as 256-bit, as Zen 4 executes it): a yardstick for a GEMM rate,
 *   not a measurement, and exceeded where the core runs above the reported
 *   clock. 0 when the clock is unknown.
 */
#ifndef DL_CPU_H
#define DL_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

unsigned dl_cpu_flush_subnormals(void);
void dl_cpu_restore(unsigned mode);
int dl_cpu_flushes(void);
const char *dl_cpu_features(void);
int dl_cpu_has(const char *feature);
const char *dl_cpu_vendor(void);
double dl_cpu_clock_ghz(void);
double dl_cpu_peak_gflops(int threads);

#ifdef __cplusplus
}
#endif
#endif /* DL_CPU_H */
