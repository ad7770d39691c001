#!/usr/bin/env bash
# test-lab05.sh — lab 05's driver under real mpirun with 1, 2 and 4 ranks:
# the reference's outputs and plots, the Chrome trace (one process per rank),
# the three modes side by side, gradient accumulation, the grader's dump
# mode, the skeleton, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab05
R=common/bin/dlrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small="--data fashion_mnist:train=8000,test=500 --hidden 64,64,64 --batch-size 128 --epochs 2 --base-batch 128"
caps="--first-bucket-mb 0.002 --bucket-mb 0.01"

# shellcheck disable=SC2086
expect_rc 0 "lab05 (reference) on one rank" -- "$D" $small $caps --out "$tmp/one"
expect_out "projected on 4 GPUs" "one rank still projects the three modes onto the target"
for f in metrics.csv buckets.csv projection.csv sweep.csv timeline.csv trace.json summary.json training.png \
    timeline.png sweep.png speedup.png; do
    expect_file "$tmp/one/$f" "lab05 writes $f"
done
S=$tmp/one/summary.json
expect_cmp "$($J "$S" buckets)" '>=' 4 "the small model in 0.01 MiB buckets (0.002 first) has 4 buckets"
expect_cmp "$($J "$S" test_accuracy)" '>' 0.5 "two epochs learn something (test accuracy above 0.5)"
grep -q '"traceEvents"' "$tmp/one/trace.json" && ok "trace.json is a Chrome trace" || not_ok "trace.json has no traceEvents"

# shellcheck disable=SC2086
expect_rc 0 "bucketed on 2 ranks" -- "$R" -n 2 "$D" $small $caps --out "$tmp/b2"
grep -Eq '"pid": ?1' "$tmp/b2/trace.json" && ok "the trace holds a process for rank 1" ||
    not_ok "the trace of 2 ranks has no rank 1"
# the default model at the default per-rank batch: the projection the handout discusses
expect_rc 0 "the default model and batch on 2 ranks, 2 steps" -- "$R" -n 2 "$D" --data fashion_mnist:train=14200,test=500 \
    --max-steps 2 --bucket-mb 1 --out "$tmp/def" --plot none
P=$tmp/def/summary.json
expect_cmp "$($J "$P" buckets)" == 4 "the default model in 1 MiB buckets has 4 buckets"
expect_cmp "$($J "$P" projection.bucketed.speedup)" '>=' 3.4 "bucketed projects at least 3.4x on 4 GPUs"
expect_cmp "$($J "$P" projection.bucketed.speedup)" '>' "$($J "$P" projection.ddp-flat.speedup)" \
    "bucketed projects above ddp-flat"
expect_cmp "$($J "$P" projection.bucketed.speedup)" '>' "$($J "$P" projection.per-param.speedup)" \
    "bucketed projects above per-param"

for m in ddp-flat per-param; do
    # shellcheck disable=SC2086
    expect_rc 0 "--mode $m on 4 ranks" -- "$R" -n 4 "$D" $small $caps --mode $m --out "$tmp/$m" --plot none
done
expect_cmp "$($J "$tmp/per-param/summary.json" buckets)" == 8 "per-param: one bucket per parameter (4 layers, 8)"
a=$($J "$tmp/ddp-flat/summary.json" val_accuracy)
b=$($J "$tmp/per-param/summary.json" val_accuracy)
expect_cmp "$(awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" '<=' 0.01 \
    "ddp-flat and per-param train the same model (validation accuracy $a vs $b)"

# shellcheck disable=SC2086
expect_rc 0 "gradient accumulation (--accum 2) on 2 ranks, with the grader's dump" -- "$R" -n 2 "$D" $small $caps \
    --accum 2 --max-steps 3 --dump "$tmp/dump" --out "$tmp/acc" --plot none
expect_file "$tmp/dump/params.1.npy" "each rank dumps its parameters"
expect_file "$tmp/dump/trace.1.csv" "each rank dumps its trace"
cmp -s "$tmp/dump/params.0.npy" "$tmp/dump/params.1.npy" && ok "the ranks' parameters are bitwise equal" ||
    not_ok "the ranks' parameters differ"
# the first micro-batch of each step communicates nothing: allreduces come after the second forward
awk -F, 'NR > 1 && $4 == 0 { if ($2 == "forward") f++; if ($2 == "allreduce" && f < 2) bad++ }
    END { exit bad > 0 }' "$tmp/dump/trace.0.csv" && ok "no allreduce before the last micro-batch" ||
    not_ok "an allreduce ran during the first micro-batch"

for bad in "--bucket-mb 0" "--accum 0" "--mode nope" "--hidden 0" "--batch-size 0"; do
    # shellcheck disable=SC2086
    expect_rc 2 "bad flag: $bad" -- "$D" $bad --out "$tmp/bad"
done
expect_no_file "$tmp/bad/summary.json" "bad flags leave no summary.json"

if [ -x "$B/skeleton/mutant/lab05" ]; then
    # shellcheck disable=SC2086
    expect_rc 1 "the untouched skeleton stops cleanly on 2 ranks" -- "$R" -n 2 "$B/skeleton/mutant/lab05" $small \
        --out "$tmp/skel"
    expect_out "not implemented yet: lab05 task 1" "the skeleton names the first missing task"
    expect_no_file "$tmp/skel/summary.json" "the skeleton leaves no summary.json"
else
    not_ok "skeleton driver $B/skeleton/mutant/lab05 was not built"
fi
finish
