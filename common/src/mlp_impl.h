/* mlp_impl.h — what the MLP's files share, for them alone: mlp.c (the
 * model's life, its precision and parameters), mlp_forward.c (forward, loss,
 * accuracy, predict), mlp_backward.c, mlp_sgd.c, mlp_cost.c (the cost model)
 * and mlp_cpu.c (the CPU's element-wise loops). */
#ifndef DL_MLP_IMPL_H
#define DL_MLP_IMPL_H

#include <stddef.h> // size_t

#include "dl/mlp.h" // dl_mlp

/* The model lives on a GPU: its element-wise parts are CUDA kernels. */
static inline int mlp_on_gpu(const dl_mlp *m)
{
    return m->dev->kind == DL_DEVICE_CUDA;
}

/* DL_OK for a batch of 1 to max_batch rows, else DL_ERR_ARG. */
dl_status dl_mlp_check_batch_(const dl_mlp *m, size_t n);

// ---- the CPU's element-wise loops (mlp_cpu.c); cannot fail ----

/* Z (n, out) += b, then ReLU when relu. */
void dl_mlp_cpu_bias_act_(float *Z, const float *b, size_t n, size_t out, int relu);
/* d[k] = 0 where a[k] is not > 0 (ReLU's derivative), k < count. */
void dl_mlp_cpu_relu_mask_(float *d, const float *a, size_t count);
/* dl_sgd_update on n elements. */
void dl_mlp_cpu_sgd_(float *p, const float *g, float *v, size_t n, float lr, float mu, float wd);

#endif /* DL_MLP_IMPL_H */
