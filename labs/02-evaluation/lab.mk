# labs/02-evaluation/lab.mk — lab 02's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_02_TITLE := honest evaluation: stratified splits, confusion matrices, softmax regression
LAB_02_STUDENT_C := split.c metrics.c softmax.c select.c
LAB_02_STUDENT_CU := softmax_cuda.cu
LAB_02_STUDENT_H := softmax_math.h
LAB_02_KIT_C := kit.c outputs.c outputs_balance.c
LAB_02_DRIVER_C := train.c
LAB_02_KIT_CU := kit_cuda.cu
LAB_02_RUN_ARGS := --data fashion_mnist

# The grader's files whose code answers this lab's tasks (its approximate mode, per-class
# metrics, softmax loss and gradient, PSI): no release holds their source, only their objects
# (tools/release-tree.sh).
LAB_02_JUDGE_ANSWERS := grader/lab02_ref.c

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_02_KEY_PLOT := validation_curve
define LAB_02_HEADLINE
Softmax regression on {dataset}, trained on {rows.train} rows: the validation split chose λ = {chosen_lambda},
with validation macro-F1 {chosen_val_macro_f1:f4} (λ = {first_lambda}: {first_val_macro_f1:f4}). Scored once
on the {rows.test} test rows, that model reaches test accuracy {test_accuracy:pct} and macro-F1
{test_macro_f1:f3}.
endef
define LAB_02_CAPTION_validation_curve
Validation macro-F1 and accuracy for each λ of the grid, the chosen one marked: too little L2 fits the noise
of the training rows, too much makes the model too simple; only the chosen model is scored on test.
endef
define LAB_02_CAPTION_confusion
The chosen model on the test split: rows are the true class, so the diagonal is each class's recall; the
off-diagonal blocks show which classes it mistakes for which.
endef
define LAB_02_CAPTION_shares
How far each class's share of the training and the validation part drifts from its share of all the rows: a
random split drifts, the stratified one does not.
endef
define LAB_02_CAPTION_spread
One class's share of each part (the rarest; on a balanced dataset, the first), one point per seed, against
its share of all the rows: random splits scatter, the smaller part the most; stratified ones hold it.
endef
define LAB_02_CAPTION_learning_curve
Training loss per epoch for each λ (log scale): the penalty is part of the loss, so a larger λ has a higher
floor.
endef
