/* libs.cu — cuBLAS and NCCL on the emulated device: cuBLAS's column-major
 * results against a double-precision loop, its checks, the GEMM hook; NCCL
 * with one rank, and with two ranks (two host threads) over a loopback
 * transport made the way the kit's communicator will fill the table. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <math.h> // fabs
#include <nccl.h>
#include <pthread.h> // pthread_create, pthread_barrier_t
#include <stdlib.h> // malloc
#include <string.h> // strstr

#include "emu_test.h"

static unsigned seed = 12345;
static float uniform(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static float *device_copy(const float *h, size_t n)
{
    float *d = NULL;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    return d;
}

/* column-major op(X)(i, j) */
static double at(const float *X, int ld, int trans, int i, int j)
{
    return trans ? X[(size_t)i * ld + j] : X[(size_t)j * ld + i];
}

static int hook_calls;
static void test_hook(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                      int ldb, float beta, float *C, int ldc)
{
    hook_calls++;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += at(A, lda, ta, i, l) * at(B, ldb, tb, l, j);
            float *c = &C[(size_t)j * ldc + i];
            *c = (float)(alpha * s + (beta == 0.0f ? 0.0 : beta * *c));
        }
}

int test_cublas_gemm(void)
{
    const int m = 5, n = 7, k = 3, ld = 9; // leading dimensions wider than the rows
    float A[ld * 9], B[ld * 9], C0[ld * n], C[ld * n];
    for (int i = 0; i < ld * 9; i++) {
        A[i] = uniform();
        B[i] = uniform();
    }
    for (int i = 0; i < ld * n; i++)
        C0[i] = uniform();
    cublasHandle_t h;
    cudaStream_t s;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    CHECK_CUDA(cudaStreamCreate(&s));
    CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    float *dA = device_copy(A, ld * 9), *dB = device_copy(B, ld * 9), *dC = device_copy(C0, ld * n);
    for (int hooked = 0; hooked < 2; hooked++) {
        emu_set_sgemm(hooked ? test_hook : NULL);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                float alpha = 1.5f, beta = ta ? 0.0f : -0.5f;
                CHECK_CUDA(cudaMemcpy(dC, C0, sizeof C0, cudaMemcpyHostToDevice));
                CHECK(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
                                  dA, ld, dB, ld, &beta, dC, ld) == CUBLAS_STATUS_SUCCESS,
                      "sgemm %d %d", ta, tb);
                CHECK_CUDA(cudaStreamSynchronize(s));
                CHECK_CUDA(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < ld; i++) {
                        double want = C0[j * ld + i]; // rows past m are not C's: untouched
                        if (i < m) {
                            double sum = 0;
                            for (int l = 0; l < k; l++)
                                sum += at(A, ld, ta, i, l) * at(B, ld, tb, l, j);
                            want = alpha * sum + beta * want;
                        }
                        CHECK(fabs(C[j * ld + i] - want) <= 1e-5 * (1 + fabs(want)),
                              "op %d%d C(%d,%d) = %.7g, want %.7g", ta, tb, i, j, C[j * ld + i], want);
                    }
            }
    }
    CHECK(hook_calls == 4, "the hook ran %d times", hook_calls);
    emu_set_sgemm(NULL);
    // gemv: y = A x and y = Aᵀ x, A (m, n) with lda = ld
    float x[9], y[9];
    for (int i = 0; i < 9; i++)
        x[i] = uniform();
    float *dx = device_copy(x, 9), *dy = device_copy(x, 9), one = 1.0f, zero = 0.0f;
    for (int t = 0; t < 2; t++) {
        CHECK(cublasSgemv(h, t ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, &one, dA, ld, dx, 1, &zero, dy, 1) ==
                  CUBLAS_STATUS_SUCCESS,
              "sgemv");
        CHECK_CUDA(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost)); // the legacy stream waits for s
        for (int i = 0; i < (t ? n : m); i++) {
            double want = 0;
            for (int l = 0; l < (t ? m : n); l++)
                want += (t ? A[i * ld + l] : A[l * ld + i]) * x[l];
            CHECK(fabs(y[i] - want) <= 1e-5 * (1 + fabs(want)), "gemv %d: y[%d] = %g, want %g", t, i, y[i], want);
        }
    }
    // GemmEx: fp16 operands, fp32 C; bf16 operands, bf16 C rounded once
    __half hA[m * k], hB[k * n];
    __nv_bfloat16 bA[m * k], bB[k * n], bC[m * n];
    float fC[m * n];
    for (int i = 0; i < m * k; i++) {
        hA[i] = __float2half(A[i]);
        bA[i] = __float2bfloat16(A[i]);
    }
    for (int i = 0; i < k * n; i++) {
        hB[i] = __float2half(B[i]);
        bB[i] = __float2bfloat16(B[i]);
    }
    void *dhA, *dhB, *dfC, *dbA, *dbB, *dbC;
    CHECK_CUDA(cudaMalloc(&dhA, sizeof hA));
    CHECK_CUDA(cudaMalloc(&dhB, sizeof hB));
    CHECK_CUDA(cudaMalloc(&dfC, sizeof fC));
    CHECK_CUDA(cudaMalloc(&dbA, sizeof bA));
    CHECK_CUDA(cudaMalloc(&dbB, sizeof bB));
    CHECK_CUDA(cudaMalloc(&dbC, sizeof bC));
    CHECK_CUDA(cudaMemcpy(dhA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dhB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dbA, bA, sizeof bA, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dbB, bB, sizeof bB, cudaMemcpyHostToDevice));
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dhA, CUDA_R_16F, m, dhB, CUDA_R_16F, k, &zero, dfC,
                       CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
          "GemmEx fp16");
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dbA, CUDA_R_16BF, m, dbB, CUDA_R_16BF, k, &zero, dbC,
                       CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
          "GemmEx bf16");
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemcpy(fC, dfC, sizeof fC, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(bC, dbC, sizeof bC, cudaMemcpyDeviceToHost));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double hs = 0, bs = 0;
            for (int l = 0; l < k; l++) {
                hs += (double)__half2float(hA[l * m + i]) * __half2float(hB[j * k + l]);
                bs += (double)__bfloat162float(bA[l * m + i]) * __bfloat162float(bB[j * k + l]);
            }
            CHECK(fabs(fC[j * m + i] - hs) <= 1e-5 * (1 + fabs(hs)), "fp16 C(%d,%d) %g vs %g", i, j, fC[j * m + i], hs);
            int ulps =
                abs((int)__bfloat16_as_ushort(bC[j * m + i]) - (int)__bfloat16_as_ushort(__float2bfloat16((float)bs)));
            CHECK(ulps <= 1, "bf16 C(%d,%d) %g vs %g", i, j, __bfloat162float(bC[j * m + i]), bs);
        }
    CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
    return 0;
}

int test_cublas_checks(void)
{
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    float *dA, *dB, *dC, host[100], one = 1.0f;
    CHECK_CUDA(cudaMalloc(&dA, 4 * 4 * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dB, 4 * 4 * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dC, 4 * 4 * sizeof(float)));
    cublasStatus_t st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 5, &one, dA, 4, dB, 5, &one, dC, 4);
    CHECK(st == CUBLAS_STATUS_INVALID_VALUE, "a 4x5 A in 16 floats: %s", cublasGetStatusString(st));
    CHECK(strstr(cublasGetStatusString(st), "A (4 x 5, leading dimension 4) needs 80 bytes") != NULL, "%s",
          cublasGetStatusString(st));
    CHECK(has_finding(EMU_OUT_OF_BOUNDS, "cublasSgemm", NULL), "not recorded");
    st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, host, 4, dB, 4, &one, dC, 4);
    CHECK(st == CUBLAS_STATUS_INVALID_VALUE && has_finding(EMU_HOST_POINTER, "A = ", "not device memory"),
          "a host operand");
    st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, dA, 3, dB, 4, &one, dC, 4);
    CHECK(st == CUBLAS_STATUS_INVALID_VALUE, "lda 3 for 4 rows");
    CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE) == CUBLAS_STATUS_NOT_SUPPORTED &&
              has_finding(EMU_UNSUPPORTED, "CUBLAS_POINTER_MODE_DEVICE", NULL),
          "device pointer mode");
    st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, dA, CUDA_R_32F, 4, dB, CUDA_R_32F, 4, &one, dC,
                      CUDA_R_32F, 4, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
    CHECK(st == CUBLAS_STATUS_NOT_SUPPORTED && has_finding(EMU_UNSUPPORTED, "compute type 64", NULL),
          "CUBLAS_COMPUTE_16F");
    CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS && cublasDestroy(h) == CUBLAS_STATUS_NOT_INITIALIZED,
          "a second destroy");
    return 0;
}

int test_nccl_one_rank(void)
{
    int v = 0;
    CHECK(ncclGetVersion(&v) == ncclSuccess && v == NCCL_VERSION_CODE, "version %d", v);
    ncclUniqueId id;
    ncclComm_t c;
    CHECK(ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&c, 1, id, 0) == ncclSuccess, "init");
    float h[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8], *a = device_copy(h, 8), *b;
    CHECK_CUDA(cudaMalloc(&b, 8 * sizeof(float)));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    CHECK(ncclAllReduce(a, b, 8, ncclFloat32, ncclAvg, c, s) == ncclSuccess, "allreduce");
    CHECK(ncclBroadcast(b, b, 8, ncclFloat32, 0, c, s) == ncclSuccess, "broadcast");
    CHECK(ncclGroupStart() == ncclSuccess && ncclSend(a, 4, ncclFloat32, 0, c, s) == ncclSuccess &&
              ncclRecv(b + 4, 4, ncclFloat32, 0, c, s) == ncclSuccess && ncclGroupEnd() == ncclSuccess,
          "a send to itself");
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemcpy(got, b, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(got[0] == 1 && got[3] == 4 && got[4] == 1 && got[7] == 4, "results %g %g %g %g", got[0], got[3], got[4],
          got[7]);
    CHECK(ncclAllReduce(h, b, 8, ncclFloat32, ncclSum, c, s) == ncclInvalidArgument &&
              has_finding(EMU_HOST_POINTER, "sendbuff", "NCCL needs device buffers"),
          "a host buffer");
    CHECK(ncclAllGather(a, b, 9, ncclFloat32, c, s) == ncclInvalidArgument, "a gather past the end");
    ncclResult_t async = ncclInternalError;
    CHECK(ncclCommGetAsyncError(c, &async) == ncclSuccess && async == ncclSuccess, "async error");
    CHECK(ncclCommDestroy(c) == ncclSuccess, "destroy");
    CHECK(ncclCommInitRank(&c, 2, id, 0) == ncclInvalidUsage &&
              has_finding(EMU_UNSUPPORTED, "emu_nccl_set_transport", "none was given"),
          "two ranks without a transport");
    return 0;
}

// ---- two ranks, two host threads, a loopback transport ----

typedef struct loop {
    pthread_barrier_t bar;
    const void *send[2];
    size_t count[2];
} loop;

typedef struct rank_ctx {
    loop *l;
    int rank;
} rank_ctx;

static int lb_allreduce(void *ctx, const void *send, void *recv, size_t count, int dtype, int op, char *err,
                        size_t errlen)
{
    rank_ctx *r = (rank_ctx *)ctx;
    if (dtype != ncclFloat32 || op != ncclSum) {
        snprintf(err, errlen, "loopback: float sums only");
        return 1;
    }
    float *tmp = (float *)malloc(count * sizeof(float));
    r->l->send[r->rank] = send;
    pthread_barrier_wait(&r->l->bar);
    for (size_t i = 0; i < count; i++) // rank order: the same bits on both ranks
        tmp[i] = ((const float *)r->l->send[0])[i] + ((const float *)r->l->send[1])[i];
    pthread_barrier_wait(&r->l->bar);
    memcpy(recv, tmp, count * sizeof(float));
    free(tmp);
    return 0;
}

static int lb_sendrecv(void *ctx, const void *send, size_t sendcount, int dst, void *recv, size_t recvcount, int src,
                       int dtype, char *err, size_t errlen)
{
    (void)dst;
    (void)err;
    (void)errlen;
    rank_ctx *r = (rank_ctx *)ctx;
    size_t es = emu_nccl_type_size(dtype);
    r->l->send[r->rank] = send;
    r->l->count[r->rank] = sendcount;
    pthread_barrier_wait(&r->l->bar);
    if (recvcount > 0)
        memcpy(recv, r->l->send[src], recvcount * es);
    pthread_barrier_wait(&r->l->bar);
    return 0;
}

static int lb_broadcast(void *, const void *, void *, size_t, int, int, char *err, size_t errlen)
{
    snprintf(err, errlen, "loopback: no broadcast");
    return 1;
}

static int lb_allgather(void *, const void *, void *, size_t, int, char *err, size_t errlen)
{
    snprintf(err, errlen, "loopback: no allgather");
    return 1;
}

typedef struct rank_run {
    ncclComm_t comm;
    int rank, ok;
    float got[4];
} rank_run;

static void *rank_main(void *arg)
{
    rank_run *r = (rank_run *)arg;
    float h[4] = {1.0f + r->rank, 2, 3, 4 * (float)r->rank}, *d = device_copy(h, 4), *e;
    cudaMalloc(&e, 4 * sizeof(float));
    cudaStream_t s;
    cudaStreamCreate(&s);
    r->ok = ncclAllReduce(d, d, 4, ncclFloat32, ncclSum, r->comm, s) == ncclSuccess; // in place
    ncclGroupStart();
    ncclSend(d, 2, ncclFloat32, 1 - r->rank, r->comm, s);
    ncclRecv(e, 2, ncclFloat32, 1 - r->rank, r->comm, s);
    r->ok &= ncclGroupEnd() == ncclSuccess;
    cudaMemcpy(e + 2, d + 2, 2 * sizeof(float), cudaMemcpyDeviceToDevice);
    cudaStreamSynchronize(s);
    cudaMemcpy(r->got, e, sizeof r->got, cudaMemcpyDeviceToHost);
    return NULL;
}

int test_nccl_two_ranks(void)
{
    loop l;
    pthread_barrier_init(&l.bar, NULL, 2);
    rank_ctx ctx[2] = {{&l, 0}, {&l, 1}};
    rank_run run[2] = {{NULL, 0, 0, {0}}, {NULL, 1, 0, {0}}};
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    for (int r = 0; r < 2; r++) { // what the kit's dl_comm will do on each rank
        emu_nccl_transport t = {&ctx[r], 2, r, lb_allreduce, lb_broadcast, lb_allgather, lb_sendrecv, NULL};
        CHECK(emu_nccl_set_transport(&t) == 0, "the table");
        CHECK(ncclCommInitRank(&run[r].comm, 2, id, r) == ncclSuccess, "rank %d: %s", r, ncclGetLastError(NULL));
    }
    emu_nccl_set_transport(NULL);
    pthread_t other;
    CHECK(pthread_create(&other, NULL, rank_main, &run[1]) == 0, "a thread");
    rank_main(&run[0]);
    pthread_join(other, NULL);
    for (int r = 0; r < 2; r++) {
        CHECK(run[r].ok, "rank %d: a call failed", r);
        // the sum is (3, 4, 6, 4) on both; each received the other's first two
        CHECK(run[r].got[0] == 3 && run[r].got[1] == 4 && run[r].got[2] == 6 && run[r].got[3] == 4,
              "rank %d: %g %g %g %g", r, run[r].got[0], run[r].got[1], run[r].got[2], run[r].got[3]);
        ncclCommDestroy(run[r].comm);
    }
    pthread_barrier_destroy(&l.bar);
    return 0;
}
