/* bf16.c — bulk bf16 <-> fp32 conversion on the host. */
#include "dl/bf16.h"

void dl_f32_to_bf16(const float *src, dl_bf16 *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dl_f2bf(src[i]);
}

void dl_bf16_to_f32(const dl_bf16 *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dl_bf2f(src[i]);
}
