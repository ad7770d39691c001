#!/usr/bin/env bash
# test-lab07.sh — lab 07's driver end to end: the reference split over 1, 2
# and 4 ranks against the one-rank model it trains beside (exactly equal on
# one rank, within 1e-5 on more), the traffic equal to the ring's closed
# form, the grader's --check and --dump files, the plots, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab07
R=common/bin/dlrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small=(--data fashion_mnist:train=1000,test=200 --epochs 2)

expect_rc 0 "lab07 (reference) on one rank" -- "$D" "${small[@]}" --out "$tmp/one" --plot svg --quiet
S=$tmp/one/summary.json
expect_cmp "$($J "$S" tp.max_abs_diff)" == 0 "one rank: the split is the whole model, bit for bit"
expect_cmp "$($J "$S" tp.bytes_per_step)" == 0 "one rank: nothing is sent"
expect_cmp "$(($(wc -l <"$tmp/one/metrics.csv") - 1))" == 2 "metrics.csv: one row per epoch"
expect_cmp "$(($(wc -l <"$tmp/one/steps.csv") - 1))" == 32 "steps.csv: one row per step (1000 rows, batch 64)"
if command -v gnuplot >/dev/null; then
    expect_file "$tmp/one/equivalence.svg" "the equivalence plot is drawn"
    expect_file "$tmp/one/traffic.svg" "the traffic plot is drawn"
fi
for P in 2 4; do
    expect_rc 0 "lab07 (reference) on $P ranks" -- "$R" -n "$P" "$D" "${small[@]}" --hidden 50,30,50 \
        --out "$tmp/p$P" --plot none --quiet --dump "$tmp/p$P/shards"
    S=$tmp/p$P/summary.json
    expect_cmp "$($J "$S" tp.max_abs_diff)" '<=' 1e-5 "$P ranks: every parameter within 1e-5 of the one-rank model"
    expect_cmp "$($J "$S" tp.bytes_per_step)" == "$($J "$S" tp.bytes_per_step_model)" \
        "$P ranks: the bytes sent equal the ring's closed form"
    expect_cmp "$($J "$S" tp.messages_per_step)" == "$($J "$S" tp.messages_per_step_model)" \
        "$P ranks: so do the messages"
    expect_cmp "$($J "$S" tp.allreduces_per_step)" == 3 "$P ranks: 3 allreduces a step (2 blocks, none back for the first)"
    expect_cmp "$($J "$S" test_accuracy)" == "$($J "$S" ref_test_accuracy)" "$P ranks: the same test accuracy"
    expect_file "$tmp/p$P/shards/r$((P - 1))_b1_W2.npy" "$P ranks: --dump writes every rank's shards"
done
expect_rc 0 "--check on 3 ranks" -- "$R" -n 3 "$D" --check "$tmp/check" --out "$tmp/c"
expect_file "$tmp/check/r2_dX.npy" "… writes every rank's arrays"
expect_no_file "$tmp/c/summary.json" "… and trains nothing"
expect_rc 2 "--hidden with an even number of widths is refused" -- "$D" --hidden 64,64 --out "$tmp/bad"
expect_out "give 1, 3, 5 or 7 widths" "… saying what is allowed"
expect_no_file "$tmp/bad/summary.json" "… and leaving no summary.json"
expect_rc 2 "more ranks than a block's hidden units is refused" -- "$R" -n 4 "$D" --hidden 3 --out "$tmp/bad2"
expect_out "cannot give each of 4 ranks" "… naming the block and the ranks"
expect_rc 2 "an unknown flag is refused" -- "$D" --bogus
finish
