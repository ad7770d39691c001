/* cuda_runtime.h — the emulated CUDA device's runtime API (ddplab, common/emu).
 *
 * Contract
 * - Stands in for the CUDA toolkit's header when a .cu file is built by the
 *   host C++ compiler after cu2cc (common/emu/README.md). It declares what
 *   the kit's CUDA code uses, with CUDA's names, numbers and semantics. What
 *   it does not declare does not compile (the compiler names it); what it
 *   declares but cannot do fails with cudaErrorNotSupported and a message
 *   naming it. __CUDACC__ and __CUDA_ARCH__ stay undefined: this is host code
 *   (dl/hd.h's DL_HD is then plain `static inline`); DL_CUDA_EMU is 1.
 * - One device, ordinal 0, named "ddplab emulated CUDA device", compute
 *   capability 8.0, 48 KiB of shared memory per block, 1024 threads per block.
 * - Device memory is host memory the runtime tracks: every cudaMalloc is an
 *   allocation of its own, bounded exactly (guard pages, or AddressSanitizer's
 *   redzones in a sanitizer build), filled with 0xff bytes (a GPU gives
 *   whatever was there). A copy whose kind disagrees with where its pointers
 *   live fails with cudaErrorInvalidMemcpyDirection; one that runs past an
 *   allocation fails with cudaErrorInvalidValue; both name the pointers.
 * - Streams are FIFOs run in issue order, lazily: work runs when the host
 *   waits for it (a synchronize, a query, an event, a copy into pageable
 *   memory) or when more than 1024 operations are pending, so a host read
 *   that forgot to wait sees stale memory every time, not by chance.
 *   The legacy default stream (0) orders with every blocking stream;
 *   cudaStreamNonBlocking streams order only through events.
 * - Errors: a call's error is also the thread's last error (cudaGetLastError
 *   returns and clears it). A kernel that faults (bounds, divergence, a
 *   checked launch's finding) makes the device's error sticky: every later
 *   call returns it, until cudaDeviceReset. cudaGetErrorString(e) appends
 *   the emulator's message for e's latest occurrence on this thread, if any.
 */
#ifndef EMU_CUDA_RUNTIME_H
#define EMU_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "cuda_runtime.h (emulated CUDA): compile .cu files as C++ after cu2cc (common/emu/README.md)"
#endif

#if defined(__CUDACC__) || defined(__CUDA_RUNTIME_H__) || defined(__DRIVER_TYPES_H__)
#error \
    "the emulated CUDA device's headers met nvcc or a CUDA toolkit header: build .cu files for it with cu2cc and g++, -I common/emu/include first (common/emu/README.md)"
#endif

#define DL_CUDA_EMU 1
#define CUDART_VERSION 12000 /* the runtime API level this follows */
#define __CUDART_API_VERSION CUDART_VERSION

#include <math.h> // expf, logf, ... (device code runs on the host's libm)
#include <stddef.h> // size_t
#include <stdint.h> // uint64_t
#include <stdio.h> // printf in kernels
#include <string.h> // memcpy

#include "emu/emu.h" // emu_check_set, emu_finding_*
#include "emu/vector_types.h" // dim3, uint3, float4, ...

// ---- types and constants (CUDA's numbers) ----

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorHardwareStackError = 714,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotPermitted = 800,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

enum cudaMemoryType {
    cudaMemoryTypeUnregistered = 0,
    cudaMemoryTypeHost = 1,
    cudaMemoryTypeDevice = 2,
    cudaMemoryTypeManaged = 3
};

struct cudaPointerAttributes {
    enum cudaMemoryType type;
    int device;
    void *devicePointer;
    void *hostPointer;
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00

/* library_types.h's, for cuBLAS */
typedef enum cudaDataType_t {
    CUDA_R_16F = 2,
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16BF = 14,
    CUDA_R_8I = 3,
    CUDA_R_32I = 10
} cudaDataType;

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int integrated;
    int concurrentKernels;
    int asyncEngineCount;
    int unifiedAddressing;
    int managedMemory;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    int pciBusID;
    int pciDeviceID;
    int ECCEnabled;
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76
};

// ---- the runtime API ----

extern "C" {
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
/* Waits for all work, frees every allocation, stream and event, and clears
 * the sticky error: the device as at the start (findings are kept). */
cudaError_t cudaDeviceReset(void);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaDriverGetVersion(int *version); /* 0: no driver */

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
}

// C++ conveniences, as the toolkit's cuda_runtime.h has them
template <typename T> static inline cudaError_t cudaMalloc(T **devPtr, size_t size)
{
    return cudaMalloc((void **)devPtr, size);
}
template <typename T> static inline cudaError_t cudaMallocHost(T **ptr, size_t size)
{
    return cudaMallocHost((void **)ptr, size);
}

// What the toolkit has and this device does not: a call does not compile.
#define EMU_NOT_IMPLEMENTED(what) \
    __attribute__((error(what " is not implemented by the emulated CUDA device (common/emu/README.md)")))
EMU_NOT_IMPLEMENTED("cudaMallocManaged") cudaError_t cudaMallocManaged(void **, size_t, unsigned int = 1);
EMU_NOT_IMPLEMENTED("cudaMallocAsync") cudaError_t cudaMallocAsync(void **, size_t, cudaStream_t);
EMU_NOT_IMPLEMENTED("cudaFreeAsync") cudaError_t cudaFreeAsync(void *, cudaStream_t);
EMU_NOT_IMPLEMENTED("cudaMemcpy2D")
cudaError_t cudaMemcpy2D(void *, size_t, const void *, size_t, size_t, size_t, enum cudaMemcpyKind);
EMU_NOT_IMPLEMENTED("cudaMallocPitch") cudaError_t cudaMallocPitch(void **, size_t *, size_t, size_t);
EMU_NOT_IMPLEMENTED("cudaLaunchKernel")
cudaError_t cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);
EMU_NOT_IMPLEMENTED("cudaLaunchHostFunc") cudaError_t cudaLaunchHostFunc(cudaStream_t, void (*)(void *), void *);
EMU_NOT_IMPLEMENTED("cudaFuncSetAttribute") cudaError_t cudaFuncSetAttribute(const void *, int, int);
EMU_NOT_IMPLEMENTED("cudaHostRegister") cudaError_t cudaHostRegister(void *, size_t, unsigned int);
EMU_NOT_IMPLEMENTED("cudaDeviceEnablePeerAccess") cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int);
EMU_NOT_IMPLEMENTED("cudaStreamBeginCapture") cudaError_t cudaStreamBeginCapture(cudaStream_t, int);
template <typename T>
EMU_NOT_IMPLEMENTED("cudaMemcpyToSymbol (and __constant__ memory)")
cudaError_t
    cudaMemcpyToSymbol(const T &, const void *, size_t, size_t = 0, enum cudaMemcpyKind = cudaMemcpyHostToDevice);
template <typename T>
EMU_NOT_IMPLEMENTED("cudaMemcpyFromSymbol")
cudaError_t cudaMemcpyFromSymbol(void *, const T &, size_t, size_t = 0, enum cudaMemcpyKind = cudaMemcpyDeviceToHost);

#include "emu/device.h" // __syncthreads, __shfl_xor_sync, atomicAdd, threadIdx, ...
#include "emu/launch.h" // emu_launch_: what cu2cc makes of k<<<grid, block, shared, stream>>>(args)

#endif /* EMU_CUDA_RUNTIME_H */
