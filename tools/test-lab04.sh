#!/usr/bin/env bash
# test-lab04.sh — lab 04's benchmark under real mpirun with 1, 2 and 4 ranks:
# the reference's table ending in OK, its outputs and plots, f16, the profile
# it writes for the projection, the grader's dump mode, the deliberate
# deadlock (a hang stopped by the watchdog, and no hang below the eager
# limit), the skeleton, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab04
R=common/bin/dlrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_rc 0 "lab04 (reference) on 4 ranks, 8 B to 1 MiB" -- "$R" -n 4 "$D" -b 8 -e 1M -f 4 --out "$tmp/b4" \
    --write-profile "$tmp/measured.conf"
expect_out "^OK$" "the table ends in OK"
expect_out "ring +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$" "the ring's rows report #wrong = 0"
expect_out "Avg bus bandwidth" "the average bus bandwidth is reported per algorithm"
for f in metrics.csv fit.csv summary.json busbw.png time.png; do
    expect_file "$tmp/b4/$f" "lab04 writes $f"
done
S=$tmp/b4/summary.json
[ "$($J "$S" result)" = OK ] && ok "summary.json says OK" || not_ok "summary.json says '$($J "$S" result)'"
expect_cmp "$($J "$S" busbw_factor)" == 1.5 "busbw = algbw x 2(P-1)/P = 1.5 x on 4 ranks"
expect_cmp "$(head -n 1 "$tmp/b4/metrics.csv" | tr ',' '\n' | grep -c '_busbw$')" == 4 "metrics.csv has a busbw column per algorithm"
expect_cmp "$($J "$S" algos.ring.busbw_largest_gbs)" '>' 0 "the ring's busbw at 1 MiB is measured"
expect_file "$tmp/measured.conf" "--write-profile writes a profile"
expect_rc 0 "lab 03 projects onto the measured profile" -- "$B/solutions/lab03" --epochs 1 --max-steps 2 \
    --no-compare --profile "$tmp/measured.conf" --out "$tmp/l3" --plot none --quiet
grep -q 'measured-4ranks' "$tmp/l3/summary.json" && ok "lab 03's summary names the measured profile" ||
    not_ok "lab 03's summary does not name the measured profile"

expect_rc 0 "f16 on 2 ranks" -- "$R" -n 2 "$D" --dtype half -b 2 -e 64K -f 32 --out "$tmp/h2" --quiet
[ "$($J "$tmp/h2/summary.json" result)" = OK ] && ok "f16 sums of small integers are exact" || not_ok "f16 run not OK"
expect_rc 0 "a world of one (no launcher)" -- "$D" -b 8 -e 4K -f 8 --out "$tmp/one"
expect_out "^OK$" "one rank: OK"
expect_cmp "$($J "$tmp/one/summary.json" busbw_factor)" == 0 "one rank moves no bytes between ranks: factor 0"

expect_rc 0 "the grader's dump mode on 3 ranks" -- "$R" -n 3 "$D" --dump "$tmp/dump" --counts 0,1,3,1009 \
    --algo naive,ring,ring-chunked --chunk-bytes 64 --out "$tmp/d3"
expect_file "$tmp/dump/rank2.json" "each rank writes its record"
expect_file "$tmp/dump/ring-n1009-r1.bin" "each result is written"
expect_cmp "$($J "$tmp/dump/rank0.json" 'calls.*.messages' | sed -n 8p)" == 4 "the ring sends 2(P-1) = 4 messages (n = 1009, 3 ranks)"

# the lesson of the send-first ring: below the eager limit it works, above it hangs
expect_rc 0 "send-first below the eager limit" -- "$R" -n 2 "$D" --algo send-first -b 8 -e 1K -f 4 --out "$tmp/sf"
expect_rc 124 "send-first above the eager limit hangs until the watchdog" -- "$R" -n 3 --timeout 5 "$D" \
    --algo send-first -b 4M -e 4M --out "$tmp/sf2"
expect_out "timed out" "the watchdog names the call that hung"
expect_no_file "$tmp/sf2/summary.json" "the hung run leaves no summary.json"

if [ -x "$B/skeleton/mutant/lab04" ]; then
    expect_rc 1 "the untouched skeleton stops cleanly on 2 ranks" -- "$R" -n 2 "$B/skeleton/mutant/lab04" \
        --out "$tmp/skel"
    expect_out "not implemented yet: lab04 task 1" "the skeleton names the first missing task"
    expect_no_file "$tmp/skel/summary.json" "the skeleton leaves no summary.json"
else
    not_ok "skeleton driver $B/skeleton/mutant/lab04 was not built"
fi

expect_rc 2 "-b larger than -e" -- "$D" -b 1M -e 8 --out "$tmp/x1"
expect_out "-b 1048576 is larger than -e 8" "the sweep's bounds are named"
expect_rc 2 "an unknown algorithm" -- "$D" --algo ring,fast --out "$tmp/x2"
expect_out "--algo 'ring,fast': expected a comma-separated list of naive, ring" "the algorithms are listed"
expect_rc 2 "a size with a bad suffix" -- "$D" -e 12Q --out "$tmp/x3"
expect_out "--maxbytes: '12Q' is not a size" "the bad size is named"
expect_rc 2 "-f 1" -- "$D" -f 1 --out "$tmp/x4"
expect_rc 2 "--counts with a word" -- "$D" --dump "$tmp/x5d" --counts 1,two --out "$tmp/x5"
expect_rc 2 "a bad flag on 2 ranks stops both" -- "$R" -n 2 "$D" --nonsense --out "$tmp/x6"
expect_rc 2 "an unknown --profile, before the sweep" -- "$R" -n 2 "$D" --write-profile "$tmp/x7.conf" --profile h300 \
    --out "$tmp/x7"
expect_out "profile 'h300': .*a10, a100, h100, h200, l4, rtx4090, t4" "the shipped names are listed"
expect_no_file "$tmp/x7/metrics.csv" "the refused run measured nothing"
expect_rc 0 "--profile list" -- "$D" --profile list
expect_out "^rtx4090 +4xRTX4090-pcie4 " "the shipped profiles are listed"
# bad input on one rank only (its --dump directory cannot be made): it fails
# before its first collective; the job must stop at once, not at the timeout
start=$(date +%s)
# shellcheck disable=SC2016 # $RANK and $@ are the rank's, expanded by its own bash
expect_rc 2 "an impossible --dump on rank 2 of 3 stops every rank" -- "$R" -n 3 --timeout 120 bash -c \
    'if [ "$RANK" = 2 ]; then set -- "$@" --dump /proc/lab04-dump; fi; exec "$@"' lab04 "$D" -b 8 -e 64 \
    --out "$tmp/x8"
expect_out "rank 2: fatal: lab04: .*lab04-dump" "the failing rank's message reaches the output"
expect_cmp "$(($(date +%s) - start))" '<' 20 "the others did not wait for the timeout (seconds)"
for k in 1 2 3 4 5 6 7 8; do [ -e "$tmp/x$k/summary.json" ] && not_ok "failed run x$k left a summary.json"; done
ok "no failed run left a summary.json behind"
finish
