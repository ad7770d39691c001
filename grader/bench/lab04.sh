#!/usr/bin/env bash
# lab04.sh (bench) — the reference ring against the library's allreduce, side
# by side in one run: busbw at 64 MiB on 2 ranks (targets: ring >= 0.9x the
# library, the pipelined ring >= 1.0x), with the one-thread memcpy of the same
# bytes as the ceiling; then the same sweep on 4 ranks (oversubscribed on a
# 2-core machine), reported. Best of three rounds. JSON, CSV and the busbw
# plot in build/bench/. Never part of `make test`.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
bench_begin 04 "$@"
best_ring=0 best_chunk=0 best_lib=0 best_copy=0
for round in 1 2 3; do
    common/bin/dlrun -n 2 "$D" -b 64M -e 64M --algo ring,ring-chunked,library --iters 10 --chunk-bytes 1M \
        --plot none --quiet --out "$tmp/r$round" >"$tmp/r$round.log" 2>&1 ||
        { echo "bench lab04: the 2-rank run failed" >&2; tail "$tmp/r$round.log" >&2; exit 1; }
    S=$tmp/r$round/summary.json
    read -r ring chunk lib copy < <(echo "$($J "$S" algos.ring.busbw_largest_gbs) $($J "$S" algos.ring-chunked.busbw_largest_gbs) $($J "$S" algos.library.busbw_largest_gbs) $($J "$S" memcpy_gbs)")
    # the round whose library figure is best sets the comparison (all three from the same round)
    if awk -v a="$lib" -v b="$best_lib" 'BEGIN { exit !(a > b) }'; then
        best_ring=$ring best_chunk=$chunk best_lib=$lib best_copy=$copy
    fi
done
r_ring=$(awk -v a="$best_ring" -v b="$best_lib" 'BEGIN { printf "%.3f", a / b }')
r_chunk=$(awk -v a="$best_chunk" -v b="$best_lib" 'BEGIN { printf "%.3f", a / b }')
printf -v best_ring "%.3f" "$best_ring"; printf -v best_chunk "%.3f" "$best_chunk"; printf -v best_lib "%.3f" "$best_lib"; printf -v best_copy "%.3f" "$best_copy"
echo "lab04, 2 ranks, 64 MiB: busbw ring $best_ring GB/s ($r_ring x the library, target >= 0.9), pipelined ring $best_chunk GB/s ($r_chunk x, target >= 1.0), library $best_lib GB/s; one-thread memcpy $best_copy GB/s"
common/bin/dlrun -n 4 "$D" -b 1K -e 64M -f 4 --algo naive,ring,ring-chunked,library --chunk-bytes 1M \
    --plot png --quiet --out "$tmp/p4" >"$tmp/p4.log" 2>&1 || { echo "bench lab04: the 4-rank sweep failed" >&2; exit 1; }
cp "$tmp/p4/metrics.csv" "$out/lab04_sweep4.csv"
cp "$tmp/p4/busbw.png" "$out/lab04_busbw4.png" 2>/dev/null
S4=$tmp/p4/summary.json
echo "lab04, 4 ranks (oversubscribed), 64 MiB: busbw naive $($J "$S4" algos.naive.busbw_largest_gbs), ring $($J "$S4" algos.ring.busbw_largest_gbs), pipelined $($J "$S4" algos.ring-chunked.busbw_largest_gbs), library $($J "$S4" algos.library.busbw_largest_gbs) GB/s"
cat >"$out/lab04.json" <<JSON
{
  "bench": "lab04 ring allreduce vs the library, 64 MiB per rank, best of 3 rounds",
  "ranks": 2,
  "ring_busbw_GBps": $best_ring,
  "chunked_busbw_GBps": $best_chunk,
  "library_busbw_GBps": $best_lib,
  "memcpy_GBps": $best_copy,
  "ring_over_library": $r_ring,
  "chunked_over_library": $r_chunk,
  "sweep4_csv": "lab04_sweep4.csv"
}
JSON
echo "bench lab04: $out/lab04.json, $out/lab04_sweep4.csv, $out/lab04_busbw4.png"
