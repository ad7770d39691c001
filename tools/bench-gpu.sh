#!/usr/bin/env bash
# bench-gpu.sh — `make bench-gpu` (and the GPU part of `make bench`): the
# ratios a GPU must show for the labs to tell their truth, measured side by
# side in one run, in a few minutes on one GPU. Exits 77 (skipped) where no
# CUDA GPU answers. Never part of `make test`: timings are read, not asserted.
#   lab 01  the gradient pass against the device's own copy of X (bench/lab01)
#   lab 02  the driver on the GPU against the CPU (its five models)
#   lab 05  one rank: the fp32, fp16 and bf16 steps (the trace's device times),
#           an epoch against its steps' compute, the host waits per step, and
#           the one-GPU projection on this GPU's profile against the measured step
# Writes build/bench/gpu.json.
set -uo pipefail
B=${B:-build}
out=${1:-$B/bench}
J=$B/tools/jsonq
mkdir -p "$out"
if ! ls "$B"/obj/common/cuda/*.o >/dev/null 2>&1 || ! command -v nvidia-smi >/dev/null 2>&1 ||
    ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
    echo "bench-gpu: SKIPPED — no CUDA build or no CUDA GPU answers here"
    exit 77
fi
gpu=$(nvidia-smi -L | head -n 1)
# the shipped profile of this GPU, when there is one (the projection is judged against it)
case $gpu in
*H200*) profile=h200 ;; *H100*) profile=h100 ;; *A100*) profile=a100 ;; *A10*) profile=a10 ;;
*L4*) profile=l4 ;; *T4*) profile=t4 ;; *4090*) profile=rtx4090 ;; *) profile= ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
echo "bench-gpu on $gpu${profile:+ (profile $profile)}"

echo "== lab 01: the gradient pass against the device's copy =="
"$B/bench/lab01" --gpu-only --reps 5 --out "$out" || status=1

echo "== lab 02: five models on 50000 rows, on the GPU and on the CPU =="
for dev in cuda cpu; do
    # every training row, 12 epochs: the default run (1000 rows, 300 epochs) is too small a load to measure a GPU
    "$B/solutions/lab02" --device "$dev" --train-rows 50000 --epochs 12 --lambdas 0,1e-4,1e-3,1e-2,1e-1 \
        --plot none --quiet --out "$tmp/l2-$dev" >"$tmp/l2-$dev.log" 2>&1 ||
        { echo "bench-gpu: lab 02 on $dev failed" >&2; tail -5 "$tmp/l2-$dev.log" >&2; status=1; }
done
l2g=$($J "$tmp/l2-cuda/summary.json" train_seconds 2>/dev/null)
l2c=$($J "$tmp/l2-cpu/summary.json" train_seconds 2>/dev/null)
[ -n "$l2g" ] && [ -n "$l2c" ] &&
    awk -v g="$l2g" -v c="$l2c" 'BEGIN { printf "  training: %.3f s on the GPU, %.3f s on the CPU: %.2fx (goal >= 5x)\n", g, c, c / g }'

echo "== lab 05: one rank, fp32 / fp16 / bf16 =="
rows=()
for amp in off fp16 bf16; do
    d=$tmp/l5-$amp
    "$B/solutions/lab05" --device cuda --amp "$amp" --epochs 3 ${profile:+--profile $profile} --plot none --quiet \
        --out "$d" >"$d.log" 2>&1 || { echo "bench-gpu: lab 05 --amp $amp failed" >&2; tail -5 "$d.log" >&2; status=1; continue; }
    S=$d/summary.json
    step=$($J "$S" measured_step_ms) proj=$($J "$S" projection.one_gpu_step_ms)
    ep=$($J "$S" steady_epoch_s) comp=$($J "$S" steady_compute_s) syncs=$($J "$S" device_io.per_step.syncs)
    rows+=("$amp $step $proj $ep $comp $syncs")
    awk -v a="$amp" -v s="$step" -v p="$proj" -v e="$ep" -v c="$comp" -v w="$syncs" 'BEGIN {
        printf "  %-4s step %.3f ms measured, %.3f ms projected (%+.0f%%); epoch %.3f s = %.2f x its steps'"'"' compute; %g host wait(s) per step\n",
            a, s, p, 100 * (p - s) / s, e, e / c, w }'
done
if [ ${#rows[@]} -eq 3 ]; then
    read -r _ s32 _ <<<"${rows[0]}"
    read -r _ s16 _ <<<"${rows[1]}"
    read -r _ sbf _ <<<"${rows[2]}"
    awk -v a="$s32" -v b="$s16" -v c="$sbf" 'BEGIN { printf "  fp16 step = %.2f x fp32, bf16 step = %.2f x fp32 (goal <= 0.6)\n", b / a, c / a }'
    # PyTorch eager on the same MLP and batch cannot run here (no network, no torch): its H200 times, measured
    # once (autocast + GradScaler, torch.cuda events), are quoted for the one GPU they were measured on
    [ "$profile" = h200 ] && awk -v a="$s32" -v b="$s16" -v c="$sbf" 'BEGIN {
        printf "  PyTorch eager on an H200 (measured apart, not in this run): fp32 2.06, fp16 2.45, bf16 2.40 ms a step;\n"
        printf "  this kit: %.2fx, %.2fx and %.2fx as fast\n", 2.06 / a, 2.45 / b, 2.40 / c }'
fi
{
    echo "{"
    echo "  \"device\": \"$gpu\","
    echo "  \"profile\": \"$profile\","
    echo "  \"lab02_train_seconds\": {\"cuda\": ${l2g:-null}, \"cpu\": ${l2c:-null}},"
    echo "  \"lab05\": ["
    sep=
    for r in "${rows[@]}"; do
        read -r amp step proj ep comp syncs <<<"$r"
        printf '%s    {"amp": "%s", "measured_step_ms": %s, "projected_step_ms": %s, "steady_epoch_s": %s, "steady_compute_s": %s, "syncs_per_step": %s}' \
            "$sep" "$amp" "$step" "$proj" "$ep" "$comp" "$syncs"
        sep=$',\n'
    done
    echo
    echo "  ]"
    echo "}"
} >"$out/gpu.json"
echo "  wrote $out/gpu.json (and lab01_gpu.json)"
exit $status
