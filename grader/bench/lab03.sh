#!/usr/bin/env bash
# lab03.sh (bench) — strong scaling of the reference DDP on this machine: the
# same epoch on 1 and 2 ranks, one BLAS thread per rank, measured side by side
# (interleaved, best of two rounds), with the compute/communication split and
# the projection onto the target. Target: >= 1.7x at 2 ranks. JSON, CSV and a
# plot in build/bench/. Never part of `make test`.
set -uo pipefail
B=${B:-build}
out=${1:-$B/bench}
J=$B/tools/jsonq
D=$B/solutions/lab03
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A best comp
for round in 1 2; do
    for n in 1 2; do
        OPENBLAS_NUM_THREADS=1 common/bin/dlrun -n $n "$D" --epochs 3 --no-compare --plot none --quiet \
            --out "$tmp/r$n" >"$tmp/r$n.log" 2>&1 || { echo "bench lab03: the $n-rank run failed" >&2; tail "$tmp/r$n.log" >&2; exit 1; }
        t=$($J "$tmp/r$n/summary.json" epoch_seconds)
        c=$(tail -n 1 "$tmp/r$n/metrics.csv" | cut -d, -f8)
        if [ -z "${best[$n]:-}" ] || awk -v a="$t" -v b="${best[$n]}" 'BEGIN { exit !(a < b) }'; then
            best[$n]=$t
            comp[$n]=$c
            cp "$tmp/r$n/summary.json" "$tmp/best$n.json"
        fi
    done
done
speedup=$(awk -v a="${best[1]}" -v b="${best[2]}" 'BEGIN { printf "%.3f", a / b }')
proj=$(awk -v p="$($J "$tmp/best2.json" projection.speedup)" 'BEGIN { printf "%.3f", p }')
echo "lab03 bench (one BLAS thread per rank, $(nproc) cores)"
printf '  1 rank : epoch %.3f s (compute %.3f s)\n' "${best[1]}" "${comp[1]}"
printf '  2 ranks: epoch %.3f s (compute %.3f s, communication and waiting %.3f s)\n' "${best[2]}" "${comp[2]}" \
    "$(awk -v a="${best[2]}" -v b="${comp[2]}" 'BEGIN { print a - b }')"
printf '  measured speedup at 2 ranks: %sx (target >= 1.7x)\n' "$speedup"
printf '  the 2-rank run projected on 2 GPUs of %s: %sx\n' "$($J "$tmp/best2.json" projection.profile)" "$proj"
cat >"$out/lab03_scaling.csv" <<CSV
ranks,epoch_s,compute_s,comm_s,speedup
1,${best[1]},${comp[1]},$(awk -v a="${best[1]}" -v b="${comp[1]}" 'BEGIN { print a - b }'),1
2,${best[2]},${comp[2]},$(awk -v a="${best[2]}" -v b="${comp[2]}" 'BEGIN { print a - b }'),$speedup
CSV
cat >"$out/lab03.json.tmp" <<JSON
{
  "bench": "lab03 strong scaling of the reference DDP, 1 and 2 ranks, one BLAS thread per rank",
  "epoch_seconds_1": ${best[1]},
  "epoch_seconds_2": ${best[2]},
  "compute_seconds_2": ${comp[2]},
  "speedup_2": $speedup,
  "target_speedup_2": 1.7,
  "meets_target": $(awk -v s="$speedup" 'BEGIN { print (s >= 1.7) ? "true" : "false" }'),
  "projected_speedup_2gpu": $proj
}
JSON
mv "$out/lab03.json.tmp" "$out/lab03.json"
gnuplot -e "fmt='png'; out='$out/lab03_scaling.png'; data='$out/lab03_scaling.csv'" common/plot/style.gp \
    labs/03-data-parallel/plots/bench_scaling.gp 2>/dev/null || echo "bench lab03: no plot (gnuplot?)"
echo "  wrote $out/lab03.json, lab03_scaling.csv, lab03_scaling.png"
