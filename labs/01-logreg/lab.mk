# labs/01-logreg/lab.mk — lab 01's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_01_TITLE := logistic regression on one GPU, with feature scaling
LAB_01_STUDENT_C := scaler.c logreg.c
LAB_01_STUDENT_CU := logreg_cuda.cu
LAB_01_STUDENT_H := logreg_math.h
LAB_01_KIT_C := kit.c
LAB_01_DRIVER_C := outputs.c train.c
LAB_01_KIT_CU := kit_cuda.cu
# The student files are compiled for speed: -O3 turns GCC's loop vectoriser on
# in full, and -fno-math-errno -fno-trapping-math let it treat expf and log1pf
# as pure functions and compute both sides of a select, so a branch-free loop
# over rows calls glibc's vector expf/log1pf (see logreg.c). No -ffast-math:
# sums keep their order, NaN stays NaN. Baseline x86-64 (SSE2), no -march.
LAB_01_CFLAGS := -O3 -fno-math-errno -fno-trapping-math
$(foreach f,$(LAB_01_STUDENT_C),%/01/$(f:.c=.o)): STUDENT_CFLAGS += $(LAB_01_CFLAGS)

# The grader's files whose code answers this lab's tasks (its double-precision NaN-aware scaler,
# the stable loss and sigmoid it checks against): no release holds their source, only their
# objects (tools/release-tree.sh).
LAB_01_JUDGE_ANSWERS := grader/lab01_ref.c grader/lab01_gpu.c

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_01_KEY_PLOT := scaling
define LAB_01_HEADLINE
Standardised features: the training loss is {train_loss:g} after {epochs_run:#epoch}, and the model scores
test accuracy {test_accuracy:pct}. Raw features at the same learning rate (lr = {config.lr}): the training
loss is still {raw_features_run.final_train_loss:g} after {raw_features_run.epochs_run:#epoch}, with
validation accuracy {raw_features_run.final_val_acc:pct}.
endef
define LAB_01_CAPTION_learning_curve
Training and validation loss per epoch (log scale) and the validation accuracy (right axis), the validation
loss's minimum marked: where the two losses part, the model starts to fit the noise of its training rows. A
loss that turns NaN or inf is marked at the epoch it did.
endef
define LAB_01_CAPTION_scaling
The same learning rate on standardised and on raw features: the standardised run converges and stops (the
point), the raw one keeps bouncing for every epoch it is given (drawn as dots: a line between its two levels
would be a solid band; the inset enlarges its last epochs).
endef
