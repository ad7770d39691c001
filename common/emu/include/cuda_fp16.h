/* cuda_fp16.h — __half on the emulated CUDA device (common/emu): IEEE 754
 * binary16 as CUDA's host code defines it.
 *
 * Contract
 * - __half is 2 bytes holding the binary16 bits (__x), trivially copyable:
 *   the same bytes as a GPU's, so arrays copy between host and device as is.
 * - __float2half and __float2half_rn round to nearest, ties to even; keep
 *   subnormals (down to 2^-24); give ±inf from 65520 up (65504 + half an ulp
 *   rounds to even, to inf); a NaN becomes 0x7fff, CUDA's canonical NaN.
 *   __float2half_rz truncates. __double2half rounds the double once.
 *   __half2float is exact; a NaN becomes 0x7fffffff, as CUDA's host code.
 * - Arithmetic (__hadd, __hsub, __hmul, __hdiv and the operators) is done in
 *   fp32 and rounded once: for +, -, *, / fp32 holds the exact result up to
 *   a rounding that cannot change the binary16 one (24 >= 2·11 + 2 bits), so
 *   it is the correctly rounded result, the GPU's. __hfma is fmaf rounded
 *   once (two roundings; CUDA's host code does the same).
 * - As CUDA's: __half converts from float implicitly and to float
 *   implicitly, so `h * 2.0f` is ambiguous and does not compile, there too.
 * None of these can fail.
 */
#ifndef EMU_CUDA_FP16_H
#define EMU_CUDA_FP16_H

#include <math.h> // fmaf
#include <stdint.h> // uint32_t
#include <string.h> // memcpy

#include "cuda_runtime.h"

struct __half_raw {
    unsigned short x;
};

static inline unsigned short emu_f2h_bits_(float f, int round_nearest)
{
    uint32_t x, u, sign, rem, r;
    memcpy(&x, &f, 4);
    u = x & 0x7fffffffu;
    sign = (x >> 16) & 0x8000u;
    if (u >= 0x7f800000u) // inf, NaN
        return (unsigned short)(u == 0x7f800000u ? sign | 0x7c00u : 0x7fffu);
    if (u > 0x477fefffu) { // above the largest half: a tie or more past 65504 rounds to inf
        if (!round_nearest)
            return (unsigned short)(sign | 0x7bffu);
        r = sign | 0x7bffu;
        rem = 0x80000000u;
    } else if (u >= 0x38800000u) { // normal: 13 bits go
        rem = u << 19;
        r = sign | ((u - 0x38000000u) >> 13);
    } else if (u < 0x33000001u) { // at most half the smallest subnormal: to zero (a tie, to even)
        rem = u;
        r = sign;
    } else { // subnormal
        uint32_t shift = 0x7eu - (u >> 23), m = (u & 0x7fffffu) | 0x800000u;
        rem = m << (32 - shift);
        r = sign | (m >> shift);
    }
    if (round_nearest && (rem > 0x80000000u || (rem == 0x80000000u && (r & 1u))))
        r++;
    return (unsigned short)r;
}

static inline float emu_h2f_(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0x1fu)
        x = m != 0 ? 0x7fffffffu : sign | 0x7f800000u;
    else if (e == 0) {
        float f = (float)m * 5.9604644775390625e-08f; // m · 2^-24, exact
        memcpy(&x, &f, 4);
        x |= sign;
    } else
        x = sign | ((e + 112u) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

struct __half {
    unsigned short __x;
    __half() = default; // cppcheck-suppress uninitMemberVar ; trivial, uninitialised, as CUDA's
    constexpr __half(const __half_raw &r) : __x(r.x)
    {
    }
    __half(float f) : __x(emu_f2h_bits_(f, 1))
    {
    }
    __half(double d);
    __half(int i) : __half((float)i)
    {
    }
    operator float() const
    {
        return emu_h2f_(__x);
    }
    operator __half_raw() const
    {
        return __half_raw{__x};
    }
    __half &operator+=(const __half &o);
    __half &operator-=(const __half &o);
    __half &operator*=(const __half &o);
    __half &operator/=(const __half &o);
};

struct __half2 {
    __half x, y;
};

template <> struct emu_shfl_ok_<__half> {
    static constexpr bool value = true;
};
template <> struct emu_shfl_ok_<__half2> {
    static constexpr bool value = true;
};

static inline __half emu_h_(unsigned short bits)
{
    return __half(__half_raw{bits});
}

// ---- conversions ----

static inline __half __float2half(float f)
{
    return emu_h_(emu_f2h_bits_(f, 1));
}
static inline __half __float2half_rn(float f)
{
    return emu_h_(emu_f2h_bits_(f, 1));
}
static inline __half __float2half_rz(float f)
{
    return emu_h_(emu_f2h_bits_(f, 0));
}
static inline float __half2float(__half h)
{
    return emu_h2f_(h.__x);
}
static inline float __low2float(__half2 h)
{
    return emu_h2f_(h.x.__x);
}
static inline float __high2float(__half2 h)
{
    return emu_h2f_(h.y.__x);
}
/* Once from double: the double is cut to float first only where that cannot
 * change the binary16 result (it is then within fp32's exact range). */
static inline __half __double2half(double d)
{
    float f = (float)d;
    double err = d - (double)f; // f is d rounded once; a tie of the half is exact in float
    if (err != 0.0 && f == f) { // nudge f off a binary16 tie it only reached by rounding
        unsigned short lo = emu_f2h_bits_(f, 0); // the half at or below |f|, and the next one up
        float hi = (lo & 0x7fffu) == 0x7bffu ? copysignf(65536.0f, f) : emu_h2f_((unsigned short)(lo + 1));
        float mid = (emu_h2f_(lo) + hi) * 0.5f;
        if (f == mid || f == -mid)
            f = nextafterf(f, err > 0 ? INFINITY : -INFINITY);
    }
    return emu_h_(emu_f2h_bits_(f, 1));
}
inline __half::__half(double d) : __x(__double2half(d).__x)
{
}
static inline __half __int2half_rn(int i)
{
    return __double2half((double)i);
}
static inline int __half2int_rz(__half h)
{
    return (int)emu_h2f_(h.__x);
}
static inline __half __ushort_as_half(unsigned short u)
{
    return emu_h_(u);
}
static inline unsigned short __half_as_ushort(__half h)
{
    return h.__x;
}
static inline __half2 __halves2half2(__half a, __half b)
{
    return __half2{a, b};
}
static inline __half2 __floats2half2_rn(float a, float b)
{
    return __half2{__float2half_rn(a), __float2half_rn(b)};
}
static inline __half2 __float2half2_rn(float a)
{
    return __half2{__float2half_rn(a), __float2half_rn(a)};
}
static inline float2 __half22float2(__half2 h)
{
    return make_float2(__half2float(h.x), __half2float(h.y));
}
static inline __half __low2half(__half2 h)
{
    return h.x;
}
static inline __half __high2half(__half2 h)
{
    return h.y;
}

// ---- arithmetic: in fp32, rounded once ----

static inline __half __hadd(__half a, __half b)
{
    return __float2half_rn(__half2float(a) + __half2float(b));
}
static inline __half __hsub(__half a, __half b)
{
    return __float2half_rn(__half2float(a) - __half2float(b));
}
static inline __half __hmul(__half a, __half b)
{
    return __float2half_rn(__half2float(a) * __half2float(b));
}
static inline __half __hdiv(__half a, __half b)
{
    return __float2half_rn(__half2float(a) / __half2float(b));
}
static inline __half __hfma(__half a, __half b, __half c)
{
    return __float2half_rn(fmaf(__half2float(a), __half2float(b), __half2float(c)));
}
static inline __half __hneg(__half a)
{
    return emu_h_((unsigned short)(a.__x ^ 0x8000u));
}
static inline __half __habs(__half a)
{
    return emu_h_((unsigned short)(a.__x & 0x7fffu));
}
static inline __half __hmax(__half a, __half b)
{
    return __half2float(a) > __half2float(b) || __half2float(b) != __half2float(b) ? a : b;
}
static inline __half __hmin(__half a, __half b)
{
    return __half2float(a) < __half2float(b) || __half2float(b) != __half2float(b) ? a : b;
}
static inline __half2 __hadd2(__half2 a, __half2 b)
{
    return __half2{__hadd(a.x, b.x), __hadd(a.y, b.y)};
}
static inline __half2 __hmul2(__half2 a, __half2 b)
{
    return __half2{__hmul(a.x, b.x), __hmul(a.y, b.y)};
}
static inline bool __heq(__half a, __half b)
{
    return __half2float(a) == __half2float(b);
}
static inline bool __hlt(__half a, __half b)
{
    return __half2float(a) < __half2float(b);
}
static inline bool __hgt(__half a, __half b)
{
    return __half2float(a) > __half2float(b);
}
static inline bool __hisnan(__half a)
{
    return (a.__x & 0x7fffu) > 0x7c00u;
}
static inline bool __hisinf(__half a)
{
    return (a.__x & 0x7fffu) == 0x7c00u;
}

static inline __half operator+(const __half &a, const __half &b)
{
    return __hadd(a, b);
}
static inline __half operator-(const __half &a, const __half &b)
{
    return __hsub(a, b);
}
static inline __half operator*(const __half &a, const __half &b)
{
    return __hmul(a, b);
}
static inline __half operator/(const __half &a, const __half &b)
{
    return __hdiv(a, b);
}
static inline __half operator-(const __half &a)
{
    return __hneg(a);
}
static inline bool operator==(const __half &a, const __half &b)
{
    return __heq(a, b);
}
static inline bool operator!=(const __half &a, const __half &b)
{
    return !__heq(a, b);
}
static inline bool operator<(const __half &a, const __half &b)
{
    return __hlt(a, b);
}
static inline bool operator>(const __half &a, const __half &b)
{
    return __hgt(a, b);
}
static inline bool operator<=(const __half &a, const __half &b)
{
    return __half2float(a) <= __half2float(b);
}
static inline bool operator>=(const __half &a, const __half &b)
{
    return __half2float(a) >= __half2float(b);
}
inline __half &__half::operator+=(const __half &o)
{
    return *this = __hadd(*this, o);
}
inline __half &__half::operator-=(const __half &o)
{
    return *this = __hsub(*this, o);
}
inline __half &__half::operator*=(const __half &o)
{
    return *this = __hmul(*this, o);
}
inline __half &__half::operator/=(const __half &o)
{
    return *this = __hdiv(*this, o);
}

/* atomicAdd on a __half (sm_70 and later), as a compare-and-swap of its bits */
static inline __half atomicAdd(__half *a, __half v)
{
    emu_tls_.float_atomics = 1;
    unsigned short *p = (unsigned short *)a, old = __atomic_load_n(p, __ATOMIC_RELAXED), sum;
    do
        sum = __hadd(emu_h_(old), v).__x;
    while (!__atomic_compare_exchange_n(p, &old, sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return emu_h_(old);
}

#endif /* EMU_CUDA_FP16_H */
