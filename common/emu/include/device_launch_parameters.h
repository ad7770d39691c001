/* device_launch_parameters.h — on the emulated CUDA device (common/emu): part of cuda_runtime.h. */
#include "cuda_runtime.h"
