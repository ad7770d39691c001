#!/usr/bin/env bash
# lab03.sh (bench) — strong scaling of the reference DDP on this machine: the
# same epochs on 1 and 2 ranks, one BLAS thread per rank, measured side by
# side in BENCH_ROUNDS interleaved rounds (default 5), with the compute /
# communication split and the projection onto the target. Each round's
# speedup is its 1-rank steady epoch over its 2-rank one; the figure is the
# median over the quiet rounds with its range (why: grader/bench/lib.sh).
# Target: >= 1.7x at 2 ranks. JSON, CSV and a plot in build/bench/. Never part
# of `make test`.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
bench_begin 03 "$@"

# one run of the reference on n ranks; prints "steady_epoch compute others"
run() {
    local n=$1 r=$2
    bench_run "r$r-$n" env OPENBLAS_NUM_THREADS=1 common/bin/dlrun -n "$n" "$D" --epochs 4 --no-compare --plot none \
        --quiet --out "$tmp/r$r-$n" ||
        { echo "bench lab03: the $n-rank run failed" >&2; tail "$tmp/r$r-$n.log" >&2; exit 1; }
    # compute: the median of the steady epochs' compute column (epochs 2..4)
    echo "$($J "$tmp/r$r-$n/summary.json" steady_epoch_seconds)" \
        "$(tail -n +3 "$tmp/r$r-$n/metrics.csv" | cut -d, -f8 | bench_median)" "$BENCH_OTHERS"
}

echo "lab03 bench (one BLAS thread per rank, $(nproc) cores, $BENCH_ROUNDS rounds; a round is quiet when other processes used < $BENCH_QUIET cores)"
echo "round,epoch_1,compute_1,others_1,epoch_2,compute_2,others_2,speedup,quiet" >"$tmp/rounds.csv"
for r in $(seq 1 "$BENCH_ROUNDS"); do
    # alternate the order so that neither size always runs first
    if [ $((r % 2)) -eq 1 ]; then
        a=$(run 1 "$r") || exit 1
        b=$(run 2 "$r") || exit 1
    else
        b=$(run 2 "$r") || exit 1
        a=$(run 1 "$r") || exit 1
    fi
    read -r t1 c1 o1 <<<"$a"
    read -r t2 c2 o2 <<<"$b"
    s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", a / b }')
    q=0
    bench_is_quiet "$o1" && bench_is_quiet "$o2" && q=1
    echo "$r,$t1,$c1,$o1,$t2,$c2,$o2,$s,$q" >>"$tmp/rounds.csv"
    printf '  round %d: 1 rank %.3f s, 2 ranks %.3f s: %sx  (others used %s and %s cores%s)\n' "$r" "$t1" "$t2" "$s" \
        "$o1" "$o2" "$([ $q -eq 1 ] || echo ': not quiet, left out')"
done
cp "$tmp/rounds.csv" "$out/lab03_rounds.csv"
quiet=$(awk -F, 'NR > 1 && $9 == 1' "$tmp/rounds.csv" | wc -l)
# shellcheck disable=SC2016 # an awk condition, not a shell expansion
sel='$9 == 1'
if [ "$quiet" -eq 0 ]; then
    echo "  no quiet round: other processes were busy throughout; the figures below are from every round and" \
        "measure this machine's load more than the code"
    sel=1
fi
col() { awk -F, -v c="$1" "NR > 1 && $sel { print \$c }" "$tmp/rounds.csv"; }
t1=$(col 2 | bench_median) c1=$(col 3 | bench_median) t2=$(col 5 | bench_median) c2=$(col 6 | bench_median)
speedup=$(col 8 | bench_median) lo=$(col 8 | bench_min) hi=$(col 8 | bench_max)
left=$(awk -F, 'NR > 1 && $9 == 0 { printf "%s%sx", sep, $8; sep = ", " }' "$tmp/rounds.csv")
proj=$(awk -v p="$($J "$tmp/r1-2/summary.json" projection.speedup)" 'BEGIN { printf "%.3f", p }')
printf '  1 rank : steady epoch %.3f s (compute %.3f s)   [medians]\n' "$t1" "$c1"
printf '  2 ranks: steady epoch %.3f s (compute %.3f s, communication and waiting %.3f s)\n' "$t2" "$c2" \
    "$(awk -v a="$t2" -v b="$c2" 'BEGIN { print a - b }')"
rounds=$(($(wc -l <"$tmp/rounds.csv") - 1))
printf '  measured speedup at 2 ranks: %sx, median of %s, range %s-%sx (target >= 1.7x)\n' \
    "$speedup" "$([ "$quiet" -gt 0 ] && echo "$quiet quiet round(s)" || echo "all $rounds round(s), none quiet")" "$lo" "$hi"
[ -z "$left" ] || echo "  left out (another process held a core, so one rank was a straggler): $left"
printf '  the 2-rank run projected on 2 GPUs of %s: %sx\n' "$($J "$tmp/r1-2/summary.json" projection.profile)" "$proj"
cat >"$out/lab03_scaling.csv" <<CSV
ranks,epoch_s,compute_s,comm_s,speedup
1,$t1,$c1,$(awk -v a="$t1" -v b="$c1" 'BEGIN { print a - b }'),1
2,$t2,$c2,$(awk -v a="$t2" -v b="$c2" 'BEGIN { print a - b }'),$speedup
CSV
cat >"$out/lab03.json.tmp" <<JSON
{
  "bench": "lab03 strong scaling of the reference DDP, 1 and 2 ranks, one BLAS thread per rank; medians over quiet rounds",
  "rounds": $BENCH_ROUNDS,
  "quiet_rounds": $quiet,
  "quiet_below_cores": $BENCH_QUIET,
  "epoch_seconds_1": $t1,
  "epoch_seconds_2": $t2,
  "compute_seconds_2": $c2,
  "speedup_2": $speedup,
  "speedup_2_min": $lo,
  "speedup_2_max": $hi,
  "target_speedup_2": 1.7,
  "meets_target": $(awk -v s="$speedup" 'BEGIN { print (s >= 1.7) ? "true" : "false" }'),
  "projected_speedup_2gpu": $proj
}
JSON
mv "$out/lab03.json.tmp" "$out/lab03.json"
gnuplot -e "fmt='png'; out='$out/lab03_scaling.png'; data='$out/lab03_scaling.csv'" common/plot/style.gp \
    labs/03-data-parallel/plots/bench_scaling.gp 2>/dev/null || echo "bench lab03: no plot (gnuplot?)"
echo "  wrote $out/lab03.json, lab03_scaling.csv, lab03_rounds.csv, lab03_scaling.png"
