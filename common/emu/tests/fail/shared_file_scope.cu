// expect: a __shared__ variable at file scope is not supported by the emulated CUDA device
#include <cuda_runtime.h>
__shared__ float tile[64];
__global__ void k(float *out)
{
    *out = tile[threadIdx.x];
}
