/* dl/half.h — dl_half: IEEE 754 binary16 with the same bits on CPU and GPU.
 *
 * Contract
 * - dl_half is _Float16 under a C compiler (GCC 12+, clang) and __half under
 *   nvcc; both are 2 bytes with identical bit patterns, so arrays of dl_half
 *   can be copied between host and device unchanged.
 * - dl_f2h rounds to nearest, ties to even, keeps subnormals (down to 2^-24)
 *   and overflows to ±inf above 65504 (+ half an ulp), exactly as the GPU does;
 *   gradients that underflow on the GPU underflow identically on the CPU.
 * - dl_h2f is exact. dl_half_add(a, b) is a + b rounded once to binary16:
 *   the sum is formed in fp32, which holds the exact sum of two halves up to a
 *   rounding that cannot change the binary16 result (24 >= 2·11 + 1 bits, so
 *   double rounding is innocuous for addition); it is the correctly rounded
 *   sum, the same bits on CPU and GPU for every non-NaN result.
 *   None of these can fail.
 */
#ifndef DL_HALF_H
#define DL_HALF_H

#include <stdint.h> // uint16_t
#include <string.h> // memcpy

#include "dl/hd.h" // DL_HD

#ifdef __CUDACC__
#include <cuda_fp16.h> // __half, __float2half_rn, __half2float
typedef __half dl_half;
DL_HD dl_half dl_f2h(float f)
{
    return __float2half_rn(f);
}
DL_HD float dl_h2f(dl_half h)
{
    return __half2float(h);
}
#else
typedef _Float16 dl_half;
DL_HD dl_half dl_f2h(float f)
{
    return (dl_half)f;
}
DL_HD float dl_h2f(dl_half h)
{
    return (float)h;
}
#endif

/* a + b in fp32, rounded once to binary16 (see the contract above). */
DL_HD dl_half dl_half_add(dl_half a, dl_half b)
{
    return dl_f2h(dl_h2f(a) + dl_h2f(b));
}

#define DL_HALF_MAX 65504.0f
#define DL_HALF_MIN_NORMAL 6.103515625e-05f /* 2^-14 */
#define DL_HALF_MIN_SUBNORMAL 5.9604644775390625e-08f /* 2^-24 */

static inline uint16_t dl_half_bits(dl_half h)
{
    uint16_t u;
    memcpy(&u, (const void *)&h, sizeof u);
    return u;
}

static inline dl_half dl_half_from_bits(uint16_t u)
{
    dl_half h;
    memcpy((void *)&h, &u, sizeof h);
    return h;
}

#ifdef __cplusplus
extern "C" {
#endif
/* Converts n floats to halves and back (host arrays). Cannot fail. */
void dl_f32_to_f16(const float *src, dl_half *dst, size_t n);
void dl_f16_to_f32(const dl_half *src, float *dst, size_t n);
#ifdef __cplusplus
}
#endif

#endif /* DL_HALF_H */
