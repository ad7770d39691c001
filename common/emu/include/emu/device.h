/* emu/device.h — what device code sees on the emulated CUDA device (common/emu;
 * included by cuda_runtime.h): the qualifiers, threadIdx and friends, barriers,
 * warp shuffles and votes, atomics and the math intrinsics.
 *
 * Contract
 * - __global__, __device__, __host__ mark nothing: kernels are host functions
 *   that the runtime calls once per thread, on the thread's fiber.
 * - threadIdx, blockIdx, blockDim, gridDim read the running thread's values;
 *   read outside a kernel (a __global__ function called without <<< >>>),
 *   they stop the program with a message naming them.
 * - __syncthreads() is a barrier of the whole block. Every thread that has not
 *   finished must reach the same __syncthreads (same file and line) before any
 *   goes on; a thread that finishes, or waits at another barrier, while others
 *   wait is a divergent barrier: the kernel stops with EMU_DIVERGENT_BARRIER.
 * - A shuffle, vote or __syncwarp is a rendezvous of the lanes in its mask
 *   (lane = linear thread index % 32, warp = / 32): each lane in the mask
 *   must call the same kind of operation with the same mask; the values are
 *   exchanged when the last one arrives. A lane of the mask that finishes or
 *   waits elsewhere, or a shuffle reading a lane outside the mask, stops the
 *   kernel with EMU_DIVERGENT_WARP. Lanes that do not exist (a block that is
 *   not a multiple of 32) are left out of every mask.
 * - Atomics are the host's atomic instructions: blocks run at once on several
 *   cores. Adding floats or doubles with atomics is noted, for the checked
 *   launch's diagnosis (emu/emu.h).
 * - Math functions are the host's libm: expf here is glibc's, correctly
 *   rounded or nearly so, where CUDA's is within 2 ulp; __expf and the other
 *   fast intrinsics are the accurate functions; a*b+c is not contracted to an
 *   FMA unless the build asks (-mfma -ffp-contract=fast). Results can so
 *   differ from a GPU's in the last bits; tests compare with a tolerance.
 * - Every call that waits records __FILE__ and __LINE__ of its caller
 *   (__builtin_FILE/LINE), so the messages point at the kernel's line.
 */
#ifndef EMU_DEVICE_H
#define EMU_DEVICE_H

#include <stdint.h> // uint64_t
#include <string.h> // memcpy
#include <type_traits> // std::is_same

#include "emu/vector_types.h" // uint3, dim3

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// Declarations the emulated device cannot honour do not compile, and say why.
#define __constant__                                                                                               \
    static_assert(false, "__constant__ memory is not implemented by the emulated CUDA device: pass the values as " \
                         "kernel arguments or in device memory");
#define __managed__ static_assert(false, "__managed__ memory is not implemented by the emulated CUDA device");
// cu2cc rewrites every __shared__ declaration of a .cu file; one left here was elsewhere.
#define __shared__                                                                                               \
    static_assert(false, "__shared__ outside a kernel of the .cu file cu2cc rewrote (a header, or file scope): " \
                         "the emulated CUDA device needs the declaration inside the kernel");

static constexpr int warpSize = 32;

// ---- the running thread ----

/* Per worker thread: the block it runs and the thread of that block whose
 * fiber runs now (set by the runtime before each thread resumes). */
struct emu_tls_t_ {
    uint3 tid, bid, bdim, gdim;
    int in_kernel;
    int float_atomics; /* set by atomicAdd on float/double: see emu/emu.h */
};
extern __thread emu_tls_t_ emu_tls_;
[[noreturn]] void emu_outside_kernel_(const char *what);

static inline const uint3 &emu_builtin_(const uint3 &v, const char *what)
{
    if (__builtin_expect(!emu_tls_.in_kernel, 0))
        emu_outside_kernel_(what);
    return v;
}
#define threadIdx (emu_builtin_(emu_tls_.tid, "threadIdx"))
#define blockIdx (emu_builtin_(emu_tls_.bid, "blockIdx"))
#define blockDim (dim3(emu_builtin_(emu_tls_.bdim, "blockDim")))
#define gridDim (dim3(emu_builtin_(emu_tls_.gdim, "gridDim")))

// ---- barriers ----

void __syncthreads(const char *file = __builtin_FILE(), int line = __builtin_LINE());
int __syncthreads_count(int predicate, const char *file = __builtin_FILE(), int line = __builtin_LINE());
int __syncthreads_and(int predicate, const char *file = __builtin_FILE(), int line = __builtin_LINE());
int __syncthreads_or(int predicate, const char *file = __builtin_FILE(), int line = __builtin_LINE());
void __syncwarp(unsigned mask = 0xffffffffu, const char *file = __builtin_FILE(), int line = __builtin_LINE());

static inline void __threadfence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_block(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_system(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

// ---- warp shuffles and votes ----

enum { EMU_SHFL_IDX, EMU_SHFL_UP, EMU_SHFL_DOWN, EMU_SHFL_XOR, EMU_BALLOT, EMU_ANY, EMU_ALL, EMU_SYNCWARP };
/* One lane's part in a warp operation: in (size bytes) is its value, out
 * receives the result; arg is the lane, delta or lane mask. */
void emu_warp_op_(int op, unsigned mask, const void *in, void *out, unsigned size, int arg, int width, const char *file,
                  int line);

/* The types CUDA shuffles; __half and __nv_bfloat16 (and their pairs) add
 * themselves in cuda_fp16.h / cuda_bf16.h. */
template <typename T> struct emu_shfl_ok_ {
    static constexpr bool value = std::is_same<T, int>::value || std::is_same<T, unsigned>::value ||
                                  std::is_same<T, long>::value || std::is_same<T, unsigned long>::value ||
                                  std::is_same<T, long long>::value || std::is_same<T, unsigned long long>::value ||
                                  std::is_same<T, float>::value || std::is_same<T, double>::value;
};

template <typename T> static inline T emu_shfl_(int op, unsigned mask, T var, int arg, int width, const char *f, int l)
{
    static_assert(emu_shfl_ok_<T>::value, "__shfl_*_sync: CUDA shuffles int, unsigned, long, long long, float, "
                                          "double, __half, __nv_bfloat16 and their pairs only");
    T out;
    emu_warp_op_(op, mask, &var, &out, (unsigned)sizeof(T), arg, width, f, l);
    return out;
}
template <typename T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize, const char *f = __builtin_FILE(),
                            int l = __builtin_LINE())
{
    return emu_shfl_(EMU_SHFL_IDX, mask, var, srcLane, width, f, l);
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                               const char *f = __builtin_FILE(), int l = __builtin_LINE())
{
    return emu_shfl_(EMU_SHFL_UP, mask, var, (int)delta, width, f, l);
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                                 const char *f = __builtin_FILE(), int l = __builtin_LINE())
{
    return emu_shfl_(EMU_SHFL_DOWN, mask, var, (int)delta, width, f, l);
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize,
                                const char *f = __builtin_FILE(), int l = __builtin_LINE())
{
    return emu_shfl_(EMU_SHFL_XOR, mask, var, laneMask, width, f, l);
}

static inline unsigned __ballot_sync(unsigned mask, int pred, const char *f = __builtin_FILE(),
                                     int l = __builtin_LINE())
{
    int in = pred != 0;
    unsigned out = 0;
    emu_warp_op_(EMU_BALLOT, mask, &in, &out, sizeof in, 0, warpSize, f, l);
    return out;
}
static inline int __any_sync(unsigned mask, int pred, const char *f = __builtin_FILE(), int l = __builtin_LINE())
{
    int in = pred != 0, out = 0;
    emu_warp_op_(EMU_ANY, mask, &in, &out, sizeof in, 0, warpSize, f, l);
    return out;
}
static inline int __all_sync(unsigned mask, int pred, const char *f = __builtin_FILE(), int l = __builtin_LINE())
{
    int in = pred != 0, out = 0;
    emu_warp_op_(EMU_ALL, mask, &in, &out, sizeof in, 0, warpSize, f, l);
    return out;
}
// Threads run one at a time here: no set of lanes is "active together".
EMU_NOT_IMPLEMENTED("__activemask") unsigned __activemask(void);
// The pre-Volta forms without a mask are gone from CUDA 9 on.
EMU_NOT_IMPLEMENTED("__shfl (without _sync, removed in CUDA 9)") int __shfl(int, int, int = 32);
EMU_NOT_IMPLEMENTED("__shfl_xor (without _sync, removed in CUDA 9)") int __shfl_xor(int, int, int = 32);
EMU_NOT_IMPLEMENTED("__shfl_down (without _sync, removed in CUDA 9)") int __shfl_down(int, unsigned, int = 32);
EMU_NOT_IMPLEMENTED("__ballot (without _sync, removed in CUDA 9)") unsigned __ballot(int);

// ---- atomics (sequentially consistent read-modify-writes; return the old value) ----

template <typename T> static inline T emu_atomic_add_fp_(T *a, T v)
{
    emu_tls_.float_atomics = 1;
    T old, sum;
    __atomic_load(a, &old, __ATOMIC_RELAXED);
    do
        sum = old + v;
    while (!__atomic_compare_exchange(a, &old, &sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
static inline float atomicAdd(float *a, float v)
{
    return emu_atomic_add_fp_(a, v);
}
static inline double atomicAdd(double *a, double v)
{
    return emu_atomic_add_fp_(a, v);
}

#define EMU_ATOMIC_INT(T)                                                                                      \
    static inline T atomicAdd(T *a, T v)                                                                       \
    {                                                                                                          \
        return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                                     \
    }                                                                                                          \
    static inline T atomicAnd(T *a, T v)                                                                       \
    {                                                                                                          \
        return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                                     \
    }                                                                                                          \
    static inline T atomicOr(T *a, T v)                                                                        \
    {                                                                                                          \
        return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                                      \
    }                                                                                                          \
    static inline T atomicXor(T *a, T v)                                                                       \
    {                                                                                                          \
        return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                                     \
    }                                                                                                          \
    static inline T atomicExch(T *a, T v)                                                                      \
    {                                                                                                          \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                    \
    }                                                                                                          \
    static inline T atomicCAS(T *a, T compare, T v)                                                            \
    {                                                                                                          \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
        return compare;                                                                                        \
    }                                                                                                          \
    static inline T atomicMax(T *a, T v)                                                                       \
    {                                                                                                          \
        T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                          \
        while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) \
            ;                                                                                                  \
        return old;                                                                                            \
    }                                                                                                          \
    static inline T atomicMin(T *a, T v)                                                                       \
    {                                                                                                          \
        T old = __atomic_load_n(a, __ATOMIC_RELAXED);                                                          \
        while (old > v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) \
            ;                                                                                                  \
        return old;                                                                                            \
    }
EMU_ATOMIC_INT(int)
EMU_ATOMIC_INT(unsigned int)
EMU_ATOMIC_INT(unsigned long long)
#undef EMU_ATOMIC_INT
static inline int atomicSub(int *a, int v)
{
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}
static inline unsigned atomicSub(unsigned *a, unsigned v)
{
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}
static inline long long atomicMax(long long *a, long long v)
{
    long long old = __atomic_load_n(a, __ATOMIC_RELAXED);
    while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    return old;
}
static inline long long atomicMin(long long *a, long long v)
{
    long long old = __atomic_load_n(a, __ATOMIC_RELAXED);
    while (old > v && !__atomic_compare_exchange_n(a, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    return old;
}
static inline float atomicExch(float *a, float v)
{
    float old;
    __atomic_exchange(a, &v, &old, __ATOMIC_SEQ_CST);
    return old;
}
static inline unsigned short atomicCAS(unsigned short *a, unsigned short compare, unsigned short v)
{
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}
/* ((old >= limit) ? 0 : old + 1), as CUDA's */
static inline unsigned atomicInc(unsigned *a, unsigned limit)
{
    unsigned old = __atomic_load_n(a, __ATOMIC_RELAXED), nw;
    do
        nw = old >= limit ? 0u : old + 1u;
    while (!__atomic_compare_exchange_n(a, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
/* (((old == 0) || (old > limit)) ? limit : old - 1), as CUDA's */
static inline unsigned atomicDec(unsigned *a, unsigned limit)
{
    unsigned old = __atomic_load_n(a, __ATOMIC_RELAXED), nw;
    do
        nw = (old == 0u || old > limit) ? limit : old - 1u;
    while (!__atomic_compare_exchange_n(a, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}

// ---- math intrinsics (the host's libm; see the contract) ----

/* glibc's math.h declares internal functions of these names (not exported):
 * CUDA's fast intrinsics are macros here, onto the accurate functions. */
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __powf(x, y) powf(x, y)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
static inline float __fdividef(float x, float y)
{
    return x / y;
}
static inline float __saturatef(float x)
{
    return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
static inline float rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
static inline double rsqrt(double x)
{
    return 1.0 / sqrt(x);
}
static inline float __frcp_rn(float x)
{
    return 1.0f / x;
}
static inline float __fsqrt_rn(float x)
{
    return sqrtf(x);
}
static inline float __fadd_rn(float a, float b)
{
    return a + b;
}
static inline float __fsub_rn(float a, float b)
{
    return a - b;
}
static inline float __fmul_rn(float a, float b)
{
    return a * b;
}
static inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
static inline float __fmaf_rn(float a, float b, float c)
{
    return fmaf(a, b, c);
}
static inline double __dadd_rn(double a, double b)
{
    return a + b;
}
static inline double __dmul_rn(double a, double b)
{
    return a * b;
}
static inline double __fma_rn(double a, double b, double c)
{
    return fma(a, b, c);
}
static inline int __float2int_rn(float x)
{
    return (int)nearbyintf(x); /* the host rounds to nearest even, as CUDA's _rn */
}
static inline int __float2int_rz(float x)
{
    return (int)x;
}
static inline int __float2int_rd(float x)
{
    return (int)floorf(x);
}
static inline int __float2int_ru(float x)
{
    return (int)ceilf(x);
}
static inline float __int2float_rn(int x)
{
    return (float)x;
}
static inline float __uint2float_rn(unsigned x)
{
    return (float)x;
}
static inline float __double2float_rn(double x)
{
    return (float)x;
}

#define EMU_BITCAST(name, From, To) \
    static inline To name(From x)   \
    {                               \
        To y;                       \
        memcpy(&y, &x, sizeof y);   \
        return y;                   \
    }
EMU_BITCAST(__float_as_int, float, int)
EMU_BITCAST(__int_as_float, int, float)
EMU_BITCAST(__float_as_uint, float, unsigned)
EMU_BITCAST(__uint_as_float, unsigned, float)
EMU_BITCAST(__double_as_longlong, double, long long)
EMU_BITCAST(__longlong_as_double, long long, double)
#undef EMU_BITCAST

// ---- integer intrinsics ----

static inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
static inline int __clz(int x)
{
    return x == 0 ? 32 : __builtin_clz((unsigned)x);
}
static inline int __clzll(long long x)
{
    return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
static inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
static inline int __ffsll(long long x)
{
    return __builtin_ffsll(x);
}
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++, x >>= 1)
        r = (r << 1) | (x & 1u);
    return r;
}
static inline unsigned __umulhi(unsigned a, unsigned b)
{
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline int __mulhi(int a, int b)
{
    return (int)(((long long)a * b) >> 32);
}
static inline int __mul24(int a, int b)
{
    return (int)((unsigned)((int)((unsigned)a << 8) >> 8) * (unsigned)((int)((unsigned)b << 8) >> 8));
}
/* nanoseconds of the host's monotonic clock: counts time, not cycles */
long long clock64(void);
template <typename T> static inline T __ldg(const T *p)
{
    return *p;
}

// ---- CUDA's min and max overloads for device code ----

#define EMU_MINMAX(T)             \
    static inline T min(T a, T b) \
    {                             \
        return a < b ? a : b;     \
    }                             \
    static inline T max(T a, T b) \
    {                             \
        return a > b ? a : b;     \
    }
EMU_MINMAX(int)
EMU_MINMAX(unsigned int)
EMU_MINMAX(long)
EMU_MINMAX(unsigned long)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
#undef EMU_MINMAX
static inline float min(float a, float b)
{
    return fminf(a, b);
}
static inline float max(float a, float b)
{
    return fmaxf(a, b);
}
static inline double min(double a, double b)
{
    return fmin(a, b);
}
static inline double max(double a, double b)
{
    return fmax(a, b);
}

#endif /* EMU_DEVICE_H */
