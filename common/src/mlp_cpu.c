/* mlp_cpu.c — the MLP's element-wise loops on the CPU (mlp_impl.h): the
 * same DL_HD functions the CUDA kernels call (dl/nn_math.h), spread over the
 * cores. */
#include "mlp_impl.h"

#include "dl/nn_math.h" // dl_sgd_update
#include "dl/par.h" // dl_par_for

// ---- the CPU's element-wise loops, spread over the cores (dl/par.h) ----
// Each element's result depends on that element alone: the same bits on any
// number of threads. `omp simd` (-fopenmp-simd: no OpenMP runtime) has the
// compiler vectorize them; the ReLU masks are blends, not branches (a branch
// on the sign of random activations is mispredicted half the time).

enum { PAR_GRAIN = 1 << 15 }; // elements: a piece is worth a helper's wake-up (~10 µs)

typedef struct bias_act_job {
    float *Z; // (n, out)
    const float *b; // (out,)
    size_t out;
    int relu;
} bias_act_job;

static void bias_act_rows(void *ctx, size_t lo, size_t hi)
{
    const bias_act_job *J = ctx;
    for (size_t i = lo; i < hi; i++) {
        float *restrict z = J->Z + i * J->out;
        const float *restrict b = J->b;
        if (J->relu) {
#pragma omp simd
            for (size_t j = 0; j < J->out; j++) {
                float v = z[j] + b[j];
                z[j] = v < 0.0f ? 0.0f : v;
            }
        } else {
#pragma omp simd
            for (size_t j = 0; j < J->out; j++)
                z[j] += b[j];
        }
    }
}

void dl_mlp_cpu_bias_act_(float *Z, const float *b, size_t n, size_t out, int relu)
{
    bias_act_job J = {Z, b, out, relu};
    dl_par_for(n, PAR_GRAIN / (out > 0 ? out : 1) + 1, bias_act_rows, &J);
}

typedef struct mask_job {
    float *d;
    const float *a;
} mask_job;

static void relu_mask_range(void *ctx, size_t lo, size_t hi)
{
    const mask_job *J = ctx;
    float *restrict d = J->d;
    const float *restrict a = J->a;
#pragma omp simd
    for (size_t k = lo; k < hi; k++)
        d[k] = a[k] > 0.0f ? d[k] : 0.0f;
}

void dl_mlp_cpu_relu_mask_(float *d, const float *a, size_t count)
{
    mask_job J = {d, a};
    dl_par_for(count, PAR_GRAIN, relu_mask_range, &J);
}

typedef struct sgd_job {
    float *p, *v;
    const float *g;
    float lr, mu, wd;
} sgd_job;

static void sgd_range(void *ctx, size_t lo, size_t hi)
{
    const sgd_job *J = ctx;
    float *restrict p = J->p, *restrict v = J->v;
    const float *restrict g = J->g;
#pragma omp simd
    for (size_t k = lo; k < hi; k++)
        dl_sgd_update(&p[k], &v[k], g[k], J->lr, J->mu, J->wd);
}

void dl_mlp_cpu_sgd_(float *p, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    sgd_job J = {p, v, g, lr, mu, wd};
    dl_par_for(n, PAR_GRAIN, sgd_range, &J);
}
