/* select.c — lab 02, tasks 6 and 7: the validation curve, and drift between splits. */
#include <math.h>   // log, isnan, NAN
#include <stdlib.h> // calloc, free

#include "eval.h"

// ---- task 6: the validation curve ----

dl_status eval_validation_curve(const eval_trainer *t, eval_curve *curve)
{
    if (t == NULL || curve == NULL || t->train == NULL || t->score == NULL || curve->n < 1 ||
        curve->lambdas == NULL || curve->val_macro_f1 == NULL || curve->val_accuracy == NULL ||
        curve->test.precision == NULL)
        return dl_error_set(DL_ERR_ARG, "eval_validation_curve: NULL argument, empty grid, or test report not allocated");
    return DL_TODO("lab02 task 6: choose lambda by validation macro-F1, then test once");
}

// ---- task 7: drift ----

dl_status eval_psi(const float *ref, size_t n_ref, const float *cur, size_t n_cur, size_t d,
                   int bins, double *psi)
{
    if (ref == NULL || cur == NULL || psi == NULL || d == 0 || bins < 1 || n_ref == 0 || n_cur == 0)
        return dl_error_set(DL_ERR_ARG, "eval_psi: NULL argument, no rows, or bins < 1");
    return DL_TODO("lab02 task 7: population stability index per feature");
}
