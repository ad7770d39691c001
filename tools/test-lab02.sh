#!/usr/bin/env bash
# test-lab02.sh — lab 02's driver end to end, its plots, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab02
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the reference on Fashion-MNIST, as a student first sees it ----
expect_rc 0 "lab02 (reference) on Fashion-MNIST" -- "$D" --out "$tmp/run" --quiet
for f in metrics.csv learning.csv confusion.csv confusion_norm.csv confusion_long.csv per_class.csv shares.csv \
    spread.csv psi.csv summary.json confusion.png validation_curve.png shares.png spread.png learning_curve.png; do
    expect_file "$tmp/run/$f" "lab02 writes $f"
done
S=$tmp/run/summary.json
expect_cmp "$($J "$S" rows.train)" == 1000 "the default run trains on 1000 rows of Fashion-MNIST"
expect_cmp "$($J "$S" test_accuracy)" '>=' 0.77 "Fashion-MNIST test accuracy of the default run (1000 rows)"
expect_cmp "$($J "$S" chosen_lambda)" '>' 0 "seed 1: the reference chooses some L2 (over seeds 1-10 the curve's top is flat: the handout)"
expect_cmp "$($J "$S" test_macro_f1)" '>' 0.75 "macro-F1 is reported"
expect_cmp "$($J "$S" 'per_class.*.class' | wc -l)" == 10 "summary.json has the 10 per-class rows"
[ "$($J "$S" per_class.0.class)" = "T-shirt/top" ] && ok "class names come from the dataset" \
    || not_ok "class 0 is named '$($J "$S" per_class.0.class)'"
expect_cmp "$(($(wc -l <"$tmp/run/confusion.csv") - 1))" == 10 "the confusion matrix has 10 rows"
total=$(tail -n +2 "$tmp/run/confusion.csv" | cut -d, -f2- | tr ',' '\n' | awk '{s += $1} END {print s}')
expect_cmp "$total" == 10000 "the confusion matrix counts all 10000 test rows"
expect_cmp "$($J "$S" rows.test)" == 10000 "the official test split is kept"
expect_cmp "$($J "$S" rows.val)" == 10000 "validation is 1/6 of the official training rows"
expect_cmp "$($J "$S" 'val_macro_f1.*' | wc -l)" == 8 "one validation score per lambda"
# where the data lived and how often the host waited (device_io: the kit's counters, the same on the CPU
# as on a GPU): train, val and test uploaded once; a step sends W and b and the batch's indices down and
# reads gW, gb and the loss back in one copy (7850 floats and a double); scoring reads labels, not rows
up=$($J "$S" device_io.setup.h2d_bytes)
expect_cmp "$up" '>=' "$(((1000 + 10000 + 10000) * 784 * 4))" "train, val and test rows are uploaded before training ($up bytes)"
expect_cmp "$($J "$S" device_io.per_epoch.h2d_bytes)" '<' "$((1000 * 784))" \
    "an epoch uploads the model and the batches' indices, not rows"
expect_cmp "$($J "$S" device_io.per_step.syncs)" == 1 "a step makes the host wait for the device once"
expect_cmp "$($J "$S" device_io.per_step.d2h_bytes)" == "$((7850 * 4 + 8))" "a step reads gW, gb and the loss back in one copy"
expect_cmp "$($J "$S" device_io.per_step.allocs)" == 0 "a step allocates nothing"
expect_cmp "$($J "$S" device_io.per_epoch.d2h_bytes)" '<' "$((8 * 31408 + 1000))" \
    "scoring a model reads its 10000 labels back, not logits or rows"

# ---- a rare class: random splits scatter, stratified splits do not ----
expect_rc 0 "lab02 on synthetic data with a 2% class" -- "$D" --out "$tmp/rare" --quiet --plot none \
    --data synthetic:n=20000,classes=2,imbalance=0.02
R=$tmp/rare/summary.json
rs=$($J "$R" rare_class_share_spread.random_val_std)
ss=$($J "$R" rare_class_share_spread.stratified_val_std)
expect_cmp "$rs" '>' 1e-3 "random splits: the rare class's share in val varies across seeds"
expect_cmp "$ss" '<' 1e-9 "stratified splits: the rare class's share in val is the same for every seed"
expect_cmp "$($J "$R" 'class_counts.val.1')" == 80 "the stratified val part holds exactly 2% of 4000 rare rows"
acc=$($J "$R" test_accuracy)
f1=$($J "$R" test_macro_f1)
expect_cmp "$acc" '>' "$f1" "on the imbalanced set accuracy flatters the model: accuracy > macro-F1"

# ---- the generated skeleton: runs, says what is missing, writes no summary ----
if [ -x "$B/skeleton/mutant/lab02" ]; then
    expect_rc 1 "the untouched skeleton's driver stops cleanly" -- "$B/skeleton/mutant/lab02" --out "$tmp/skel" --quiet
    expect_out "not implemented yet: lab02 task 1" "the skeleton names the first missing task"
    expect_no_file "$tmp/skel/summary.json" "the skeleton leaves no summary.json"
else
    not_ok "skeleton driver $B/skeleton/mutant/lab02 was not built"
fi

# ---- bad input ----
expect_rc 2 "--lambdas with a word" -- "$D" --lambdas 0,abc --out "$tmp/x1"
expect_out "--lambdas '0,abc': expected" "a bad --lambdas is named"
expect_rc 2 "--lambdas negative" -- "$D" --lambdas -1 --out "$tmp/x2"
expect_rc 2 "--val-frac too large" -- "$D" --val-frac 0.9 --out "$tmp/x3"
expect_out "--val-frac: 0.9 is out of range" "a bad --val-frac is named"
printf 'a,b,target\n1,2,0\n3,4,0\n5,6,1\n7,8,0\n9,1,0\n2,2,0\n3,3,0\n' >"$tmp/tiny.csv"
expect_rc 2 "a class too small to stratify" -- "$D" --data "$tmp/tiny.csv" --out "$tmp/x4" --quiet
expect_out "class 1 has 1 row" "the too-small class is named"
expect_rc 2 "lab 02 refuses to run as two ranks" -- common/bin/dlrun -n 2 "$D" --out "$tmp/x5" --quiet
expect_out "runs as one process, but it was started as one of 2 ranks" "the launcher is named"
expect_no_file "$tmp/x5" "two ranks wrote nothing"
expect_rc 2 "an unwritable --json" -- "$D" --out "$tmp/x6" --json /proc/x/y/s.json --quiet
expect_no_file "$tmp/x6" "nothing was written to --out"
for k in 1 2 3 4; do [ -e "$tmp/x$k/summary.json" ] && not_ok "failed run x$k left a summary.json"; done
ok "no failed run left a summary.json behind"
finish
