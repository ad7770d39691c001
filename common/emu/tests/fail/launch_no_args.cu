// expect: a launch <<< >>> must be followed by its arguments in ( )
#include <cuda_runtime.h>
__global__ void k(void)
{
}
void f(void)
{
    k<<<1, 1>>>;
}
