#!/usr/bin/env bash
# gradebook-merge.sh LAB — the CSV of a gradebook graded in slices
# (tools/slurm/gradebook.sbatch): every slice's labNN.csv under
# GB_ROOT/slices/labNN/*/ (GB_ROOT: build/gradebook), their one header, their
# rows sorted by student, into GB_ROOT/labNN.csv; each student's folder
# (results.json, logs) is copied beside it, to GB_ROOT/labNN/<student>/.
# Refuses (exit 1, naming it) a slice without its CSV (a task that did not
# finish) or with another header, and a student graded twice.
set -euo pipefail
lab=${1:?usage: gradebook-merge.sh LAB}
root=${GB_ROOT:-build/gradebook}
slices=$root/slices/lab$lab
[ -d "$slices" ] || { echo "gradebook-merge: no slices in $slices (run tools/slurm/gradebook.sbatch first)" >&2; exit 1; }
header=
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
n=0
for d in "$slices"/*/; do
    csv=$d/lab$lab.csv
    [ -f "$csv" ] || { echo "gradebook-merge: slice $(basename "$d") has no lab$lab.csv: did its task finish?" >&2; exit 1; }
    h=$(head -n 1 "$csv")
    [ -z "$header" ] && header=$h
    [ "$h" = "$header" ] || { echo "gradebook-merge: slice $(basename "$d") has another header: $h" >&2; exit 1; }
    tail -n +2 "$csv" >>"$rows"
    n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "gradebook-merge: no slices in $slices" >&2; exit 1; }
dup=$(cut -d, -f1 "$rows" | sort | uniq -d | head -n 1)
[ -z "$dup" ] || { echo "gradebook-merge: student '$dup' was graded in two slices (slices of an older run? remove $slices first)" >&2; exit 1; }
mkdir -p "$root/lab$lab"
for d in "$slices"/*/lab"$lab"/*/; do
    [ -d "$d" ] && cp -a "$d" "$root/lab$lab/"
done
out=$root/lab$lab.csv
{ echo "$header"; LC_ALL=C sort -t, -k1,1 "$rows"; } >"$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "gradebook-merge: $n slice(s), $(($(wc -l <"$out") - 1)) submission(s) -> $out"
