/* cublas.cc — the kit's cuBLAS calls on the emulated CUDA device: checked as
 * cuBLAS checks them (plus: every operand whole in device memory), queued on
 * the handle's stream, run on the kit's GEMM (emu_set_sgemm) or the loop
 * here: reference BLAS's sgemm order in fp32, op(A) transposed out first. */
#include <cublas_v2.h>
#include <cuda_bf16.h> // emu_h2f_, emu_f2bf_bits_: the types' own conversions
#include <pthread.h> // pthread_mutex_t
#include <set> // std::set
#include <stdarg.h> // va_list
#include <stdlib.h> // malloc
#include <string.h> // memcpy

#include "internal.h"

struct cublasContext {
    cudaStream_t stream;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static std::set<cublasContext *> handles;
static emu_sgemm_fn sgemm_hook;
static __thread cublasStatus_t why_code;
static __thread char why[1200], status_buf[1400];

void emu_set_sgemm(emu_sgemm_fn fn)
{
    __atomic_store_n(&sgemm_hook, fn, __ATOMIC_SEQ_CST);
}

static cublasStatus_t fail(cublasStatus_t st, int kind, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cublasStatus_t fail(cublasStatus_t st, int kind, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    why_code = st;
    if (kind != 0)
        emu_finding_add(kind, call, "", why);
    return st;
}

// ---- the GEMM ----

typedef struct gemm_args {
    int ta, tb, m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *A, *B;
    float *C;
} gemm_args;

/* op(B)(l, j) */
static float b_at(const gemm_args *g, int l, int j)
{
    return g->tb ? g->B[(size_t)l * g->ldb + j] : g->B[(size_t)j * g->ldb + l];
}

/* Columns j0 .. j0+3 (those < n) of C: C(:,j) = beta·C(:,j) + Σ_l (alpha·op(B)(l,j))·A(:,l), with
 * op(A) not transposed (reference BLAS's order: in l, each product rounded, then added). Four
 * columns share each column of A read, and the inner loop vectorizes. */
static void gemm_columns(void *arg, unsigned q)
{
    const gemm_args *g = (const gemm_args *)arg;
    int j0 = (int)q * 4, nj = g->n - j0 < 4 ? g->n - j0 : 4;
    for (int jj = 0; jj < nj; jj++) {
        float *c = g->C + (size_t)(j0 + jj) * g->ldc;
        for (int i = 0; i < g->m; i++)
            c[i] = g->beta == 0.0f ? 0.0f : g->beta * c[i];
    }
    for (int l = 0; l < g->k; l++) {
        const float *a = g->A + (size_t)l * g->lda;
        for (int jj = 0; jj < nj; jj++) {
            float t = g->alpha * b_at(g, l, j0 + jj), *c = g->C + (size_t)(j0 + jj) * g->ldc;
            for (int i = 0; i < g->m; i++)
                c[i] += t * a[i];
        }
    }
}

void emu_sgemm_ref(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    float *at = NULL;
    if (ta && m > 0 && k > 0) { // op(A) = Aᵀ, copied out once so its columns are contiguous
        at = (float *)malloc((size_t)m * k * sizeof(float));
        if (at == NULL) {
            emu_set_sticky(cudaErrorMemoryAllocation, "cuBLAS: out of host memory for a GEMM");
            return;
        }
        for (int i = 0; i < m; i++)
            for (int l = 0; l < k; l++)
                at[(size_t)l * m + i] = A[(size_t)i * lda + l];
        A = at;
        lda = m;
    }
    gemm_args g = {0, tb, m, n, k, lda, ldb, ldc, alpha, beta, A, B, C};
    unsigned quads = (unsigned)((n + 3) / 4);
    if ((double)m * n * k > 1e6)
        emu_pool_for(quads, gemm_columns, &g); // columns are independent
    else
        for (unsigned q = 0; q < quads; q++)
            gemm_columns(&g, q);
    free(at);
}

static void sgemm(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                  float beta, float *C, int ldc)
{
    emu_sgemm_fn f = __atomic_load_n(&sgemm_hook, __ATOMIC_SEQ_CST);
    (f != NULL ? f : emu_sgemm_ref)(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// ---- queued work ----

typedef struct gemm_op {
    gemm_args g; /* A, B, C point to the operands, of their types: */
    cudaDataType at, bt, ct;
    int a_rows, a_cols, b_rows, b_cols;
} gemm_op;

static size_t type_size(cudaDataType t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

static float get(const void *p, size_t i, cudaDataType t)
{
    if (t == CUDA_R_32F)
        return ((const float *)p)[i];
    unsigned short b = ((const unsigned short *)p)[i];
    return t == CUDA_R_16F ? emu_h2f_(b) : emu_bf2f_(b);
}

/* A stored (rows, cols) with ld, of type t, as dense fp32: exact. */
static float *widen(const void *p, int rows, int cols, int ld, cudaDataType t)
{
    float *w = (float *)malloc((size_t)rows * cols * sizeof(float) + 1);
    for (int j = 0; w != NULL && j < cols; j++)
        for (int i = 0; i < rows; i++)
            w[(size_t)j * rows + i] = get(p, (size_t)j * ld + i, t);
    return w;
}

static void run_gemm(void *arg)
{
    gemm_op *o = (gemm_op *)arg;
    gemm_args g = o->g;
    float *a = NULL, *b = NULL, *c = NULL;
    if (o->at != CUDA_R_32F) {
        g.A = a = widen(o->g.A, o->a_rows, o->a_cols, o->g.lda, o->at);
        g.lda = o->a_rows > 0 ? o->a_rows : 1;
    }
    if (o->bt != CUDA_R_32F) {
        g.B = b = widen(o->g.B, o->b_rows, o->b_cols, o->g.ldb, o->bt);
        g.ldb = o->b_rows > 0 ? o->b_rows : 1;
    }
    if (o->ct != CUDA_R_32F) {
        g.C = c = o->g.beta != 0.0f ? widen(o->g.C, g.m, g.n, o->g.ldc, o->ct)
                                    : (float *)calloc((size_t)g.m * g.n + 1, sizeof(float));
        g.ldc = g.m > 0 ? g.m : 1;
    }
    if ((o->at != CUDA_R_32F && a == NULL) || (o->bt != CUDA_R_32F && b == NULL) || (o->ct != CUDA_R_32F && c == NULL))
        emu_set_sticky(cudaErrorMemoryAllocation, "cuBLAS: out of host memory for a GEMM's operands");
    else
        sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.A, g.lda, g.B, g.ldb, g.beta, g.C, g.ldc);
    for (int j = 0; c != NULL && j < g.n; j++) // C rounded once to its type
        for (int i = 0; i < g.m; i++) {
            unsigned short *dst = (unsigned short *)(void *)o->g.C + (size_t)j * o->g.ldc + i;
            float v = c[(size_t)j * g.m + i];
            *dst = o->ct == CUDA_R_16F ? emu_f2h_bits_(v, 1) : emu_f2bf_bits_(v, 1);
        }
    free(a);
    free(b);
    free(c);
}

static void free_gemm(void *arg)
{
    free(arg);
}

// ---- checks ----

static int live(cublasHandle_t h)
{
    pthread_mutex_lock(&mu);
    int ok = h != NULL && handles.count(h) > 0;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* An operand stored (rows, cols) column-major with ld, es bytes each: whole
 * in one device allocation (or not touched at all). */
static cublasStatus_t operand(const char *call, const char *name, const void *p, long rows, long cols, long ld,
                              size_t es)
{
    if (rows == 0 || cols == 0)
        return CUBLAS_STATUS_SUCCESS;
    emu_alloc a;
    if (p == NULL || !emu_mem_find(p, &a) || (const char *)p == a.p + a.bytes)
        return fail(CUBLAS_STATUS_INVALID_VALUE, EMU_HOST_POINTER, call,
                    "%s: %s = %p is not device memory (cuBLAS reads and writes device memory only)", call, name, p);
    size_t need = ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es,
           have = a.bytes - (size_t)((const char *)p - a.p);
    if (need > have)
        return fail(CUBLAS_STATUS_INVALID_VALUE, EMU_OUT_OF_BOUNDS, call,
                    "%s: %s (%ld x %ld, leading dimension %ld) needs %zu bytes from %p, and its allocation (#%u, %zu "
                    "bytes) has %zu from there",
                    call, name, rows, cols, ld, need, p, a.id, a.bytes, have);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t gemm(const char *call, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                           int k, float alpha, const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt,
                           int ldb, float beta, void *C, cudaDataType ct, int ldc)
{
    if (!live(h))
        return fail(CUBLAS_STATUS_NOT_INITIALIZED, 0, call, "%s: the handle was not made by cublasCreate", call);
    if (emu_sticky() != cudaSuccess)
        return fail(CUBLAS_STATUS_EXECUTION_FAILED, 0, call, "%s", cudaGetErrorString(emu_sticky()));
    int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
    int br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
    if (ta > CUBLAS_OP_C || tb > CUBLAS_OP_C || m < 0 || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) ||
        ldb < (br > 1 ? br : 1) || ldc < (m > 1 ? m : 1))
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, call,
                    "%s: m=%d n=%d k=%d lda=%d ldb=%d ldc=%d: sizes must be >= 0 and each leading dimension at least "
                    "the rows stored (%d, %d, %d)",
                    call, m, n, k, lda, ldb, ldc, ar, br, m);
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    cublasStatus_t st = operand(call, "A", A, ar, ac, lda, type_size(at));
    if (st == CUBLAS_STATUS_SUCCESS)
        st = operand(call, "B", B, br, bc, ldb, type_size(bt));
    if (st == CUBLAS_STATUS_SUCCESS)
        st = operand(call, "C", C, m, n, ldc, type_size(ct));
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    gemm_op *o = (gemm_op *)calloc(1, sizeof *o);
    if (o == NULL)
        return fail(CUBLAS_STATUS_ALLOC_FAILED, 0, call, "%s: out of host memory", call);
    o->g = gemm_args{ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m,         n, k, lda, ldb, ldc, alpha, beta,
                     (const float *)A,  (const float *)B,  (float *)C};
    o->at = at;
    o->bt = bt;
    o->ct = ct;
    o->a_rows = ar;
    o->a_cols = ac;
    o->b_rows = br;
    o->b_cols = bc;
    emu_dev_lock lock;
    if (emu_enqueue(h->stream, run_gemm, free_gemm, o) != cudaSuccess)
        return fail(CUBLAS_STATUS_EXECUTION_FAILED, 0, call, "%s: the stream is not live", call);
    return CUBLAS_STATUS_SUCCESS;
}

// ---- the API ----

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (handle == NULL)
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, "cublasCreate", "cublasCreate: handle is NULL");
    cublasContext *h = new cublasContext{NULL};
    pthread_mutex_lock(&mu);
    handles.insert(h);
    pthread_mutex_unlock(&mu);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    pthread_mutex_lock(&mu);
    int ok = handles.erase(handle) > 0;
    pthread_mutex_unlock(&mu);
    if (!ok)
        return fail(CUBLAS_STATUS_NOT_INITIALIZED, 0, "cublasDestroy", "cublasDestroy: not a live handle");
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    if (!live(handle))
        return fail(CUBLAS_STATUS_NOT_INITIALIZED, 0, "cublasSetStream", "cublasSetStream: not a live handle");
    if (emu_stream_check(stream, "cublasSetStream") != cudaSuccess)
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, "cublasSetStream", "cublasSetStream: not a live stream");
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    if (!live(handle) || stream == NULL)
        return fail(CUBLAS_STATUS_NOT_INITIALIZED, 0, "cublasGetStream", "cublasGetStream: not a live handle");
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!live(handle))
        return fail(CUBLAS_STATUS_NOT_INITIALIZED, 0, "cublasSetPointerMode", "not a live handle");
    if (mode != CUBLAS_POINTER_MODE_HOST)
        return fail(CUBLAS_STATUS_NOT_SUPPORTED, EMU_UNSUPPORTED, "cublasSetPointerMode",
                    "cublasSetPointerMode: CUBLAS_POINTER_MODE_DEVICE is not implemented by the emulated CUDA device");
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    (void)mode;
    return live(handle) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc)
{
    if (alpha == NULL || beta == NULL)
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, "cublasSgemm", "cublasSgemm: alpha or beta is NULL");
    return gemm("cublasSgemm", handle, transa, transb, m, n, k, *alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, *beta,
                C, CUDA_R_32F, ldc);
}

cublasStatus_t cublasSgemv_v2(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float *alpha,
                              const float *A, int lda, const float *x, int incx, const float *beta, float *y, int incy)
{
    if (alpha == NULL || beta == NULL)
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, "cublasSgemv", "cublasSgemv: alpha or beta is NULL");
    if (incx != 1 || incy != 1)
        return fail(CUBLAS_STATUS_NOT_SUPPORTED, EMU_UNSUPPORTED, "cublasSgemv",
                    "cublasSgemv: incx = %d, incy = %d: the emulated CUDA device implements 1 only", incx, incy);
    if (m < 0 || n < 0 || lda < (m > 1 ? m : 1))
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, "cublasSgemv", "cublasSgemv: m=%d n=%d lda=%d", m, n, lda);
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS; // BLAS: y untouched
    // y (ylen) = alpha · op(A) · x (xlen) + beta · y: a GEMM with one column
    int ylen = trans == CUBLAS_OP_N ? m : n, xlen = trans == CUBLAS_OP_N ? n : m;
    return gemm("cublasSgemv", handle, trans, CUBLAS_OP_N, ylen, 1, xlen, *alpha, A, CUDA_R_32F, lda, x, CUDA_R_32F,
                xlen > 1 ? xlen : 1, *beta, y, CUDA_R_32F, ylen);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    const char *call = "cublasGemmEx";
    int ok16 =
        (Atype == CUDA_R_16F || Atype == CUDA_R_16BF) && Btype == Atype && (Ctype == Atype || Ctype == CUDA_R_32F);
    int ok32 = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
    if (computeType != CUBLAS_COMPUTE_32F || !(ok16 || ok32))
        return fail(CUBLAS_STATUS_NOT_SUPPORTED, EMU_UNSUPPORTED, call,
                    "cublasGemmEx: types A %d, B %d, C %d with compute type %d: the emulated CUDA device implements "
                    "CUBLAS_COMPUTE_32F with A and B both CUDA_R_16F, CUDA_R_16BF or CUDA_R_32F, and C of their type "
                    "or CUDA_R_32F",
                    (int)Atype, (int)Btype, (int)Ctype, (int)computeType);
    if (alpha == NULL || beta == NULL)
        return fail(CUBLAS_STATUS_INVALID_VALUE, 0, call, "cublasGemmEx: alpha or beta is NULL");
    float a, b;
    memcpy(&a, alpha, sizeof a); // CUBLAS_COMPUTE_32F: the scalars are floats
    memcpy(&b, beta, sizeof b);
    return gemm(call, handle, transa, transb, m, n, k, a, A, Atype, lda, B, Btype, ldb, b, C, Ctype, ldc);
}

static const char *const status_text[][2] = {
    {"CUBLAS_STATUS_SUCCESS", "the operation completed successfully"},
    {"CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {"CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {"CUBLAS_STATUS_INVALID_VALUE", "an invalid numeric value was used as an argument"},
    {"CUBLAS_STATUS_ARCH_MISMATCH", "an absent device architectural feature is required"},
    {"CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
    {"CUBLAS_STATUS_EXECUTION_FAILED", "the GPU program failed to execute"},
    {"CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {"CUBLAS_STATUS_NOT_SUPPORTED", "the functionality requested is not supported"},
};
static const int status_codes[] = {0, 1, 3, 7, 8, 11, 13, 14, 15};

const char *cublasGetStatusName(cublasStatus_t status)
{
    for (int i = 0; i < 9; i++)
        if (status_codes[i] == (int)status)
            return status_text[i][0];
    return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    const char *text = "unknown cuBLAS status";
    for (int i = 0; i < 9; i++)
        if (status_codes[i] == (int)status)
            text = status_text[i][1];
    if (status == CUBLAS_STATUS_SUCCESS || status != why_code || why[0] == '\0')
        return text;
    snprintf(status_buf, sizeof status_buf, "%s (emulated CUDA device: %s)", text, why);
    return status_buf;
}
