#!/usr/bin/env bash
# test-similarity.sh — tools/similarity.sh on a made-up class of lab 01:
# a copy with renamed variables is found at the top, the untouched skeleton
# shares nothing once the kit's lines are subtracted, a mutant of the
# reference is paired with both copies of it, and bad arguments are refused.
set -u
. tools/testlib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v sim_c >/dev/null 2>&1; then
    echo "SKIPPED: no sim_c (Debian's similarity-tester; make gradebook installs it)"
    exit 0
fi
S=$tmp/subs
mkdir -p "$S"/{alice,bob,carol,dave}
cp solutions/01-logreg/* "$S/alice/"
for f in solutions/01-logreg/*; do # bob: alice's code with the variables renamed
    sed -e 's/\bsum\b/total/g; s/\bcount\b/num/g; s/\bss\b/sq/g; s/\bloss\b/cost/g' "$f" >"$S/bob/$(basename "$f")"
done
for f in $(bash tools/lab.sh get 01 STUDENT_C) $(bash tools/lab.sh get 01 STUDENT_CU); do
    cp "labs/01-logreg/$f" "$S/carol/" # carol: the untouched skeleton
done
cp labs/01-logreg/scaler.c "$S/dave/" # dave: task 1 not done, the rest the reference with one mistake
patch -s -o "$S/dave/logreg.c" solutions/01-logreg/logreg.c <grader/mutants/01-no-shuffle.diff ||
    not_ok "the mutant 01-no-shuffle applies to the reference"
mkdir -p "$S/bad name"

expect_rc 0 "similarity report of four submissions" -- bash tools/similarity.sh "$S" 01 "$tmp/out"
expect_out "left out 'bad name'" "a folder whose name cannot be a CSV field is named and left out"
csv=$tmp/out/lab01-similarity.csv
expect_file "$csv" "it writes lab01-similarity.csv"
expect_file "$tmp/out/lab01-similarity.html" "it writes lab01-similarity.html"
[ "$(sed -n 2p "$csv" | cut -d, -f1,2)" = alice,bob ] && ok "the renamed copy is the first pair" ||
    not_ok "the first pair is '$(sed -n 2p "$csv")', expected alice,bob"
expect_cmp "$(sed -n 2p "$csv" | cut -d, -f4)" '>=' 0.8 "most of alice's own lines are bob's"
grep -q carol "$csv" && not_ok "the skeleton is paired with someone: $(grep carol "$csv" | head -n 1)" ||
    ok "the untouched skeleton shares nothing beyond the kit's lines"
grep -q '^alice,dave,' "$csv" && grep -q '^bob,dave,' "$csv" && ok "the mutant is paired with both copies" ||
    not_ok "the mutant is not paired with alice and bob: $(cat "$csv")"
grep -q 'alice and bob' "$tmp/out/lab01-similarity.html" && ok "the page shows the pair's shared runs" ||
    not_ok "the page lacks the pair alice and bob"
expect_rc 2 "no such folder" -- bash tools/similarity.sh "$tmp/none" 01 "$tmp/out"
expect_rc 2 "SIM_RUN must be a number" -- env SIM_RUN=x bash tools/similarity.sh "$S" 01 "$tmp/out"
finish
