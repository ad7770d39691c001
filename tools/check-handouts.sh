#!/usr/bin/env bash
# check-handouts.sh — each handout's table of graded items (the rows
# "| `item` | points | tier | after | task |") says what the grader says:
# the same items, in the same order, with the same points, tier and parent
# (build/grader/labNN --list is the one source of truth), every handout
# section a failing item points to exists, every row links the section that
# teaches its item, and each section's "(N points)" is what the rows that
# link it (or one of its subsections) add up to.
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
        if ! grep -qx -- "$a" <<<"$anchors"; then # (not printf | grep -q: under pipefail, grep leaving first fails the printf)
            echo "lab $id: the grader points to README.md#$a, which is no heading of $dir/README.md" >&2
            status=1
        fi
    done
    # the points: a heading's "(N points)" against the rows linking it or a heading under it
    sums=$(awk -v lab="$id" '
        /^#+ / { n++; lvl[n] = index($0, " ") - 1; h = substr($0, lvl[n] + 2)
                 pts[n] = match(h, /[0-9]+ points/) ? substr(h, RSTART, RLENGTH - 7) + 0 : -1
                 a = tolower(h); gsub(/[^a-z0-9 _-]/, "", a); gsub(/ /, "-", a); anchor[n] = a; next }
        /^\| `[a-z_0-9]+` \| [0-9]+ \| (cpu|gpu1|gpu4) \|/ {
            split($0, f, "|"); item = f[2]; gsub(/[` ]/, "", item)
            if (!match(f[6], /\(#[^)]+\)/)) { printf "lab %s: item %s links no section of the handout in its task column\n", lab, item; bad = 1; next }
            got[substr(f[6], RSTART + 2, RLENGTH - 3)] += f[3] }
        END {
            for (i = 1; i <= n; i++) known[anchor[i]] = 1
            for (a in got) if (!(a in known)) { printf "lab %s: items link #%s, which is no heading of the handout\n", lab, a; bad = 1 }
            for (i = 1; i <= n; i++) {
                if (pts[i] < 0) continue
                t = got[anchor[i]]
                for (j = i + 1; j <= n && lvl[j] > lvl[i]; j++) t += got[anchor[j]]
                if (t > 0 && t != pts[i]) { printf "lab %s: section #%s says %d points; its items add up to %d\n", lab, anchor[i], pts[i], t; bad = 1 }
            }
            exit bad }' "$dir/README.md")
    if [ $? -ne 0 ]; then
        echo "$sums" >&2
        status=1
    fi
    if [ "$want" = "$got" ]; then
        echo "lab $id: the handout's item table matches the grader ($(echo "$want" | wc -l) items)"
    else
        echo "lab $id: the handout's item table ($dir/README.md) differs from '$judge --list':" >&2
        diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2
        status=1
    fi
done
exit $status
