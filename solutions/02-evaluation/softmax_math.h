/* softmax_math.h — lab 02, task 5: the per-row math of softmax regression.
 *
 * DL_HD makes the function callable from the CPU loop (softmax.c) and from
 * the CUDA kernel (softmax_cuda.cu): one definition, tested on the CPU. It
 * must be finite for logits of any size: expf(89) is already inf in float32.
 */
#ifndef LAB02_SOFTMAX_MATH_H
#define LAB02_SOFTMAX_MATH_H

#include <math.h> // expf, logf

#include "dl/hd.h" // DL_HD

/* One row: z holds the C logits of a row with true class y. Returns the
 * row's cross-entropy −log softmax(z)_y = logsumexp(z) − z_y, and overwrites
 * z with the gradient of that loss with respect to the logits: softmax(z) −
 * onehot(y). */
DL_HD float softmax_xent_row(float *z, int C, int y)
{
    /* BEGIN SOLUTION */
    float m = z[0]; // subtract the row max: every exp argument is <= 0
    for (int c = 1; c < C; c++)
        m = z[c] > m ? z[c] : m;
    float s = 0.0f;
    for (int c = 0; c < C; c++)
        s += expf(z[c] - m); // >= 1 (the max term is exp(0))
    float lse = m + logf(s);
    float loss = lse - z[y];
    for (int c = 0; c < C; c++)
        z[c] = expf(z[c] - lse); // softmax(z)_c
    z[y] -= 1.0f;
    return loss;
    /* END SOLUTION */
    /* STUDENT: return 0.0f; // TODO(lab02 task 5): a stable log-sum-exp, and z <- softmax(z) - onehot(y) */
}

#endif /* LAB02_SOFTMAX_MATH_H */
