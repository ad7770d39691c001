/* vector_types.h — on the emulated CUDA device (common/emu): dim3, float4, ... */
#include "emu/vector_types.h"
