/* logreg_math.h — lab 01, task 2: the element-wise math of logistic regression.
 *
 * DL_HD makes each function callable from the CPU loop (logreg.c) and from
 * the CUDA kernel (logreg_cuda.cu): one definition, tested on the CPU.
 * Both must be finite and accurate for any float z, |z| up to 1e4 and beyond:
 * exp(88.8f) is already inf in float32, and σ(z) rounds to exactly 0 or 1
 * long before that. The handout (Task 2 and its background) works both
 * failures on numbers; the stable forms are yours to derive.
 * Without branches (a select `c ? a : b` instead of an if) and without
 * library calls other than expf and log1pf, the compiler can run the CPU
 * loop over 4 rows at a time with glibc's vector versions of those two (see
 * logreg.c): a speed-up, not a requirement.
 */
#ifndef LAB01_LOGREG_MATH_H
#define LAB01_LOGREG_MATH_H

#include <math.h> // expf, log1pf, fabsf

#include "dl/hd.h" // DL_HD

/* σ(z) = 1 / (1 + e^−z), in [0, 1] and never NaN: computed so that exp
 * never overflows. */
DL_HD float logreg_sigmoid(float z)
{
    return 0.5f; // TODO(lab01 task 2): a sigmoid whose exp never overflows
}

/* bce(z, y) = −y·log σ(z) − (1−y)·log(1 − σ(z)) for y in {0, 1}: the loss
 * of one row from its logit z, finite and accurate for any z. Not computed
 * from σ: a σ that has rounded to 0 or 1 makes one of the logs log 0. */
DL_HD float logreg_bce(float z, float y)
{
    return 0.0f; // TODO(lab01 task 2): binary cross-entropy from the logit z, stable for |z| >> 88
}

#endif /* LAB01_LOGREG_MATH_H */
