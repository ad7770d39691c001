#!/usr/bin/env bash
# test-lab01.sh — lab 01's driver end to end, its plots, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab01
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the reference run, as a student first sees it ----
expect_rc 0 "lab01 (reference) trains on breast_cancer" -- "$D" --out "$tmp/run" --quiet
for f in metrics.csv scaling.csv summary.json learning_curve.png scaling.png; do
    expect_file "$tmp/run/$f" "lab01 writes $f"
done
[ "$(head -c 8 "$tmp/run/learning_curve.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    && ok "learning_curve.png is a PNG" || not_ok "learning_curve.png is not a PNG"
[ "$(head -n 1 "$tmp/run/metrics.csv")" = "epoch,train_loss,val_loss,val_acc,grad_norm" ] \
    && ok "metrics.csv has its header row" || not_ok "metrics.csv header: $(head -n 1 "$tmp/run/metrics.csv")"
epochs=$($J "$tmp/run/summary.json" epochs_run)
rows=$(($(wc -l <"$tmp/run/metrics.csv") - 1))
expect_cmp "$rows" == "$((epochs + 1))" "metrics.csv has one row per epoch plus the initial model"
expect_cmp "$($J "$tmp/run/summary.json" test_accuracy)" '>=' 0.95 "test accuracy of the reference"
expect_cmp "$($J "$tmp/run/summary.json" raw_features_run.final_train_loss)" '>' 1 \
    "the same lr on raw features does not converge"
expect_cmp "$($J "$tmp/run/summary.json" train_loss)" '<' 0.1 "the standardised run converges"
expect_cmp "$($J "$tmp/run/summary.json" 'weights.*' | wc -l)" == 30 "summary.json holds the 30 weights"
expect_cmp "$($J "$tmp/run/summary.json" 'scaler.std.*' | wc -l)" == 30 "summary.json holds the scaler std"

# same seed, same bits
"$D" --out "$tmp/again" --quiet --plot none >/dev/null 2>&1
cmp -s "$tmp/run/metrics.csv" "$tmp/again/metrics.csv" && ok "same seed gives the same metrics.csv bit for bit" \
    || not_ok "two runs with the same seed differ"
"$D" --out "$tmp/seed2" --quiet --plot none --seed 2 >/dev/null 2>&1
cmp -s "$tmp/run/metrics.csv" "$tmp/seed2/metrics.csv" && not_ok "--seed 2 gives the same split as seed 1" \
    || ok "another seed gives another split"

# the other modes
expect_rc 0 "lab01 --no-scale" -- "$D" --out "$tmp/raw" --quiet --no-scale --plot none
expect_cmp "$($J "$tmp/raw/summary.json" train_loss)" '>' 1 "--no-scale: the raw run's loss stays high"
expect_rc 0 "lab01 --batch-size 32 --epochs 20 --plot svg" -- "$D" --out "$tmp/mb" --quiet --batch-size 32 --epochs 20 --plot svg
grep -q "<svg" "$tmp/mb/learning_curve.svg" 2>/dev/null && ok "--plot svg writes an SVG" || not_ok "--plot svg: no SVG"
expect_rc 0 "lab01 --plot dumb draws in the terminal" -- "$D" --out "$tmp/dumb" --plot dumb --no-compare --epochs 50
expect_out "epoch" "the terminal plot has an axis label"
expect_rc 0 "lab01 on synthetic data with missing values and spread scales" -- \
    "$D" --out "$tmp/syn" --quiet --plot none --data "synthetic:n=3000,d=12,classes=2,scale_spread=3,missing=0.05,seed=4"
expect_cmp "$($J "$tmp/syn/summary.json" test_accuracy)" '>' 0.7 "synthetic: better than chance"
expect_rc 0 "lab01 --json writes an extra copy" -- "$D" --out "$tmp/j" --quiet --plot none --json "$tmp/copy.json"
$J "$tmp/copy.json" >/dev/null && ok "the --json copy parses" || not_ok "the --json copy does not parse"
DL_GNUPLOT=/nonexistent/gnuplot expect_rc 0 "without gnuplot the run still succeeds" -- "$D" --out "$tmp/nogp"
expect_out "gnuplot is not installed" "without gnuplot it says so"
expect_file "$tmp/nogp/metrics.csv" "without gnuplot the CSV is kept"
expect_no_file "$tmp/nogp/learning_curve.png" "without gnuplot no PNG is faked"

# ---- where the data lives: device_io (dl/device.h's counters). The engine makes the same device calls on
# the CPU as on a GPU (there they are plain copies), so these are the numbers a GPU run shows too.
# breast_cancer: 341 training rows, 115 validation rows, d = 30; batch 32: 11 steps per epoch.
expect_rc 0 "lab01 --batch-size 32 --epochs 20 --tol 0 --no-compare" -- \
    "$D" --out "$tmp/io" --quiet --plot none --no-compare --batch-size 32 --epochs 20 --tol 0
S=$tmp/io/summary.json
expect_cmp "$($J "$S" device_io.setup.h2d_bytes)" == $(((341 + 115) * 31 * 4)) \
    "the training and validation rows go up once, before training"
expect_cmp "$($J "$S" device_io.per_step.syncs)" == 1 "a mini-batch step waits for the device once"
expect_cmp "$($J "$S" device_io.per_step.allocs)" == 0 "a mini-batch step allocates nothing"
expect_cmp "$($J "$S" device_io.per_step.h2d_bytes)" == $((4 * 30 + 4 * 341 / 11)) \
    "a step uploads w and its rows' indices, never a row"
expect_cmp "$($J "$S" device_io.per_step.d2h_bytes)" == $((32 + 4 * 30)) \
    "a step reads grad_w, grad_b and the loss back in one block"
# per epoch: the order (4 bytes a row) and w for the 11 steps and the two curve calls (the gradient on all
# rows, the validation); the initial curve entry's two calls spread over the 20 epochs
expect_cmp "$($J "$S" device_io.per_epoch.h2d_bytes)" == $(((20 * (4 * 341 + 13 * 4 * 30) + 2 * 4 * 30) / 20)) \
    "an epoch uploads its order and w, never a row"
expect_cmp "$($J "$S" device_io.per_epoch.syncs)" == 13.1 "an epoch waits once per step and once per curve call"
expect_rc 0 "lab01 full batch, --epochs 20 --tol 0 --no-compare" -- \
    "$D" --out "$tmp/iofb" --quiet --plot none --no-compare --epochs 20 --tol 0
expect_cmp "$($J "$tmp/iofb/summary.json" device_io.per_epoch.syncs)" == 2.1 \
    "a full-batch epoch waits twice: its gradient, its validation"
expect_cmp "$($J "$tmp/iofb/summary.json" device_io.per_epoch.h2d_bytes)" == $((21 * 2 * 4 * 30 / 20)) \
    "a full-batch epoch uploads w only"

# ---- the generated skeleton: runs, says what is missing, writes no summary ----
sk=$B/skeleton
if [ -x "$sk/mutant/lab01" ]; then
    expect_rc 1 "the untouched skeleton's driver stops cleanly" -- "$sk/mutant/lab01" --out "$tmp/skel" --quiet
    expect_out "not implemented yet: lab01 task 1" "the skeleton names the first missing task"
    expect_no_file "$tmp/skel/summary.json" "the skeleton leaves no summary.json"
else
    not_ok "skeleton driver $sk/mutant/lab01 was not built"
fi

# ---- bad input: a clear message naming the problem, exit 2, no partial output ----
printf 'a,b,target\n1,2,0\n3,4\n' >"$tmp/ragged.csv"
printf 'a,b,target\n1,abc,0\n' >"$tmp/nonnum.csv"
: >"$tmp/empty.csv"
printf 'a,b,target\n1,2,0\n3,4,-1\n' >"$tmp/neg.csv"
printf 'a,b,target\n1,2,0\n3,4,nan\n' >"$tmp/nanlabel.csv"
printf 'a,b,target\n1,2,0\n3,4,1.5\n' >"$tmp/frac.csv"
printf 'a,b,target\n1,2,0\n3,4,2\n5,6,1\n' >"$tmp/three.csv"
expect_rc 2 "unknown flag" -- "$D" --bogus
expect_out "unknown option '--bogus'" "unknown flag is named"
expect_out "usage: lab01" "unknown flag prints the usage"
expect_rc 2 "non-integer --epochs" -- "$D" --epochs abc
expect_out "--epochs: 'abc' is not an integer" "bad --epochs is named"
expect_rc 2 "--epochs 0" -- "$D" --epochs 0
expect_out "out of range" "--epochs 0 is out of range"
expect_rc 2 "--lr without a value" -- "$D" --lr
expect_out "--lr needs a value" "missing value is named"
expect_rc 2 "--plot jpg" -- "$D" --plot jpg
expect_out "'jpg' is not one of png.svg.dumb.none" "bad --plot lists the choices"
expect_rc 2 "--device tpu" -- "$D" --device tpu --out "$tmp/x1"
expect_out "device 'tpu': expected auto, cpu, cuda" "bad --device is named"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    expect_rc 2 "--device cuda without a GPU" -- "$D" --device cuda --out "$tmp/x2"
    expect_out "--device cuda: (no CUDA GPU answers|this build has no CUDA)" "--device cuda says why it cannot"
fi
expect_rc 2 "unknown dataset" -- "$D" --data nosuch --out "$tmp/x3"
expect_out "--data 'nosuch': unknown dataset" "unknown dataset is named"
expect_rc 2 "bad synthetic key" -- "$D" --data synthetic:n=100,colour=3 --out "$tmp/x4"
expect_out "unknown key 'colour'" "bad synthetic key is named"
expect_rc 2 "ragged CSV row" -- "$D" --data "$tmp/ragged.csv" --out "$tmp/x5"
expect_out "ragged.csv:3: ragged row: 2 fields, expected 3" "ragged row names file and line"
expect_rc 2 "non-number in a CSV" -- "$D" --data "$tmp/nonnum.csv" --out "$tmp/x6"
expect_out "nonnum.csv:2:2: 'abc' is not a number" "non-number names file, line and column"
expect_rc 2 "empty CSV" -- "$D" --data "$tmp/empty.csv" --out "$tmp/x7"
expect_out "empty.csv: empty file" "empty file is named"
expect_rc 2 "negative label" -- "$D" --data "$tmp/neg.csv" --out "$tmp/x8"
expect_out "neg.csv:3:3: label -1 is out of range" "negative label names its place"
expect_rc 2 "NaN label" -- "$D" --data "$tmp/nanlabel.csv" --out "$tmp/x9"
expect_out "nanlabel.csv:3:3: missing label" "NaN label names its place"
expect_rc 2 "fractional label" -- "$D" --data "$tmp/frac.csv" --out "$tmp/x10"
expect_out "frac.csv:3:3: label 1.5 is out of range" "fractional label is named"
expect_rc 2 "three classes in a binary lab" -- "$D" --data "$tmp/three.csv" --out "$tmp/x11"
expect_out "has 3 classes; lab 01 is binary" "a multi-class set is refused with the reason"
expect_rc 2 "missing CSV file" -- "$D" --data "$tmp/none.csv" --out "$tmp/x12"
expect_out "none.csv: cannot open: No such file" "missing file is named"
mkdir -p "$tmp/fm"
head -c 5000 /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz >"$tmp/fm/train-images-idx3-ubyte.gz"
DL_DATA_DIR=$tmp/fm expect_rc 2 "truncated IDX file" -- "$D" --data fashion_mnist --out "$tmp/x13"
expect_out "train-images-idx3-ubyte.gz: truncated" "truncated IDX is named"
DL_DATA_DIR=$tmp/nowhere expect_rc 2 "Fashion-MNIST missing" -- "$D" --data fashion_mnist --out "$tmp/x14"
expect_out "dataset-fashion-mnist" "missing Fashion-MNIST names the Debian package"
expect_rc 2 "unwritable --out" -- "$D" --out /proc/ddplab-cannot --quiet
expect_out "cannot create directory|cannot write in '/proc'" "unwritable --out is named"
expect_rc 2 "an unwritable --json is refused before anything is written" -- "$D" --out "$tmp/x15" \
    --json "$tmp/no/such/dir/s.json" --quiet
expect_out "--json '.*': the directory '.*/no/such/dir' does not exist" "the --json is named"
expect_no_file "$tmp/x15" "nothing was written to --out"
expect_rc 2 "lab 01 refuses to run as two ranks" -- common/bin/dlrun -n 2 "$D" --out "$tmp/x16" --quiet
expect_out "runs as one process, but it was started as one of 2 ranks" "the launcher is named"
expect_no_file "$tmp/x16" "two ranks wrote nothing"
for k in 3 5 6 7 8 9 10 11 12 13 14; do
    [ -e "$tmp/x$k/summary.json" ] && not_ok "failed run x$k left a summary.json"
done
ok "no failed run left a summary.json behind"
# make bench's programs take their flags as the drivers do: --help, and a clear refusal (exit 2)
# (where they are: a student release has no grader/bench/)
for b in lab01 lab02 step; do
    [ -x "$B/bench/$b" ] || continue
    expect_rc 0 "bench $b --help" -- "$B/bench/$b" --help
    expect_out "^usage: bench $b" "… prints its usage"
    expect_rc 2 "bench $b with an unknown flag (it ran the whole bench before)" -- "$B/bench/$b" --bogus
    expect_out "unknown flag '--bogus'" "… naming it"
done
if [ -x "$B/bench/lab01" ]; then
    expect_rc 2 "bench lab01 --n 10x" -- "$B/bench/lab01" --n 10x
    expect_out "--n '10x': expected a whole number of at least 1" "… naming the flag, the value and what it expects"
fi
finish
