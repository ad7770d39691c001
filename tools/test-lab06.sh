#!/usr/bin/env bash
# test-lab06.sh — lab 06's driver under real mpirun with 1, 2, 3 and 4 ranks:
# the reference's outputs and plots, the ledger it measures against the
# closed form (kit_mem_bytes) for ZeRO-1, FSDP (with and without prefetch)
# and DDP, the bytes a step sends against DDP's ring, the largest models per
# profile, the three modes training the same model on the same data, the
# skeleton, and bad input.
set -u
. tools/testlib.sh
D=$B/solutions/lab06
R=common/bin/dlrun
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
small="--data fashion_mnist:train=6000,test=500 --hidden 64,32 --epochs 2"
# the model above: 784·64 + 64 + 64·32 + 32 + 32·10 + 10 parameters
n=$((784 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10))

# one value of memory.csv: row SOURCE,MODE,RANKS, column COL
mem() { awk -F, -v s="$2" -v m="$3" -v p="$4" -v c="$5" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $1 == s && $2 == m && $3 == p { print $col[c]; exit }' "$1/memory.csv"; }

# shellcheck disable=SC2086
expect_rc 0 "lab06 (reference, ZeRO-1) on one rank" -- "$D" $small --out "$tmp/one" --plot svg
for f in metrics.csv memory.csv largest.csv summary.json memory.svg training.svg; do
    expect_file "$tmp/one/$f" "lab06 writes $f"
done
S=$tmp/one/summary.json
expect_cmp "$($J "$S" n_params)" == "$n" "the model has $n parameters"
expect_cmp "$($J "$S" memory.optim)" == "$((4 * n))" "one rank: the momentum is the whole model's"
expect_cmp "$($J "$S" memory.comm)" == 0 "one rank needs no ring scratch"
expect_cmp "$($J "$S" test_accuracy)" '>' 0.6 "two epochs learn something (test accuracy above 0.6)"

for P in 2 3 4; do
    # shellcheck disable=SC2086
    expect_rc 0 "ZeRO-1 on $P ranks" -- "$R" -n $P "$D" $small --out "$tmp/z$P" --plot none --dump "$tmp/z$P/dump"
    S=$tmp/z$P/summary.json
    big=$(((n + P - 1) / P)) # rank 0 holds the largest shard
    expect_cmp "$($J "$S" memory.optim)" == "$((4 * big))" "$P ranks: rank 0's momentum is its shard's, 4 x $big bytes"
    chunk=$((big < 16384 ? big : 16384)) # SHARD_CHUNK elements at most
    expect_cmp "$($J "$S" memory.comm)" == "$((4 * chunk))" "… and the ring's scratch one piece of it ($chunk elements)"
    expect_cmp "$($J "$S" memory.params)" == "$((4 * n))" "… beside the whole model's parameters"
    expect_cmp "$($J "$S" memory.total)" == "$($J "$S" memory.model_total)" "… the ledger's total is the closed form's"
    expect_cmp "$(mem "$tmp/z$P" measured zero1 "$P" total)" == "$(mem "$tmp/z$P" model zero1 "$P" total)" \
        "memory.csv's measured row equals its model row"
    expect_cmp "$($J "$S" param_diff_across_ranks)" == 0 "the ranks end with one model, bit for bit"
    expect_cmp "$($J "$S" memory.rss_peak)" '>' "$($J "$S" memory.total)" "… and the OS counts more than the ledger (the runtime)"
    sent=$($J "$S" sent_bytes_per_step) ddp=$($J "$S" ddp_sent_bytes_per_step)
    # uneven shards: rank 0 sends whole shards, so it may send up to 2(P-1) elements more than 2(P-1)/P of the model
    expect_cmp "$(awk -v s="$sent" -v d="$ddp" -v P="$P" 'BEGIN { x = s - d; print (x < 0 ? -x : x) <= 8 * (P - 1) }')" \
        == 1 "ZeRO-1's step sends what DDP's ring allreduce sends ($sent vs $ddp bytes)"
    for r in $(seq 0 $((P - 1))); do
        [ -s "$tmp/z$P/dump/params.$r.npy" ] && [ -s "$tmp/z$P/dump/memory.$r.csv" ] &&
            [ -s "$tmp/z$P/dump/comm.$r.csv" ] && [ -s "$tmp/z$P/dump/layout.$r.csv" ] ||
            not_ok "--dump: rank $r's files are missing"
    done
    # the layout: the shards task 1 cut, of the model (s = 0 .. P: offsets, s = P is n)
    expect_cmp "$(awk -F, -v P="$P" '$1 == "model" && $3 == P { print $4 }' "$tmp/z$P/dump/layout.0.csv")" == "$n" \
        "--dump: layout.0.csv says where the model's last shard ends (n)"
    cmp -s "$tmp/z$P/dump/params.0.npy" "$tmp/z$P/dump/params.$((P - 1)).npy" && ok "--dump: ranks 0 and $((P - 1)) dump the same parameters" ||
        not_ok "--dump: ranks 0 and $((P - 1)) dumped different parameters"
done
# the last rank's shard is one element shorter when P does not divide n
r2=$(awk -F, '$1 == "optim" { print $2 }' "$tmp/z3/dump/memory.2.csv")
expect_cmp "$r2" == "$((4 * (n / 3)))" "3 ranks: rank 2's momentum holds its shorter shard ($((n / 3)) elements)"

# shellcheck disable=SC2086
expect_rc 0 "DDP (--mode ddp) on 2 ranks, the same data" -- "$R" -n 2 "$D" $small --mode ddp --out "$tmp/d2" --plot none
S=$tmp/d2/summary.json
expect_cmp "$($J "$S" memory.optim)" == "$((4 * n))" "DDP: every rank holds the whole momentum"
expect_cmp "$($J "$S" memory.total)" == "$($J "$S" memory.model_total)" "DDP: the ledger's total is the closed form's"
expect_cmp "$($J "$tmp/z2/summary.json" memory.total)" '<' "$($J "$S" memory.total)" "ZeRO-1 holds less than DDP"
l1=$($J "$S" final_loss) l2=$($J "$tmp/z2/summary.json" final_loss)
expect_cmp "$(awk -v a="$l1" -v b="$l2" 'BEGIN { d = a - b; print (d < 0 ? -d : d) < 1e-4 }')" == 1 \
    "ZeRO-1 and DDP train the same model (final losses $l2 and $l1)"

# FSDP: the ledger equals the replayed closed form, never more than two layers gathered, 1.5x the traffic,
# the same training as ZeRO-1's (the same sums, in another place)
layers="50240 2080 330" # the small model's layers: 784·64 + 64, 64·32 + 32, 32·10 + 10
for P in 2 3; do
    # shellcheck disable=SC2086
    expect_rc 0 "FSDP on $P ranks" -- "$R" -n $P "$D" $small --mode fsdp --out "$tmp/f$P" --plot none --dump "$tmp/f$P/dump"
    S=$tmp/f$P/summary.json
    expect_cmp "$($J "$S" memory.total)" '<=' "$($J "$S" memory.model_total)" "$P ranks: FSDP's ledger peaks within the closed form's budget"
    bound=$(for k in $layers; do echo "$k"; done | awk -v P="$P" '{ s += int(($1 + P - 1) / P); if ($1 > m) m = $1 } END { print 4 * (s + 2 * m) }')
    expect_cmp "$($J "$S" memory.params)" '<=' "$bound" "… its parameters: the shards and at most two gathered layers"
    optim=$(for k in $layers; do echo "$k"; done | awk -v P="$P" '{ s += int(($1 + P - 1) / P) } END { print 4 * s }')
    expect_cmp "$($J "$S" memory.optim)" == "$optim" "… its momentum: rank 0's shard of every layer"
    zs=$($J "$tmp/z$P/summary.json" sent_bytes_per_step) fs=$($J "$S" sent_bytes_per_step)
    expect_cmp "$(awk -v f="$fs" -v z="$zs" -v P="$P" 'BEGIN { x = f - 1.5 * z; print (x < 0 ? -x : x) <= 24 * P }')" == 1 \
        "… and sends 1.5x what ZeRO-1 sends ($fs vs $zs bytes a step)"
    lf=$($J "$S" final_loss) lz=$($J "$tmp/z$P/summary.json" final_loss)
    expect_cmp "$(awk -v a="$lf" -v b="$lz" 'BEGIN { d = a - b; print (d < 0 ? -d : d) < 1e-5 }')" == 1 \
        "… and trains what ZeRO-1 trains (final losses $lf and $lz)"
    cmp -s "$tmp/f$P/dump/params.0.npy" "$tmp/f$P/dump/params.1.npy" && ok "--dump: the ranks put together one model" ||
        not_ok "--dump: ranks 0 and 1 put together different models"
done
# where the data lives and how often a step waits (device_io: the kit's counters, the same on the CPU as on a
# GPU): the rows uploaded once, an epoch uploads its order only, and a steady step waits for nothing, copies
# nothing and allocates nothing — FSDP's gathered layers come back from the blocks shard_free kept
for run in z2 f2 f3; do
    S=$tmp/$run/summary.json
    expect_cmp "$($J "$S" device_io.setup.h2d_bytes)" '>=' "$((4 * 784 * 6000))" "$run: the training rows go up once, before training"
    expect_cmp "$($J "$S" device_io.per_epoch.h2d_bytes)" '<=' "$((8 * 6000))" "$run: an epoch uploads its order, not its rows"
    for k in syncs allocs h2d_bytes d2h_bytes; do
        expect_cmp "$($J "$S" device_io.per_step.$k)" == 0 "$run: a steady step: $k 0"
    done
    expect_cmp "$($J "$S" memory.reserved)" '>=' "$($J "$S" memory.total)" "$run: reserved (kept for reuse too) >= allocated"
done
# the step's memory timeline: flat for ZeRO-1, FSDP's peaks at the ledger's
expect_cmp "$(($(wc -l <"$tmp/z2/memory_step.csv") - 1))" == 1 "ZeRO-1's step allocates and frees nothing (memory_step.csv)"
peak=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["total"] > m { m = $c["total"] } END { print m }' \
    "$tmp/f2/memory_step.csv")
expect_cmp "$peak" == "$($J "$tmp/f2/summary.json" memory.total)" "FSDP's step timeline peaks at the ledger's peak"
expect_cmp "$(($(wc -l <"$tmp/f2/memory_step.csv") - 1))" '>' 10 "… gathering and freeing a layer at a time"
# shellcheck disable=SC2086
expect_rc 0 "FSDP on 3 ranks without prefetch" -- "$R" -n 3 "$D" $small --mode fsdp --no-prefetch --out "$tmp/fn3" --plot none
expect_cmp "$($J "$tmp/fn3/summary.json" memory.params)" '<' "$($J "$tmp/f3/summary.json" memory.params)" \
    "without prefetch fewer parameters are gathered at once"
expect_cmp "$($J "$tmp/fn3/summary.json" final_loss)" == "$($J "$tmp/f3/summary.json" final_loss)" \
    "… and the training is the same, bit for bit"

# the closed forms for the default model: ZeRO-1 below DDP from 2 ranks on, FSDP below both from 4 on (on 2
# ranks the two layers FSDP gathers cost about what it saves)
expect_rc 0 "the default model, 2 steps on 2 ranks" -- "$R" -n 2 "$D" --max-steps 2 --epochs 1 --out "$tmp/def" --plot none
for P in 2 4 8; do
    z=$(mem "$tmp/def" model zero1 "$P" total) d=$(mem "$tmp/def" model ddp "$P" total) f=$(mem "$tmp/def" model fsdp "$P" total)
    expect_cmp "$z" '<' "$d" "the default model on $P ranks: ZeRO-1 ($z) below DDP ($d)"
    [ "$P" = 2 ] || expect_cmp "$f" '<' "$z" "… and FSDP ($f) below ZeRO-1"
done
expect_cmp "$(mem "$tmp/def" model ddp 64 total)" == "$(mem "$tmp/def" model ddp 1 total)" "DDP's memory does not shrink with P"
# the projected step (kit_project_step) on every shipped profile's GPUs
expect_cmp "$(($(wc -l <"$tmp/def/projection.csv") - 1))" '>=' 7 "projection.csv has a row per shipped profile"
prj() { awk -F, -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $1 == p { print $col[c] }' \
    "$tmp/def/projection.csv"; }
expect_cmp "$(prj 4xA10-pcie4 zero1_ms)" '<' "$(prj 4xA10-pcie4 ddp_ms)" "projected on 4 A10: ZeRO-1's step below DDP's (the step on a shard)"
expect_cmp "$(prj 4xA10-pcie4 fsdp_ms)" '>' "$(prj 4xA10-pcie4 ddp_ms)" "… and FSDP's above (1.5x the traffic, mostly exposed)"
expect_cmp "$(prj 4xA10-pcie4 zero1_exposed_ms)" == "$(prj 4xA10-pcie4 ddp_exposed_ms)" "… ZeRO-1 exposes exactly DDP's communication"
expect_cmp "$($J "$tmp/def/summary.json" projection.ddp_step_ms)" '>' 0 "summary.json holds the projection for the chosen profile"
a10=$(awk -F, '$1 == "4xA10-pcie4" { print $5 }' "$tmp/def/largest.csv")
expect_cmp "$a10" == 2000000000 "largest.csv: DDP fits 24 GB / 12 bytes = 2e9 parameters on an A10"
expect_cmp "$(($(wc -l <"$tmp/def/largest.csv") - 1))" '>=' 7 "largest.csv has a row per shipped profile"

# the skeleton stops at its first task, saying so, and leaves no summary
# shellcheck disable=SC2086
expect_rc 1 "the skeleton fails" -- "$R" -n 2 "$B/labs/lab06" $small --out "$tmp/skel"
expect_out "not implemented yet" "… saying what is not implemented yet"
expect_no_file "$tmp/skel/summary.json" "… and leaving no summary.json"

# bad input
expect_rc 2 "an unknown --mode is refused" -- "$D" --mode zero3 --out "$tmp/bad"
expect_out "--mode" "… naming the flag"
expect_rc 2 "--no-prefetch without --mode fsdp is refused" -- "$D" --no-prefetch --out "$tmp/bad"
expect_out "--no-prefetch is for --mode fsdp" "… saying what it is for"
expect_rc 2 "--batch-size 0 is refused" -- "$D" --batch-size 0 --out "$tmp/bad"
expect_rc 2 "a batch larger than a rank's rows is refused" -- "$D" $small --batch-size 100000 --out "$tmp/bad"
expect_out "--batch-size 100000" "… naming it"
expect_rc 2 "a bad --hidden is refused" -- "$D" --hidden 64,x --out "$tmp/bad"
expect_rc 2 "--val-rows larger than the training set is refused" -- "$D" $small --val-rows 7000 --out "$tmp/bad"
expect_out "--val-rows" "… naming it"
expect_no_file "$tmp/bad/summary.json" "bad input leaves no summary.json"
expect_rc 2 "an unknown flag is refused" -- "$D" --bogus
finish
