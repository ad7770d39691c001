// expect: curand_kernel.h is not implemented by the emulated CUDA device
#include <cuda_runtime.h>
#include <curand_kernel.h>
