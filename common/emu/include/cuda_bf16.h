/* cuda_bf16.h — __nv_bfloat16 on the emulated CUDA device (common/emu): the
 * top 16 bits of an fp32, as CUDA's host code defines it.
 *
 * Contract
 * - __nv_bfloat16 is 2 bytes holding the bits (__x), trivially copyable: the
 *   same bytes as a GPU's.
 * - __float2bfloat16 and __float2bfloat16_rn round to nearest, ties to even,
 *   on the bits (overflow to ±inf past 0x1.fep127 plus half an ulp, fp32's
 *   subnormals kept); a NaN becomes 0x7fff, CUDA's canonical NaN.
 *   __float2bfloat16_rz truncates. __bfloat162float is exact (the bits
 *   shifted up; a NaN keeps its payload).
 * - Arithmetic is done in fp32 and rounded once: correctly rounded for +, -,
 *   *, / (24 >= 2·8 + 2 bits), the GPU's result.
 * - Implicit conversions from and to float, as CUDA's (so `b * 2.0f` is
 *   ambiguous there and here). None of these can fail.
 */
#ifndef EMU_CUDA_BF16_H
#define EMU_CUDA_BF16_H

#include <math.h> // fmaf
#include <stdint.h> // uint32_t
#include <string.h> // memcpy

#include "cuda_fp16.h" // CUDA's cuda_bf16.h brings cuda_fp16.h too

struct __nv_bfloat16_raw {
    unsigned short x;
};

static inline unsigned short emu_f2bf_bits_(float f, int round_nearest)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fffu;
    if (round_nearest) // just under half an ulp, plus one when the kept part is odd: ties to even
        u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

static inline float emu_bf2f_(unsigned short b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default; // cppcheck-suppress uninitMemberVar ; trivial, as CUDA's
    constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x)
    {
    }
    __nv_bfloat16(float f) : __x(emu_f2bf_bits_(f, 1))
    {
    }
    operator float() const
    {
        return emu_bf2f_(__x);
    }
    operator __nv_bfloat16_raw() const
    {
        return __nv_bfloat16_raw{__x};
    }
};
typedef __nv_bfloat16 nv_bfloat16;

struct __nv_bfloat162 {
    __nv_bfloat16 x, y;
};

template <> struct emu_shfl_ok_<__nv_bfloat16> {
    static constexpr bool value = true;
};
template <> struct emu_shfl_ok_<__nv_bfloat162> {
    static constexpr bool value = true;
};

static inline __nv_bfloat16 emu_bf_(unsigned short bits)
{
    return __nv_bfloat16(__nv_bfloat16_raw{bits});
}

static inline __nv_bfloat16 __float2bfloat16(float f)
{
    return emu_bf_(emu_f2bf_bits_(f, 1));
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return emu_bf_(emu_f2bf_bits_(f, 1));
}
static inline __nv_bfloat16 __float2bfloat16_rz(float f)
{
    return emu_bf_(emu_f2bf_bits_(f, 0));
}
static inline float __bfloat162float(__nv_bfloat16 b)
{
    return emu_bf2f_(b.__x);
}
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u)
{
    return emu_bf_(u);
}
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b)
{
    return b.__x;
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
static inline float2 __bfloat1622float2(__nv_bfloat162 b)
{
    return make_float2(__bfloat162float(b.x), __bfloat162float(b.y));
}

static inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __float2bfloat16_rn(__bfloat162float(a) + __bfloat162float(b));
}
static inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __float2bfloat16_rn(__bfloat162float(a) - __bfloat162float(b));
}
static inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __float2bfloat16_rn(__bfloat162float(a) * __bfloat162float(b));
}
static inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __float2bfloat16_rn(__bfloat162float(a) / __bfloat162float(b));
}
static inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c)
{
    return __float2bfloat16_rn(fmaf(__bfloat162float(a), __bfloat162float(b), __bfloat162float(c)));
}
static inline __nv_bfloat16 __hneg(__nv_bfloat16 a)
{
    return emu_bf_((unsigned short)(a.__x ^ 0x8000u));
}

static inline __nv_bfloat16 operator+(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __hadd(a, b);
}
static inline __nv_bfloat16 operator-(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __hsub(a, b);
}
static inline __nv_bfloat16 operator*(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __hmul(a, b);
}
static inline __nv_bfloat16 operator/(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __hdiv(a, b);
}
static inline __nv_bfloat16 operator-(const __nv_bfloat16 &a)
{
    return __hneg(a);
}
static inline bool operator==(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __bfloat162float(a) == __bfloat162float(b);
}
static inline bool operator!=(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return !(a == b);
}
static inline bool operator<(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __bfloat162float(a) < __bfloat162float(b);
}
static inline bool operator>(const __nv_bfloat16 &a, const __nv_bfloat16 &b)
{
    return __bfloat162float(a) > __bfloat162float(b);
}

/* atomicAdd on a __nv_bfloat16 (sm_80 and later), as a compare-and-swap */
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *a, __nv_bfloat16 v)
{
    emu_tls_.float_atomics = 1;
    unsigned short *p = (unsigned short *)a, old = __atomic_load_n(p, __ATOMIC_RELAXED), sum;
    do
        sum = __hadd(emu_bf_(old), v).__x;
    while (!__atomic_compare_exchange_n(p, &old, sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return emu_bf_(old);
}

#endif /* EMU_CUDA_BF16_H */
