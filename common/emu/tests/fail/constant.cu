// expect: __constant__ memory is not implemented by the emulated CUDA device
#include <cuda_runtime.h>
__constant__ float coeffs[16];
__global__ void k(float *out)
{
    *out = coeffs[0];
}
