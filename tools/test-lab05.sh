#!/usr/bin/env bash
# test-lab05.sh — lab 05's driver under real mpirun with 1, 2 and 4 ranks:
# the reference's outputs and plots, the Chrome trace (one process per rank),
# the three modes side by side, gradient accumulation, the grader's dump
# mode, fp16 with and without the loss scaler (the measured underflow), a
# run that removes the outputs an earlier run left and it does not write, an
# inf on one rank, checkpoints resumed bit for bit (parameters, losses,
# metrics.csv and summary.json) and the files a resume refuses, the
# skeleton, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab05
R=common/bin/dlrun
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
small="--data fashion_mnist:train=8000,test=500 --hidden 64,64,64 --batch-size 128 --epochs 2 --base-batch 128"
caps="--first-bucket-cap 2097 --bucket-cap 10485" # small caps: several buckets in the small model

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

# where the data lived and how often the host waited (device_io: the kit's counters, the same on the CPU
# as on a GPU): the rows uploaded once, an epoch uploads only its order, a step waits for nothing
up=$($J "$S" device_io.setup.h2d_bytes)
expect_cmp "$up" '>=' "$((8000 * 784 * 4))" "the training rows are uploaded before training ($up bytes)"
expect_cmp "$($J "$S" device_io.per_epoch.h2d_bytes)" '<=' "$((8000 * 8))" \
    "an epoch uploads its order, not its rows (no re-upload per epoch)"
expect_cmp "$($J "$S" device_io.per_step.syncs)" == 0 "an fp32 step makes the host wait for the device nowhere"
expect_cmp "$($J "$S" device_io.per_step.allocs)" == 0 "a step allocates nothing"
expect_cmp "$($J "$S" device_io.per_step.h2d_bytes)" == 0 "a step uploads nothing"
expect_cmp "$($J "$S" device_io.per_step.d2h_bytes)" == 0 "a step reads nothing back"

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
# the same step on four H200 over NVLink (--profile h200): communication all but hidden
expect_rc 0 "the same on --profile h200" -- "$R" -n 2 "$D" --data fashion_mnist:train=14200,test=500 \
    --max-steps 2 --bucket-mb 1 --profile h200 --out "$tmp/h200" --plot none
expect_out "projected on 4 GPUs of 4xH200-sxm, bucketed" "the projection names the chosen profile"
H=$tmp/h200/summary.json
expect_cmp "$($J "$H" projection.bucketed.speedup)" '>' "$($J "$P" projection.bucketed.speedup)" \
    "NVLink projects above PCIe for the same recorded order"

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

# AMP's passes are fused: the weights cast to 16 bits in one pass over the flat buffer, the unscale and its
# inf/NaN check in one more. On this model (4 layers) a step of either AMP adds 5 launches to fp32's (33 in
# all on the CPU counters); casting tensor by tensor alone would add two a layer
for a in off fp16 bf16; do
    # shellcheck disable=SC2086
    expect_rc 0 "--amp $a, no underflow probe, 8 steps (the launches of a step)" -- "$D" $small --amp $a --probe-every 0 \
        --max-steps 8 --out "$tmp/launch-$a" --quiet --plot none
done
l32=$($J "$tmp/launch-off/summary.json" device_io.per_step.launches)
for a in fp16 bf16; do
    expect_cmp "$($J "$tmp/launch-$a/summary.json" device_io.per_step.launches)" '<=' "$((l32 + 5))" \
        "--amp $a: a step launches at most 5 more kernels than fp32's $l32 (fused casts and unscale)"
done

# ---- part 2: fp16 with the loss scaler, beside fp16 without it ----
amp="--data fashion_mnist:train=14000,test=500 --hidden 64,64,64 --batch-size 512 --epochs 3 --base-batch 1024"
for a in fp16 fp16-noscale; do
    # shellcheck disable=SC2086
    expect_rc 0 "--amp $a on 2 ranks" -- "$R" -n 2 "$D" $amp $caps --amp $a --out "$tmp/$a"
    expect_file "$tmp/$a/amp.csv" "--amp $a writes amp.csv (scale, skipped, underflow per step)"
    expect_file "$tmp/$a/amp.png" "--amp $a draws the loss scale and the underflow"
done
# a run removes what it no longer writes: fp32, in svg, into (a copy of) the fp16 run's folder
cp -r "$tmp/fp16" "$tmp/stale"
# shellcheck disable=SC2086
expect_rc 0 "an fp32 run into the folder of an fp16 run" -- "$D" $small $caps --plot svg --out "$tmp/stale" --quiet
expect_no_file "$tmp/stale/amp.csv" "the fp32 run leaves no amp.csv of the fp16 run"
expect_no_file "$tmp/stale/amp.png" "the fp32 run leaves no amp.png of the fp16 run"
expect_no_file "$tmp/stale/training.png" "the svg run leaves no png of the png run"
expect_file "$tmp/stale/training.svg" "the svg run draws its own plots"
u16=$($J "$tmp/fp16/summary.json" amp_stats.mean_underflow_share)
u1=$($J "$tmp/fp16-noscale/summary.json" amp_stats.mean_underflow_share)
echo "# underflow share (nonzero fp32 gradient elements zero in fp16): scale 65536 $u16, scale 1 $u1"
expect_cmp "$u1" '>' 0 "without a loss scale some gradient elements flush to zero in fp16"
expect_cmp "$u1" '>' "$u16" "the loss scale keeps gradient elements from flushing to zero"
expect_cmp "$($J "$tmp/fp16/summary.json" test_accuracy)" '>' 0.5 "--amp fp16 learns (test accuracy above 0.5)"
expect_cmp "$($J "$tmp/fp16/summary.json" device_io.per_step.syncs)" == 1 \
    "an AMP step waits for the device once: the inf/NaN flag its decision needs"
expect_cmp "$($J "$tmp/fp16/summary.json" device_io.per_step.allocs)" == 0 "an AMP step allocates nothing"
cmp -s "$tmp/fp16/metrics.csv" "$tmp/fp16-noscale/metrics.csv" && not_ok "the scale made no difference at all" ||
    ok "the two runs differ"
# an inf on rank 1's input at step 2: both ranks skip it, the scale halves
# shellcheck disable=SC2086
expect_rc 0 "--poison-step 2 on rank 1, with the dump" -- "$R" -n 2 "$D" $amp $caps --amp fp16 --max-steps 5 \
    --poison-step 2 --poison-rank 1 --probe-every 0 --dump "$tmp/pdump" --out "$tmp/poison" --plot none
for r in 0 1; do
    [ "$(awk -F, 'NR == 4 { print $4 }' "$tmp/pdump/amp.$r.csv")" = 1 ] && ok "rank $r skipped the poisoned step" ||
        not_ok "rank $r did not skip the poisoned step"
done
cmp -s "$tmp/pdump/params.0.npy" "$tmp/pdump/params.1.npy" && ok "after the skip the ranks are bitwise equal" ||
    not_ok "after the skip the ranks differ"

# ---- checkpoints: stop, save, resume — bitwise the run that never stopped ----
ck="--data fashion_mnist:train=8000,test=500 --hidden 64,64,64 --batch-size 128 --epochs 2 --base-batch 128 --amp fp16"
# shellcheck disable=SC2086
expect_rc 0 "uninterrupted --amp fp16 run, 2 epochs of 7 steps" -- "$R" -n 2 "$D" $ck $caps --dump "$tmp/c0" \
    --out "$tmp/cfull" --plot none
# shellcheck disable=SC2086
expect_rc 0 "the same run stopped at step 5 (mid-epoch), a checkpoint every 2 steps" -- "$R" -n 2 "$D" $ck $caps \
    --max-steps 5 --checkpoint-dir "$tmp/ck" --checkpoint-every 2 --out "$tmp/ca" --plot none
expect_file "$tmp/ck/latest" "the newest checkpoint is DIR/latest"
expect_file "$tmp/ck/latest.metrics" "the driver's bookkeeping is beside it (DIR/latest.metrics)"
[ "$(ls "$tmp/ck" | tr '\n' ' ')" = "latest latest.metrics " ] && ok "no temporary file is left beside them" ||
    not_ok "the checkpoint dir holds: $(ls "$tmp/ck")"
# shellcheck disable=SC2086
expect_rc 0 "resumed from it to the end" -- "$R" -n 2 "$D" $ck $caps --resume "$tmp/ck/latest" \
    --dump "$tmp/c1" --out "$tmp/cres" --plot none
expect_out "resumed from $tmp/ck/latest: step 5, epoch 1, batch 5" "the resumed run says where it goes on from"
for r in 0 1; do
    cmp -s "$tmp/c0/params.$r.npy" "$tmp/c1/params.$r.npy" && ok "rank $r: resumed = uninterrupted, bit for bit" ||
        not_ok "rank $r: the resumed run's parameters differ from the uninterrupted run's"
done
n=$(($(wc -l <"$tmp/c1/amp.0.csv") - 1))
[ "$n" = 9 ] && [ "$(tail -n $n "$tmp/c0/amp.0.csv")" = "$(tail -n $n "$tmp/c1/amp.0.csv")" ] &&
    ok "steps 6-14: the same losses and loss scales" || not_ok "the resumed steps' losses or scales differ ($n rows)"
# same_outputs A B WHAT: metrics.csv and summary.json byte for byte, but the
# times (metrics.csv: epoch_s, compute_s; summary.json: steady_*_s)
same_outputs() {
    [ "$(head -n 1 "$1/metrics.csv")" = "epoch,step,loss,val_accuracy,epoch_s,lr,compute_s" ] ||
        not_ok "metrics.csv's columns changed: update same_outputs in $0"
    if cmp -s <(cut -d, -f1-4,6 "$1/metrics.csv") <(cut -d, -f1-4,6 "$2/metrics.csv"); then
        ok "$3: metrics.csv is the uninterrupted run's (every epoch, times aside)"
    else
        not_ok "$3: metrics.csv differs from the uninterrupted run's (times aside):"
        diff <(cut -d, -f1-4,6 "$1/metrics.csv") <(cut -d, -f1-4,6 "$2/metrics.csv") | head -n 6 | sed 's/^/    | /'
    fi
    if cmp -s <(results_of "$1/summary.json") <(results_of "$2/summary.json"); then
        ok "$3: summary.json is the uninterrupted run's (amp_stats and projection included, times aside)"
    else
        not_ok "$3: summary.json differs from the uninterrupted run's (times aside):"
        diff <(results_of "$1/summary.json") <(results_of "$2/summary.json") | head -n 6 | sed 's/^/    | /'
    fi
}
# summary.json without what measures this run rather than its results: the
# steady times, the measured step and device_io (a resumed run uploads its data again)
results_of() {
    grep -v -e '"steady_[a-z]*_s":' -e '"measured_step_ms":' "$1" | awk '/"device_io": \{/ { skip = 1 } skip { depth += gsub(/\{/, "{") - gsub(/\}/, "}"); if (depth == 0) skip = 0; next } { print }'
}
same_outputs "$tmp/cfull" "$tmp/cres" "stopped mid-epoch and resumed"
# stopped after the first epoch's last step: the bookkeeping holds that epoch's row
# shellcheck disable=SC2086
expect_rc 0 "the same run stopped at step 7 (the end of epoch 1)" -- "$R" -n 2 "$D" $ck $caps --max-steps 7 \
    --checkpoint-dir "$tmp/ck7" --out "$tmp/ca7" --plot none
# shellcheck disable=SC2086
expect_rc 0 "resumed from it to the end" -- "$R" -n 2 "$D" $ck $caps --resume "$tmp/ck7/latest" --out "$tmp/cres7" \
    --plot none
expect_out "resumed from $tmp/ck7/latest: step 7, epoch 2, batch 0" "it goes on from the second epoch"
same_outputs "$tmp/cfull" "$tmp/cres7" "stopped at an epoch's end and resumed"
# without the bookkeeping: a warning, and the resumed run's own steps only
cp "$tmp/ck/latest" "$tmp/bare"
# shellcheck disable=SC2086
expect_rc 0 "a checkpoint without its .metrics beside it still resumes" -- "$R" -n 2 "$D" $ck $caps \
    --resume "$tmp/bare" --dump "$tmp/c2" --out "$tmp/cbare" --plot none
expect_out "warning: $tmp/bare.metrics is missing; metrics.csv starts at epoch 1" "... with a warning that says so"
cmp -s "$tmp/c0/params.0.npy" "$tmp/c2/params.0.npy" && ok "... to the same parameters" ||
    not_ok "without its .metrics the resumed run's parameters differ"
# what a resume refuses: another world size, another model, a corrupt or cut file; an earlier
# run's summary.json in --out must not survive a refused run (it would look like this run's)
mkdir -p "$tmp/cbad" && cp "$tmp/one/summary.json" "$tmp/cbad/summary.json"
# shellcheck disable=SC2086
expect_rc 2 "a 2-rank checkpoint on 1 rank" -- "$D" $ck $caps --resume "$tmp/ck/latest" --out "$tmp/cbad" --plot none
expect_out "written by 2 ranks, this run has 1" "the refusal names both world sizes"
# shellcheck disable=SC2086
expect_rc 0 "... accepted with --allow-reshard" -- "$D" $ck $caps --resume "$tmp/ck/latest" --allow-reshard \
    --out "$tmp/cre" --plot none
expect_out "latest.metrics: it was written at step 5 \(epoch 1, batch 5\) by 2 rank\(s\); this run resumes at step 5 \(epoch 1, batch 5\) on 1" \
    "... its bookkeeping, another world's, is not used (a warning)"
# shellcheck disable=SC2086
expect_rc 2 "a checkpoint of another model" -- "$R" -n 2 "$D" $ck $caps --hidden 32,32 --resume "$tmp/ck/latest" \
    --out "$tmp/cbad" --plot none
expect_out "$tmp/ck/latest" "the refusal names the file"
cp "$tmp/ck/latest" "$tmp/cut"
truncate -s -9 "$tmp/cut"
# shellcheck disable=SC2086
expect_rc 2 "a cut checkpoint" -- "$R" -n 2 "$D" $ck $caps --resume "$tmp/cut" --out "$tmp/cbad" --plot none
cp "$tmp/ck/latest" "$tmp/flip"
printf '\x7f' | dd of="$tmp/flip" bs=1 seek=4000 conv=notrunc status=none
# shellcheck disable=SC2086
expect_rc 2 "a corrupted checkpoint (one byte)" -- "$R" -n 2 "$D" $ck $caps --resume "$tmp/flip" --out "$tmp/cbad" \
    --plot none
# shellcheck disable=SC2086
expect_rc 2 "a checkpoint that does not exist" -- "$D" $ck $caps --resume "$tmp/nope" --out "$tmp/cbad" --plot none
expect_no_file "$tmp/cbad/summary.json" "a refused resume leaves no summary.json"

# a bad input on one rank only (its --resume file is missing) after set-up: the
# job stops at once with that rank's message, not at the 120 s timeout
start=$(date +%s)
# shellcheck disable=SC2016,SC2086 # $RANK and $@ are the rank's, expanded by its own bash
expect_rc 2 "a missing --resume file on rank 1 of 2 stops both ranks" -- "$R" -n 2 --timeout 120 bash -c \
    'if [ "$RANK" = 1 ]; then set -- "$@" --resume /nonexistent.ckpt; fi; exec "$@"' lab05 "$D" $ck $caps \
    --out "$tmp/cone" --plot none
expect_out "rank 1: fatal: lab05: .*nonexistent.ckpt" "the failing rank's message reaches the output"
expect_cmp "$(($(date +%s) - start))" '<' 20 "the other rank did not wait for the timeout (seconds)"

# make test-gpu's grading (GR_TIERS=gpu1,gpu4) where no GPU answers: the gpu
# items are SKIPPED for want of one and their cpu parents are not needed, so
# nothing runs and nothing says "parent failed" (with a GPU the parents run
# first: grader/tests/test_plan.c tests that plan)
if ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }; then
    expect_rc 0 "GR_TIERS=gpu1,gpu4 without a GPU grades nothing, and says why" -- \
        env GR_TIERS=gpu1,gpu4 "$B/grader/lab05" --impl solutions
    expect_out "^Score: 0/0 +\(skipped: 185 points in the cpu gpu1 gpu4 tiers" "every point skipped, none lost"
    if [ "$(grep -c 'needs a CUDA GPU; none answers here' <<<"$T_OUT")" = 2 ] &&
        ! grep -q 'parent failed' <<<"$T_OUT"; then
        ok "the gpu1 items need a GPU; no parent failed"
    else
        not_ok "GR_TIERS=gpu1,gpu4 without a GPU: $(printf '%s\n' "$T_OUT" | grep -m1 -E 'parent failed|needs')"
    fi
fi
expect_rc 2 "an unknown tier in GR_TIERS is refused" -- env GR_TIERS=gpu "$B/grader/lab05" --impl solutions
expect_out "GR_TIERS: unknown tier 'gpu'" "the tier is named"

# bucket caps are byte counts: exact as given, as MiB rounded to the nearest byte
expect_rc 0 "--bucket-cap 1000 (bytes)" -- "$D" $small --bucket-cap 1000 --first-bucket-cap 1K --max-steps 1 \
    --out "$tmp/cap" --plot none --quiet
expect_cmp "$(awk -v m="$($J "$tmp/cap/summary.json" config.bucket_mb)" 'BEGIN { printf "%.6f", m * 1048576 }')" == 1000 \
    "… the cap is 1000 bytes, not 999"
expect_cmp "$(awk -v m="$($J "$tmp/cap/summary.json" config.first_bucket_mb)" 'BEGIN { printf "%.6f", m * 1048576 }')" == 1024 \
    "… the first cap 1K = 1024 bytes"
expect_rc 0 "--bucket-mb 0.01 (MiB: 10485.76 bytes)" -- "$D" $small --bucket-mb 0.01 --max-steps 1 --out "$tmp/capmb" \
    --plot none --quiet
expect_cmp "$(awk -v m="$($J "$tmp/capmb/summary.json" config.bucket_mb)" 'BEGIN { printf "%.6f", m * 1048576 }')" == 10486 \
    "… rounded to the nearest byte, 10486 (not truncated)"
expect_rc 2 "--bucket-cap and --bucket-mb both given" -- "$D" --bucket-cap 1M --bucket-mb 2 --out "$tmp/bad"
expect_out "--bucket-cap and --bucket-mb both given" "… refused, naming both"
expect_rc 2 "--bucket-cap at its default value and --bucket-mb both given" -- "$D" --bucket-cap 25M --bucket-mb 2 \
    --out "$tmp/bad"
expect_out "--bucket-cap and --bucket-mb both given" "… refused too: the value does not hide the second spelling"
expect_rc 2 "--first-bucket-mb and --first-bucket-cap both given" -- "$D" --first-bucket-mb 1 --first-bucket-cap 1M \
    --out "$tmp/bad"
expect_out "--first-bucket-mb and --first-bucket-cap both given" "… refused, naming both"
expect_rc 2 "--bucket-mb and --bucket-cap both given, the MiB spelling first and both at the default" -- "$D" \
    --bucket-mb 25 --bucket-cap=25M --out "$tmp/bad"
expect_out "--bucket-mb and --bucket-cap both given" "… refused, naming both in the order given"
expect_rc 0 "--help" -- "$D" --help
if grep -q -- "--bucket-mb X.*-1" <<<"$T_OUT"; then
    not_ok "--help still shows a -1 sentinel for --bucket-mb"
else
    ok "--help shows no -1 sentinel: --bucket-mb is the cap's second spelling"
fi
expect_rc 2 "--bucket-mb under half a byte" -- "$D" --bucket-mb 0.0000001 --out "$tmp/bad"
expect_out "--bucket-mb 1e-07 is 0.105 bytes" "… refused with its size in bytes"
for bad in "--bucket-mb 0" "--bucket-cap 0" "--bucket-cap 1.5M" "--accum 0" "--mode nope" "--hidden 0" "--batch-size 0" "--amp fp8" \
    "--amp fp16 --mode ddp-flat" "--growth-interval 0" "--checkpoint-every -1" "--profile h300"; do
    # shellcheck disable=SC2086
    expect_rc 2 "bad flag: $bad" -- "$D" $bad --out "$tmp/bad"
done
expect_no_file "$tmp/bad/summary.json" "bad flags leave no summary.json"
expect_rc 2 "an unknown profile name" -- "$D" --profile h300 --out "$tmp/bad"
expect_out "the shipped ones are a10, a100, h100, h200, l4, rtx4090, t4,.*a path to a .conf file works too" \
    "the unknown name is refused with the shipped names"
expect_rc 0 "--profile list" -- "$D" --profile list
expect_out "^a10 +4xA10-pcie4 .*\(default\)$" "--profile list marks the default"

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
