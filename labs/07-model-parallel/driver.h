/* driver.h — lab 07's driver: its state and its hooks on the engine
 * (train.c), which main.c hands to dl_engine_main. Not a student file. */
#ifndef LAB07_DRIVER_H
#define LAB07_DRIVER_H

#include "dl/batch.h" // dl_batch
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/metrics.h" // dl_table
#include "kit.h" // tp_model
#include "planner.h" // plan_layout

/* One pipeline run (pp_run.c): a schedule, m micro-batches, a few steps. */
typedef struct pp_result {
    int m;
    double bubble,
        bubble_model; /* measured from the stages' orders (pp_sim: forward 1, backward 2), (P − 1)/(m + P − 1) */
    double max_diff; /* the stages' layers against the one-rank model's, over the steps */
    int peak_slots[64], peak_slots_max; /* slots held at once, per stage, and the most on any */
    double peak_bytes[64], peak_bytes_max; /* their bytes (a stage's slot: its input and its layers' outputs) */
    int n_ops; /* per stage: 2m */
    int *ops; /* P × 2m: the stages' orders (pipe_kit.h's PP_OP) */
    double *start, *end; /* P × 2m: their times in the schedule pp_sim makes of them */
} pp_result;

extern const char *const pp_sched_names[2];
/* Schedule sched (0 GPipe, 1 1F1B) with m micro-batches of n rows for steps steps; dir: the grader's dump. */
dl_status pp_run(dl_engine *E, int sched, int m, size_t n, int steps, const char *dir, pp_result *res);
void pp_result_free(pp_result *r);

typedef struct lab07_run {
    const char *check; /* --check DIR: the grader's check of tasks 1-3 alone */
    const char *dump; /* --dump DIR: each rank's shards after the run (the grader's) */
    int part, schedule; /* --part tp|pp|plan|all (0, 1, 2, 3); --schedule gpipe|1f1b|both (0, 1, 2) */
    int micro, pp_steps; /* --micro M (0: the sweep 1, 2, 4, 8), --pp-steps */
    long micro_rows;
    pp_result pp[2][4]; /* [schedule][sweep point] */
    int n_pp; /* sweep points run */
    /* part 3: the planner's model and machine (--plan-*, --nodes, --gpus-per-node), its layouts and choice */
    plan_model pm;
    const char *plan_profile;
    int nodes, gpus_per_node;
    dl_profile plan_gpu;
    plan_layout *layouts;
    int n_layouts, best;
    dl_mlp ref; /* the one-rank model, trained beside the split one on every rank */
    tp_model M; /* the split model: your blocks */
    dl_batch batch;
    size_t *order, B;
    dl_table steps; /* steps.csv */
    long step;
    double max_diff, loss_diff; /* over the run: parameters (after each epoch), losses (every step) */
    double bytes, bytes_model, msgs, msgs_model; /* every rank's sends, over the run: measured and closed form */
    double test_acc, ref_test_acc;
} lab07_run;

extern const dl_lab lab07;

#endif /* LAB07_DRIVER_H */
