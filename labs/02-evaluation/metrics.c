/* metrics.c — lab 02, tasks 3 and 4: the confusion matrix and its metrics. */
#include <string.h> // memset

#include "eval.h"

// ---- task 3: the confusion matrix ----

dl_status eval_confusion(const int32_t *y_true, const int32_t *y_pred, size_t n, int C, int64_t *cm)
{
    if (y_true == NULL || y_pred == NULL || cm == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_confusion: NULL argument or C < 1");
    return DL_TODO("lab02 task 3: the confusion matrix, rows = true class");
}

// ---- task 4: metrics ----


dl_status eval_report_from_confusion(const int64_t *cm, int C, eval_report *r)
{
    if (cm == NULL || r == NULL || r->precision == NULL || C < 1 || r->C != C)
        return dl_error_set(DL_ERR_ARG, "eval_report_from_confusion: NULL argument or report not allocated for C=%d", C);
    return DL_TODO("lab02 task 4: per-class precision/recall/F1 and macro, micro, weighted averages");
}
