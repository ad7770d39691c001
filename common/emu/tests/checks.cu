/* checks.cu — the mistakes a GPU hides, each made once on purpose: the
 * emulated device must name it (its kind, the kernel, the line) and fail
 * the launch; and a correct reduction must pass every check. */
#include <signal.h> // SIGSEGV
#include <stdlib.h> // malloc
#include <string.h> // strstr
#include <sys/wait.h> // WIFSIGNALED

#include "emu_test.h"

#define NT 256

/* Runs a kernel launch expression, then waits: returns the error. */
#define RUN(launch) (launch, cudaDeviceSynchronize())

/* Sums of blocks of in (n,) into part (blocks,): a correct tree reduction. */
__global__ void block_sum_kernel(const float *in, size_t n, float *part)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        part[blockIdx.x] = s[0];
}

/* One thread adds the blocks' sums in block order: the same bits on every call. */
__global__ void finish_kernel(const float *part, unsigned blocks, float *out)
{
    float sum = 0.0f;
    for (unsigned k = 0; k < blocks; k++)
        sum += part[k];
    *out = sum;
}

/* The mistake: the loop has no barrier, threads read partial sums not yet made. */
__global__ void no_sync_sum_kernel(const float *in, float *part)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1)
        if (t < k)
            s[t] += s[t + k];
    if (t == 0)
        part[blockIdx.x] = s[0];
}

/* The mistake: __syncthreads inside `if (t < k)`. */
__global__ void divergent_sum_kernel(const float *in, float *part)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1)
        if (t < k) {
            s[t] += s[t + k];
            __syncthreads(); // DIVERGENT
        }
    if (t == 0)
        part[blockIdx.x] = s[0];
}

/* The mistake: threads past n leave before the block's barrier. */
__global__ void early_return_kernel(const float *in, size_t n, float *part)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + t;
    if (i >= n)
        return;
    s[t] = in[i];
    __syncthreads(); // EARLY
    if (t == 0)
        part[blockIdx.x] = s[0];
}

/* The mistake: the warp-synchronous tail of old, without __syncwarp. */
__global__ void warp_tail_kernel(const float *in, float *part)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        volatile float *v = s;
        v[t] += v[t + 32];
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
    }
    if (t == 0)
        part[blockIdx.x] = s[0];
}

/* The mistake: lane 31 leaves before a full-warp shuffle. */
__global__ void shuffle_exit_kernel(float *out)
{
    float v = (float)threadIdx.x;
    if (threadIdx.x % 32 == 31)
        return;
    v += __shfl_xor_sync(0xffffffffu, v, 1); // SHUFFLE
    out[threadIdx.x] = v;
}

/* The mistake: each block adds its sum with atomicAdd, in whatever order the blocks end. */
__global__ void atomic_sum_kernel(const float *in, float *out)
{
    __shared__ float s[NT];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(out, s[0]);
}

/* The mistake: reads the next thread's slot before anyone waited. */
__global__ void race_kernel(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = (float)t;
    out[blockIdx.x * 64 + t] = s[(t + 1) % 64];
}

/* The mistake: no `i < n` guard. */
__global__ void copy_kernel(const float *in, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

/* The mistake: one past a shared array. */
__global__ void shared_oob_kernel(float *out)
{
    __shared__ float s[32];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x + 1];
}

__global__ void shared_write_oob_kernel(float *out)
{
    __shared__ float s[30]; // 120 bytes in a 16-aligned place: 8 bytes of slack before the guard page
    s[threadIdx.x] = 1.0f; // 32 threads: 2 writes past the end
    __syncthreads();
    out[threadIdx.x] = s[0];
}

__global__ void write_before_kernel(float *p)
{
    p[(int)threadIdx.x - 1] = 0.0f; // thread 0 writes p[-1]
}

// ---- the tests ----

static float *upload(const float *h, size_t n)
{
    float *d = NULL;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

static float *ramp(size_t n)
{
    float *h = (float *)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h[i] = 1.0f + (float)(i % 17) * 0.25f;
    return h;
}

int test_race_detected(void)
{
    float *d;
    CHECK_CUDA(cudaMalloc(&d, 4 * 64 * sizeof(float)));
    emu_check_set(EMU_CHECK_ORDERS);
    CHECK(RUN((race_kernel<<<4, 64>>>(d))) == cudaErrorLaunchFailure, "a race went through");
    CHECK(has_finding(EMU_RACE, "race_kernel", "order of the threads"), "no race named");
    CHECK(has_finding(EMU_RACE, "checks.cu:", "__syncthreads"), "the launch's line or the remedy is missing");
    return 0;
}

int test_missing_syncthreads(void)
{
    float *h = ramp(4 * NT), *part;
    float *d = upload(h, 4 * NT);
    CHECK_CUDA(cudaMalloc(&part, 4 * sizeof(float)));
    no_sync_sum_kernel<<<4, NT>>>(d, part); // unchecked it runs, and gives some answer
    CHECK_CUDA(cudaDeviceSynchronize());
    emu_check_set(EMU_CHECK_ORDERS);
    CHECK(RUN((no_sync_sum_kernel<<<4, NT>>>(d, part))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_RACE, "no_sync_sum_kernel", NULL), "the missing barrier is not named");
    free(h);
    return 0;
}

int test_missing_syncwarp(void)
{
    float *h = ramp(2 * NT), *part;
    float *d = upload(h, 2 * NT);
    CHECK_CUDA(cudaMalloc(&part, 2 * sizeof(float)));
    emu_check_set(EMU_CHECK_ORDERS);
    CHECK(RUN((warp_tail_kernel<<<2, NT>>>(d, part))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_RACE, "warp_tail_kernel", "__syncwarp"), "not named");
    free(h);
    return 0;
}

int test_divergent_syncthreads(void)
{
    float *h = ramp(NT), *part;
    float *d = upload(h, NT);
    CHECK_CUDA(cudaMalloc(&part, sizeof(float)));
    // caught without a checked launch: the barrier cannot complete
    CHECK(RUN((divergent_sum_kernel<<<1, NT>>>(d, part))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_DIVERGENT_BARRIER, "divergent_sum_kernel", "checks.cu:"), "not named");
    CHECK(has_finding(EMU_DIVERGENT_BARRIER, "threads 0-127 wait at", "128-255 have finished"),
          "the threads are not told apart");
    free(h);
    return 0;
}

int test_early_return_barrier(void)
{
    float *h = ramp(300), *part;
    float *d = upload(h, 300);
    CHECK_CUDA(cudaMalloc(&part, 2 * sizeof(float)));
    CHECK(RUN((early_return_kernel<<<2, NT>>>(d, 300, part))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_DIVERGENT_BARRIER, "early_return_kernel", "block (1,0,0)"), "not named");
    CHECK(has_finding(EMU_DIVERGENT_BARRIER, "44-255 have finished", NULL), "the leavers are not named");
    free(h);
    return 0;
}

int test_divergent_shuffle(void)
{
    float *d;
    CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
    CHECK(RUN((shuffle_exit_kernel<<<1, 64>>>(d))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_DIVERGENT_WARP, "shuffle_exit_kernel", "__shfl_xor_sync"), "not named");
    CHECK(has_finding(EMU_DIVERGENT_WARP, "lane 31", "finished"), "the missing lane is not named");
    return 0;
}

// ---- bounds: each in a process of its own, since a read past an allocation ends it ----

void child_oob_global_read(void)
{
    float *in, *out; // 1000 floats: the 1001st is past the allocation
    cudaMalloc(&in, 1000 * sizeof(float));
    cudaMalloc(&out, 1024 * sizeof(float));
    copy_kernel<<<4, 256>>>(in, out);
    cudaDeviceSynchronize();
}

void child_oob_shared_read(void)
{
    float *out;
    cudaMalloc(&out, 32 * sizeof(float));
    shared_oob_kernel<<<1, 32>>>(out);
    cudaDeviceSynchronize();
}

void child_oob_global_write_before(void)
{
    float *d;
    cudaMalloc(&d, 4000);
    write_before_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
}

void child_oob_shared_write(void)
{
    float *d;
    cudaMalloc(&d, 32 * sizeof(float));
    shared_write_oob_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
}

#ifdef __SANITIZE_ADDRESS__
#define ASAN 1 /* AddressSanitizer reports each of these itself, and ends the process */
#else
#define ASAN 0
#endif

/* The child's report holds each of the needles and names the kernel's line. */
static int child_reports(const char *name, int faults, const char *needle1, const char *needle2, const char *kernel)
{
    char err[16384];
    int st = run_child(name, err, sizeof err);
    if (ASAN) {
        // ASan (and the death callback names the kernel), or UBSan first where the array's type has its
        // bound, as a __shared__ array's has: it names the kernel's line
        int asan = strstr(err, "AddressSanitizer") && strstr(err, kernel),
            ubsan = strstr(err, "out of bounds for type") != NULL;
        CHECK(!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && (asan || ubsan) && strstr(err, "checks.cu:"),
              "%s: status %#x, the sanitizer's report:\n%s", name, st, err);
        return 0;
    }
    if (faults)
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "%s: status %#x:\n%s", name, st, err);
    else
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "%s: status %#x:\n%s", name, st, err);
    CHECK(strstr(err, needle1) && strstr(err, needle2) && strstr(err, kernel) && strstr(err, "checks.cu:"),
          "%s: the report does not say it:\n%s", name, err);
    return 0;
}

int test_oob_global_read(void)
{
    return child_reports("oob_global_read", 1, "out of bounds: a read",
                         "offset 4000 of the 4000-byte device allocation #1, past its end",
                         "kernel copy_kernel (launched at");
}

int test_oob_shared_read(void)
{
    return child_reports("oob_shared_read", 1, "out of bounds: a read", "offset 128 of __shared__ s (128 bytes, ",
                         "shared_oob_kernel");
}

int test_oob_global_write_before(void)
{
    return child_reports("oob_global_write_before", 0, "out of bounds: the kernel wrote at offset -4",
                         "of the 4000-byte allocation argument 1 points into (#1), before its start",
                         "write_before_kernel");
}

int test_oob_shared_write(void)
{
    return child_reports("oob_shared_write", 0, "a thread wrote at offset 120 of __shared__ s (120 bytes,",
                         "past its end", "shared_write_oob_kernel");
}

int test_block_order_sum(void)
{
    // four blocks whose sums are 1e8, 1, -1e8, 1: their float sum depends on the order
    float *h = (float *)calloc(4 * NT, sizeof(float)), *out;
    h[0] = 1e8f;
    h[NT] = 1.0f;
    h[2 * NT] = -1e8f;
    h[3 * NT] = 1.0f;
    float *d = upload(h, 4 * NT);
    CHECK_CUDA(cudaMalloc(&out, sizeof(float)));
    CHECK_CUDA(cudaMemset(out, 0, sizeof(float)));
    emu_check_set(EMU_CHECK_ORDERS); // reproducibility not asked: allowed
    CHECK(RUN((atomic_sum_kernel<<<4, NT>>>(d, out))) == cudaSuccess, "refused without a contract");
    CHECK(emu_finding_count() == 0, "a finding without the contract");
    emu_check_set(EMU_CHECK_REPRO); // "the same bits on every call"
    CHECK(RUN((atomic_sum_kernel<<<4, NT>>>(d, out))) == cudaErrorLaunchFailure, "went through");
    CHECK(has_finding(EMU_NONDETERMINISTIC, "atomic_sum_kernel", "order of the blocks"), "not named");
    free(h);
    return 0;
}

int test_correct_reduction(void)
{
    const size_t n = 5000;
    unsigned blocks = (unsigned)((n + NT - 1) / NT);
    float *h = ramp(n), *part, *out, got = 0;
    float *d = upload(h, n);
    CHECK_CUDA(cudaMalloc(&part, blocks * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&out, sizeof(float)));
    emu_check_set(EMU_CHECK_REPRO);
    block_sum_kernel<<<blocks, NT>>>(d, n, part);
    finish_kernel<<<1, 1>>>(part, blocks, out);
    CHECK_CUDA(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    double want = 0;
    for (size_t i = 0; i < n; i++)
        want += h[i];
    CHECK(got > want - 1e-2 && got < want + 1e-2, "sum %g, want %g", got, want);
    CHECK(emu_finding_count() == 0, "findings on a correct reduction");
    free(h);
    return 0;
}

int test_host_pointer_arg(void)
{
    float *host = (float *)malloc(64 * sizeof(float)), *dev;
    CHECK_CUDA(cudaMalloc(&dev, 64 * sizeof(float)));
    copy_kernel<<<1, 64>>>(host, dev);
    cudaError_t e = cudaGetLastError();
    CHECK(e == cudaErrorIllegalAddress, "launch gave %s", cudaGetErrorName(e));
    CHECK(strstr(cudaGetErrorString(e), "argument 1 is") != NULL, "%s", cudaGetErrorString(e));
    CHECK(has_finding(EMU_HOST_POINTER, "copy_kernel", "host memory"), "not named");
    float *pinned;
    CHECK_CUDA(cudaMallocHost(&pinned, 64 * sizeof(float))); // page-locked memory a kernel may read
    copy_kernel<<<1, 64>>>(pinned, dev);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaFreeHost(pinned));
    free(host);
    return 0;
}
