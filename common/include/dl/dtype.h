/* dl/dtype.h — element types shared by BLAS and communication.
 *
 * Contract: dl_dtype_size returns the bytes of one element (0 for an unknown
 * type); dl_dtype_name a short name ("f32"). Neither can fail.
 */
#ifndef DL_DTYPE_H
#define DL_DTYPE_H

#include <stddef.h> // size_t

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dl_dtype {
    DL_F32 = 0, /* float */
    DL_F16 = 1, /* IEEE binary16 (dl_half) */
    DL_F64 = 2, /* double */
    DL_I32 = 3, /* int32_t */
    DL_I64 = 4, /* int64_t */
    DL_BF16 = 5, /* bfloat16, the top half of an fp32 (dl_bf16) */
    DL_DTYPE_COUNT
} dl_dtype;

static inline size_t dl_dtype_size(dl_dtype t)
{
    switch (t) {
    case DL_F32:
    case DL_I32:
        return 4;
    case DL_F16:
    case DL_BF16:
        return 2;
    case DL_F64:
    case DL_I64:
        return 8;
    default:
        return 0;
    }
}

static inline const char *dl_dtype_name(dl_dtype t)
{
    static const char *const names[DL_DTYPE_COUNT] = {"f32", "f16", "f64", "i32", "i64", "bf16"};
    return (unsigned)t < DL_DTYPE_COUNT ? names[t] : "?";
}

#ifdef __cplusplus
}
#endif
#endif /* DL_DTYPE_H */
