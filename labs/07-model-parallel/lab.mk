# labs/07-model-parallel/lab.mk — lab 07's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_07_TITLE := the model split itself: tensor and pipeline parallelism by hand, and a planner
LAB_07_STUDENT_C := tp.c pipe.c planner.c
LAB_07_STUDENT_CU :=
LAB_07_STUDENT_H :=
LAB_07_KIT_C := kit.c pipe_kit.c
LAB_07_DRIVER_C := train.c model.c pp_run.c
# The grader's files whose code answers this lab's tasks (its split and the block in double,
# lab07_ref.c): no release holds their source, only their objects (tools/release-tree.sh).
LAB_07_JUDGE_ANSWERS := grader/lab07_ref.c
LAB_07_LAUNCH := common/bin/dlrun -n 4
LAB_07_RUN_ARGS :=

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_07_KEY_PLOT := schedules
define LAB_07_HEADLINE
Split over {ranks} ranks ({backend}, {device}) by tensor parallelism, the {blocks}-block model
({parameters} parameters) trains as the one-rank model does: its parameters stay within
{tp.max_abs_diff:g} of it over {steps} steps, moving {tp.bytes_per_step:g} bytes a step in
{tp.allreduces_per_step:g} allreduces (the closed form: {tp.bytes_per_step_model:g}). As a pipeline of
{schedules.gpipe.stages} stages with {schedules.gpipe.m} micro-batches, GPipe and 1F1B both leave
{schedules.gpipe.bubble_measured:pct} of the stages' time idle (closed form
{schedules.gpipe.bubble_model:pct}); GPipe holds {schedules.gpipe.peak_slots} micro-batches' activations on a
stage, 1F1B at most {schedules.1f1b.peak_slots}. For a model of {plan.parameters:g} parameters on
{plan.nodes} nodes of {plan.gpus_per_node} ({plan.profile}), the planner's fastest layout that fits is
d {plan.best.d} × t {plan.best.t} × p {plan.best.p} with ZeRO stage {plan.best.zero}: {plan.best.step_s:g} s a
step, {plan.best.mem_bytes:g} bytes a GPU.
endef
define LAB_07_CAPTION_equivalence
The loss of every step, split over the ranks and on one rank (top), and how far apart the two are (bottom,
log scale): apart only by the rounding of sums taken in another order.
endef
define LAB_07_CAPTION_schedules
One pipeline step of each schedule, a row per stage (stage 0 on top), a box per forward (light) and backward
(dark) of each micro-batch, from the orders your stages recorded, a forward taking 1 and a backward 2: white
is the bubble. The same length for both; 1F1B starts backwards early.
endef
define LAB_07_CAPTION_bubble
The bubble against the micro-batches per step: measured from both schedules' orders (points) and the closed
form (P − 1)/(m + P − 1) for 2 and 4 stages (lines).
endef
define LAB_07_CAPTION_stage_memory
The micro-batches whose activations each stage held at once: GPipe all m on every stage, 1F1B at most P − s
(crosses: the closed form).
endef
define LAB_07_CAPTION_plan
Every layout the planner tried for the large model, memory a GPU against step time (log–log): right of the
dotted line nothing fits; tensor groups that span nodes (squares) pay the network on every micro-batch; the
circle is the choice.
endef
define LAB_07_CAPTION_traffic
The bytes every rank together sends in a step, measured by the transport's counters and from the ring's closed
form, per epoch: one allreduce of activations forward and one of their gradients backward per block (none
backward for the first, whose input is the data).
endef
