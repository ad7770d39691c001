#!/usr/bin/env bash
# lab05.sh (bench) — strong scaling of the reference's bucketed DDP on this
# machine: the same epochs on 1 and 2 ranks, ddp-flat on 2 ranks, and the
# bucketed run in AMP (--amp fp16) on 2 ranks, one BLAS thread per rank,
# measured side by side (interleaved, best of two rounds),
# with each rank's compute (the kit's trace: forward, backward, optimizer)
# and the rest (communication and waiting), beside the projection onto the
# target. JSON and CSV in build/bench/. Never part of `make test`.
set -uo pipefail
B=${B:-build}
out=${1:-$B/bench}
J=$B/tools/jsonq
D=$B/solutions/lab05
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A best comp
runs=("1 bucketed off" "2 bucketed off" "2 ddp-flat off" "2 bucketed fp16" "2 bucketed fp16-noscale")
for round in 1 2; do
    for run in "${runs[@]}"; do
        read -r n mode amp <<<"$run"
        key="$n-$mode"
        [ "$amp" = off ] || key="$key-$amp"
        OPENBLAS_NUM_THREADS=1 common/bin/dlrun -n "$n" "$D" --mode "$mode" --amp "$amp" --probe-every 0 --epochs 4 \
            --bucket-mb 1 --plot none --quiet --out "$tmp/$key" >"$tmp/$key.log" 2>&1 ||
            { echo "bench lab05: the run '$run' failed" >&2; tail "$tmp/$key.log" >&2; exit 1; }
        t=$($J "$tmp/$key/summary.json" steady_epoch_s)
        if [ -z "${best[$key]:-}" ] || awk -v a="$t" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; then
            best[$key]=$t
            comp[$key]=$($J "$tmp/$key/summary.json" steady_compute_s)
            cp "$tmp/$key/summary.json" "$tmp/best-$key.json"
        fi
    done
done
echo "lab05 bench (one BLAS thread per rank, $(nproc) cores; steady epochs, best of 2 rounds; varies run to run)"
{
    echo "run,ranks,mode,epoch_s,compute_s,other_s,speedup"
    for run in "${runs[@]}"; do
        read -r n mode amp <<<"$run"
        key="$n-$mode"
        [ "$amp" = off ] || { key="$key-$amp" && mode="$mode-$amp"; }
        other=$(awk -v a="${best[$key]}" -v b="${comp[$key]}" 'BEGIN { print a - b }')
        sp=$(awk -v a="${best[1-bucketed]}" -v b="${best[$key]}" 'BEGIN { printf "%.3f", a / b }')
        printf '  %d rank(s), %-14s: epoch %.3f s, compute %.3f s, communication and waiting %.3f s, %sx\n' "$n" \
            "$mode" "${best[$key]}" "${comp[$key]}" "$other" "$sp" >&2
        echo "$key,$n,$mode,${best[$key]},${comp[$key]},$other,$sp"
    done
} 2>&1 >"$out/lab05_scaling.csv" | cat
P=$tmp/best-2-bucketed.json
A=$tmp/best-2-bucketed-fp16.json
printf '  --amp fp16 here (fp16 emulated on the CPU: rounding at every step, no tensor cores): epoch %.3f s, %.2fx the fp32 epoch\n' \
    "${best[2-bucketed-fp16]}" "$(awk -v a="${best[2-bucketed-fp16]}" -v b="${best[2-bucketed]}" 'BEGIN { printf "%.3f", a / b }')"
# the three learning curves side by side (fp32, AMP, fp16 without the scale)
gnuplot -e "fmt='png'; out='$out/lab05_amp.png'; fp32='$tmp/2-bucketed/metrics.csv'; \
amp='$tmp/2-bucketed-fp16/metrics.csv'; noscale='$tmp/2-bucketed-fp16-noscale/metrics.csv'" common/plot/style.gp \
    labs/05-ddp-amp/plots/amp_compare.gp 2>/dev/null && echo "  learning curves fp32 / AMP / fp16-noscale: $out/lab05_amp.png"
printf '  --amp fp16 projected on %s GPUs of %s: bucketed %.2fx one fp16 GPU, %.2fx one fp32 GPU\n' \
    "$($J "$A" projection.gpus)" "$($J "$A" projection.profile)" "$($J "$A" projection.bucketed.speedup)" \
    "$($J "$A" projection.bucketed.speedup_vs_one_fp32_gpu)"
printf '  projected on %s GPUs of %s: bucketed %.2fx, ddp-flat %.2fx, per-param %.2fx\n' "$($J "$P" projection.gpus)" \
    "$($J "$P" projection.profile)" "$($J "$P" projection.bucketed.speedup)" \
    "$($J "$P" projection.ddp-flat.speedup)" "$($J "$P" projection.per-param.speedup)"
cat >"$out/lab05.json.tmp" <<JSON
{
  "bench": "lab05 strong scaling of the reference's bucketed DDP, 1 and 2 ranks, and ddp-flat on 2; one BLAS thread per rank",
  "epoch_seconds_1": ${best[1-bucketed]},
  "epoch_seconds_2_bucketed": ${best[2-bucketed]},
  "epoch_seconds_2_flat": ${best[2-ddp-flat]},
  "compute_seconds_2_bucketed": ${comp[2-bucketed]},
  "speedup_2_bucketed": $(awk -v a="${best[1-bucketed]}" -v b="${best[2-bucketed]}" 'BEGIN { printf "%.3f", a / b }'),
  "projected_speedup_bucketed": $($J "$P" projection.bucketed.speedup),
  "projected_speedup_flat": $($J "$P" projection.ddp-flat.speedup),
  "epoch_seconds_2_bucketed_amp": ${best[2-bucketed-fp16]},
  "projected_speedup_amp_vs_fp16_gpu": $($J "$A" projection.bucketed.speedup),
  "projected_speedup_amp_vs_fp32_gpu": $($J "$A" projection.bucketed.speedup_vs_one_fp32_gpu)
}
JSON
mv "$out/lab05.json.tmp" "$out/lab05.json"
echo "  wrote $out/lab05.json, lab05_scaling.csv"
