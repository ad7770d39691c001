#!/usr/bin/env bash
# test-lab06.sh — lab 06's driver end to end: the reference's outputs
# and plot, the numbers it reports against each other, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab06
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_rc 0 "lab06 (reference), sizes 2^10 to 2^16" -- "$D" --epochs 7 --out "$tmp/run" --plot svg --quiet
S=$tmp/run/summary.json
expect_file "$tmp/run/metrics.csv" "metrics.csv is written"
expect_cmp "$(($(wc -l <"$tmp/run/metrics.csv") - 1))" == 7 "one row per size"
expect_cmp "$($J "$S" n_max)" == 65536 "the largest n is 2^16"
expect_cmp "$($J "$S" max_rel_error)" '<=' 1e-12 "the reference's mean is exact to 1e-12"
expect_cmp "$($J "$S" float_rel_error)" '>' "$($J "$S" max_rel_error)" "a float accumulator is further off"
if command -v gnuplot >/dev/null; then expect_file "$tmp/run/error.svg" "the plot is drawn"; fi
expect_rc 2 "--epochs 99 is refused" -- "$D" --epochs 99 --out "$tmp/bad"
expect_out "--epochs 99: at most" "… saying what is allowed"
expect_no_file "$tmp/bad/summary.json" "… and leaving no summary.json"
expect_rc 2 "an unknown flag is refused" -- "$D" --bogus
finish
