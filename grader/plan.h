/* plan.h — which items a grading run runs, and why the others do not.
 *
 * (Also here, being as pure: what a submission that did not build is told,
 * gr_plan_not_built below.)
 *
 * Contract
 * - gr_plan_make decides, before anything runs, what happens to each item of a
 *   lab's table from three facts: the items named on the command line (none:
 *   all), the tiers GR_TIERS selects (NULL or "": all) and the CUDA GPUs that
 *   answer here. Pure: no environment, no devices, no output; the judge
 *   (runner.c) runs items in table order by it, and grader/tests/test_plan.c
 *   tests it on tables of any shape, with any GPU count.
 * - Each item gets one kind:
 *     GR_PLAN_OUT        not named, and no named item needs it: not shown
 *     GR_PLAN_RUN        selected, its tier selected, and this machine can run it
 *                        and every item it needs
 *     GR_PLAN_NEEDED     its own tier is filtered out (GR_TIERS) or it was not
 *                        named, but an item that runs needs it (its parent, or a
 *                        parent's parent): it runs anyway, counted like any item
 *                        that runs, and the table says which item needs it
 *     GR_PLAN_SKIP_TIER  SKIPPED: its tier is not in GR_TIERS and nothing that
 *                        runs needs it
 *     GR_PLAN_SKIP_GPU   SKIPPED: it needs more GPUs than answer here, or an
 *                        item it needs does (gpu_need says which)
 *   So with GR_TIERS=gpu1,gpu4 on a GPU machine a gpu item's cpu parents run
 *   first and "parent failed" means a parent that ran and failed; a parent
 *   that cannot run here skips its children instead of failing them.
 * - A parent comes before its children in the table (the judge runs in table
 *   order), names an item of the table, and chains end. GR_TIERS is a list of
 *   cpu, gpu1, gpu4 separated by commas or spaces.
 * - Returns 0, or -1 with a message in err (an unknown tier in GR_TIERS, a
 *   parent that is missing or comes after its child: a grader bug).
 */
#ifndef GRADER_PLAN_H
#define GRADER_PLAN_H

#include <stddef.h> // size_t

#include "grader.h" // gr_item, gr_tier

typedef enum gr_plan_kind {
    GR_PLAN_OUT = 0,
    GR_PLAN_RUN,
    GR_PLAN_NEEDED,
    GR_PLAN_SKIP_TIER,
    GR_PLAN_SKIP_GPU
} gr_plan_kind;

typedef struct gr_plan {
    gr_plan_kind kind;
    int needed_by; /* GR_PLAN_NEEDED: the item (index) whose parent this is; else -1 */
    int gpu_need; /* GR_PLAN_SKIP_GPU: the item (index) that needs the GPUs: itself or an ancestor */
} gr_plan;

/* "cpu", "gpu1" or "gpu4". Cannot fail. */
const char *gr_tier_name(gr_tier t);
/* CUDA GPUs a tier needs: 0, 1 or 4. Cannot fail. */
int gr_tier_gpus(gr_tier t);

/* items[0..n): the lab's table. named: n flags (1 = named on the command line),
 * or NULL for all. tiers: GR_TIERS, or NULL. gpus: CUDA GPUs that answer here.
 * Fills plan[0..n). */
int gr_plan_make(const gr_item *items, int n, const int *named, const char *tiers, int gpus, gr_plan *plan, char *err,
                 size_t err_len);

/* A submission that did not build: what its build's log (text[0..n), read
 * as bytes: it may hold anything) lets the judge say, and nothing else.
 * - *status: the STATUS of the first well-formed refusal line of
 *   tools/check-submission.sh ("refused [STATUS] SOURCE: why" at a line's
 *   start; STATUS lower-case letters, digits and '-', 2 to 40 of them, not
 *   "graded" or "built"), else "build-failed".
 * - why: at most 4 lines, each at most 200 bytes, printable ASCII only (the
 *   compiler's quotes become '): those refusal lines; else the compiler's
 *   errors located in the student's own files, as "FILE:LINE: error:
 *   MESSAGE": a path DIR/FILE with DIR one of dirs (as the build named the
 *   student's folder: "labs/01-logreg", an absolute SRC=dir; "./" before it
 *   is fine, ".." anywhere is not) and FILE one of files (base names, e.g.
 *   "scaler.c"), so neither another folder's scaler.c nor a name #line made
 *   up (no folder) is one; else the linker's
 *   "undefined reference to 'NAME'" and "multiple definition of 'NAME'"; else
 *   a line saying that the log names no error in the student's files. Never a
 *   source line the compiler quoted, a note, or a diagnostic of a file
 *   outside the submission (a file name is not trusted to be one line: #line
 *   can put newlines in it, so each line is judged on its own).
 * Cannot fail; pure. */
void gr_plan_not_built(const char *text, size_t n, const char *const *files, int n_files, const char *const *dirs,
                       int n_dirs, char *status, size_t slen, char *why, size_t wlen);

#endif /* GRADER_PLAN_H */
