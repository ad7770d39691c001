/* driver.h — lab 07's driver: its state and its hooks on the engine
 * (train.c), which main.c hands to dl_engine_main. Not a student file. */
#ifndef LAB07_DRIVER_H
#define LAB07_DRIVER_H

#include "dl/batch.h" // dl_batch
#include "dl/engine.h" // dl_engine, dl_lab
#include "dl/metrics.h" // dl_table
#include "kit.h" // tp_model

typedef struct lab07_run {
    const char *check; /* --check DIR: the grader's check of tasks 1-3 alone */
    const char *dump; /* --dump DIR: each rank's shards after the run (the grader's) */
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
