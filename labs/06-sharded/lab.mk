# labs/06-sharded/lab.mk — lab 06's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_06_TITLE := Sharded data parallelism: ZeRO-1 and FSDP on your own reduce-scatter and all-gather
LAB_06_STUDENT_C := shard.c zero.c fsdp.c
LAB_06_STUDENT_CU :=
LAB_06_STUDENT_H :=
LAB_06_KIT_C := kit_ledger.c kit_model.c kit_record.c kit_train.c kit_selftest.c
LAB_06_DRIVER_C := train.c outputs.c
# The grader's files whose code answers this lab's tasks (its shard arithmetic, the ring's
# schedule, the ZeRO-1 reference, lab06_ref.c): no release holds their source, only their objects
# (tools/release-tree.sh).
LAB_06_JUDGE_ANSWERS := grader/lab06_ref.c
LAB_06_LAUNCH := common/bin/dlrun -n 4
LAB_06_RUN_ARGS :=
# make run's second run (the report's second headline and plot): part 2, FSDP, on the same 4 ranks and data,
# into run/06-sharded/fsdp/
LAB_06_RUN2 := fsdp
LAB_06_RUN2_ARGS := --mode fsdp

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_06_KEY_PLOT := memory
define LAB_06_HEADLINE
ZeRO-1 on {ranks} ranks: each rank holds the momentum of its own shard only, {memory.optim_share_of_ddp:pct} of
DDP's, and {memory.total:bytes} in all against DDP's {memory.ddp_total:bytes} ({memory.saving_vs_ddp:pct} less);
FSDP would hold {memory.fsdp_total:bytes}. Each step sends {sent_bytes_per_step:bytes} per rank, as DDP's ring
allreduce ({ddp_sent_bytes_per_step:bytes}); FSDP's would send {fsdp_sent_bytes_per_step:bytes}. Projected on
{projection.gpus} GPUs of {projection.profile}, a ZeRO-1 step takes {projection.zero1_step_ms:f3} ms, DDP's
{projection.ddp_step_ms:f3} ms and FSDP's {projection.fsdp_step_ms:f3} ms. Test accuracy
{test_accuracy:pct} after {epochs_run:#epoch}; every rank ends with the same parameters (largest difference
{param_diff_across_ranks:g}).
endef
LAB_06_RUN2_KEY_PLOT := step_memory
define LAB_06_RUN2_HEADLINE
Part 2, FSDP on {ranks} ranks: every layer sharded, gathered only while forward or backward uses it. Rank 0's
ledger peaked at {memory.total:bytes} (ZeRO-1 above: {^memory.total:bytes}; DDP {memory.ddp_total:bytes}), of
which {memory.params:bytes} parameters: its shards and at most two layers whole. Each step sends
{sent_bytes_per_step:bytes} per rank, {sent_bytes_per_step/ddp_sent_bytes_per_step:x} DDP's ring allreduce. Test
accuracy {test_accuracy:pct} (ZeRO-1: {^test_accuracy:pct}).
endef
define LAB_06_CAPTION_memory
Memory per rank by kind (stacked: parameters, gradients, momentum, activations, scratch) against the number of
ranks, one panel per mode, by the closed form, and this run's ledger (the black point): only what a mode
shards shrinks as ranks are added. At one rank FSDP holds more than DDP: its shard is then the whole model,
and the layers it gathers whole come on top.
endef
define LAB_06_CAPTION_step_memory
What rank 0 holds during one training step, after each allocation and free, by kind (stacked): one flat
slot for DDP and ZeRO-1, whose buffers live for the whole run; FSDP's saw-tooth is each layer whole only while
forward or backward needs it (with what the prefetch brings beside it), and each whole gradient until its
reduce-scatter is done. Under the axis, F2 marks where layer 2's forward begins, B2 its backward.
endef
define LAB_06_CAPTION_projection
One step of this model projected onto every shipped profile's GPUs: ZeRO-1 sends what DDP sends and updates a
shard (a little quicker); FSDP sends 1.5 times as much, and on PCIe machines most of it is not hidden by the
small layers' compute. Memory, not speed, is what sharding buys.
endef
define LAB_06_CAPTION_training
Training loss and validation accuracy per epoch.
endef
