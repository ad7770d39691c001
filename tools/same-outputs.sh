#!/usr/bin/env bash
# same-outputs.sh — two builds of a driver, run with the same arguments, give the
# same outputs: every file of the run folder, stdout, stderr and the exit status,
# byte for byte but the timing (masked in both before comparing).
#
#   tools/same-outputs.sh [-n P] A_BIN B_BIN ARGS...
#
# ARGS may hold @OUT@, replaced by the run's folder: both runs write to the same
# path (moved aside after each), so that a path printed or written is the same.
# -n P starts each under common/bin/dlrun -n P. What is masked (the same in A and B):
# - CSV: the columns whose header names a time (TIME_KEYS, a regex of names);
# - JSON: the values of such keys (summary.json, trace.json's ts and dur);
# - lab 05's checkpoint bookkeeping (*.metrics): each row's epoch and compute seconds;
# - stdout and stderr: a number followed by a unit of time (1.23 s, 4 ms, 5:07 ETA), an imbalance;
# - with -n P > 1, stderr's lines are compared sorted (the ranks' lines interleave as they come),
#   and Open MPI's abort notice masked (which rank aborted first, mpirun's [host:pid]);
# - images (.png, .svg): compared, but a difference only fails with STRICT_IMAGES=1
#   (a plot of a timing column differs from run to run).
# Exit 0 when everything matches, 1 listing what differs (a unified diff of the
# masked text, at most 20 lines each), 2 for bad usage. KEEP=1 keeps the folders.
set -u
P=1
if [ "${1:-}" = -n ]; then
    P=$2
    shift 2
fi
if [ $# -lt 2 ]; then
    sed -n '2,19p' "$0" >&2
    exit 2
fi
A=$1 B=$2
shift 2
TIME_KEYS=${TIME_KEYS:-'(^|_)(s|ms|ts|dur|t0|t1)$|seconds|time|imbalance|rss|elapsed'}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"' EXIT

# run NAME BIN: the run's folder, stdout, stderr and status under $work/NAME
run() {
    local name=$1 bin=$2 args=() a
    for a in "${@:3}"; do args+=("${a//@OUT@/$work/out}"); done
    rm -rf "$work/out"
    if [ "$P" -gt 1 ]; then
        common/bin/dlrun -n "$P" "$bin" "${args[@]}" >"$work/$name.stdout" 2>"$work/$name.stderr"
    else
        "$bin" "${args[@]}" >"$work/$name.stdout" 2>"$work/$name.stderr"
    fi
    echo $? >"$work/$name.rc"
    mkdir -p "$work/$name"
    [ -d "$work/out" ] && mv "$work/out" "$work/$name/out"
    return 0
}

# mask FILE: its text with the timing masked, on stdout
mask() {
    case $1 in
    *.csv)
        awk -F, -v OFS=, -v keys="$TIME_KEYS" 'NR == 1 { for (i = 1; i <= NF; i++) t[i] = $i ~ keys; print; next }
            { for (i = 1; i <= NF; i++) if (t[i]) $i = "T"; print }' "$1"
        ;;
    *.metrics)
        # lab 05's bookkeeping beside a checkpoint: each row's epoch_s and compute_s (kit.h's KIT_M_*)
        awk '$1 == "row" { $6 = "T"; $8 = "T" } { print }' "$1"
        ;;
    *.json)
        # "key": number, for a key that names a time (a summary is one key a line; a trace is one line)
        perl -pe 'BEGIN { $k = $ENV{TIME_KEYS} } s/"([A-Za-z0-9_]+)": ?(-?[0-9][0-9.eE+-]*)/my ($n, $v) = ($1, $2); $n =~ m{$k} ? "\"$n\": T" : "\"$n\": $v"/ge' "$1"
        ;;
    *)
        sed -E 's/[0-9]+(\.[0-9]+)?(e-?[0-9]+)? ?(s|ms|µs|us)\b/T \3/g; s/ETA [0-9]+:[0-9]+/ETA T/g; s/imbalance [0-9.]+/imbalance T/g; s/^\[[^]]*:[0-9]+\]/[launcher]/; s/invoked on rank [0-9]+/invoked on rank R/; s/[0-9.]+ samples\/s/T samples\/s/g' "$1"
        ;;
    esac
}
export TIME_KEYS

run A "$A" "$@"
run B "$B" "$@"
bad=0
say_diff() {
    echo "DIFFERS: $1"
    diff -u <(mask "$2") <(mask "$3") | sed -n '3,22p'
    bad=1
}
if [ "$P" -gt 1 ]; then # the ranks' lines on stderr interleave as they come: compared in order of their text
    sort -o "$work/A.stderr" "$work/A.stderr"
    sort -o "$work/B.stderr" "$work/B.stderr"
fi
for s in rc stdout stderr; do
    cmp -s <(mask "$work/A.$s") <(mask "$work/B.$s") || say_diff "$s" "$work/A.$s" "$work/B.$s"
done
fa=$(cd "$work/A" && find . -type f | sort)
fb=$(cd "$work/B" && find . -type f | sort)
if [ "$fa" != "$fb" ]; then
    echo "DIFFERS: the files written"
    diff <(echo "$fa") <(echo "$fb") | sed -n '1,20p'
    bad=1
fi
n=0
for f in $fa; do
    [ -f "$work/B/$f" ] || continue
    n=$((n + 1))
    case $f in
    *.png | *.svg)
        if ! cmp -s "$work/A/$f" "$work/B/$f"; then
            if [ -n "${STRICT_IMAGES:-}" ]; then
                echo "DIFFERS: $f (image)"
                bad=1
            else
                echo "note: $f differs (an image; STRICT_IMAGES=1 fails on it)"
            fi
        fi
        ;;
    *.npy) cmp -s "$work/A/$f" "$work/B/$f" || { echo "DIFFERS: $f" && bad=1; } ;;
    *) cmp -s <(mask "$work/A/$f") <(mask "$work/B/$f") || say_diff "$f" "$work/A/$f" "$work/B/$f" ;;
    esac
done
if [ $bad -eq 0 ]; then
    echo "same: rc $(cat "$work/A.rc"), stdout, stderr and $n file(s) (timing masked)"
fi
exit $bad
