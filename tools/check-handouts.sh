#!/usr/bin/env bash
# check-handouts.sh — each handout's table of graded items (the rows
# "| `item` | points | tier | after | task |") says what the grader says:
# the same items, in the same order, with the same points, tier and parent
# (build/grader/labNN --list is the one source of truth).
set -uo pipefail
B=${B:-build}
status=0
for mk in labs/*/lab.mk; do
    dir=$(dirname "$mk")
    id=$(basename "$dir" | cut -d- -f1)
    judge=$B/grader/lab$id
    [ -x "$judge" ] || { echo "no $judge: build first" >&2; status=1; continue; }
    want=$("$judge" --list | awk '{ after = ""; if (match($0, /\(after [a-z_0-9]+\)/)) after = substr($0, RSTART + 7, RLENGTH - 8);
                                    print $1, $2, $4, after }')
    got=$(grep -E '^\| `[a-z_0-9]+` \| [0-9]+ \| (cpu|gpu1|gpu4) \|' "$dir/README.md" |
        awk -F'|' '{ gsub(/[` ]/, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/[` ]/, "", $5); print $2, $3, $4, $5 }')
    if [ "$want" = "$got" ]; then
        echo "lab $id: the handout's item table matches the grader ($(echo "$want" | wc -l) items)"
    else
        echo "lab $id: the handout's item table ($dir/README.md) differs from '$judge --list':" >&2
        diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2
        status=1
    fi
done
exit $status
