/* lab07_plan.c — lab 07's planner items (part 3), for lab07.c's table: the
 * student's closed forms against the grader's own (lab07_ref.c), layout by
 * layout, term by term, on two machines (one node of 4 and 128 nodes of 8
 * A100s, the shipped a100 profile) and models whose layouts cover every
 * ZeRO stage, tensor groups inside and across nodes, and pipelines with
 * more and fewer micro-batches than stages; then the choice, and that it
 * makes the choice the PTD-P paper (Narayanan et al., 2021) reports for
 * models that do not fit one node: tensor parallelism inside a node,
 * pipelines across nodes. Every item runs in the worker (no rank talks). */
#define _POSIX_C_SOURCE 200809L
#include <math.h> // fabs
#include <stdio.h> // snprintf
#include <stdlib.h> // calloc, free

#include "dl/project.h" // dl_profile_load
#include "grader.h"
#include "lab07_ref.h"
#include "planner.h"

#define G7L_MAX 4096

/* Relative agreement of two closed forms of the same terms (the order of a few products differs). */
static int same(double got, double want)
{
    return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

/* The machines and models every item walks through. */
typedef struct {
    plan_model md;
    plan_machine mc;
    const char *what;
} g7_case;

static int cases(dl_profile *a100, g7_case *out)
{
    GR_OK(dl_profile_load("a100", a100));
    const plan_model big = {.layers = 96, .width = 12288, .rows = 1536.0 * 2048, .micro_rows = 2048};
    const plan_model small = {.layers = 12, .width = 1024, .rows = 64 * 512, .micro_rows = 512};
    out[0] = (g7_case){small, {a100, 4, 1}, "12 blocks of width 1024 on one node of 4"};
    out[1] = (g7_case){small, {a100, 8, 4}, "12 blocks of width 1024 on 4 nodes of 8"};
    out[2] = (g7_case){big, {a100, 8, 128}, "96 blocks of width 12288 on 128 nodes of 8"};
    out[3] = (g7_case){big, {a100, 8, 4}, "96 blocks of width 12288 on 4 nodes of 8"}; // the fastest does not fit
    return 4;
}

/* The layouts of case c, as the grader enumerates them (malloc'ed), *n of them. */
static plan_layout *layouts_of(const g7_case *c, int *n, int *best)
{
    plan_layout *l = calloc(G7L_MAX, sizeof *l);
    ck_assert_msg(l != NULL, "out of memory");
    gr7_plan_best(&c->md, &c->mc, l, G7L_MAX, n, best);
    return l;
}

static const char *layout_name(const plan_layout *l, char *buf, size_t len)
{
    snprintf(buf, len, "d %d x t %d x p %d, ZeRO %d", l->d, l->t, l->p, l->zero);
    return buf;
}

GR_TEST(test_plan_memory)
{
    dl_profile a100;
    g7_case c[4];
    int nc = cases(&a100, c);
    for (int k = 0; k < nc; k++) {
        int n, best;
        plan_layout *ref = layouts_of(&c[k], &n, &best);
        for (int i = 0; i < n; i++) {
            plan_layout got = {.d = ref[i].d, .t = ref[i].t, .p = ref[i].p, .zero = ref[i].zero};
            char name[96];
            layout_name(&got, name, sizeof name);
            dl_status st = plan_memory(&c[k].md, &c[k].mc, &got);
            if (st != DL_OK)
                GR_FAIL("plan_memory, %s, %s: %s: %s", c[k].what, name, dl_status_name(st), dl_last_error());
            const plan_layout *w = &ref[i];
            if (!same(got.params, w->params))
                GR_FAIL("plan_memory, %s, %s: params %.6g, expected %.6g (a stage's blocks, 1/t of each but the "
                        "second bias)",
                        c[k].what, name, got.params, w->params);
            if (!same(got.state_bytes, w->state_bytes)) {
                plan_layout z0 = *w;
                z0.zero = 0;
                gr7_plan_memory(&c[k].md, &c[k].mc, &z0);
                if (w->zero > 0 && w->d > 1 && same(got.state_bytes, z0.state_bytes))
                    GR_FAIL(GR_DIAG("zero-ignored") "plan_memory, %s, %s: state %.6g bytes, what every replica holds "
                                                    "without ZeRO: stage %d keeps 1/%d of some of the 16 bytes a "
                                                    "parameter on each of the %d replicas, expected %.6g",
                            c[k].what, name, got.state_bytes, w->zero, w->d, w->d, w->state_bytes);
                GR_FAIL("plan_memory, %s, %s: state %.6g bytes, expected %.6g", c[k].what, name, got.state_bytes,
                        w->state_bytes);
            }
            if (!same(got.act_bytes, w->act_bytes)) {
                double m = c[k].md.rows / (w->d * c[k].md.micro_rows);
                if (m > w->p && same(got.act_bytes, w->act_bytes * m / w->p))
                    GR_FAIL(GR_DIAG("activations-gpipe") "plan_memory, %s, %s: activations %.6g bytes, all %g "
                                                         "micro-batches' on stage 0, as GPipe holds them: 1F1B "
                                                         "holds min(m, p) = %d, expected %.6g",
                            c[k].what, name, got.act_bytes, m, w->p, w->act_bytes);
                GR_FAIL("plan_memory, %s, %s: activations %.6g bytes, expected %.6g", c[k].what, name, got.act_bytes,
                        w->act_bytes);
            }
            if (!same(got.mem_bytes, w->mem_bytes) || got.fits != w->fits)
                GR_FAIL("plan_memory, %s, %s: mem %.6g bytes, fits %d; expected %.6g, %d (the GPU's %g bytes)",
                        c[k].what, name, got.mem_bytes, got.fits, w->mem_bytes, w->fits, a100.gpu_mem);
        }
        free(ref);
    }
    plan_layout bad = {.d = 3, .t = 1, .p = 1};
    if (plan_memory(&c[0].md, &c[0].mc, &bad) != DL_ERR_ARG)
        GR_FAIL("plan_memory on 3 x 1 x 1 GPUs of a machine of 4 must return DL_ERR_ARG");
    gr_note("every layout's memory of 3 machines and models as the closed forms say");
}
END_TEST

GR_TEST(test_plan_time)
{
    dl_profile a100;
    g7_case c[4];
    int nc = cases(&a100, c);
    for (int k = 0; k < nc; k++) {
        int n, best;
        plan_layout *ref = layouts_of(&c[k], &n, &best);
        for (int i = 0; i < n; i++) {
            plan_layout got = {.d = ref[i].d, .t = ref[i].t, .p = ref[i].p, .zero = ref[i].zero};
            const plan_layout *w = &ref[i];
            char name[96];
            layout_name(&got, name, sizeof name);
            dl_status st = plan_time(&c[k].md, &c[k].mc, &got);
            if (st != DL_OK)
                GR_FAIL("plan_time, %s, %s: %s: %s", c[k].what, name, dl_status_name(st), dl_last_error());
            if (!same(got.m, w->m) || !same(got.bubble, w->bubble))
                GR_FAIL("plan_time, %s, %s: m %g, bubble %g; expected %g, %g", c[k].what, name, got.m, got.bubble, w->m,
                        w->bubble);
            if (!same(got.compute_s, w->compute_s)) {
                if (w->p > 1 && same(got.compute_s, w->compute_s / (1 + w->bubble)))
                    GR_FAIL(GR_DIAG("bubble-ignored") "plan_time, %s, %s: compute %.6g s, as if the %d stages never "
                                                      "waited: the pipeline's bubble, (p - 1)/m = %.3g, stretches "
                                                      "it to %.6g s",
                            c[k].what, name, got.compute_s, w->p, w->bubble, w->compute_s);
                GR_FAIL("plan_time, %s, %s: compute %.6g s, expected %.6g", c[k].what, name, got.compute_s,
                        w->compute_s);
            }
            plan_machine one = c[k].mc;
            one.gpus_per_node = one.nodes * one.gpus_per_node; // every link as fast as inside a node
            plan_layout fast = *w;
            gr7_plan_time(&c[k].md, &one, &fast);
            if (!same(got.step_s, w->step_s) && same(got.tp_s, fast.tp_s) && same(got.pp_s, fast.pp_s) &&
                same(got.dp_s, fast.dp_s))
                GR_FAIL(GR_DIAG("node-links-ignored") "plan_time, %s, %s: tp %.6g s, pp %.6g s, dp %.6g s, as if "
                                                      "every GPU were in one node: a group whose span passes a "
                                                      "node's %d GPUs talks over the network (nic_bw, nic_latency); "
                                                      "expected %.6g, %.6g, %.6g",
                        c[k].what, name, got.tp_s, got.pp_s, got.dp_s, c[k].mc.gpus_per_node, w->tp_s, w->pp_s,
                        w->dp_s);
            if (!same(got.tp_s, w->tp_s))
                GR_FAIL("plan_time, %s, %s: tp %.6g s, expected %.6g", c[k].what, name, got.tp_s, w->tp_s);
            if (!same(got.pp_s, w->pp_s) || !same(got.dp_s, w->dp_s) || !same(got.step_s, w->step_s))
                GR_FAIL("plan_time, %s, %s: pp %.6g s, dp %.6g s, step %.6g s; expected %.6g, %.6g, %.6g", c[k].what,
                        name, got.pp_s, got.dp_s, got.step_s, w->pp_s, w->dp_s, w->step_s);
        }
        free(ref);
    }
    gr_note("every layout's step time of 3 machines and models as the closed forms say");
}
END_TEST

GR_TEST(test_plan_best)
{
    dl_profile a100;
    g7_case c[4];
    int nc = cases(&a100, c);
    for (int k = 0; k < nc; k++) {
        int n, best, gn = -1, gbest = -2;
        plan_layout *ref = layouts_of(&c[k], &n, &best), *got = calloc(G7L_MAX, sizeof *got);
        dl_status st = plan_best(&c[k].md, &c[k].mc, got, G7L_MAX, &gn, &gbest);
        if (st != DL_OK)
            GR_FAIL("plan_best, %s: %s: %s", c[k].what, dl_status_name(st), dl_last_error());
        if (gn != n)
            GR_FAIL("plan_best, %s: %d layouts, expected %d (t and p dividing the GPUs, p also the blocks, the rows "
                    "micro-batches on every replica, 4 ZeRO stages)",
                    c[k].what, gn, n);
        for (int i = 0; i < n; i++)
            if (got[i].d != ref[i].d || got[i].t != ref[i].t || got[i].p != ref[i].p || got[i].zero != ref[i].zero) {
                char a[96], b[96];
                GR_FAIL("plan_best, %s: layout %d is %s, expected %s (t, then p, then z rising)", c[k].what, i,
                        layout_name(&got[i], a, sizeof a), layout_name(&ref[i], b, sizeof b));
            }
        int tied = gbest >= 0 && gbest < n && best >= 0 && ref[gbest].fits &&
                   same(ref[gbest].step_s, ref[best].step_s) && same(ref[gbest].mem_bytes, ref[best].mem_bytes);
        if (gbest != best && !tied) {
            char a[96], b[96];
            if (gbest >= 0 && gbest < n && !ref[gbest].fits)
                GR_FAIL(GR_DIAG("best-does-not-fit") "plan_best, %s: chose %s, which needs %.3g GB a GPU of %.3g: "
                                                     "the fastest layout is no plan when it does not fit",
                        c[k].what, layout_name(&ref[gbest], a, sizeof a), ref[gbest].mem_bytes / 1e9,
                        a100.gpu_mem / 1e9);
            GR_FAIL("plan_best, %s: chose layout %d (%s), expected %d (%s): the fastest that fits, and of times equal "
                    "to 1e-9 the one with the least memory a GPU",
                    c[k].what, gbest, gbest >= 0 && gbest < n ? layout_name(&ref[gbest], a, sizeof a) : "none", best,
                    best >= 0 ? layout_name(&ref[best], b, sizeof b) : "none");
        }
        if (k == 2) { // the PTD-P check: the closed forms make the published choice
            const plan_layout *b = &ref[best];
            ck_assert_msg(b->t <= c[k].mc.gpus_per_node && b->p > 1 && b->d * b->t > c[k].mc.gpus_per_node,
                          "the grader's own plan for %s is not PTD-P's shape", c[k].what);
            char a[96];
            gr_note("%s: %s, tensor parallelism inside a node, the pipeline across nodes, as PTD-P runs them",
                    c[k].what, layout_name(b, a, sizeof a));
        }
        free(ref), free(got);
    }
}
END_TEST
