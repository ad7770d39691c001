#!/usr/bin/env bash
# vs-torch.sh (bench) — the kit's CPU workloads beside PyTorch eager's, side
# by side in one run: what a learner without a GPU lives with.
#
#   bash grader/bench/vs-torch.sh [OUT]      (make bench runs it)
#
# Four workloads, each defined the same way on both sides (grader/bench/
# torch_cpu.py says what PyTorch runs):
#   step   lab 05's training step, one process, one BLAS thread per core
#          (build/bench/step: 784-512x4-10, batch 4096, SGD with momentum)
#   ddp2   the same step in data parallel on 2 ranks, one thread each
#          (dlrun -n 2 lab05, its measured_step_ms; PyTorch: DDP over gloo)
#   lab01  lab 01's full-batch epoch on synthetic 200000 x 500 (the reference
#          driver's train_seconds over its epochs; every core)
#   lab02  lab 02's softmax-regression epoch, batch 128, one thread
#          (build/bench/lab02's first row)
# BENCH_ROUNDS (default 3) interleaved rounds, the two sides alternating
# which goes first; medians over the quiet rounds (grader/bench/lib.sh).
# PyTorch is not a dependency of the kit: where BENCH_PYTHON (default
# python3) cannot `import torch`, the kit's figures are printed alone and the
# script says so. Writes OUT/vs_torch.csv and OUT/vs_torch.json. Never part
# of `make test`.
set -uo pipefail
: "${BENCH_ROUNDS:=3}"
. "$(dirname "$0")/lib.sh"
bench_begin 05 "$@"
PY=${BENCH_PYTHON:-python3}
threads=$(nproc)
torch=0
tv=$("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null) && torch=1
workloads=(step ddp2 lab01 lab02)
desc() {
    case $1 in
    step) echo "lab 05 step, 1 process, $threads threads" ;;
    ddp2) echo "lab 05 DDP step, 2 ranks x 1 thread" ;;
    lab01) echo "lab 01 full-batch epoch, 200000 x 500" ;;
    lab02) echo "lab 02 softmax epoch, batch 128, 1 thread" ;;
    esac
}

# kit W KEY: runs the kit's side of workload W; sets MS to its milliseconds
# (empty when it failed) and, through bench_run, BENCH_OTHERS
kit() {
    local w=$1 key=$2 o=$tmp/$2
    MS=
    case $w in
    step)
        bench_run "$key" "$B/bench/step" --threads "$threads" --json "$o.json" || return 1
        MS=$("$J" "$o.json" step_ms) ;;
    ddp2)
        bench_run "$key" env OPENBLAS_NUM_THREADS=1 common/bin/dlrun -n 2 "$D" --epochs 3 --train-rows 16384 \
            --probe-every 0 --plot none --quiet --out "$o" || return 1
        MS=$("$J" "$o/summary.json" measured_step_ms) ;;
    lab01)
        bench_run "$key" "$B/solutions/lab01" --data synthetic:n=200000,d=500 --epochs 20 --tol 0 --no-compare \
            --plot none --quiet --out "$o" || return 1
        MS=$(awk -v s="$("$J" "$o/summary.json" train_seconds)" 'BEGIN { printf "%.3f\n", 1e3 * s / 20 }') ;;
    lab02)
        bench_run "$key" "$B/bench/lab02" --out "$o" --reps 2 || return 1
        MS=$(awk -v s="$("$J" "$o/lab02.json" epochs.0.seconds)" 'BEGIN { printf "%.3f\n", 1e3 * s }') ;;
    esac
}

# pyt W KEY: PyTorch's side, the same way
pyt() {
    local w=$1 key=$2 t=$threads
    MS=
    [ "$w" = lab02 ] && t=1
    bench_run "$key" "$PY" grader/bench/torch_cpu.py "$w" --threads "$t" || return 1
    MS=$(tail -n 1 "$tmp/$key.log" | sed -n 's/.*"ms": \([0-9.e+-]*\).*/\1/p')
}

if [ $torch -eq 1 ]; then
    echo "vs-torch bench: the kit beside PyTorch $tv eager on the CPU, $threads cores, $BENCH_ROUNDS rounds"
else
    echo "vs-torch bench: '$PY' cannot import torch: the kit's figures alone (BENCH_PYTHON=/path/to/python with" \
        "PyTorch installed sets them beside PyTorch's)"
fi
echo "round,workload,side,ms,others" >"$tmp/runs.csv"
for r in $(seq 1 "$BENCH_ROUNDS"); do
    for w in "${workloads[@]}"; do
        sides=(kit)
        [ $torch -eq 1 ] && { if [ $((r % 2)) -eq 1 ]; then sides=(kit torch); else sides=(torch kit); fi; }
        for side in "${sides[@]}"; do
            if [ "$side" = kit ]; then kit "$w" "$r-$w-kit"; else pyt "$w" "$r-$w-torch"; fi
            ms=$MS
            if [ -z "$ms" ]; then
                echo "bench vs-torch: the $side run of '$w' failed:" >&2
                tail -n 5 "$tmp/$r-$w-$side.log" >&2
                exit 1
            fi
            echo "$r,$w,$side,$ms,$BENCH_OTHERS" >>"$tmp/runs.csv"
        done
    done
done
cp "$tmp/runs.csv" "$out/vs_torch_rounds.csv"
# medians of the quiet runs (all of them where none was quiet)
med() { # workload side
    local v
    v=$(awk -F, -v w="$1" -v s="$2" -v q="$BENCH_QUIET" 'NR > 1 && $2 == w && $3 == s && $5 < q { print $4 }' \
        "$tmp/runs.csv" | bench_median)
    [ "$v" = nan ] && v=$(awk -F, -v w="$1" -v s="$2" 'NR > 1 && $2 == w && $3 == s { print $4 }' "$tmp/runs.csv" |
        bench_median)
    echo "$v"
}
blas=$(sed -n 2p "$tmp/1-step-kit.log" 2>/dev/null | sed 's/.*batch [0-9]*, \(.*\), [0-9]* BLAS.*/\1/')
echo "  $(head -n 1 "$tmp/1-step-kit.log")"
echo "workload,kit_ms,torch_ms,kit_over_torch" >"$out/vs_torch.csv"
printf '  %-44s %10s %10s %9s\n' workload "kit ms" "torch ms" kit/torch
for w in "${workloads[@]}"; do
    k=$(med "$w" kit)
    t=nan
    [ $torch -eq 1 ] && t=$(med "$w" torch)
    ratio=$(awk -v k="$k" -v t="$t" 'BEGIN { if (t == "nan" || t == 0) print "nan"; else printf "%.2f", k / t }')
    printf '  %-44s %10.1f %10s %9s\n' "$(desc "$w")" "$k" "$(awk -v t="$t" 'BEGIN { if (t == "nan") print "-"; else printf "%.1f", t }')" "$ratio"
    echo "$w,$k,$t,$ratio" >>"$out/vs_torch.csv"
done
{
    echo "{"
    echo "  \"bench\": \"the kit's CPU workloads beside PyTorch eager (medians over quiet rounds, ms)\","
    echo "  \"torch\": \"${tv:-none}\","
    echo "  \"cores\": $threads,"
    echo "  \"rounds\": $BENCH_ROUNDS,"
    echo "  \"blas\": \"$(echo "$blas" | sed 's/"/\\"/g')\","
    echo "  \"workloads\": ["
    n=0
    while IFS=, read -r w k t ratio; do
        [ "$w" = workload ] && continue
        [ $n -gt 0 ] && echo ","
        printf '    {"workload": "%s", "kit_ms": %s, "torch_ms": %s, "kit_over_torch": %s}' "$w" "$k" \
            "$([ "$t" = nan ] && echo null || echo "$t")" "$([ "$ratio" = nan ] && echo null || echo "$ratio")"
        n=$((n + 1))
    done <"$out/vs_torch.csv"
    echo
    echo "  ]"
    echo "}"
} >"$out/vs_torch.json"
echo "  (one run's figures: they vary with the machine and its load; kit/torch below 1 means the kit is faster)"
