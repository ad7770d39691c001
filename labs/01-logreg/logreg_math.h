/* logreg_math.h — lab 01, task 2: the element-wise math of logistic regression.
 *
 * DL_HD makes each function callable from the CPU loop (logreg.c) and from
 * the CUDA kernel (logreg_cuda.cu): one definition, tested on the CPU.
 * Both must be finite and accurate for any float z, |z| up to 1e4 and beyond:
 * exp(88.8f) is already inf in float32.
 * Without branches (a select `c ? a : b` instead of an if, and no fmaxf,
 * which is a library call) the compiler can run the CPU loop over 4 or 8
 * rows at a time with glibc's vector expf and log1pf (see logreg.c): a
 * speed-up, not a requirement.
 */
#ifndef LAB01_LOGREG_MATH_H
#define LAB01_LOGREG_MATH_H

#include <math.h> // expf, log1pf, fabsf

#include "dl/hd.h" // DL_HD

/* σ(z) = 1 / (1 + e^−z), computed so that exp never overflows. */
DL_HD float logreg_sigmoid(float z)
{
    return 0.5f; // TODO(lab01 task 2): a sigmoid whose exp never overflows
}

/* bce(z, y) = −y·log σ(z) − (1−y)·log(1 − σ(z)) for y in {0, 1}, written
 * without log(σ): log(1 + e^z) − y·z = max(z, 0) − y·z + log(1 + e^−|z|). */
DL_HD float logreg_bce(float z, float y)
{
    return 0.0f; // TODO(lab01 task 2): binary cross-entropy from the logit z, stable for |z| >> 88
}

#endif /* LAB01_LOGREG_MATH_H */
