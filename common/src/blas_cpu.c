/* blas_cpu.c — the CPU BLAS, opened on first use with the kernels this
 * processor has, and checked before it computes anything.
 *
 * Why the kit opens OpenBLAS itself (dlopen) instead of linking it: OpenBLAS
 * built with DYNAMIC_ARCH (Debian's) picks its kernels once, in its load-time
 * constructor, from the CPU's model number, and a model it does not know gets
 * the oldest ones. Debian 12's 0.3.21 runs SSE3 "Prescott" kernels on Xeons
 * newer than it (family 6 model 207): a quarter of the GEMM rate of the
 * AVX-512 kernels it carries. A linked library has chosen before main() runs;
 * an opened one can be asked what it chose and, when that is less than the
 * CPU's features allow, opened again with OPENBLAS_CORETYPE naming the kernels
 * the features call for. OPENBLAS_CORETYPE set by the user is never overridden.
 *
 * Then, before first use, a few small GEMMs and GEMVs (every transpose, odd
 * sizes, strides, alpha and beta, one large enough to use the threads) are
 * checked against double-precision loops: kernels that disagree are named in
 * one warning line and the next candidate is opened — OpenBLAS's own choice,
 * then its SSE3 kernels, and last the kit's plain loops (correct, slow).
 *
 * The loader runs once per process (pthread_once), in the thread that first
 * needs the BLAS. Every call into OpenBLAS, the opening included, runs with
 * subnormals flushed (dl/cpu.h): its threads, which it starts from inside such
 * calls (at load, after a fork, when the count grows), inherit the mode, and
 * the caller's own mode is restored on return. Without it a lab 01 residual
 * that decays into the subnormal range makes each GEMV several times slower. */
#define _GNU_SOURCE
#include "blas_cpu.h"

#include <dlfcn.h> // dlopen, dlsym, dlclose
#include <math.h> // fabs
#include <pthread.h> // pthread_once
#include <stdatomic.h> // atomic_int
#include <stdio.h> // fprintf, snprintf
#include <stdlib.h> // getenv, setenv, unsetenv, malloc
#include <string.h> // strcmp, strstr

#include "dl/cpu.h" // dl_cpu_flush_subnormals, dl_cpu_has, dl_cpu_vendor

#ifndef DL_OPENBLAS_SO
#define DL_OPENBLAS_SO "libopenblas.so.0"
#endif

// cblas' values (cblas.h): what the library expects in its first arguments
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef void (*sgemm_fn)(int order, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                         const float *B, int ldb, float beta, float *C, int ldc);
typedef void (*sgemv_fn)(int order, int ta, int M, int N, float alpha, const float *A, int lda, const float *x,
                         int incx, float beta, float *y, int incy);
typedef void (*set_threads_fn)(int n);
typedef int (*get_threads_fn)(void);
typedef char *(*str_fn)(void);

static struct {
    void *lib;
    sgemm_fn sgemm;
    sgemv_fn sgemv;
    set_threads_fn set_threads;
    get_threads_fn get_threads;
    str_fn corename, config;
    dl_blas_info info;
} L;
static pthread_once_t once = PTHREAD_ONCE_INIT;

// ---- the kit's plain loops: the reference of the check, and the last resort ----

/* C (M, N) = alpha·op(A)·op(B) + beta·C, row-major, sums in double. beta = 0
 * does not read C (BLAS's rule: C may hold anything then). */
static void loops_sgemm(int order, int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda,
                        const float *B, int ldb, float beta, float *C, int ldc)
{
    (void)order;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) {
                double a = ta == TRANS ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double b = tb == TRANS ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                s += a * b;
            }
            float *c = &C[(size_t)i * ldc + j];
            *c = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *c));
        }
}

/* y = alpha·op(A)·x + beta·y, A stored (M, N) row-major. */
static void loops_sgemv(int order, int ta, int M, int N, float alpha, const float *A, int lda, const float *x, int incx,
                        float beta, float *y, int incy)
{
    (void)order;
    int rows = ta == TRANS ? N : M, cols = ta == TRANS ? M : N;
    for (int i = 0; i < rows; i++) {
        double s = 0.0;
        for (int k = 0; k < cols; k++)
            s += (double)(ta == TRANS ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) * x[(size_t)k * incx];
        float *o = &y[(size_t)i * incy];
        *o = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * *o));
    }
}

static void loops_set_threads(int n)
{
    (void)n;
}

static int loops_get_threads(void)
{
    return 1;
}

// ---- which kernels ----

/* How wide a core type's vectors are, as a rank: 3 AVX-512, 2 AVX2 and FMA, 1
 * AVX, 0 anything older or unknown (arm64: 1 the Neoverse N1's, 0 generic). */
static int rank_of(const char *core)
{
    static const char *const r3[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    static const char *const r2[] = {"Haswell", "Zen", "Excavator", "Steamroller"};
    static const char *const r1[] = {"Sandybridge", "Bulldozer",  "Piledriver",
                                     "NEOVERSEN1",  "NEOVERSEV1", "NEOVERSEN2"};
    for (size_t i = 0; i < sizeof r3 / sizeof r3[0]; i++)
        if (strcmp(core, r3[i]) == 0)
            return 3;
    for (size_t i = 0; i < sizeof r2 / sizeof r2[0]; i++)
        if (strcmp(core, r2[i]) == 0)
            return 2;
    for (size_t i = 0; i < sizeof r1 / sizeof r1[0]; i++)
        if (strcmp(core, r1[i]) == 0)
            return 1;
    return 0;
}

/* The OpenBLAS core type this CPU's features call for; NULL: leave it to OpenBLAS. */
static const char *core_from_features(void)
{
#if defined(__x86_64__)
    if (dl_cpu_has("avx512f") && dl_cpu_has("avx512bw") && dl_cpu_has("avx512vl") && dl_cpu_has("avx512dq"))
        return dl_cpu_has("avx512bf16") ? "Cooperlake" : "SkylakeX";
    if (dl_cpu_has("avx2") && dl_cpu_has("fma"))
        return strcmp(dl_cpu_vendor(), "AMD") == 0 ? "Zen" : "Haswell";
    if (dl_cpu_has("avx"))
        return "Sandybridge";
#elif defined(__aarch64__)
    if (dl_cpu_has("asimddp") && dl_cpu_has("asimdhp"))
        return "NEOVERSEN1"; // ARMv8.2 NEON kernels (OpenBLAS's generic ones are ARMV8's)
#endif
    return NULL;
}

static const char *oldest_core(void)
{
#if defined(__aarch64__)
    return "ARMV8";
#else
    return "Prescott";
#endif
}

// ---- opening OpenBLAS ----

static void close_lib(void)
{
    if (L.lib != NULL)
        dlclose(L.lib);
    L.lib = NULL;
}

/* Opens the library with OPENBLAS_CORETYPE = core (NULL: as the environment
 * has it) for the constructor's read only, then restores the environment.
 * 0 on success; -1 with why filled. */
static int open_lib(const char *core, char *why, size_t why_len)
{
    close_lib();
    const char *was = getenv("OPENBLAS_CORETYPE");
    char saved[64] = "";
    if (was != NULL)
        snprintf(saved, sizeof saved, "%s", was);
    if (core != NULL)
        setenv("OPENBLAS_CORETYPE", core, 1);
    L.lib = dlopen(DL_OPENBLAS_SO, RTLD_NOW | RTLD_LOCAL);
    if (core != NULL) {
        if (was != NULL)
            setenv("OPENBLAS_CORETYPE", saved, 1);
        else
            unsetenv("OPENBLAS_CORETYPE");
    }
    if (L.lib == NULL) {
        snprintf(why, why_len, "%s", dlerror());
        return -1;
    }
    L.sgemm = (sgemm_fn)dlsym(L.lib, "cblas_sgemm");
    L.sgemv = (sgemv_fn)dlsym(L.lib, "cblas_sgemv");
    L.set_threads = (set_threads_fn)dlsym(L.lib, "openblas_set_num_threads");
    L.get_threads = (get_threads_fn)dlsym(L.lib, "openblas_get_num_threads");
    L.corename = (str_fn)dlsym(L.lib, "openblas_get_corename");
    L.config = (str_fn)dlsym(L.lib, "openblas_get_config");
    if (L.sgemm == NULL || L.sgemv == NULL || L.set_threads == NULL || L.get_threads == NULL || L.corename == NULL ||
        L.config == NULL) {
        snprintf(why, why_len, "%s lacks cblas_sgemm, cblas_sgemv or openblas_* calls", DL_OPENBLAS_SO);
        close_lib();
        return -1;
    }
    return 0;
}

static void use_loops(void)
{
    close_lib();
    L.sgemm = loops_sgemm;
    L.sgemv = loops_sgemv;
    L.set_threads = loops_set_threads;
    L.get_threads = loops_get_threads;
    snprintf(L.info.library, sizeof L.info.library, "the kit's loops");
    snprintf(L.info.version, sizeof L.info.version, "-");
    snprintf(L.info.core, sizeof L.info.core, "plain C");
}

// ---- the check ----

static float fill_value(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f; // [-1, 1)
}

/* Worst |got - ref| over the error bound of the case, summed over the cases;
 * above 1 means a result outside its bound. */
static double check_gemm(int ta, int tb, int M, int N, int K, int pad)
{
    int ar = ta == TRANS ? K : M, ac = ta == TRANS ? M : K;
    int br = tb == TRANS ? N : K, bc = tb == TRANS ? K : N;
    int lda = ac + pad, ldb = bc + pad, ldc = N + pad;
    size_t na = (size_t)ar * lda, nb = (size_t)br * ldb, nc = (size_t)M * ldc;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c),
          *r = malloc(nc * sizeof *r);
    double worst = 0.0;
    if (a == NULL || b == NULL || c == NULL || r == NULL) {
        free(a), free(b), free(c), free(r);
        return 0.0; // no memory for the check: not a verdict on the kernels
    }
    unsigned s = 12345u + (unsigned)(M * 7 + N * 3 + K + ta + tb);
    for (size_t i = 0; i < na; i++)
        a[i] = fill_value(&s);
    for (size_t i = 0; i < nb; i++)
        b[i] = fill_value(&s);
    for (size_t i = 0; i < nc; i++)
        c[i] = r[i] = fill_value(&s);
    const float alpha = 0.75f, beta = -0.5f;
    L.sgemm(ROW_MAJOR, ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, ldc);
    loops_sgemm(ROW_MAJOR, ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, r, ldc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            // |a|, |b| < 1: the sum of |products| is at most K; fp32 sums err by K·2^-24 of it
            double bound = 1e-5 * (K + 1.0) + 1e-6;
            double e = fabs((double)c[(size_t)i * ldc + j] - (double)r[(size_t)i * ldc + j]) / bound;
            if (!(e <= worst)) // NaN counts as worst
                worst = e != e ? 1e30 : e;
        }
    free(a), free(b), free(c), free(r);
    return worst;
}

static double check_gemv(int ta, int M, int N)
{
    int lda = N + 3, xl = ta == TRANS ? M : N, yl = ta == TRANS ? N : M;
    float *a = malloc((size_t)M * lda * sizeof *a), *x = malloc((size_t)xl * sizeof *x),
          *y = malloc((size_t)yl * sizeof *y), *r = malloc((size_t)yl * sizeof *r);
    double worst = 0.0;
    if (a == NULL || x == NULL || y == NULL || r == NULL) {
        free(a), free(x), free(y), free(r);
        return 0.0;
    }
    unsigned s = 777u + (unsigned)(M + N + ta);
    for (size_t i = 0; i < (size_t)M * lda; i++)
        a[i] = fill_value(&s);
    for (int i = 0; i < xl; i++)
        x[i] = fill_value(&s);
    for (int i = 0; i < yl; i++)
        y[i] = r[i] = fill_value(&s);
    L.sgemv(ROW_MAJOR, ta, M, N, 1.25f, a, lda, x, 1, 0.5f, y, 1);
    loops_sgemv(ROW_MAJOR, ta, M, N, 1.25f, a, lda, x, 1, 0.5f, r, 1);
    for (int i = 0; i < yl; i++) {
        double e = fabs((double)y[i] - (double)r[i]) / (1e-5 * (xl + 1.0) + 1e-6);
        if (!(e <= worst))
            worst = e != e ? 1e30 : e;
    }
    free(a), free(x), free(y), free(r);
    return worst;
}

/* 1 when the open library's results agree with the loops; *worst the largest error over its bound. */
static int kernels_agree(double *worst)
{
    static const int shapes[][3] = {{67, 45, 93}, {1, 33, 17}, {130, 1, 70}, {96, 80, 64}};
    double w = 0.0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++) {
            double e = check_gemm(t & 1 ? TRANS : NO_TRANS, t & 2 ? TRANS : NO_TRANS, shapes[s][0], shapes[s][1],
                                  shapes[s][2], (int)s);
            w = e > w ? e : w;
        }
    for (int t = 0; t < 2; t++) {
        double e = check_gemv(t ? TRANS : NO_TRANS, 77, 51);
        w = e > w ? e : w;
    }
    // DL_TEST_BLAS_WRONG=core,...: the check of those kernels fails (for the kit's
    // own tests of the fallback; read nowhere else)
    const char *bad = getenv("DL_TEST_BLAS_WRONG");
    if (bad != NULL && L.lib != NULL) {
        const char *core = L.corename();
        size_t n = strlen(core);
        for (const char *p = strstr(bad, core); p != NULL; p = strstr(p + 1, core))
            if ((p == bad || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
                w = 1e9;
    }
    *worst = w;
    return w <= 1.0;
}

// ---- the loader ----

static void describe(const char *chosen_by)
{
    const char *cfg = L.config();
    while (*cfg == ' ')
        cfg++;
    char name[32] = "", version[32] = "";
    if (sscanf(cfg, "%31s %31s", name, version) != 2)
        snprintf(name, sizeof name, "OpenBLAS"), snprintf(version, sizeof version, "?");
    snprintf(L.info.library, sizeof L.info.library, "%s", name);
    snprintf(L.info.version, sizeof L.info.version, "%s", version);
    snprintf(L.info.core, sizeof L.info.core, "%s", L.corename());
    snprintf(L.info.chosen_by, sizeof L.info.chosen_by, "%s", chosen_by);
}

static void load(void)
{
    char why[300] = "", by[160];
    const char *env = getenv("OPENBLAS_CORETYPE");
    // DL_TEST_BLAS_MISDETECT=core: OpenBLAS is first opened with that core, as
    // if its own detection had taken it (the kit's tests of the reopening, on
    // machines OpenBLAS knows; read nowhere else)
    const char *mis = env != NULL && env[0] != '\0' ? NULL : getenv("DL_TEST_BLAS_MISDETECT");
    if (open_lib(mis != NULL && mis[0] != '\0' ? mis : NULL, why, sizeof why) != 0) {
        fprintf(stderr,
                "ddplab: cannot open the BLAS (%s): the kit's plain loops compute instead, far slower; "
                "install libopenblas0 (make deps)\n",
                why);
        use_loops();
        snprintf(L.info.chosen_by, sizeof L.info.chosen_by, "no BLAS could be opened");
        return;
    }
    char own[32];
    snprintf(own, sizeof own, "%s", L.corename());
    // the candidates, best first: the features' core (when OpenBLAS took less),
    // OpenBLAS's own choice, its oldest kernels
    const char *want = env != NULL && env[0] != '\0' ? NULL : core_from_features();
    const char *cand[3];
    const char *cand_by[3];
    int n = 0;
    char by_kit[160];
    if (env != NULL && env[0] != '\0') {
        snprintf(by, sizeof by, "the environment (OPENBLAS_CORETYPE=%s)", env);
        cand[n] = NULL, cand_by[n++] = by;
    } else if (want != NULL && rank_of(own) < rank_of(want)) {
        snprintf(by_kit, sizeof by_kit, "the kit, from the CPU's features (OpenBLAS took %s)", own);
        cand[n] = want, cand_by[n++] = by_kit;
        cand[n] = "", cand_by[n++] = "OpenBLAS's own detection";
    } else {
        cand[n] = NULL, cand_by[n++] = "OpenBLAS's own detection";
    }
    if (strcmp(own, oldest_core()) != 0)
        cand[n] = oldest_core(), cand_by[n++] = "the fallback to the oldest kernels";
    for (int i = 0; i < n; i++) {
        // NULL: the library as open now; "": as OpenBLAS chooses (reopen without a core)
        if (cand[i] != NULL && open_lib(cand[i][0] != '\0' ? cand[i] : NULL, why, sizeof why) != 0) {
            fprintf(stderr,
                    "ddplab: cannot open the BLAS again (%s): the kit's plain loops compute instead, far "
                    "slower\n",
                    why);
            break;
        }
        double worst;
        if (kernels_agree(&worst)) {
            describe(cand_by[i]);
            return;
        }
        fprintf(stderr,
                "ddplab: OpenBLAS's %s kernels disagree with the reference GEMM (error %.3g times its "
                "bound): %s\n",
                L.corename(), worst,
                i + 1 < n ? "trying the next kernels" : "the kit's plain loops compute instead, far slower");
    }
    use_loops();
    snprintf(L.info.chosen_by, sizeof L.info.chosen_by, "the fallback: no OpenBLAS kernels passed the check");
}

/* Whether BLAS calls flush subnormals: 1 unless DL_SUBNORMALS=keep was in the
 * environment at the first call; blas_cpu_set_flush changes it. */
static atomic_int flush_mode = -1;

static int flushing(void)
{
    int f = atomic_load(&flush_mode);
    if (f < 0) {
        const char *v = getenv("DL_SUBNORMALS");
        int want = !(v != NULL && strcmp(v, "keep") == 0);
        atomic_compare_exchange_strong(&flush_mode, &f, want);
        f = atomic_load(&flush_mode);
    }
    return f;
}

void blas_cpu_set_flush(int on)
{
    atomic_store(&flush_mode, on ? 1 : 0);
}

/* Opens the library once; returns the caller's floating-point mode, now
 * flushing subnormals until end() (unless the flush is off). */
static unsigned begin(void)
{
    unsigned mode = dl_cpu_flush_subnormals();
    if (!flushing())
        dl_cpu_restore(mode); // as the caller has it
    pthread_once(&once, load);
    return mode;
}

static void end(unsigned mode)
{
    dl_cpu_restore(mode);
}

// ---- the kit's calls ----

void blas_cpu_sgemm(int ta, int tb, int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                    float beta, float *C, int ldc)
{
    unsigned mode = begin();
    L.sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    end(mode);
}

void blas_cpu_sgemv(int ta, int M, int N, float alpha, const float *A, int lda, const float *x, float beta, float *y)
{
    unsigned mode = begin();
    L.sgemv(ROW_MAJOR, ta ? TRANS : NO_TRANS, M, N, alpha, A, lda, x, 1, beta, y, 1);
    end(mode);
}

void blas_cpu_set_threads(int n)
{
    unsigned mode = begin();
    L.set_threads(n);
    end(mode);
}

int blas_cpu_threads(void)
{
    unsigned mode = begin();
    int n = L.get_threads();
    end(mode);
    return n;
}

void blas_cpu_info(dl_blas_info *out)
{
    unsigned mode = begin();
    *out = L.info;
    out->threads = L.get_threads();
    out->flushes_subnormals = flushing();
    end(mode);
}
