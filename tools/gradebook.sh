#!/usr/bin/env bash
# gradebook.sh SUBMISSIONS LAB — grades every submission folder into a CSV.
#
# SUBMISSIONS/<student>/ holds that student's copies of the lab's student
# files (for lab 01: scaler.c logreg_math.h logreg.c logreg_cuda.cu); a file
# they did not hand in is taken from the untouched skeleton, so it scores 0.
# Each is built into its own grader (build/gradebook/labNN/<student>/) and
# graded in a forked, rlimited child per item. Writes
#   build/gradebook/labNN.csv          student,score,max_score,skipped,<item...>,status
#   build/gradebook/labNN/<student>/results.json   Gradescope format
set -uo pipefail
subs=${1:-}
lab=${2:-01}
B=${B:-build}
J=$B/tools/jsonq
if [ -z "$subs" ] || [ ! -d "$subs" ]; then
    echo "usage: make gradebook SUBMISSIONS=dir LAB=NN   (dir/<student>/ holds each student's lab files)" >&2
    exit 2
fi
dir=$(basename "$(ls -d labs/"$lab"-* 2>/dev/null | head -n 1)")
if [ -z "$dir" ]; then
    echo "gradebook: no lab $lab in labs/" >&2
    exit 2
fi
files=$(sed -n 's/^LAB_[0-9]*_STUDENT_[A-Z]* *:= *//p' "labs/$dir/lab.mk" | tr '\n' ' ')
root=$B/gradebook/lab$lab
mkdir -p "$root"
csv=$B/gradebook/lab$lab.csv
items=$("$B/grader/lab$lab-labs" --list | awk '{print $1}' | tr '\n' ',')
echo "student,score,max_score,skipped_points,${items}status" >"$csv.tmp"
n=0
for s in "$subs"/*/; do
    name=$(basename "$s")
    case $name in *[!A-Za-z0-9._-]*) echo "gradebook: skipping '$name' (use letters, digits, . _ -)" >&2; continue ;; esac
    work=$root/$name
    rm -rf "$work"
    mkdir -p "$work/src"
    for f in $files; do
        if [ -f "$s/$f" ]; then cp "$s/$f" "$work/src/$f"; else cp "labs/$dir/$f" "$work/src/$f"; fi
    done
    status=graded
    if ! make -s --no-print-directory mutant-grader LAB="$lab" MUT_DIR="$work/src" MUT_B="$work" >"$work/build.log" 2>&1; then
        status=build-failed
        echo "$name,0,,,$(echo "$items" | sed 's/[^,]*,/0,/g')$status" >>"$csv.tmp"
        echo "$name: build failed (see $work/build.log)"
        n=$((n + 1))
        continue
    fi
    "$work/grader/lab$lab-mutant" --impl "$name" --json "$work/results.json" >"$work/grade.log" 2>&1
    row="$name,$($J "$work/results.json" score),$($J "$work/results.json" max_score),$($J "$work/results.json" extra_data.skipped_points)"
    row="$row,$($J "$work/results.json" 'tests.*.score' | tr '\n' ',')$status"
    echo "$row" >>"$csv.tmp"
    echo "$name: $(grep '^Score:' "$work/grade.log")"
    n=$((n + 1))
done
mv "$csv.tmp" "$csv"
echo "gradebook: $n submission(s) -> $csv"
