#!/usr/bin/env bash
# check-decks.sh — every number a deck gives of a run is that run's.
#
#   bash tools/check-decks.sh [--runs DIR] [DECK.md ...]
#
# A deck names a run's numbers as placeholders, {{RUN path:fmt}}, which
# `make slides` fills from DIR/RUN/summary.json (tools/slides.sh, `report
# --fill`). This builds every deck (default slides/*.md) twice: from the
# runs in DIR (default $B/run) and from a copy of them in which every number
# of every summary.json has changed (an integer n becomes n + 1, any other x
# becomes 1.37·x). A number that reads the same in both builds was written
# by hand; where it is a decimal (0.8666, 72.4 s, 2.97·10⁻⁷, 1.5e-3, 86.5 %)
# outside `code`, it fails the check, named with its deck and line: fill it
# from the run, or, for a figure of a named reference machine, say so with
# "about" (or "≈", "~") right before it; a range that starts so ("about 0.2
# to 0.6 %", "about 0.2 % → 0.6 %", "≈ 1.5–2") is marked whole. Integers are
# not checked (ranks, layer widths and points are the lab's constants). Each
# number of the copy moves by its own factor (1.3 to 1.8 times; an integer n
# becomes 3n + 1), so a ratio of two, {{RUN a/b}}, moves too. A placeholder
# that cannot be filled fails too. Then the check shows it can fail: a
# made-up deck with hand-written decimals, marked ones and filled numbers (a
# ratio and a byte count among them), built from a made-up run, must fail on
# exactly its hand-written lines. Exit 0 when every deck passes, 1
# otherwise, 2 on bad usage.
set -u
. tools/testlib.sh
runs=$B/run
decks=()
while [ $# -gt 0 ]; do
    case $1 in
    --runs)
        runs=${2:?--runs needs a folder}
        shift ;;
    -*)
        echo "usage: tools/check-decks.sh [--runs DIR] [DECK.md ...]" >&2
        exit 2 ;;
    *) decks+=("$1") ;;
    esac
    shift
done
[ ${#decks[@]} -gt 0 ] || decks=(slides/*.md)
R=$B/tools/report
[ -x "$R" ] || { echo "check-decks: build the kit first (make all): no $R" >&2; exit 2; }
[ -d "$runs" ] || { echo "check-decks: no runs in $runs (make run, or --runs DIR)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the other run: every number of every summary.json changed ----
# JSON on stdin: every number outside a string changed, each by its own
# factor (the k-th by 1.3 + 0.5·frac(0.618·k)), so that the ratio of two
# changes too; an integer n becomes 3n + 1 (n + 1 would leave 8 MiB as it
# was in bytes format, and 3n + 1 has no integer fixed point)
perturb() {
    awk 'BEGIN { RS = "\0" } {
        s = $0; out = ""; n = length(s); i = 1; instr = 0; k = 0
        while (i <= n) {
            c = substr(s, i, 1)
            if (instr) { out = out c; if (c == "\\") { out = out substr(s, i + 1, 1); i++ } else if (c == "\"") instr = 0; i++; continue }
            if (c == "\"") { instr = 1; out = out c; i++; continue }
            if (c ~ /[-0-9]/) {
                j = i; while (j <= n && substr(s, j, 1) ~ /[-+0-9.eE]/) j++
                t = substr(s, i, j - i)
                k++
                f = 0.618034 * k
                f = 1.3 + 0.5 * (f - int(f))
                if (t ~ /^-?[0-9]+$/) out = out sprintf("%.0f", 3 * t + 1)
                else out = out sprintf("%.6g", f * t)
                i = j; continue
            }
            out = out c; i++
        }
        printf "%s", out
    }'
}
cp -r "$runs" "$tmp/a"
self=check-decks-self-test # a made-up run beside the real ones, for the check's own test below
mkdir -p "$tmp/a/$self"
echo '{"t": 2.5, "loss": 0.75, "bytes": 8388608}' >"$tmp/a/$self/summary.json"
cp -r "$tmp/a" "$tmp/b"
while IFS= read -r f; do
    perturb <"$f" >"$f.new" && mv "$f.new" "$f"
done < <(find "$tmp/b" -name summary.json)

# check DECK: 0 when every hand-written decimal is marked; prints "DECK:LINE: number"
check_deck() {
    local md=$1 name=$2
    "$R" --fill "$tmp/a" "$name" <"$md" >"$tmp/fa" 2>"$tmp/err" &&
        "$R" --fill "$tmp/b" "$name" <"$md" >"$tmp/fb" 2>>"$tmp/err" || {
        sed 's/^/    /' "$tmp/err"
        return 1
    }
    # line by line (a placeholder holds no newline): the decimals that read the same in both
    paste -d $'\x01' "$tmp/fa" "$tmp/fb" | awk -F $'\x01' -v name="$name" '
        function numbers(s, arr,   n, t, gap, marked) { # the unmarked decimals of s, outside `code`, in order
            gsub(/`[^`]*`/, " ", s)
            n = 0
            marked = 0
            while (match(s, /(about |≈ ?|~ ?)?[0-9]+(\.[0-9]+)?((·10|×10)[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+|e-?[0-9]+)?/)) {
                t = substr(s, RSTART, RLENGTH)
                gap = substr(s, 1, RSTART - 1)
                # marked: "about" (≈, ~) right before it, or the end of a range whose start is marked
                marked = t ~ /^(about |≈|~)/ || (marked && gap ~ /^ *(%|×|s|ms|µs|GB\/s)? *(to|–|—|→) *$/)
                if (t ~ /\.[0-9]|·10|×10|e-?[0-9]/ && !marked) arr[++n] = t
                s = substr(s, RSTART + RLENGTH)
            }
            return n
        }
        /^    / || /^```/ { if ($0 ~ /^```/) fence = !fence; next } # code blocks are code
        fence { next }
        {
            na = numbers($1, a); nb = numbers($2, b)
            for (k = 1; k <= na && k <= nb; k++) if (a[k] == b[k]) { printf "%s:%d: %s\n", name, NR, a[k]; bad = 1 }
            delete a; delete b
        }
        END { exit bad }'
}

for md in "${decks[@]}"; do
    if out=$(check_deck "$md" "$md"); then
        ok "$md: every run-describing decimal comes from the run"
    else
        not_ok "$md: numbers that do not come from the run (fill them: {{RUN key}}, or mark a reference machine's figure 'about'):"
        printf '%s\n' "$out" | head -n 20 | sed 's/^/    | /'
    fi
done

# ---- the check can fail ----
# a made-up deck of the made-up run: lines 4, 7 and 9 are hand-written (a
# number over itself is one: it reads 1.00 from any run), the rest is filled
# or marked
cat >"$tmp/made-up.md" <<EOF
## A slide

- the run took {{$self t:f2}} s
- the loss ended at 0.3045
- about 2.5 s on the reference machine, \`--lr 0.02\`
- about 0.2 % → 0.6 % there, ≈ 1.5–2.5 s, ~ 3.5 to 4.5 ms
- a ratio: {{$self t/loss:f3}}; a number over itself: {{$self t/t:f2}}
- a byte count: {{$self bytes:bytes}}; a range: {{$self loss:f2}} to {{$self t:f2}}
- from 0.2 to about 0.6
EOF
want=$(printf 'made-up.md:4: 0.3045\nmade-up.md:7: 1.00\nmade-up.md:9: 0.2')
if out=$(check_deck "$tmp/made-up.md" made-up.md); then
    not_ok "a made-up deck with hand-written decimals passes: the check cannot fail"
elif [ "$out" = "$want" ]; then
    ok "a made-up deck fails on its hand-written decimals and nowhere else (its filled ratio, byte count and marked ranges pass)"
else
    not_ok "a made-up deck fails otherwise than on its lines 4, 7 and 9: $(printf '%s' "$out" | tr '\n' ' ')"
fi
echo '## x {{no-such-run foo}}' >"$tmp/bad.md"
check_deck "$tmp/bad.md" bad.md >"$tmp/bad.out" 2>&1 && not_ok "a placeholder of no run is filled" ||
    { grep -q "bad.md:1: '{{no-such-run foo}}'" "$tmp/bad.out" && ok "a placeholder that cannot be filled is named with its line" ||
        not_ok "a placeholder of no run: $(cat "$tmp/bad.out")"; }
finish
