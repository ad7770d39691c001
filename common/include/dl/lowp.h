/* dl/lowp.h — the kit's two 16-bit float formats, chosen by dtype: DL_F16
 * (dl_half, dl/half.h) and DL_BF16 (dl_bf16, dl/bf16.h).
 *
 * Contract
 * - dl_lowp(t) is 1 for DL_F16 and DL_BF16, else 0.
 * - dl_lowp_get(p, i, t) is element i of the array p of t, exactly as fp32;
 *   dl_lowp_put(p, i, t, v) stores v rounded once to t (round to nearest even,
 *   as dl_f2h / dl_f2bf). t must be DL_F16 or DL_BF16: any other t is read
 *   and written as DL_F16 (callers check t first). They are DL_HD, so a CPU
 *   loop and a CUDA kernel written over them give the same bits; the branch
 *   on t is the same for every element (uniform in a warp).
 * - dl_lowp_to_f32 / dl_f32_to_lowp convert n elements of host arrays (the
 *   bulk loops of half.c / bf16.c). None of these can fail.
 */
#ifndef DL_LOWP_H
#define DL_LOWP_H

#include <stddef.h> // size_t

#include "dl/bf16.h" // dl_bf16, dl_f2bf, dl_bf2f
#include "dl/dtype.h" // dl_dtype
#include "dl/half.h" // dl_half, dl_f2h, dl_h2f
#include "dl/hd.h" // DL_HD

DL_HD int dl_lowp(dl_dtype t)
{
    return t == DL_F16 || t == DL_BF16;
}

DL_HD float dl_lowp_get(const void *p, size_t i, dl_dtype t)
{
    if (t == DL_BF16)
        return dl_bf2f(((const dl_bf16 *)p)[i]);
    return dl_h2f(((const dl_half *)p)[i]);
}

DL_HD void dl_lowp_put(void *p, size_t i, dl_dtype t, float v)
{
    if (t == DL_BF16)
        ((dl_bf16 *)p)[i] = dl_f2bf(v);
    else
        ((dl_half *)p)[i] = dl_f2h(v);
}

static inline void dl_lowp_to_f32(const void *src, dl_dtype t, float *dst, size_t n)
{
    if (t == DL_BF16)
        dl_bf16_to_f32((const dl_bf16 *)src, dst, n);
    else
        dl_f16_to_f32((const dl_half *)src, dst, n);
}

static inline void dl_f32_to_lowp(const float *src, void *dst, dl_dtype t, size_t n)
{
    if (t == DL_BF16)
        dl_f32_to_bf16(src, (dl_bf16 *)dst, n);
    else
        dl_f32_to_f16(src, (dl_half *)dst, n);
}

#endif /* DL_LOWP_H */
