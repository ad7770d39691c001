/* dl/hd.h — DL_HD: element-wise helpers shared by CPU loops and CUDA kernels.
 *
 * Contract
 * - A function declared `DL_HD float f(float)` is `__host__ __device__ static
 *   inline` under nvcc and plain `static inline` under a C compiler, so the CPU
 *   loop and the CUDA kernel call the *same* code and the CPU tests cover its
 *   arithmetic.
 * - Helpers here are pure (no memory, no errors) and cannot fail.
 */
#ifndef DL_HD_H
#define DL_HD_H

#ifdef __CUDACC__
#define DL_HD __host__ __device__ static inline
#else
#define DL_HD static inline
#endif

#include <math.h> // expf, fabsf

DL_HD float dl_maxf(float a, float b)
{
    return a > b ? a : b;
}

DL_HD float dl_minf(float a, float b)
{
    return a < b ? a : b;
}

DL_HD float dl_relu(float x)
{
    return x > 0.0f ? x : 0.0f;
}

/* d relu / dx at x, with the subgradient 0 at x = 0. */
DL_HD float dl_relu_grad(float x)
{
    return x > 0.0f ? 1.0f : 0.0f;
}

/* 1 when x is neither NaN nor ±inf. */
DL_HD int dl_isfinitef(float x)
{
    return x == x && fabsf(x) <= 3.402823466e38f;
}

#endif /* DL_HD_H */
