#!/usr/bin/env bash
# test-lab04.sh — lab 04's benchmark under real mpirun with 1, 2 and 4 ranks:
# the reference's table ending in OK, its outputs and plots, each
# collective's busbw factor, the α–β fit and where it is drawn, f16, the
# profile it writes for the projection, the grader's dump mode, the
# deliberate deadlock (a hang stopped by the watchdog, and no hang below the
# eager limit), the skeleton, and bad input. No time or speed is asserted:
# only how the numbers the run reports relate to each other.
set -u
. tools/testlib.sh
D=$B/solutions/lab04
R=common/bin/dlrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# column NAME of CSV FILE, one value a line
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } k { print $k }' "$1"; }
# a key's value in the profile FILE
conf() { sed -n "s/^$2 *= *//p" "$1"; }
# expect_near A B WHAT — equal to the CSV's 9 significant digits
expect_near() {
    if awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-8 * m) }'; then
        ok "$3 ($1 ~ $2)"
    else not_ok "$3: $1 differs from $2"; fi
}

# --out and the profile's folder do not exist yet: both are made
P4=$tmp/b4/out
expect_rc 0 "lab04 (reference) on 4 ranks, 8 B to 1 MiB, every collective" -- "$R" -n 4 "$D" -b 8 -e 1M -f 4 \
    --algo naive,ring,ring-chunked,library,reduce-scatter,all-gather --out "$P4" \
    --write-profile "$P4/x/profile.conf"
expect_out "^OK$" "the table ends in OK"
expect_out "ring +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$" "the ring's rows report #wrong = 0"
expect_out "Avg bus bandwidth" "the average bus bandwidth is reported per algorithm"
expect_out "busbw = algbw x 1.5 \(allreduce\), x 0.75 \(reduce_scatter\), x 0.75 \(allgather\)" \
    "the table says each collective's busbw factor"
for f in metrics.csv fit.csv summary.json busbw.png time.png; do
    expect_file "$P4/$f" "lab04 writes $f"
done
S=$P4/summary.json
[ "$($J "$S" result)" = OK ] && ok "summary.json says OK" || not_ok "summary.json says '$($J "$S" result)'"
# nccl-tests' factors, per collective: allreduce 2(P-1)/P, reduce-scatter and all-gather (P-1)/P
for a in naive:allreduce:1.5 ring:allreduce:1.5 ring-chunked:allreduce:1.5 library:allreduce:1.5 \
    reduce-scatter:reduce_scatter:0.75 all-gather:allgather:0.75; do
    IFS=: read -r algo coll factor <<<"$a"
    got=$($J "$S" "algos.$algo.collective")
    [ "$got" = "$coll" ] && ok "summary.json: $algo is a $coll" || not_ok "summary.json: $algo is a '$got', not $coll"
    expect_cmp "$($J "$S" "algos.$algo.busbw_factor")" == "$factor" "summary.json: $algo's busbw factor on 4 ranks"
    # every row of the table: busbw / algbw is the factor (to the CSV's 9 digits)
    bad=$(paste -d, <(col "$P4/metrics.csv" "${algo}_algbw") <(col "$P4/metrics.csv" "${algo}_busbw") |
        awk -F, -v f="$factor" '{ r = $2 / $1; if (!($1 > 0) || r < f * (1 - 1e-6) || r > f * (1 + 1e-6)) n++ }
                                END { print n + 0 }')
    rows=$(col "$P4/metrics.csv" "${algo}_busbw" | wc -l)
    [ "$rows" -ge 5 ] && [ "$bad" = 0 ] && ok "metrics.csv: busbw = $factor x algbw for $algo in all $rows rows" ||
        not_ok "metrics.csv: $bad of $rows rows of $algo have busbw / algbw != $factor"
done
expect_cmp "$($J "$S" algos.ring.busbw_largest_gbs)" '>' 0 "the ring's busbw at 1 MiB is measured"

# the fit: β from the large sizes, α from the small ones, both from the table
lo=$($J "$S" large_from_bytes)
for algo in ring library all-gather; do
    f=$($J "$S" "algos.$algo.busbw_factor") a=$($J "$S" "algos.$algo.fit_alpha_us")
    fb=$($J "$S" "algos.$algo.fit_busbw_gbs") lbw=$($J "$S" "algos.$algo.large_busbw_gbs")
    mn=$($J "$S" "algos.$algo.large_busbw_min_gbs") mx=$($J "$S" "algos.$algo.large_busbw_max_gbs")
    # the large sizes' own busbw, and the most any of them allows once α is taken out
    read -r tmn tmx cap < <(paste -d, <(col "$P4/metrics.csv" bytes) <(col "$P4/metrics.csv" "${algo}_us") \
        <(col "$P4/metrics.csv" "${algo}_busbw") | awk -F, -v lo="$lo" -v f="$f" -v a="$a" '
        $1 >= lo { if (n++ == 0 || $3 < mn) mn = $3; if ($3 > mx) mx = $3;
                   c = f * $1 / (($2 - a) * 1e3); if (c > cap) cap = c }
        END { print mn, mx, cap }')
    expect_near "$mn" "$tmn" "summary.json: $algo's lowest large-message busbw is the table's"
    expect_near "$mx" "$tmx" "summary.json: $algo's highest large-message busbw is the table's"
    expect_cmp "$lbw" '>=' "$mn" "$algo: the large messages' busbw is at least their lowest"
    expect_cmp "$lbw" '<=' "$mx" "$algo: the large messages' busbw is at most their highest"
    expect_cmp "$fb" '>=' "$mn" "$algo: the fit's large-message busbw is no lower than measured there"
    expect_cmp "$fb" '<=' "$cap" "$algo: the fit's large-message busbw is no higher than the large sizes allow"
    smax=$(paste -d, <(col "$P4/metrics.csv" bytes) <(col "$P4/metrics.csv" "${algo}_us") |
        awk -F, -v hi="$($J "$S" small_to_bytes)" '$1 <= hi && $2 > m { m = $2 } END { print m }')
    expect_cmp "$a" '<=' "$smax" "$algo: α is no more than the small sizes' longest time"
    # the dashed model is drawn exactly where it is within 25% of the measured time
    bad=$(paste -d, <(col "$P4/fit.csv" "${algo}_busbw") <(col "$P4/fit.csv" "${algo}_err") |
        awk -F, '{ e = $2 < 0 ? -$2 : $2; if (($1 == "nan") != (e > 0.25)) n++ } END { print n + 0 }')
    expect_cmp "$bad" == 0 "fit.csv: $algo's model is drawn (not nan) exactly where |err| <= 25%"
done
# the profile: bus_bw measured on the large messages, hop latency = α / 2(P-1)
C=$P4/x/profile.conf
expect_file "$C" "--write-profile writes into a folder that did not exist"
bw=$(conf "$C" bus_bw)
expect_cmp "$bw" '>=' "$(awk -v v="$($J "$S" algos.library.large_busbw_min_gbs)" 'BEGIN { print v * 1e9 * (1 - 1e-5) }')" \
    "the profile's bus_bw is no lower than the library's large-message busbw"
expect_cmp "$bw" '<=' "$(awk -v v="$($J "$S" algos.library.large_busbw_max_gbs)" 'BEGIN { print v * 1e9 * (1 + 1e-5) }')" \
    "the profile's bus_bw is no higher than the library's large-message busbw"
expect_cmp "$(awk -v h="$(conf "$C" hop_latency)" -v a="$($J "$S" algos.library.fit_alpha_us)" \
    'BEGIN { r = h * 6 / (a * 1e-6); print (r > 1 - 1e-5 && r < 1 + 1e-5) }')" == 1 \
    "the profile's hop_latency is the library's alpha / 6"
expect_rc 0 "lab 03 projects onto the measured profile" -- "$B/solutions/lab03" --epochs 1 --max-steps 2 \
    --no-compare --profile "$C" --out "$tmp/l3" --plot none --quiet
grep -q 'measured-4ranks' "$tmp/l3/summary.json" && ok "lab 03's summary names the measured profile" ||
    not_ok "lab 03's summary does not name the measured profile"

expect_rc 0 "f16 on 2 ranks" -- "$R" -n 2 "$D" --dtype half -b 2 -e 64K -f 32 --out "$tmp/h2" --quiet
[ "$($J "$tmp/h2/summary.json" result)" = OK ] && ok "f16 sums of small integers are exact" || not_ok "f16 run not OK"
expect_rc 0 "a world of one (no launcher)" -- "$D" -b 8 -e 4K -f 8 --out "$tmp/one"
expect_out "^OK$" "one rank: OK"
expect_cmp "$($J "$tmp/one/summary.json" algos.ring.busbw_factor)" == 0 "one rank moves no bytes between ranks: factor 0"

# the plots in the terminal: sizes labelled with binary prefixes, the key
# with what was measured on the large messages
expect_rc 0 "2 ranks, the plots drawn in the terminal" -- "$R" -n 2 "$D" -b 8 -e 1M -f 4 --algo ring,reduce-scatter \
    --out "$tmp/p2" --plot dumb --iters 2 --warmup 1
expect_out " 64 KiB " "the size axis has a tic labelled 64 KiB"
expect_out " 4 KiB " "the size axis has a tic labelled 4 KiB"
if grep -Eq '[0-9](ki|Mi)( |$)' <<<"$T_OUT"; then not_ok "a size tic says ki or Mi without B"; else
    ok "no size tic says ki or Mi without B"; fi
expect_out "ring: [0-9.e+-]+ GB/s measured" "the key gives the ring's measured busbw"
expect_out "reduce-scatter: [0-9.e+-]+ GB/s measured" "the key gives the reduce-scatter's measured busbw"
expect_out "fit: α = " "the key gives each fit"
expect_out "[0-9] (ns|µs|ms) " "the time axis is labelled in units of time"

expect_rc 0 "the grader's dump mode on 3 ranks" -- "$R" -n 3 "$D" --dump "$tmp/dump" --counts 0,1,3,1009 \
    --algo naive,ring,ring-chunked --chunk-bytes 64 --out "$tmp/d3"
expect_file "$tmp/dump/rank2.json" "each rank writes its record"
expect_file "$tmp/dump/ring-n1009-r1.bin" "each result is written"
expect_cmp "$($J "$tmp/dump/rank0.json" 'calls.*.messages' | sed -n 8p)" == 4 "the ring sends 2(P-1) = 4 messages (n = 1009, 3 ranks)"

# the lesson of the send-first ring: below the eager limit it works, above it hangs
expect_rc 0 "send-first below the eager limit" -- "$R" -n 2 "$D" --algo send-first -b 8 -e 1K -f 4 --out "$tmp/sf"
expect_rc 124 "send-first above the eager limit hangs until the watchdog" -- "$R" -n 3 --timeout 5 "$D" \
    --algo send-first -b 4M -e 4M --out "$tmp/sf2"
expect_out "rank [0-2]: send to rank [0-2] timed out after 5 s" "the watchdog names the call that hung and the rank it sent to"
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
mkdir -p "$tmp/x9/dir"
expect_rc 2 "--write-profile naming a folder" -- "$R" -n 2 "$D" --write-profile "$tmp/x9/dir" --out "$tmp/x9"
expect_out "is a directory" "the folder is named as such"
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
for k in 1 2 3 4 5 6 7 8 9; do [ -e "$tmp/x$k/summary.json" ] && not_ok "failed run x$k left a summary.json"; done
ok "no failed run left a summary.json behind"
finish
