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
    /* BEGIN SOLUTION */
    eval_report val;
    DL_TRY(eval_report_alloc(&val, curve->test.C));
    void *best_model = NULL;
    dl_status st = DL_OK;
    curve->chosen = -1;
    for (int k = 0; k < curve->n && st == DL_OK; k++) {
        void *model = NULL;
        st = t->train(t->ctx, curve->lambdas[k], &model);
        if (st == DL_OK)
            st = t->score(t->ctx, model, EVAL_VAL, &val); // choose on validation data only
        if (st == DL_OK) {
            curve->val_macro_f1[k] = val.macro_f1;
            curve->val_accuracy[k] = val.accuracy;
            if (curve->chosen < 0 || val.macro_f1 > curve->val_macro_f1[curve->chosen]) {
                if (best_model != NULL && t->release != NULL)
                    t->release(t->ctx, best_model);
                best_model = model;
                curve->chosen = k;
                model = NULL;
            }
        }
        if (model != NULL && t->release != NULL)
            t->release(t->ctx, model);
    }
    if (st == DL_OK) // the test split, once, for the chosen model only
        st = t->score(t->ctx, best_model, EVAL_TEST, &curve->test);
    if (best_model != NULL && t->release != NULL)
        t->release(t->ctx, best_model);
    eval_report_free(&val);
    return st;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 6: choose lambda by validation macro-F1, then test once"); */
}

// ---- task 7: drift ----

dl_status eval_psi(const float *ref, size_t n_ref, const float *cur, size_t n_cur, size_t d,
                   int bins, double *psi)
{
    if (ref == NULL || cur == NULL || psi == NULL || d == 0 || bins < 1 || n_ref == 0 || n_cur == 0)
        return dl_error_set(DL_ERR_ARG, "eval_psi: NULL argument, no rows, or bins < 1");
    /* BEGIN SOLUTION */
    double *p = calloc((size_t)bins, sizeof *p), *q = calloc((size_t)bins, sizeof *q);
    if (p == NULL || q == NULL) {
        free(p), free(q);
        return dl_error_set(DL_ERR_NOMEM, "eval_psi: out of memory");
    }
    for (size_t j = 0; j < d; j++) {
        float lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n_ref; i++) { // the bins come from the reference split only
            float v = ref[i * d + j];
            if (!isnan(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
        if (!(hi > lo)) { // constant (or empty) in the reference: one bin, no drift to measure
            psi[j] = 0.0;
            continue;
        }
        for (int b = 0; b < bins; b++)
            p[b] = q[b] = 0.0;
        double width = ((double)hi - lo) / bins, np = 0, nq = 0;
        for (int side = 0; side < 2; side++) {
            const float *x = side ? cur : ref;
            size_t m = side ? n_cur : n_ref;
            double *h = side ? q : p;
            double *cnt = side ? &nq : &np;
            for (size_t i = 0; i < m; i++) {
                float v = x[i * d + j];
                if (isnan(v))
                    continue;
                long b = (long)floor(((double)v - lo) / width);
                b = b < 0 ? 0 : b >= bins ? bins - 1 : b; // beyond the reference range: the end bins
                h[b] += 1.0;
                *cnt += 1.0;
            }
        }
        double s = 0.0;
        for (int b = 0; b < bins; b++) {
            double pb = np > 0 ? p[b] / np : 0.0, qb = nq > 0 ? q[b] / nq : 0.0;
            pb = pb < 1e-4 ? 1e-4 : pb; // empty bins would make ln() infinite
            qb = qb < 1e-4 ? 1e-4 : qb;
            s += (qb - pb) * log(qb / pb);
        }
        psi[j] = s;
    }
    free(p), free(q);
    return DL_OK;
    /* END SOLUTION */
    /* STUDENT: return DL_TODO("lab02 task 7: population stability index per feature"); */
}
