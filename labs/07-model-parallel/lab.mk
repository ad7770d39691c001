# labs/07-model-parallel/lab.mk — lab 07's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_07_TITLE := the model split itself: tensor parallelism by hand
LAB_07_STUDENT_C := tp.c
LAB_07_STUDENT_CU :=
LAB_07_STUDENT_H :=
LAB_07_KIT_C := kit.c
LAB_07_DRIVER_C := train.c model.c
# The grader's files whose code answers this lab's tasks (its split and the block in double,
# lab07_ref.c): no release holds their source, only their objects (tools/release-tree.sh).
LAB_07_JUDGE_ANSWERS := grader/lab07_ref.c
LAB_07_LAUNCH := common/bin/dlrun -n 4
LAB_07_RUN_ARGS :=

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_07_KEY_PLOT := equivalence
define LAB_07_HEADLINE
Split over {ranks} ranks ({backend}, {device}), the {blocks}-block model ({parameters} parameters) trains as
the one-rank model does: its parameters stay within {tp.max_abs_diff:g} of it over {steps} steps, and it
tests at {test_accuracy:pct} against {ref_test_accuracy:pct}. Each step moves {tp.bytes_per_step:g} bytes
between the ranks in {tp.allreduces_per_step:g} allreduces; the closed form says {tp.bytes_per_step_model:g}.
endef
define LAB_07_CAPTION_equivalence
The loss of every step, split over the ranks and on one rank (top), and how far apart the two are (bottom,
log scale): apart only by the rounding of sums taken in another order.
endef
define LAB_07_CAPTION_traffic
The bytes every rank together sends in a step, measured by the transport's counters and from the ring's closed
form, per epoch: one allreduce of activations forward and one of their gradients backward per block (none
backward for the first, whose input is the data).
endef
