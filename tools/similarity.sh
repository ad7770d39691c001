#!/usr/bin/env bash
# similarity.sh SUBMISSIONS LAB OUT — which submissions share code beyond the
# kit's, as MOSS or JPlag would say, offline. `make gradebook` runs it after
# grading (tools/gradebook.sh); it can run alone on the same folder.
#
# SUBMISSIONS/<student>/ holds each student's copies of the lab's student
# files (the gradebook's layout). For every student file name of the lab, the
# copies are compared pairwise by Debian's similarity-tester (sim_c: C tokens,
# so renamed variables, moved whitespace and edited comments still match),
# runs of at least SIM_RUN tokens (default 24). What the skeleton (the
# untouched student file) and the kit's files the student reads (the lab's
# headers and kit code) already hold is subtracted first: a line of a
# submission that sim_c matches to them is nobody's to share. A pair's score
# is the number of its lines (the smaller side of each run) that remain, over
# all files; its share is that over the lines each student wrote beyond the
# skeleton. Writes, each whole and renamed into place:
#   OUT/labNN-similarity.csv    student_a,student_b,shared_lines,share_a,share_b,runs
#                               every pair with a shared line, most first
#   OUT/labNN-similarity.html   the pairs ranked, each with its shared runs side
#                               by side (the two students' lines), to read before
#                               concluding anything: a shared line is evidence to
#                               look at, not a verdict
# Pairs whose shared lines are below SIM_MIN_LINES (default 5) are left out of
# both. Exits 2 on bad arguments, 1 when sim_c is missing (install Debian's
# similarity-tester: `make deps` does for the gradebook), 0 otherwise.
set -uo pipefail
. tools/submission.sh # submission_file, submission_name: the gradebook's rules
subs=${1:-}
lab=${2:-}
out=${3:-}
if [ -z "$subs" ] || [ ! -d "$subs" ] || [ -z "$lab" ] || [ -z "$out" ]; then
    echo "usage: tools/similarity.sh SUBMISSIONS LAB OUT   (SUBMISSIONS/<student>/ holds each student's files)" >&2
    exit 2
fi
dir=$(bash tools/lab.sh dir "$lab") || exit 2
run=${SIM_RUN:-24}
min=${SIM_MIN_LINES:-5}
case $run$min in *[!0-9]*)
    echo "similarity: SIM_RUN '$run' and SIM_MIN_LINES '$min' must be whole numbers" >&2
    exit 2 ;;
esac
if ! command -v sim_c >/dev/null 2>&1; then
    echo "similarity: sim_c not found: install Debian's similarity-tester (apt-get install similarity-tester)" >&2
    exit 1
fi
mkdir -p "$out" || exit 2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

files=$(bash tools/lab.sh get "$lab" STUDENT_C)
files="$files $(bash tools/lab.sh get "$lab" STUDENT_CU) $(bash tools/lab.sh get "$lab" STUDENT_H)"
kitfiles=()
for f in labs/"$dir"/*.h $(bash tools/lab.sh get "$lab" KIT_C) $(bash tools/lab.sh get "$lab" DRIVER_C); do
    case " $files " in *" $(basename "$f") "*) continue ;; esac # a student header is the student's
    [ -f "$f" ] && kitfiles+=("$f")
    [ -f "labs/$dir/$f" ] && kitfiles+=("labs/$dir/$f")
done
mapfile -t all < <(find "$subs" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort)
students=()
for s in "${all[@]}"; do # names become file names and CSV fields here: the gradebook's own rule
    if submission_name "$s"; then students+=("$s"); else
        echo "similarity: left out '$s': a submission folder's name may hold letters, digits and . _ @ + - only" >&2
    fi
done

# runs FILE... (sim_c's pairs of line ranges, one per line: A a0 a1 B b0 b1)
runs() {
    sim_c -e -n -r"$run" "$@" 2>/dev/null | sed -n 's/^\(.*\): line \([0-9]*\)-\([0-9]*\) *|\(.*\): line \([0-9]*\)-\([0-9]*\) *\[[0-9]*\]$/\1 \2 \3 \4 \5 \6/p'
}

: >"$tmp/mask" # FILE LINE: a line the kit or the skeleton already holds
: >"$tmp/runs" # FILE_A A0 A1 FILE_B B0 B1 between two students
: >"$tmp/own"  # FILE LINES: how many lines each copy has
for f in $files; do
    copies=()
    for s in "${students[@]}"; do
        c=$(submission_file "$subs/$s" "$f" "$dir") || continue # the copy the gradebook grades
        # sim_c names files as given: a copy of its own, named after the student, with no spaces
        cp "$c" "$tmp/$s.$f" 2>/dev/null || continue
        copies+=("$tmp/$s.$f")
        echo "$tmp/$s.$f $(wc -l <"$c")" >>"$tmp/own"
    done
    [ ${#copies[@]} -gt 0 ] || continue
    base=()
    [ -f "labs/$dir/$f" ] && base+=("labs/$dir/$f")
    base+=("${kitfiles[@]}")
    if [ ${#base[@]} -gt 0 ]; then # -s: not against itself; new files before "/", the kit's after it
        runs -s "${copies[@]}" / "${base[@]}" | awk -v t="$tmp/" 'index($1, t) == 1 && index($4, t) != 1 {
            for (l = $2; l <= $3; l++) print $1, l }' >>"$tmp/mask"
    fi
    [ ${#copies[@]} -ge 2 ] && runs -s "${copies[@]}" | awk -v t="$tmp/" 'index($1, t) == 1 && index($4, t) == 1' >>"$tmp/runs"
done

# per pair: the lines of each run that are no skeleton's, the smaller side counted
awk -v t="$tmp/" -v min="$min" '
    function student(path,   p) { p = substr(path, length(t) + 1); sub(/\.[^.]*\.[^.]*$/, "", p); return p }
    function student_file(path,   p) { p = substr(path, length(t) + 1); return p }
    FILENAME ~ /mask$/ { masked[$1 " " $2] = 1; next }
    FILENAME ~ /own$/ { lines[$1] = $2; next }
    {
        a = $1; b = $4; kept_a = 0; kept_b = 0
        for (l = $2; l <= $3; l++) if (!((a " " l) in masked)) kept_a++
        for (l = $5; l <= $6; l++) if (!((b " " l) in masked)) kept_b++
        k = kept_a < kept_b ? kept_a : kept_b
        if (k == 0) next
        sa = student(a); sb = student(b)
        if (sa > sb) { x = sa; sa = sb; sb = x }
        key = sa "," sb
        shared[key] += k; nruns[key]++
    }
    END {
        for (f in lines) { # lines each student wrote beyond the skeleton
            own = lines[f]
            for (m in masked) { split(m, w, " "); if (w[1] == f) own-- }
            mine[student(f)] += own
        }
        for (key in shared) {
            if (shared[key] < min) continue
            split(key, s, ",")
            pa = mine[s[1]] > 0 ? shared[key] / mine[s[1]] : 0
            pb = mine[s[2]] > 0 ? shared[key] / mine[s[2]] : 0
            printf "%s,%s,%d,%.3f,%.3f,%d\n", s[1], s[2], shared[key], (pa > 1 ? 1 : pa), (pb > 1 ? 1 : pb), nruns[key]
        }
    }' "$tmp/mask" "$tmp/own" "$tmp/runs" | sort -t, -k3,3nr -k1,1 -k2,2 >"$tmp/pairs"

csv=$out/lab$lab-similarity.csv
{
    echo "student_a,student_b,shared_lines,share_a,share_b,runs"
    cat "$tmp/pairs"
} >"$csv.tmp" && mv -f "$csv.tmp" "$csv"

# the page: each pair's runs side by side, the lines escaped
esc() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
html=$out/lab$lab-similarity.html
{
    echo "<!doctype html><html lang=en><head><meta charset=utf-8><title>lab $lab: shared code between submissions</title>"
    echo "<style>body{font-family:sans-serif;margin:1.5em;max-width:1400px}table{border-collapse:collapse}"
    echo "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
    echo "pre{margin:0;font-size:.8em;white-space:pre-wrap}.side{display:grid;grid-template-columns:1fr 1fr;gap:.5em}"
    echo "details{margin:.5em 0}summary{cursor:pointer}</style></head><body>"
    echo "<h1>Lab $lab: code shared between submissions</h1>"
    echo "<p>$(echo "${#students[@]}") submissions in $(echo "$subs" | esc); compared file by file with sim_c (runs of at"
    echo "least $run tokens: renamed identifiers and changed layout still match), after removing what the skeleton"
    echo "and the lab's kit files already hold. A pair is listed when at least $min lines remain. Shared lines are a"
    echo "reason to read the two submissions, not a finding: small labs converge on similar code.</p>"
    if [ ! -s "$tmp/pairs" ]; then
        echo "<p>No pair shares $min or more lines beyond the kit's.</p>"
    else
        echo "<table><tr><th>#</th><th>student A</th><th>student B</th><th>shared lines</th><th>of A's own</th><th>of B's own</th><th>runs</th></tr>"
        awk -F, '{ printf "<tr><td><a href=\"#p%d\">%d</a></td><td>%s</td><td>%s</td><td>%d</td><td>%.0f%%</td><td>%.0f%%</td><td>%d</td></tr>\n", NR, NR, $1, $2, $3, 100 * $4, 100 * $5, $6 }' "$tmp/pairs" | sed 's/&/\&amp;/g'
        echo "</table>"
        # each pair's runs, the two students' lines side by side (one pass: a class
        # of 30 has hundreds of pairs)
        awk -v t="$tmp/" '
            function student(path,   p) { p = substr(path, length(t) + 1); sub(/\.[^.]*\.[^.]*$/, "", p); return p }
            function base(path) { sub(/.*\//, "", path); return path }
            function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
            function lines(f, a, b,   i, out) { # lines a..b of f, escaped (each file read once)
                if (!(f in have)) { have[f] = 1; nl = 0; while ((getline line < f) > 0) text[f, ++nl] = line; close(f) }
                out = ""
                for (i = a; i <= b; i++) out = out ((f, i) in text ? esc(text[f, i]) : "") (i < b ? "\n" : "")
                sub(/\n+$/, "", out) # (as the shell would have: no blank lines at the end)
                return out
            }
            FNR == NR { split($0, r, " "); x = student(r[1]); y = student(r[4])
                key = x < y ? x "," y : y "," x; runs[key, ++nruns[key]] = $0; next }
            {
                split($0, p, ","); n++
                printf "<h2 id=p%d>%d. %s and %s: %d lines</h2>\n", n, n, esc(p[1]), esc(p[2]), p[3]
                key = p[1] "," p[2]
                for (i = 1; i <= nruns[key]; i++) {
                    split(runs[key, i], r, " ")
                    printf "<details open><summary>%s lines %d-%d · %s lines %d-%d</summary><div class=side>\n", esc(base(r[1])), r[2], r[3], esc(base(r[4])), r[5], r[6]
                    printf "<pre>%s</pre><pre>%s</pre></div></details>\n", lines(r[1], r[2], r[3]), lines(r[4], r[5], r[6])
                }
            }' "$tmp/runs" "$tmp/pairs"
    fi
    echo "</body></html>"
} >"$html.tmp" && mv -f "$html.tmp" "$html"
echo "similarity: lab $lab, ${#students[@]} submissions: $(wc -l <"$tmp/pairs") pair(s) share $min or more lines beyond the kit's ($csv, $html)"
