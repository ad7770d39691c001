/* ref16.c — the reference model of the 16-bit floats (tests.h): values and
 * rounding computed in double arithmetic from the fields, sharing no code
 * with the library's conversions. */
#include "tests.h"

#include <float.h> // FLT_MAX
#include <math.h> // frexp, ldexp, nearbyint, nextafterf, isnan, isinf, signbit

const ref16 REF_HALF = {5, 10};
const ref16 REF_BF16 = {8, 7};

static int bias(ref16 f)
{
    return (1 << (f.ebits - 1)) - 1;
}

int ref16_is_nan(ref16 f, uint32_t h)
{
    uint32_t exp = ((1u << f.ebits) - 1) << f.mbits, frac = (1u << f.mbits) - 1;
    return (h & exp) == exp && (h & frac) != 0;
}

double ref16_value(ref16 f, uint16_t h)
{
    int e = (h >> f.mbits) & ((1 << f.ebits) - 1), m = h & ((1 << f.mbits) - 1);
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0) // subnormal: no implicit one, the smallest normal's exponent
        return s * ldexp(m, 1 - bias(f) - f.mbits);
    if (e == (1 << f.ebits) - 1)
        return m ? NAN : s * INFINITY;
    return s * ldexp((1 << f.mbits) + m, e - bias(f) - f.mbits);
}

/* Scale so one ulp of x's binade is 1, round with nearbyint (ties to even
 * in the default mode), rebuild the fields. */
uint16_t ref16_bits(ref16 f, double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0, inf = (uint16_t)(((1u << f.ebits) - 1) << f.mbits);
    if (isnan(x))
        return sign | inf | (uint16_t)(1u << (f.mbits - 1));
    double a = fabs(x);
    if (isinf(a))
        return sign | inf;
    if (a == 0.0)
        return sign;
    int ex;
    frexp(a, &ex);
    int e = ex - 1; // a in [2^e, 2^(e+1))
    if (e < 1 - bias(f))
        e = 1 - bias(f); // subnormals share the smallest normal's spacing
    double one = ldexp(1.0, f.mbits), r = nearbyint(ldexp(a, f.mbits - e));
    if (r >= 2 * one) { // rounded up into the next binade
        e++;
        r = one;
    }
    if (r < one)
        return sign | (uint16_t)r;
    if (e > bias(f))
        return sign | inf;
    return sign | (uint16_t)(((e + bias(f)) << f.mbits) | ((int)r - (int)one));
}

double ref16_round(ref16 f, double x)
{
    return ref16_value(f, ref16_bits(f, x));
}

// ---- checks of a conversion against the model ----

void ref16_check_float(ref16 f, ref16_conv to_bits, uint32_t u, fails *fl)
{
    float x = f32_from_bits(u);
    uint16_t got = to_bits(x), want = ref16_bits(f, x);
    FAIL_IF(fl, isnan(x) ? !ref16_is_nan(f, got) : got != want, "%a (0x%08x) -> 0x%04x, reference 0x%04x", (double)x, u,
            got, want);
}

void ref16_check_midpoints(ref16 f, ref16_conv to_bits, fails *fl)
{
    uint32_t inf = ((1u << f.ebits) - 1) << f.mbits;
    for (uint32_t h = 0; h < inf; h++) {
        double lo = ref16_value(f, (uint16_t)h);
        double hi = h + 1 == inf ? ldexp(1.0, bias(f) + 1) : ref16_value(f, (uint16_t)(h + 1));
        double mid_d = (lo + hi) / 2;
        if (mid_d > FLT_MAX) { // bf16's overflow midpoint (2 - 2^-8)·2^127 is above every float
            FAIL_IF(fl, to_bits(FLT_MAX) != inf, "FLT_MAX -> 0x%04x, expected inf", to_bits(FLT_MAX));
            continue;
        }
        float mid = (float)mid_d; // exact: 12 significant bits at most
        FAIL_IF(fl, (double)mid != mid_d, "midpoint of 0x%04x is not a float", h);
        uint16_t even = (uint16_t)((h & 1) ? h + 1 : h);
        for (int s = 0; s < 2; s++) {
            uint32_t sg = s ? 0x8000 : 0;
            float m = s ? -mid : mid;
            FAIL_IF(fl, to_bits(m) != (sg | even), "midpoint %a of 0x%04x: got 0x%04x", (double)m, sg | h, to_bits(m));
            // One float ulp either side of the midpoint goes to the nearer value.
            float below = nextafterf(m, 0.0f), above = nextafterf(m, s ? -INFINITY : INFINITY);
            FAIL_IF(fl, to_bits(below) != (sg | h), "just below %a: 0x%04x", (double)m, to_bits(below));
            FAIL_IF(fl, to_bits(above) != (sg | (h + 1)), "just above %a: 0x%04x", (double)m, to_bits(above));
        }
    }
}

// ---- inputs ----

uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
