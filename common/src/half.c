/* half.c — bulk fp16 <-> fp32 conversion on the host. */
#include "dl/half.h"

void dl_f32_to_f16(const float *src, dl_half *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dl_f2h(src[i]);
}

void dl_f16_to_f32(const dl_half *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = dl_h2f(src[i]);
}
