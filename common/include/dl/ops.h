/* dl/ops.h — element-wise operations on a device's buffers: the reduction
 * step of a hand-written collective (dst += src), a copy, casts, and the
 * unscale-and-check of a mixed-precision step.
 *
 * Contract
 * - Buffers live on dev: host pointers on the CPU device, device pointers of
 *   dev on CUDA (a host pointer there is DL_ERR_ARG). On CUDA the work is
 *   queued on dev's compute stream and the call returns before it is done,
 *   like dl_memcpy_d2d: later work on that stream — and dl_comm operations
 *   started afterwards, which are ordered after it — see the result.
 * - count = 0 does nothing and cannot fail (the pointers may then be NULL);
 *   otherwise a NULL pointer is DL_ERR_ARG. On any failure nothing is written.
 * - dl_add: DL_F32, DL_F16 or DL_BF16 (DL_ERR_ARG for other types). Each
 *   element is one addition rounded once: fp32 — an IEEE single addition;
 *   fp16 — dl_half_add (dl/half.h), the sum formed in fp32 and rounded to
 *   binary16 (round to nearest even, subnormals kept, overflow to ±inf),
 *   which is the correctly rounded sum; bf16 — dl_bf16_add (dl/bf16.h), the
 *   same with bf16's rounding. The CPU loop and the CUDA kernel call the same
 *   DL_HD functions below, so the results are equal bit for bit (a NaN result
 *   is NaN on both; its payload may differ). Adding k arrays with k−1 calls
 *   rounds k−1 times, as a ring's reduce-scatter does; in fp16/bf16 that can
 *   differ from summing in fp32 and rounding once, and depends on the order.
 *   In place (dst == src, doubling) is allowed; any other overlap of the two
 *   ranges is DL_ERR_ARG.
 * - dl_copy: any dtype (DL_ERR_ARG for an unknown one). memmove semantics on
 *   the CPU; on CUDA dst == src does nothing and any other overlap is
 *   DL_ERR_ARG.
 * - dl_accumulate: acc[i] += src[i] with acc in fp32 and src DL_F32, DL_F16
 *   or DL_BF16 (converted exactly): how a sum of many fp16 arrays is kept in
 *   fp32 and rounded once at the end. dl_cast: dst = src converted between
 *   any two of DL_F32, DL_F16 and DL_BF16: exactly to fp32, then rounded once
 *   to nearest even into dst_t (so fp16 <-> bf16 rounds once, and fp32 to
 *   either rounds once; fp16 or bf16 to fp32 is exact); the same type is a
 *   copy. Both on either device, the ranges must not overlap (DL_ERR_ARG).
 * - dl_scale: DL_F32, DL_F16 or DL_BF16; for the 16-bit types the product is
 *   formed in fp32 and rounded once.
 * - dl_unscale: dst[i] = (float)src[i] · inv_scale (src DL_F32, DL_F16 or DL_BF16,
 *   converted exactly; one fp32 multiply, dl_unscale_1) and *found_inf = 1
 *   when any product is inf or NaN — an inf or NaN in src always gives one
 *   (inf · 0 is NaN) — else 0: the element-wise part of PyTorch's
 *   _amp_foreach_non_finite_check_and_unscale_. dst is written in full even
 *   when the flag is set. In place (dst == src) for fp32 only; any other
 *   overlap, a non-finite inv_scale or a NULL found_inf is DL_ERR_ARG (then
 *   nothing, *found_inf included, is written). count = 0 sets *found_inf = 0.
 *   Unlike the other calls it waits on CUDA: the flag is read back to the
 *   host, so the call returns after the stream's earlier work and its own.
 */
#ifndef DL_OPS_H
#define DL_OPS_H

#include <math.h> // isfinite
#include <stddef.h> // size_t

#include "dl/device.h" // dl_device
#include "dl/dtype.h" // dl_dtype
#include "dl/bf16.h" // dl_bf16, dl_bf16_add
#include "dl/half.h" // dl_half, dl_half_add
#include "dl/hd.h" // DL_HD
#include "dl/status.h" // dl_status

// ---- the per-element additions (DL_HD: the CPU loop and the CUDA kernel) ----

DL_HD float dl_add_f32_1(float a, float b)
{
    return a + b;
}

DL_HD dl_half dl_add_f16_1(dl_half a, dl_half b)
{
    return dl_half_add(a, b);
}

DL_HD dl_bf16 dl_add_bf16_1(dl_bf16 a, dl_bf16 b)
{
    return dl_bf16_add(a, b);
}

DL_HD float dl_scale_f32_1(float x, float alpha)
{
    return x * alpha;
}

DL_HD dl_half dl_scale_f16_1(dl_half x, float alpha)
{
    return dl_f2h(dl_h2f(x) * alpha);
}

DL_HD dl_bf16 dl_scale_bf16_1(dl_bf16 x, float alpha)
{
    return dl_f2bf(dl_bf2f(x) * alpha);
}

DL_HD float dl_accumulate_f16_1(float acc, dl_half x)
{
    return acc + dl_h2f(x);
}

DL_HD float dl_accumulate_bf16_1(float acc, dl_bf16 x)
{
    return acc + dl_bf2f(x);
}

/* x · inv_scale in fp32; sets *found_inf when the product is not finite
 * (a non-finite x gives a non-finite product for every inv_scale). */
DL_HD float dl_unscale_1(float x, float inv_scale, int *found_inf)
{
    float v = x * inv_scale;
    if (!isfinite(v))
        *found_inf = 1;
    return v;
}

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] += src[i], i < count, for DL_F32, DL_F16 or DL_BF16 on dev (host
 * pointers on the CPU device, device pointers on CUDA). fp16/bf16: each
 * addition is done in fp32 and rounded once (round to nearest even) —
 * the same DL_HD function on both sides, so the CPU result equals the GPU's
 * bit for bit. In place (dst == src) is allowed. DL_ERR_ARG for other types. */
dl_status dl_add(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t);
/* acc[i] += src[i] (acc: fp32; src: DL_F32, DL_F16 or DL_BF16), i < count, on dev. */
dl_status dl_accumulate(const dl_device *dev, float *acc, const void *src, size_t count, dl_dtype t);
/* dst (dst_t) = src (src_t) for count elements, any two of DL_F32, DL_F16,
 * DL_BF16 (rounded once to dst_t), on dev. */
dl_status dl_cast(const dl_device *dev, void *dst, dl_dtype dst_t, const void *src, dl_dtype src_t, size_t count);
/* buf[i] *= alpha, i < count, for DL_F32, DL_F16 or DL_BF16 on dev (16-bit:
 * the product in fp32, rounded once, the same on both sides). DL_ERR_ARG for
 * other types or a non-finite alpha. */
dl_status dl_scale(const dl_device *dev, void *buf, size_t count, dl_dtype t, float alpha);
/* dst = src for count elements of t on dev (memmove semantics on the CPU). */
dl_status dl_copy(const dl_device *dev, void *dst, const void *src, size_t count, dl_dtype t);
/* dst (fp32) = src (src_type: DL_F32, DL_F16 or DL_BF16) · inv_scale, i < count, on
 * dev; *found_inf (host) = 1 when a product is inf or NaN, else 0. Waits for
 * the device on CUDA (see the contract). */
dl_status dl_unscale(const dl_device *dev, const void *src, dl_dtype src_type, float *dst, size_t count,
                     float inv_scale, int *found_inf);

#ifdef __cplusplus
}
#endif
#endif /* DL_OPS_H */
