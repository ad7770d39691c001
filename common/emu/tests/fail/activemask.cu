// expect: __activemask is not implemented by the emulated CUDA device
#include <cuda_runtime.h>
__global__ void k(unsigned *out)
{
    *out = __activemask();
}
