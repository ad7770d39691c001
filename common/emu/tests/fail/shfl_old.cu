// expect: __shfl_xor (without _sync, removed in CUDA 9)
#include <cuda_runtime.h>
__global__ void k(int *out)
{
    *out = __shfl_xor(*out, 1);
}
