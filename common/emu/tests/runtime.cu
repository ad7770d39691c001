/* runtime.cu — the emulated runtime's contract: copies checked against where
 * memory lives, what it refuses to run and how it says so, streams and
 * events in order, and the sticky error of a faulted kernel. */
#include <string.h> // strstr

#include "emu_test.h"

__global__ void set_kernel(int *p, int v, int n)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n)
        p[i] = v;
}

__global__ void add_kernel(const int *a, int *b, int n)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n)
        b[i] += a[i];
}

__global__ void child_kernel(int *p)
{
    *p = 1;
}

__global__ void parent_kernel(int *p)
{
    child_kernel<<<1, 1>>>(p); // dynamic parallelism
}

__global__ void big_shared_kernel(float *out)
{
    __shared__ float big[13000]; // 52,000 bytes: over the 48 KiB of a block
    big[threadIdx.x] = 1.0f;
    out[threadIdx.x] = big[threadIdx.x];
}

__global__ void bad_barrier_kernel(void)
{
    if (threadIdx.x == 0)
        return;
    __syncthreads();
}

int test_wrong_direction_copy(void)
{
    int h[64] = {0}, *d;
    CHECK_CUDA(cudaMalloc(&d, sizeof h));
    cudaError_t e = cudaMemcpy(d, h, sizeof h, cudaMemcpyDeviceToHost);
    CHECK(e == cudaErrorInvalidMemcpyDirection, "got %s", cudaGetErrorName(e));
    CHECK(strstr(cudaGetErrorString(e), "wrong direction") != NULL, "the message: %s", cudaGetErrorString(e));
    CHECK(cudaGetLastError() == cudaErrorInvalidMemcpyDirection && cudaGetLastError() == cudaSuccess,
          "the last error is not the copy's, or not cleared");
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyHostToDevice) == cudaErrorInvalidMemcpyDirection, "host <- device");
    CHECK(cudaMemcpy(h, h + 32, 32, cudaMemcpyDeviceToDevice) == cudaErrorInvalidMemcpyDirection, "host as device");
    CHECK(has_finding(EMU_BAD_COPY, "destination", "is device memory"), "not recorded");
    CHECK_CUDA(cudaMemcpy(d, h, sizeof h, cudaMemcpyDefault)); // kind inferred: fine either way
    CHECK_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDefault));
    return 0;
}

int test_copy_past_end(void)
{
    char h[200] = {0}, *d;
    CHECK_CUDA(cudaMalloc(&d, 100));
    CHECK(cudaMemcpy(d, h, 104, cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "a copy past the end");
    CHECK(has_finding(EMU_BAD_COPY, "runs 4 bytes past the end of the 100-byte device allocation", NULL), "unnamed");
    CHECK(cudaMemcpy(h, d + 50, 60, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue, "a read past the end");
    CHECK(cudaMemset(d, 0, 101) == cudaErrorInvalidValue, "a memset past the end");
    CHECK(cudaMemset(h, 0, 10) == cudaErrorInvalidValue, "a memset of host memory");
    CHECK(cudaFree(h) == cudaErrorInvalidValue && cudaFree(d + 1) == cudaErrorInvalidValue, "bad frees");
    CHECK_CUDA(cudaFree(d));
    CHECK(cudaFree(d) == cudaErrorInvalidValue, "a double free");
    CHECK(emu_device_bytes() == 0, "%zu bytes still allocated", emu_device_bytes());
    return 0;
}

int test_unimplemented_calls(void)
{
    int *d, v;
    CHECK_CUDA(cudaMalloc(&d, sizeof(int)));
    parent_kernel<<<1, 1>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    CHECK(e == cudaErrorNotSupported, "dynamic parallelism gave %s", cudaGetErrorName(e));
    CHECK(has_finding(EMU_UNSUPPORTED, "kernel parent_kernel", "dynamic parallelism"), "not named");
    CHECK_CUDA(cudaDeviceReset());
    CHECK(cudaDeviceGetAttribute(&v, (cudaDeviceAttr)999, 0) == cudaErrorNotSupported, "an unknown attribute");
    CHECK(has_finding(EMU_UNSUPPORTED, "attribute 999", NULL), "not named");
    return 0;
}

int test_bad_launch_config(void)
{
    int *d;
    float *f;
    CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&f, 64 * sizeof(float)));
    set_kernel<<<1, 2048>>>(d, 1, 64);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "2048 threads per block");
    set_kernel<<<0, 64>>>(d, 1, 64);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "an empty grid");
    set_kernel<<<1, 64, 64 * 1024>>>(d, 1, 64);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "64 KiB of dynamic shared memory");
    CHECK(has_finding(EMU_BAD_LAUNCH, "kernel set_kernel", "1024 threads"), "not named");
    CHECK_CUDA(cudaDeviceSynchronize()); // launch errors are not sticky
    big_shared_kernel<<<1, 32>>>(f);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure, "52,000 bytes of shared memory ran");
    CHECK(has_finding(EMU_BAD_LAUNCH, "__shared__ big", "48 KiB"), "not named");
    return 0;
}

int test_streams_lazy(void)
{
    int *pinned, host[4] = {0}, *d;
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMallocHost(&pinned, 4 * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&d, 4 * sizeof(int)));
    pinned[0] = 7;
    set_kernel<<<1, 4, 0, s>>>(pinned, 5, 4); // a kernel may write page-locked memory
    CHECK(pinned[0] == 7, "the kernel ran before anyone waited"); // a read that forgot to wait: stale
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK(pinned[0] == 5 && pinned[3] == 5, "after the wait: %d", pinned[0]);
    set_kernel<<<1, 4, 0, s>>>(d, 9, 4);
    CHECK_CUDA(cudaMemcpyAsync(pinned, d, sizeof host, cudaMemcpyDeviceToHost, s)); // into page-locked: queued
    CHECK(pinned[0] == 5, "an async copy into page-locked memory ran before the wait");
    CHECK_CUDA(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s)); // into pageable: done on return
    CHECK(host[0] == 9 && pinned[0] == 9, "pageable %d, page-locked %d", host[0], pinned[0]);
    host[0] = 1; // a copy from pageable memory takes the values of the call
    CHECK_CUDA(cudaMemcpyAsync(d, host, sizeof(int), cudaMemcpyHostToDevice, s));
    host[0] = 2;
    CHECK_CUDA(cudaMemcpy(host + 1, d, sizeof(int), cudaMemcpyDeviceToHost)); // the legacy stream: s is non-blocking
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemcpy(host + 1, d, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(host[1] == 1, "staged value %d", host[1]);
    for (int i = 0; i < 3000; i++) // more than a queue holds: runs without a wait
        set_kernel<<<1, 1, 0, s>>>(d, i, 1);
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_CUDA(cudaMemcpy(host, d, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(host[0] == 2999, "the last of 3000 launches: %d", host[0]);
    CHECK_CUDA(cudaFreeHost(pinned));
    return 0;
}

int test_streams_events(void)
{
    const int n = 1000;
    int *a, *b, got[n];
    cudaStream_t s1, s2;
    cudaEvent_t made, t0, t1;
    CHECK_CUDA(cudaMalloc(&a, n * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&b, n * sizeof(int)));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreateWithFlags(&made, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreate(&t0));
    CHECK_CUDA(cudaEventCreate(&t1));
    CHECK_CUDA(cudaEventRecord(t0, s2));
    set_kernel<<<4, 256, 0, s2>>>(b, 10, n);
    set_kernel<<<4, 256, 0, s1>>>(a, 3, n);
    CHECK_CUDA(cudaEventRecord(made, s1));
    CHECK_CUDA(cudaStreamWaitEvent(s2, made, 0)); // s2's next work runs after s1's kernel
    add_kernel<<<4, 256, 0, s2>>>(a, b, n);
    CHECK_CUDA(cudaEventRecord(t1, s2));
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, t0, t1) == cudaErrorNotReady, "timed before the events ran");
    CHECK_CUDA(cudaStreamSynchronize(s2)); // s1 is never waited for directly
    CHECK_CUDA(cudaMemcpy(got, b, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == 13, "b[%d] = %d: the event did not order the streams", i, got[i]);
    CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
    CHECK(ms >= 0.0f, "elapsed %g ms", ms);
    CHECK(cudaEventElapsedTime(&ms, made, t1) == cudaErrorInvalidResourceHandle, "an event without timing");
    CHECK_CUDA(cudaEventQuery(made));
    CHECK_CUDA(cudaStreamDestroy(s1));
    CHECK(cudaStreamSynchronize(s1) == cudaErrorInvalidResourceHandle, "a destroyed stream");
    cudaStream_t blocking;
    CHECK_CUDA(cudaStreamCreate(&blocking)); // a blocking stream orders with the legacy stream
    set_kernel<<<4, 256, 0, blocking>>>(a, 4, n);
    CHECK_CUDA(cudaMemcpy(got, a, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(got[n - 1] == 4, "the legacy stream did not wait for a blocking stream");
    cudaDeviceProp p;
    CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
    CHECK(!strcmp(p.name, "ddplab emulated CUDA device") && p.warpSize == 32, "the device is %s", p.name);
    cudaPointerAttributes at;
    CHECK_CUDA(cudaPointerGetAttributes(&at, a + 5));
    CHECK(at.type == cudaMemoryTypeDevice, "device memory is type %d", (int)at.type);
    CHECK_CUDA(cudaPointerGetAttributes(&at, got));
    CHECK(at.type == cudaMemoryTypeUnregistered, "host memory is type %d", (int)at.type);
    return 0;
}

int test_sticky_error(void)
{
    bad_barrier_kernel<<<1, 64>>>();
    CHECK_CUDA(cudaGetLastError()); // the launch itself is fine
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure, "the fault did not show at the wait");
    void *p = NULL;
    CHECK(cudaMalloc(&p, 16) == cudaErrorLaunchFailure, "a later call did not return the sticky error");
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure && cudaGetLastError() == cudaErrorLaunchFailure,
          "the sticky error cleared");
    CHECK(strstr(cudaGetErrorString(cudaErrorLaunchFailure), "bad_barrier_kernel") != NULL, "%s",
          cudaGetErrorString(cudaErrorLaunchFailure));
    CHECK_CUDA(cudaDeviceReset());
    CHECK_CUDA(cudaMalloc(&p, 16));
    return 0;
}
