/* metrics.c — lab 02, tasks 3 and 4: the confusion matrix and its metrics. */
#include <string.h> // memset

#include "eval.h"

// ---- task 3: the confusion matrix ----

dl_status eval_confusion(const int32_t *y_true, const int32_t *y_pred, size_t n, int C, int64_t *cm)
{
    if (y_true == NULL || y_pred == NULL || cm == NULL || C < 1)
        return dl_error_set(DL_ERR_ARG, "eval_confusion: NULL argument or C < 1");
    /* BEGIN SOLUTION */
    for (size_t i = 0; i < n; i++) { // check everything first: cm stays untouched on error
        if (y_true[i] < 0 || y_true[i] >= C)
            return dl_error_set(DL_ERR_RANGE, "eval_confusion: y_true[%zu] = %d is outside [0, %d)", i, y_true[i], C);
        if (y_pred[i] < 0 || y_pred[i] >= C)
            return dl_error_set(DL_ERR_RANGE, "eval_confusion: y_pred[%zu] = %d is outside [0, %d)", i, y_pred[i], C);
    }
    memset(cm, 0, (size_t)C * (size_t)C * sizeof *cm);
    for (size_t i = 0; i < n; i++)
        cm[(size_t)y_true[i] * (size_t)C + (size_t)y_pred[i]]++; // row = truth, column = prediction
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 3: the confusion matrix, rows = true class"); */
}

// ---- task 4: metrics ----

/* BEGIN SOLUTION */
/* a / b, or 0 (and one more zero division) when b is 0. */
static double ratio(double a, double b, int *zero)
{
    if (b == 0.0) {
        *zero = 1;
        return 0.0;
    }
    return a / b;
}
/* END SOLUTION */

dl_status eval_report_from_confusion(const int64_t *cm, int C, eval_report *r)
{
    if (cm == NULL || r == NULL || r->precision == NULL || C < 1 || r->C != C)
        return dl_error_set(DL_ERR_ARG, "eval_report_from_confusion: NULL argument or report not allocated for C=%d", C);
    /* BEGIN SOLUTION */
    int64_t total = 0, tp_sum = 0, fp_sum = 0, fn_sum = 0;
    r->zero_division = 0;
    r->macro_p = r->macro_r = r->macro_f1 = 0.0;
    r->weighted_p = r->weighted_r = r->weighted_f1 = 0.0;
    for (int c = 0; c < C; c++) {
        int64_t tp = cm[(size_t)c * C + c], row = 0, col = 0;
        for (int k = 0; k < C; k++) {
            row += cm[(size_t)c * C + k]; // truly c
            col += cm[(size_t)k * C + c]; // predicted c
        }
        int zero = 0;
        r->precision[c] = ratio((double)tp, (double)col, &zero);
        r->recall[c] = ratio((double)tp, (double)row, &zero);
        double pr = r->precision[c] + r->recall[c];
        r->f1[c] = pr > 0 ? 2.0 * r->precision[c] * r->recall[c] / pr : 0.0;
        r->support[c] = row;
        r->zero_division += zero;
        total += row;
        tp_sum += tp;
        fp_sum += col - tp;
        fn_sum += row - tp;
        r->macro_p += r->precision[c] / C;
        r->macro_r += r->recall[c] / C;
        r->macro_f1 += r->f1[c] / C;
        r->weighted_p += r->precision[c] * (double)row;
        r->weighted_r += r->recall[c] * (double)row;
        r->weighted_f1 += r->f1[c] * (double)row;
    }
    int unused = 0;
    r->accuracy = ratio((double)tp_sum, (double)total, &unused);
    r->micro_p = ratio((double)tp_sum, (double)(tp_sum + fp_sum), &unused);
    r->micro_r = ratio((double)tp_sum, (double)(tp_sum + fn_sum), &unused);
    double mpr = r->micro_p + r->micro_r;
    r->micro_f1 = mpr > 0 ? 2.0 * r->micro_p * r->micro_r / mpr : 0.0;
    if (total > 0) {
        r->weighted_p /= (double)total;
        r->weighted_r /= (double)total;
        r->weighted_f1 /= (double)total;
    }
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 4: per-class precision/recall/F1 and macro, micro, weighted averages"); */
}
