/* dl/nn_math.h — the per-row math of the kit's MLP, shared (DL_HD) by the CPU
 * loops in mlp.c and the CUDA kernels in mlp_cuda.cu.
 *
 * Contract: pure functions; finite for any finite input (log-sum-exp with the
 * row max subtracted). Cannot fail.
 */
#ifndef DL_NN_MATH_H
#define DL_NN_MATH_H

#include <math.h> // expf, logf

#include "dl/hd.h" // DL_HD

/* z: the C logits of one row, true class y. Returns −log softmax(z)_y and
 * overwrites z with (softmax(z) − onehot(y)) · scale. */
DL_HD float dl_softmax_xent_row(float *z, int C, int y, float scale)
{
    float m = z[0];
    for (int c = 1; c < C; c++)
        m = z[c] > m ? z[c] : m;
    float s = 0.0f;
    for (int c = 0; c < C; c++)
        s += expf(z[c] - m);
    // cppcheck-suppress invalidFunctionArg ; s >= 1: the max term is exp(0)
    float lse = m + logf(s);
    float loss = lse - z[y];
    for (int c = 0; c < C; c++)
        z[c] = (expf(z[c] - lse) - (c == y ? 1.0f : 0.0f)) * scale;
    return loss;
}

/* The index of the largest of the C logits z, the first of equal maxima (a
 * NaN is never larger): the predicted class. */
DL_HD int dl_argmax_row(const float *z, size_t C)
{
    size_t best = 0;
    for (size_t c = 1; c < C; c++)
        best = z[c] > z[best] ? c : best;
    return (int)best;
}

/* One SGD-with-momentum update of one parameter (PyTorch's form):
 * g += wd·p; v = μ·v + g; p -= lr·v. */
DL_HD void dl_sgd_update(float *p, float *v, float g, float lr, float mu, float wd)
{
    g += wd * *p;
    *v = mu * *v + g;
    *p -= lr * *v;
}

#endif /* DL_NN_MATH_H */
