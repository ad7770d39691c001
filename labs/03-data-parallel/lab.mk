# labs/03-data-parallel/lab.mk — lab 03's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_03_TITLE := from four serial copies to one data-parallel model
LAB_03_STUDENT_C := sampler.c dscaler.c ddp.c
LAB_03_STUDENT_CU :=
LAB_03_STUDENT_H :=
LAB_03_KIT_C := kit.c
LAB_03_DRIVER_C := outputs.c train.c
LAB_03_LAUNCH := common/bin/dlrun -n 4
LAB_03_RUN_ARGS :=
# Kit files whose code answers this lab's tasks (the kit's own sampler and LR
# schedule, which lab 05 uses, are lab 03's tasks 1 and 5): a release staged
# for this lab or an earlier one leaves them out (tools/release-tree.sh).
LAB_03_KIT_ANSWERS := common/src/sampler.c common/src/lr.c common/tests/test_sampler.c common/tests/test_lr.c
# The grader's files whose code answers this lab's tasks (its own sampler and learning rate,
# lab03_ref.c): no release holds their source, only their objects (tools/release-tree.sh).
LAB_03_JUDGE_ANSWERS := grader/lab03_ref.c

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_03_KEY_PLOT := epoch_time
define LAB_03_HEADLINE
Projected on {projection.profile}, data parallelism runs at {projection.speedup:x} the speed of one GPU,
against {naive.projected_speedup:x} for {ranks} serial copies (naive). Measured here, a steady epoch (after
the first, which warms up) takes {steady_epoch_seconds:f3} s against {naive.epoch_seconds:f3} s for the naive
attempt. The final test accuracy is {test_accuracy:pct}, and the largest parameter difference across the
{ranks} ranks is {param_diff_across_ranks:g}.
endef
define LAB_03_CAPTION_epoch_time
A steady epoch of the naive first attempt (every rank all rows, no sync) against data parallelism: left,
measured on this machine; right, projected on the target's GPUs beside one GPU, the baseline of every speedup.
endef
define LAB_03_CAPTION_training
Training loss and validation accuracy per epoch (left), and the largest parameter difference across the ranks
(right): 0 means the ranks hold one model.
endef
define LAB_03_CAPTION_shards
Each rank's rows of each class in epoch 1, minus an even share: random shards wander by tens of rows,
stratified ones hold the even share.
endef
define LAB_03_CAPTION_equivalence
The loss of P ranks at batch B against one rank at batch P·B, step by step: with averaged gradients the two
curves coincide.
endef
define LAB_03_CAPTION_lr
The learning rate per step: a linear warmup to the base rate scaled by the global batch, against the unscaled
base rate (dashed).
endef
define LAB_03_CAPTION_speedup_batch
Projected speedup on the target by rows per rank: the compute per step grows with the batch, the gradient's
allreduce does not.
endef
