/* dl/bf16.h — dl_bf16: bfloat16 (the top half of an fp32) with the same bits
 * on CPU and GPU.
 *
 * Contract
 * - dl_bf16 is 2 bytes: fp32's sign, its 8 exponent bits and the top 7 of its
 *   23 fraction bits. Under a C compiler it is a struct holding those bits
 *   (no arithmetic on it by accident); under nvcc it is cuda_bf16.h's
 *   __nv_bfloat16. The bit patterns are identical, so arrays of dl_bf16 can
 *   be copied between host and device unchanged.
 * - dl_f2bf rounds to nearest, ties to even, on the bits: overflow rounds to
 *   ±inf as IEEE says (above the largest bf16, 0x1.fep127, plus half an ulp),
 *   subnormals are kept (fp32's subnormals round like the others), and a NaN
 *   stays a NaN, made quiet (sign and top payload bits kept; the GPU may give
 *   another NaN payload). Every non-NaN result equals __float2bfloat16_rn's.
 * - dl_bf2f is exact (the bits, shifted up). dl_bf16_add(a, b) is a + b formed
 *   in fp32 and rounded once to bf16: fp32 holds the exact sum up to a
 *   rounding that cannot change the bf16 result (24 >= 2·8 + 1 bits, and the
 *   two formats share the exponent range), so it is the correctly rounded sum,
 *   the same bits on CPU and GPU for every non-NaN result.
 *   None of these can fail.
 * - Unlike fp16, bf16 has fp32's range (down to 2^-133 with subnormals): a
 *   gradient that underflows in fp16 does not in bf16, at 8 bits of precision
 *   instead of 11.
 */
#ifndef DL_BF16_H
#define DL_BF16_H

#include <stddef.h> // size_t
#include <stdint.h> // uint16_t, uint32_t
#include <string.h> // memcpy

#include "dl/hd.h" // DL_HD

#ifdef __CUDACC__
#include <cuda_bf16.h> // __nv_bfloat16, __float2bfloat16_rn, __bfloat162float
typedef __nv_bfloat16 dl_bf16;
DL_HD dl_bf16 dl_f2bf(float f)
{
    return __float2bfloat16_rn(f);
}
DL_HD float dl_bf2f(dl_bf16 b)
{
    return __bfloat162float(b);
}
#else
typedef struct dl_bf16 {
    uint16_t bits;
} dl_bf16;
DL_HD dl_bf16 dl_f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    dl_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) { // NaN: truncate, set the quiet bit
        b.bits = (uint16_t)((u >> 16) | 0x0040u);
        return b;
    }
    // add just under half an ulp, plus one when the kept part is odd (ties to
    // even); a carry out of the fraction bumps the exponent, up to inf
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (uint16_t)(u >> 16);
    return b;
}
DL_HD float dl_bf2f(dl_bf16 b)
{
    uint32_t u = (uint32_t)b.bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#endif

/* a + b in fp32, rounded once to bf16 (see the contract above). */
DL_HD dl_bf16 dl_bf16_add(dl_bf16 a, dl_bf16 b)
{
    return dl_f2bf(dl_bf2f(a) + dl_bf2f(b));
}

#define DL_BF16_MAX 3.38953138925153547590470800371487866880e+38f /* 0x1.fep127 */
#define DL_BF16_MIN_NORMAL 1.17549435082228750796873653722224568e-38f /* 2^-126 */
#define DL_BF16_MIN_SUBNORMAL 9.18354961579912115600575419704879436e-41f /* 2^-133 */

static inline uint16_t dl_bf16_bits(dl_bf16 b)
{
    uint16_t u;
    memcpy(&u, (const void *)&b, sizeof u);
    return u;
}

static inline dl_bf16 dl_bf16_from_bits(uint16_t u)
{
    dl_bf16 b;
    memcpy((void *)&b, &u, sizeof b);
    return b;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Converts n floats to bf16 and back (host arrays). Cannot fail. */
void dl_f32_to_bf16(const float *src, dl_bf16 *dst, size_t n);
void dl_bf16_to_f32(const dl_bf16 *src, float *dst, size_t n);
#ifdef __cplusplus
}
#endif

#endif /* DL_BF16_H */
