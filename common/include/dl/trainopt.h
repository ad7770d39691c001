/* dl/trainopt.h — the flags every data-parallel training driver shares,
 * declared once: the model's hidden widths, the optimizer and its learning
 * rate schedule, the shards, a step limit, the projection's target and the
 * parameter dumps the graders compare.
 *
 * Contract
 * - dl_train_opts_defaults(t): hidden "256", momentum 0.9, weight decay
 *   5e-4 (weights only), the learning rate tuned for a batch of 4096
 *   (base_batch), 10 warmup steps, then constant (cosine 0); shards padded
 *   (drop_last 0) and not stratified; no step limit (max_steps 0); the
 *   default profile (profile NULL: dl_profile_default); no dumps. A driver
 *   may change any of them before parsing. Cannot fail.
 * - dl_train_opts_table(t, out) writes the dl_opt entries of these flags,
 *   pointing into t, into out (room for DL_TRAIN_OPTS entries) and returns
 *   how many it wrote; the driver appends its own and hands the whole table
 *   to dl_cli_parse, which checks the values (ranges as below) and names a
 *   bad one. Cannot fail. dl_train_opts_pick(t, names, out) writes only the
 *   flags named in names (comma-separated, without "--": "hidden,warmup"),
 *   in the table's order, for a driver that has no use for the others;
 *   returns how many, or -1 for a name that is not one of them (a driver's
 *   bug: nothing to parse).
 *     --hidden LIST       hidden layer widths (dl_mlp_parse_hidden checks them)
 *     --base-batch N      the batch --lr was tuned for, 1 to 1e9
 *     --warmup N          linear warmup steps, 0 to 1e9
 *     --cosine            cosine decay after warmup
 *     --momentum X        0 to 0.9999
 *     --weight-decay X    0 to 1
 *     --stratified        stratified shards
 *     --drop-last         drop the tail instead of padding the shards
 *     --max-steps N       stop after N optimizer steps (0: all epochs)
 *     --profile NAME|FILE the projection's target machine: a shipped profile
 *                         (dl/project.h) or a file; "list" lists them (the
 *                         driver calls dl_profile_cli after parsing)
 *     --dump-params FILE  the final parameters (rank 0) as .npy
 *     --dump-init FILE    the parameters after the initial broadcast (rank 0) as .npy
 * - dl_train_stop(t, steps): 1 once `steps` optimizer steps reach --max-steps.
 */
#ifndef DL_TRAINOPT_H
#define DL_TRAINOPT_H

#include "dl/cli.h" // dl_opt

#ifdef __cplusplus
extern "C" {
#endif

#define DL_TRAIN_OPTS 12

typedef struct dl_train_opts {
    const char *hidden, *profile, *dump_params, *dump_init;
    double momentum, weight_decay;
    long base_batch, warmup, max_steps;
    int cosine, stratified, drop_last;
} dl_train_opts;

void dl_train_opts_defaults(dl_train_opts *t);
int dl_train_opts_table(dl_train_opts *t, dl_opt *out);
int dl_train_opts_pick(dl_train_opts *t, const char *names, dl_opt *out);
int dl_train_stop(const dl_train_opts *t, long steps);

#ifdef __cplusplus
}
#endif
#endif /* DL_TRAINOPT_H */
