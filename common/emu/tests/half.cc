/* half.cc — __half and __nv_bfloat16 against references made another way:
 * every binary16 value decoded by its formula (ldexp) and by the compiler's
 * _Float16; round to nearest even checked at every tie between two halves
 * and on each side of it; bf16 against a nearest-of-two choice in double;
 * arithmetic against the exact (or innocuously rounded) double result. */
#include <cuda_bf16.h>
#include <math.h> // ldexp, nextafterf
#include <stdint.h> // uint32_t
#include <string.h> // memcpy

#include "emu_test.h"

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* binary16 bits h by the formula: (-1)^s · 2^(e-15) · 1.m, or 2^-14 · 0.m */
static double half_ref(unsigned h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

int test_half_to_float_all(void)
{
    for (unsigned h = 0; h < 65536; h++) {
        float f = __half2float(__ushort_as_half((unsigned short)h));
        double want = half_ref(h);
        _Float16 c;
        memcpy(&c, &h, 2);
        if (want != want) { // NaN: CUDA's host code gives its canonical NaN, and back 0x7fff
            CHECK(f != f && fbits(f) == 0x7fffffffu, "half 0x%04x: 0x%08x", h, fbits(f));
            CHECK(__half_as_ushort(__float2half_rn(f)) == 0x7fff, "NaN 0x%04x back", h);
            continue;
        }
        CHECK((double)f == want && f == (float)c, "half 0x%04x: %.9g, the formula %.9g, _Float16 %.9g", h, f, want,
              (double)(float)c);
        CHECK(signbit(f) == (h >> 15 != 0), "half 0x%04x: sign", h);
        unsigned back = __half_as_ushort(__float2half_rn(f));
        CHECK(back == h, "half 0x%04x -> %.9g -> 0x%04x", h, f, back);
    }
    return 0;
}

static unsigned f2h(float f)
{
    return __half_as_ushort(__float2half_rn(f));
}

int test_float_to_half_rne(void)
{
    // at every tie between two finite halves of the same sign, and one float either side
    for (unsigned k = 0; k < 0x7c00; k++)
        for (unsigned sign = 0; sign <= 0x8000; sign += 0x8000) {
            double lo = half_ref(sign | k), hi = k == 0x7bff ? (sign ? -65536.0 : 65536.0) : half_ref(sign | (k + 1));
            float mid = (float)((lo + hi) / 2); // exact: 12 significant bits
            unsigned even = (k & 1) ? k + 1 : k;
            float toward_hi = nextafterf(mid, sign ? -INFINITY : INFINITY), toward_lo = nextafterf(mid, 0.0f);
            CHECK(f2h(mid) == (sign | even), "tie %.9g -> 0x%04x, want 0x%04x", mid, f2h(mid), sign | even);
            CHECK(f2h(toward_hi) == (sign | (k + 1)), "%.9g -> 0x%04x", toward_hi, f2h(toward_hi));
            CHECK(f2h(toward_lo) == (sign | k), "%.9g -> 0x%04x", toward_lo, f2h(toward_lo));
        }
    // the edges CUDA documents
    CHECK(f2h(65504.0f) == 0x7bff && f2h(65519.996f) == 0x7bff && f2h(65520.0f) == 0x7c00, "overflow");
    CHECK(f2h(1e10f) == 0x7c00 && f2h(-INFINITY) == 0xfc00 && f2h(NAN) == 0x7fff, "inf and NaN");
    CHECK(f2h(ldexpf(1, -25)) == 0 && f2h(nextafterf(ldexpf(1, -25), 1)) == 1 && f2h(-ldexpf(1, -24)) == 0x8001,
          "the smallest subnormal");
    CHECK(f2h(-0.0f) == 0x8000 && f2h(1.9999f) == 0x4000 && __half_as_ushort(__float2half_rz(1.9999f)) == 0x3fff,
          "-0, round toward zero");
    // random floats against the compiler's own conversion
    for (int i = 0; i < 1000000; i++) {
        float f = from_bits((next32() & 0x8fffffffu) | 0x30000000u); // magnitudes 2^-31 .. 2^32
        if (f != f)
            continue;
        _Float16 c = (_Float16)f;
        unsigned want;
        memcpy(&want, &c, 2);
        want &= 0xffff;
        CHECK(f2h(f) == want, "%.9g -> 0x%04x, _Float16 0x%04x", f, f2h(f), want);
    }
    // from double: once, not through a float tie
    double tie = 1.0 + ldexp(1, -11);
    CHECK(__half_as_ushort(__double2half(tie + ldexp(1, -40))) == 0x3c01, "double just above a tie");
    CHECK(__half_as_ushort(__double2half(tie - ldexp(1, -40))) == 0x3c00, "double just below a tie");
    CHECK(__half_as_ushort(__double2half(65520.0 - 1e-9)) == 0x7bff, "double just below the overflow");
    return 0;
}

/* bf16 by choosing the nearer of the two candidates in double, ties to even
 * (past the largest bf16, 0x1.fep127, the next candidate is 2^128: inf) */
static unsigned bf_ref(float f)
{
    uint32_t u = fbits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    unsigned lo = u >> 16, hi = lo + 1;
    if ((lo & 0x7fffu) == 0x7f80u) // inf stays inf
        return lo;
    double a = fabs((double)f), dl = a - fabs((double)from_bits(lo << 16));
    double dh = ((hi & 0x7fffu) == 0x7f80u ? ldexp(1.0, 128) : fabs((double)from_bits(hi << 16))) - a;
    return dl < dh || (dl == dh && !(lo & 1u)) ? lo : hi;
}

int test_bf16_rne(void)
{
    static const unsigned lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
    for (unsigned hi = 0; hi < 65536; hi++)
        for (unsigned low : lows) {
            float f = from_bits(hi << 16 | low);
            unsigned got = __bfloat16_as_ushort(__float2bfloat16_rn(f)), want = bf_ref(f);
            CHECK(got == want, "0x%08x -> 0x%04x, want 0x%04x", hi << 16 | low, got, want);
            if (low == 0 && f == f)
                CHECK(fbits(__bfloat162float(__ushort_as_bfloat16((unsigned short)hi))) == hi << 16, "exact widening");
        }
    for (int i = 0; i < 1000000; i++) {
        float f = from_bits(next32());
        unsigned got = __bfloat16_as_ushort(__float2bfloat16(f));
        CHECK(got == bf_ref(f), "0x%08x -> 0x%04x, want 0x%04x", fbits(f), got, bf_ref(f));
    }
    CHECK(__bfloat16_as_ushort(__float2bfloat16_rz(from_bits(0x3f80ffffu))) == 0x3f80, "toward zero");
    return 0;
}

int test_half_arithmetic(void)
{
    for (int i = 0; i < 200000; i++) {
        __half a = __ushort_as_half((unsigned short)(next32() & 0xfbff)),
               b = __ushort_as_half((unsigned short)(next32() & 0xfbff));
        double x = __half2float(a), y = __half2float(b); // + - * exact in double, / rounded innocuously
        const struct {
            __half got;
            double exact;
            const char *op;
        } r[] = {{a + b, x + y, "+"}, {a - b, x - y, "-"}, {a * b, x * y, "*"}, {__hdiv(a, b), x / y, "/"}};
        for (const auto &c : r) {
            unsigned got = __half_as_ushort(c.got), want = __half_as_ushort(__double2half(c.exact));
            if (c.exact != c.exact)
                CHECK(__hisnan(c.got), "%g %s %g is not NaN", x, c.op, y);
            else
                CHECK(got == want, "%g %s %g = 0x%04x, want 0x%04x", x, c.op, y, got, want);
        }
        __nv_bfloat16 p = __float2bfloat16((float)x), q = __float2bfloat16((float)y);
        double px = __bfloat162float(p), qy = __bfloat162float(q);
        unsigned got = __bfloat16_as_ushort(p * q), want = __bfloat16_as_ushort(__float2bfloat16((float)(px * qy)));
        CHECK(got == want || (px * qy != px * qy), "bf16 %g * %g = 0x%04x, want 0x%04x", px, qy, got, want);
    }
    __half h = 1.5f;
    h += __half(2.25f);
    CHECK(__half2float(h) == 3.75f && __half2float(-h) == -3.75f, "+= and unary -");
    CHECK(sizeof(__half) == 2 && sizeof(__nv_bfloat16) == 2 && alignof(__half) == 2, "the sizes of a GPU's");
    return 0;
}
