/* kernels.cu — what CUDA promises, run on the emulated device: barriers,
 * static and dynamic shared memory, shuffles and votes, atomics, and the
 * launch syntax cu2cc must rewrite. Each test also runs its kernel as a
 * checked launch that must give the same bits in every order: a correct
 * kernel passes all the checks. */
#include <stdlib.h> // malloc

#include "emu_test.h"

// ---- barrier ----

/* out[i] = in of the next thread of the block; counts[b] = the block's even values */
__global__ void rotate_kernel(const int *in, int *out, int *counts)
{
    __shared__ int s[128];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = in[i];
    __syncthreads();
    out[i] = s[(t + 1) % blockDim.x];
    int c = __syncthreads_count(s[t] % 2 == 0);
    if (t == 0)
        counts[blockIdx.x] = c;
}

int test_barrier(void)
{
    const int nb = 8, nt = 128, n = nb * nt;
    int h[n], got[n], counts[nb], *din, *dout, *dcounts;
    for (int i = 0; i < n; i++)
        h[i] = i * 7 + 3;
    CHECK_CUDA(cudaMalloc(&din, n * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&dout, n * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&dcounts, nb * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    for (int checked = 0; checked < 2; checked++) {
        emu_check_set(checked ? EMU_CHECK_REPRO : 0);
        rotate_kernel<<<nb, nt>>>(din, dout, dcounts);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(counts, dcounts, sizeof counts, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            CHECK(got[i] == h[i / nt * nt + (i % nt + 1) % nt], "out[%d] = %d", i, got[i]);
        for (int b = 0; b < nb; b++)
            CHECK(counts[b] == nt / 2, "block %d counted %d even values", b, counts[b]);
    }
    CHECK(emu_finding_count() == 0, "a correct kernel has findings");
    return 0;
}

// ---- shared memory ----

/* Every block fills its own s with its number, then checks it: blocks share nothing. */
__global__ void shared_kernel(int *ok, int *first)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0 && t == 0)
        *first = s[5]; // before any write: what a new block's shared memory holds
    __syncthreads();
    s[t] = (int)blockIdx.x;
    __syncthreads();
    int good = 1;
    for (unsigned k = 0; k < blockDim.x; k++)
        good &= s[k] == (int)blockIdx.x;
    ok[blockIdx.x * blockDim.x + t] = good;
}

int test_shared_static(void)
{
    const int nb = 16, nt = 256;
    int *dok, *dfirst, ok[nb * nt], first = 0;
    CHECK_CUDA(cudaMalloc(&dok, sizeof ok));
    CHECK_CUDA(cudaMalloc(&dfirst, sizeof(int)));
    shared_kernel<<<nb, nt>>>(dok, dfirst); // blocks at once on the workers
    CHECK_CUDA(cudaMemcpy(ok, dok, sizeof ok, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(&first, dfirst, sizeof first, cudaMemcpyDeviceToHost));
    for (int i = 0; i < nb * nt; i++)
        CHECK(ok[i] == 1, "thread %d saw another block's shared memory", i);
    CHECK(first == -1, "shared memory starts as 0x%08x, not 0xffffffff", (unsigned)first);
    return 0;
}

/* Reverses each block's slice through the launch's dynamic shared memory. */
__global__ void reverse_kernel(const float *in, float *out)
{
    extern __shared__ float dyn[];
    unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
    dyn[t] = in[base + t];
    __syncthreads();
    out[base + t] = dyn[n - 1 - t];
}

int test_shared_dynamic(void)
{
    const int nb = 4, nt = 96, n = nb * nt;
    float h[n], got[n], *din, *dout;
    for (int i = 0; i < n; i++)
        h[i] = (float)i * 0.5f;
    CHECK_CUDA(cudaMalloc(&din, sizeof h));
    CHECK_CUDA(cudaMalloc(&dout, sizeof h));
    CHECK_CUDA(cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice));
    emu_check_set(EMU_CHECK_REPRO);
    reverse_kernel<<<nb, nt, nt * sizeof(float)>>>(din, dout);
    CHECK_CUDA(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == h[i / nt * nt + nt - 1 - i % nt], "out[%d] = %g", i, got[i]);
    CHECK(emu_finding_count() == 0, "findings on a correct kernel");
    return 0;
}

// ---- shuffles and votes ----

/* Per lane: 8 results (columns) of the warp operations, for two warps. */
__global__ void warp_kernel(int *out)
{
    unsigned t = threadIdx.x, lane = t % 32;
    int v = (int)(t * 10);
    int *o = out + t * 8;
    o[0] = __shfl_sync(0xffffffffu, v, (int)(lane * 3 % 32));
    o[1] = __shfl_up_sync(0xffffffffu, v, 1, 8);
    o[2] = __shfl_down_sync(0xffffffffu, v, 2, 16);
    o[3] = __shfl_xor_sync(0xffffffffu, v, 5);
    o[4] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
    o[5] = __any_sync(0xffffffffu, lane == 7);
    o[6] = __all_sync(0xffffffffu, lane < 31);
    float f = (float)lane; // a sum over the warp, every lane ends with all of it
    for (int k = 16; k > 0; k >>= 1)
        f += __shfl_xor_sync(0xffffffffu, f, k);
    o[7] = (int)f;
}

int test_shuffles_votes(void)
{
    const int nt = 64;
    int got[nt * 8], *d;
    CHECK_CUDA(cudaMalloc(&d, sizeof got));
    emu_check_set(EMU_CHECK_REPRO);
    warp_kernel<<<1, nt>>>(d);
    CHECK_CUDA(cudaMemcpy(got, d, sizeof got, cudaMemcpyDeviceToHost));
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; l++)
        ballot |= (l % 3 == 0) << l;
    for (int t = 0; t < nt; t++) {
        int lane = t % 32, base = t - lane, *o = got + t * 8;
        int up = lane % 8 >= 1 ? t - 1 : t, down = lane % 16 + 2 < 16 ? t + 2 : t;
        CHECK(o[0] == (base + lane * 3 % 32) * 10, "thread %d: __shfl_sync gave %d", t, o[0]);
        CHECK(o[1] == up * 10, "thread %d: __shfl_up_sync (width 8) gave %d", t, o[1]);
        CHECK(o[2] == down * 10, "thread %d: __shfl_down_sync (width 16) gave %d", t, o[2]);
        CHECK(o[3] == (base + (lane ^ 5)) * 10, "thread %d: __shfl_xor_sync gave %d", t, o[3]);
        CHECK((unsigned)o[4] == ballot, "thread %d: ballot 0x%08x", t, (unsigned)o[4]);
        CHECK(o[5] == 1 && o[6] == 0, "thread %d: any %d all %d", t, o[5], o[6]);
        CHECK(o[7] == 496, "thread %d: the warp's sum is %d, not 496", t, o[7]);
    }
    CHECK(emu_finding_count() == 0, "findings on a correct kernel");
    return 0;
}

// ---- atomics ----

typedef struct counters {
    int n, max, min, cas, exch_seen;
    unsigned inc;
    float f;
    double d;
    unsigned long long u;
} counters;

__global__ void atomic_kernel(counters *c)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    atomicAdd(&c->n, 1);
    atomicAdd(&c->f, 1.0f); // whole numbers below 2^24: exact in any order
    atomicAdd(&c->d, 0.5);
    atomicAdd(&c->u, 3ull);
    atomicMax(&c->max, i);
    atomicMin(&c->min, -i);
    atomicInc(&c->inc, 99u); // counts 0..99 and wraps
    int old = c->cas, seen;
    while ((seen = atomicCAS(&c->cas, old, old + 2)) != old)
        old = seen;
    if (atomicExch(&c->exch_seen, 1) == 0)
        atomicAdd(&c->n, 1000000); // exactly one thread sees the 0
}

int test_atomics(void)
{
    const int nb = 64, nt = 256, n = nb * nt;
    counters h = {0, -1, 1, 0, 0, 0, 0.0f, 0.0, 0}, *d;
    CHECK_CUDA(cudaMalloc(&d, sizeof h));
    CHECK_CUDA(cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice));
    atomic_kernel<<<nb, nt>>>(d);
    CHECK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h.n == n + 1000000, "atomicAdd(int) counted %d", h.n);
    CHECK(h.f == (float)n && h.d == n * 0.5 && h.u == 3ull * n, "sums %g %g %llu", h.f, h.d, h.u);
    CHECK(h.max == n - 1 && h.min == -(n - 1), "max %d min %d", h.max, h.min);
    CHECK(h.inc == (unsigned)(n % 100), "atomicInc wrapped to %u", h.inc);
    CHECK(h.cas == 2 * n, "atomicCAS loop gave %d", h.cas);
    return 0;
}

// ---- the launch syntax cu2cc rewrites ----

template <typename T> __global__ void fill_kernel(T *p, T v, int n)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n)
        p[i] = v;
}

namespace ns
{
__global__ void grid2d_kernel(int *out)
{
    // a 2-D grid of 2-D blocks: the linear index is what CUDA's would be
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x), y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    out[y * (int)(gridDim.x * blockDim.x) + x] = x * 1000 + y;
}
} // namespace ns

#define LAUNCH_FILL(p, v, n) fill_kernel<<<((n) + 63) / 64, 64>>>(p, v, n)

static int twice(int x)
{
    return 2 * x;
}

int test_launch_rewrite(void)
{
    int *di, hi[40];
    float *df, hf[10];
    CHECK_CUDA(cudaMalloc(&di, sizeof hi));
    CHECK_CUDA(cudaMalloc(&df, sizeof hf));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    fill_kernel<int><<<dim3(1), dim3(64), 0, s>>>(di, twice((3 + 4) * 2), (int)(sizeof hi / sizeof hi[0]));
    fill_kernel /* a comment */<<<1, 64>>> /* "<<<" */ (df, (float)twice(1) / 4.0f,
                                                        10); // "k<<<1,1>>>()" in a string is left alone
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemcpy(hi, di, sizeof hi, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hf, df, sizeof hf, cudaMemcpyDeviceToHost));
    CHECK(hi[0] == 28 && hi[39] == 28 && hf[0] == 0.5f && hf[9] == 0.5f, "fills: %d %d %g", hi[0], hi[39], hf[0]);
    LAUNCH_FILL(di, 5, 40);
    CHECK_CUDA(cudaMemcpy(hi, di, sizeof hi, cudaMemcpyDeviceToHost));
    CHECK(hi[0] == 5 && hi[39] == 5, "the launch inside a macro");
    int *dg, hg[8 * 6];
    CHECK_CUDA(cudaMalloc(&dg, sizeof hg));
    ns::grid2d_kernel<<<dim3(2, 3), dim3(4, 2)>>>(dg);
    CHECK_CUDA(cudaMemcpy(hg, dg, sizeof hg, cudaMemcpyDeviceToHost));
    for (int y = 0; y < 6; y++)
        for (int x = 0; x < 8; x++)
            CHECK(hg[y * 8 + x] == x * 1000 + y, "2-D grid at (%d, %d): %d", x, y, hg[y * 8 + x]);
    CHECK_CUDA(cudaStreamDestroy(s));
    return 0;
}
