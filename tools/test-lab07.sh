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

expect_rc 0 "lab07 (reference) on one rank" -- "$D" "${small[@]}" --part tp --out "$tmp/one" --plot svg --quiet
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
    expect_rc 0 "lab07 (reference) on $P ranks" -- "$R" -n "$P" "$D" "${small[@]}" --hidden 50,30,50 --part tp \
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
# part 2: both schedules against the closed forms, on 1 to 4 stages (4 layers)
for P in 1 2 3 4; do
    expect_rc 0 "the pipeline on $P stage(s)" -- "$R" -n "$P" "$D" "${small[@]}" --part pp --out "$tmp/pp$P" \
        --plot svg --quiet
    S=$tmp/pp$P/summary.json
    for sc in gpipe 1f1b; do
        gap=$(awk -v a="$($J "$S" "schedules.$sc.bubble_measured")" -v b="$($J "$S" "schedules.$sc.bubble_model")" \
            'BEGIN { d = a - b; print (d < 0 ? -d : d) }')
        expect_cmp "$gap" '<=' 1e-12 "$P stage(s), $sc: the bubble of the recorded orders is (P - 1)/(m + P - 1)"
        expect_cmp "$($J "$S" "schedules.$sc.max_abs_diff")" '<=' 1e-5 "$P stage(s), $sc: the one-rank model's step"
    done
    expect_cmp "$($J "$S" schedules.gpipe.m)" == 8 "$P stage(s): summary.json shows the sweep's m = 8"
    expect_cmp "$($J "$S" schedules.gpipe.peak_slots)" == 8 "$P stage(s): GPipe holds all 8 micro-batches"
    expect_cmp "$($J "$S" schedules.1f1b.peak_slots)" == "$P" "$P stage(s): 1F1B at most min(m, P) = $P"
done
expect_cmp "$(awk -F, 'NR > 1 && $1 == 1 && $2 == 8 {print $5}' "$tmp/pp4/schedules.csv")" == 4 \
    "1F1B, 8 micro-batches on 4 stages: still 4 held at most"
expect_cmp "$(awk -F, 'NR > 1 && $1 == 1 {print $3}' "$tmp/pp4/stages.csv")" == 3 \
    "1F1B on 4 stages: stage 1 holds 3 (P - s)"
if command -v gnuplot >/dev/null; then
    for f in schedules bubble stage_memory; do expect_file "$tmp/pp4/$f.svg" "the $f plot is drawn"; done
fi
# part 3: the planner's choice for the default model on 128 and on 16 nodes of 8 A100s
expect_rc 0 "the planner" -- "$D" --part plan --out "$tmp/plan" --plot svg --quiet
S=$tmp/plan/summary.json
expect_cmp "$($J "$S" plan.best.t)" '<=' 8 "the chosen tensor group fits in a node of 8 (PTD-P's choice)"
expect_cmp "$($J "$S" plan.best.p)" '>' 1 "… and the pipeline spans nodes"
expect_cmp "$(awk -F, 'NR > 1 && $14 == 1 {print $6}' "$tmp/plan/plan.csv")" == 1 "plan.csv marks the chosen layout, which fits"
expect_cmp "$(($(wc -l <"$tmp/plan/plan.csv") - 1))" == "$($J "$S" plan.layouts)" "plan.csv: a row per layout"
if command -v gnuplot >/dev/null; then expect_file "$tmp/plan/plan.svg" "the plan plot is drawn"; fi
expect_no_file "$tmp/plan/steps.csv" "a planner run writes no training files"
expect_rc 0 "the planner on 64 nodes of 8 H100s" -- "$D" --part plan --plan-profile h100 --nodes 64 --out "$tmp/planh" \
    --plot none --quiet
expect_cmp "$($J "$tmp/planh/summary.json" plan.best.t)" '<=' 8 "… its tensor group fits in a node too"
expect_rc 2 "a profile without the links between nodes, on 2 nodes, is refused" -- "$D" --part plan --nodes 2 \
    --plan-profile a10 --out "$tmp/bad4"
expect_out "has no nic_bw" "… saying what it lacks"
expect_rc 2 "more stages than layers are refused" -- "$R" -n 3 "$D" --part pp --hidden 64 --out "$tmp/bad3"
expect_out "cannot make 3 pipeline stages" "… naming the layers and the stages"
expect_rc 0 "--check on 3 ranks" -- "$R" -n 3 "$D" --check "$tmp/check" --out "$tmp/c"
expect_file "$tmp/check/r2_dX.npy" "… writes every rank's arrays"
expect_no_file "$tmp/c/summary.json" "… and trains nothing"
expect_rc 2 "--hidden with an even number of widths is refused" -- "$D" --hidden 64,64 --out "$tmp/bad"
expect_out "give 1, 3, 5 or 7 widths" "… saying what is allowed"
expect_no_file "$tmp/bad/summary.json" "… and leaving no summary.json"
expect_rc 2 "more ranks than a block's hidden units is refused" -- "$R" -n 4 "$D" --hidden 3 --part tp --out "$tmp/bad2"
expect_out "cannot give each of 4 ranks" "… naming the block and the ranks"
expect_rc 2 "an unknown flag is refused" -- "$D" --bogus
finish
