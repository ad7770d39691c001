// expect: cudaMallocManaged is not implemented by the emulated CUDA device
#include <cuda_runtime.h>
int f(void)
{
    float *p;
    return (int)cudaMallocManaged((void **)&p, 64);
}
