/* ref16.c — the reference model of the 16-bit floats (tests.h): values and
 * rounding computed in double arithmetic from the fields, sharing no code
 * with the library's conversions. */
#include "tests.h"

#include <math.h> // frexp, ldexp, nearbyint, isnan, isinf, signbit

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
