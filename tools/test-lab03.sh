#!/usr/bin/env bash
# test-lab03.sh — lab 03's driver under real mpirun with 1, 2 and 4 ranks: the
# reference run end to end with its plots and projection, the naive mode,
# bitwise reproducibility, the skeleton, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab03
R=common/bin/dlrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_rc 0 "lab03 (reference) on 4 ranks, 3 epochs" -- "$R" -n 4 "$D" --epochs 3 --out "$tmp/ddp"
S=$tmp/ddp/summary.json
for f in metrics.csv steps.csv lr.csv shards.csv projection.csv summary.json training.png shards.png \
    equivalence.png lr.png speedup_batch.png epoch_time.png; do
    expect_file "$tmp/ddp/$f" "lab03 writes $f"
done
expect_out "epoch  3/3 .*\\|dparam\\| 0 " "each epoch line reports a zero parameter difference"
expect_cmp "$($J "$S" param_diff_across_ranks)" == 0 "4 DDP ranks hold bitwise identical parameters"
expect_cmp "$($J "$S" 'rows_per_rank.*' | sort -u | wc -l)" == 1 "every rank processed the same number of rows"
expect_cmp "$($J "$S" rows_per_rank.0)" == 15000 "each rank processed 60000 / 4 rows"
expect_cmp "$($J "$S" projection.speedup)" '>=' 2 "the reference projects at least 2x on 4 A10s (default workload)"
expect_cmp "$($J "$S" naive.projected_speedup)" '<=' 1.0 "the naive first attempt projects no speedup"
expect_cmp "$($J "$S" one_rank_curve_max_rel_diff)" '<' 1e-4 "4 ranks x 4096 track 1 rank x 16384 step by step"
expect_cmp "$($J "$S" counters_last_epoch.allreduce_calls)" == "$($J "$S" counters_last_epoch.steps)" \
    "one gradient allreduce per step"
expect_cmp "$($J "$S" config.peak_lr)" == 0.096 "the lr is scaled with the global batch (0.024 x 4)"
# where the data lives and how often a step waits (device_io: the kit's counters, the same on the CPU as on a GPU)
expect_cmp "$($J "$S" device_io.setup.h2d_bytes)" '>=' "$((4 * 784 * 60000))" "the training rows go up once, before training"
expect_cmp "$($J "$S" device_io.per_epoch.h2d_bytes)" == "$((4 * 15000))" "an epoch uploads its order (15000 indices), not its rows"
expect_cmp "$($J "$S" device_io.per_step.syncs)" == 1 "a step waits for the device once (its loss, for the curve)"
for k in allocs h2d_bytes d2h_bytes; do
    expect_cmp "$($J "$S" device_io.per_step.$k)" == 0 "a step: $k 0"
done

expect_rc 0 "lab03 --mode naive on 4 ranks" -- "$R" -n 4 "$D" --mode naive --epochs 1 --out "$tmp/naive"
N=$tmp/naive/summary.json
expect_cmp "$($J "$N" rows_per_rank.0)" == 60000 "naive: every rank trains on all 60000 rows"
expect_cmp "$($J "$N" param_diff_across_ranks)" '>' 0 "naive: the ranks hold different models"
expect_cmp "$($J "$N" projection.speedup)" '<=' 1.0 "naive: projected speedup at most 1x"

expect_rc 0 "lab03 on one process (a world of one)" -- "$D" --epochs 1 --max-steps 3 --out "$tmp/one" --quiet
expect_cmp "$($J "$tmp/one/summary.json" ranks)" == 1 "without dlrun the run has one rank"
expect_rc 0 "lab03 on 2 ranks with stratified shards" -- "$R" -n 2 "$D" --epochs 1 --stratified --no-compare --out "$tmp/st" --quiet
expect_cmp "$($J "$tmp/st/summary.json" param_diff_across_ranks)" == 0 "2 stratified ranks stay in sync"

# The handout's reproducibility promise: same machine, same build, same rank
# count and flags give the same bits, run after run.
small=(--data fashion_mnist:train=4096,test=512 --hidden 32 --epochs 2 --no-compare --plot none --quiet)
for k in 1 2; do
    expect_rc 0 "lab03 (reference) on 2 ranks, small data, run $k" -- "$R" -n 2 "$D" "${small[@]}" \
        --dump-params "$tmp/det$k.npy" --out "$tmp/det$k"
done
if cmp -s "$tmp/det1.npy" "$tmp/det2.npy"; then
    ok "two identical 2-rank runs end with bitwise identical parameters"
else
    not_ok "two identical 2-rank runs end with different parameters ($tmp/det1.npy, $tmp/det2.npy)"
fi
expect_cmp "$($J "$tmp/det1/summary.json" final_loss)" == "$($J "$tmp/det2/summary.json" final_loss)" \
    "and the same final loss"

if [ -x "$B/skeleton/mutant/lab03" ]; then
    expect_rc 1 "the untouched skeleton stops cleanly on 2 ranks" -- "$R" -n 2 "$B/skeleton/mutant/lab03" --out "$tmp/skel"
    expect_out "not implemented yet: lab03 task 2" "the skeleton names the missing task"
    expect_no_file "$tmp/skel/summary.json" "the skeleton leaves no summary.json"
else
    not_ok "skeleton driver $B/skeleton/mutant/lab03 was not built"
fi

printf 'name = x\ngpus = 4\nfp32_peak = 1e12\nwarp_speed = 9\n' >"$tmp/bad.conf"
expect_rc 2 "--hidden 0" -- "$D" --hidden 0 --out "$tmp/x1"
expect_out "--hidden '0': expected" "a bad --hidden is named"
expect_rc 2 "--mode fast" -- "$D" --mode fast --out "$tmp/x2"
expect_rc 2 "a missing profile" -- "$D" --profile /nonexistent.conf --out "$tmp/x3"
expect_out "/nonexistent.conf: cannot open" "the missing profile is named"
expect_rc 2 "a profile with an unknown key" -- "$D" --profile "$tmp/bad.conf" --out "$tmp/x4"
expect_out "bad.conf:4: unknown key 'warp_speed'" "the bad key is named with its line"
expect_rc 2 "an unknown profile name" -- "$D" --profile h300 --out "$tmp/x8"
expect_out "profile 'h300': .*the shipped ones are a10, a100, h100, h200, l4, rtx4090, t4" \
    "the unknown name is refused with the shipped names"
expect_rc 0 "--profile list" -- "$D" --profile list
expect_out "^h200 +4xH200-sxm +4 +67 +989 +4800 +370 " "--profile list shows the shipped profiles"
expect_no_file "$tmp/x8" "an unknown profile writes nothing"
expect_rc 0 "lab03 on 2 ranks projected on --profile H200" -- "$R" -n 2 "$D" "${small[@]}" --profile H200 \
    --out "$tmp/h200"
expect_out "projected on [0-9]+ GPU\(s\) of 4xH200-sxm" "the projection names the chosen profile"
[ "$($J "$tmp/h200/summary.json" projection.profile)" = 4xH200-sxm ] && ok "summary.json names 4xH200-sxm" ||
    not_ok "summary.json names '$($J "$tmp/h200/summary.json" projection.profile)', not 4xH200-sxm"
expect_rc 2 "a dataset without a test split" -- "$D" --data breast_cancer --out "$tmp/x5"
expect_out "has no test split" "the reason is given"
expect_rc 2 "--batch-size 0" -- "$D" --batch-size 0 --out "$tmp/x6"
expect_rc 2 "a bad flag on 2 ranks stops both" -- "$R" -n 2 "$D" --nonsense --out "$tmp/x7"
# bad input on one rank only: it fails before its first collective while the
# others wait in it; the job must stop at once, not at the 120 s timeout
start=$(date +%s)
# shellcheck disable=SC2016 # $RANK and $@ are the rank's, expanded by its own bash
expect_rc 2 "a missing profile on rank 2 of 3 stops every rank" -- "$R" -n 3 --timeout 120 bash -c \
    'if [ "$RANK" = 2 ]; then set -- "$@" --profile /nonexistent.conf; fi; exec "$@"' lab03 "$D" --epochs 1 \
    --out "$tmp/x8"
expect_out "rank 2: fatal: lab03: .*nonexistent.conf" "the failing rank's message reaches the output"
expect_cmp "$(($(date +%s) - start))" '<' 20 "the others did not wait for the timeout (seconds)"
for k in 1 2 3 4 5 6 7; do [ -e "$tmp/x$k/summary.json" ] && not_ok "failed run x$k left a summary.json"; done
ok "no failed run left a summary.json behind"
finish
