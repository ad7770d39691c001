// expect: cooperative_groups.h is not implemented by the emulated CUDA device
#include <cooperative_groups.h>
