// expect: CUDA shuffles int, unsigned, long, long long, float, double, __half, __nv_bfloat16
#include <cuda_runtime.h>
struct pair {
    float a, b;
};
__global__ void k(pair *out)
{
    *out = __shfl_xor_sync(0xffffffffu, *out, 1);
}
