#!/usr/bin/env bash
# check-handouts.sh — each handout's table of graded items (the rows
# "| `item` | points | tier | after | task |") says what the grader says:
# the same items, in the same order, with the same points, tier and parent
# (build/grader/labNN --list is the one source of truth), and every handout
# section a failing item points to exists.
set -uo pipefail
B=${B:-build}
status=0
for lab in $(bash tools/lab.sh list); do
    dir=labs/$lab
    id=${lab%%-*}
    judge=$B/grader/lab$id
    [ -x "$judge" ] || { echo "no $judge: build first" >&2; status=1; continue; }
    want=$("$judge" --list | awk '{ after = ""; if (match($0, /\(after [a-z_0-9]+\)/)) after = substr($0, RSTART + 7, RLENGTH - 8);
                                    print $1, $2, $4, after }')
    got=$(grep -E '^\| `[a-z_0-9]+` \| [0-9]+ \| (cpu|gpu1|gpu4) \|' "$dir/README.md" |
        awk -F'|' '{ gsub(/[` ]/, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/[` ]/, "", $5); print $2, $3, $4, $5 }')
    # every section an item points to is a heading of the handout (GitHub's anchors)
    anchors=$(grep -E '^#+ ' "$dir/README.md" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g')
    for a in $("$judge" --list | sed -n 's/.*\[see README\.md#\([^]]*\)\]$/\1/p' | sort -u); do
        if ! printf '%s\n' "$anchors" | grep -qx -- "$a"; then
            echo "lab $id: the grader points to README.md#$a, which is no heading of $dir/README.md" >&2
            status=1
        fi
    done
    if [ "$want" = "$got" ]; then
        echo "lab $id: the handout's item table matches the grader ($(echo "$want" | wc -l) items)"
    else
        echo "lab $id: the handout's item table ($dir/README.md) differs from '$judge --list':" >&2
        diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2
        status=1
    fi
done
exit $status
