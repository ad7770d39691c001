#!/usr/bin/env bash
# bench.sh — `make bench`: every lab's benchmark, ratios measured side by side
# in one run; JSON and plots under build/bench/. Never part of `make test`.
set -uo pipefail
B=${B:-build}
mkdir -p "$B/bench"
status=0
for b in "$B"/bench/lab[0-9][0-9]; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b") =="
    "$b" --out "$B/bench" || status=1
done
for b in grader/bench/lab[0-9][0-9].sh; do
    [ -f "$b" ] || continue
    echo "== $(basename "$b" .sh) =="
    bash "$b" "$B/bench" || status=1
done
# the kit's CPU workloads beside PyTorch eager's (the kit's alone where python3 has no torch)
echo "== vs-torch =="
bash grader/bench/vs-torch.sh "$B/bench" || status=1
# where a GPU answers: its ratios, side by side in one run (SKIPPED, exit 77, elsewhere)
bash tools/bench-gpu.sh "$B/bench"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
exit $status
