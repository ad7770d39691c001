/* main.c — lab 07's driver: the kit's MLP on Fashion-MNIST split over the
 * ranks by your tensor parallelism (tp.c), trained beside the same model
 * on one rank, which every rank also trains, so that after every epoch the
 * two can be compared parameter by parameter.
 *
 *   common/bin/dlrun -n 4 build/labs/lab07        4 ranks: each holds 1/4 of every block
 *   build/labs/lab07                              one rank: the split is the whole
 *   build/labs/lab07 --help                       every flag
 *
 * A model of 2K layers (--hidden takes 1, 3, 5 or 7 widths) is K blocks of
 * two layers (kit.h); each rank's shards come from the one-rank model by
 * your tp_shard, so both start equal. Every step (train.c): the same rows
 * on every rank; your tp_forward block by block, the loss on the logits
 * (whole on every rank), your tp_backward, SGD on each shard; then the
 * same step of the one-rank model. Rank 0 writes into --out: metrics.csv
 * (per epoch: losses, the largest parameter difference, the traffic per
 * step measured and in closed form), steps.csv (per step: both losses),
 * summary.json and the plots. --check DIR runs the grader's check of tasks
 * 1-3 alone (kit.h: tp_selftest); --dump DIR writes each rank's shards
 * after the run, for the grader. The plumbing is the engine's
 * (dl/engine.h). Not a student file. */
#include "driver.h" // lab07

static lab07_run R;

DL_LAB_MAIN(lab07, &R)
