#!/usr/bin/env bash
# gradebook-fold.sh LAB CPU GPU OUT — one class's grade, GPU points included:
# the GPU tiers' items of a gradebook graded on a GPU machine folded into the
# CPU gradebook of the same submissions.
#
#   make gradebook SUBMISSIONS=subs LAB=05                      # any machine: CPU items
#   sbatch tools/slurm/gradebook-gpu.sbatch subs 05            # a GPU node: GPU items
#   bash tools/gradebook-fold.sh 05 build/gradebook build/gradebook-gpu build/gradebook-final
#
# CPU and GPU are gradebook folders (what tools/gradebook.sh writes:
# labNN.csv and labNN/<student>/results.json). The items of tiers gpu1 and
# gpu4 (the judge's --list says which) are taken from GPU where that
# submission's GPU grading ran them (results.json: an item with max_score > 0;
# a skipped one, max_score 0, stays skipped); every other column is CPU's.
# score, max_score and skipped_points are recomputed: a GPU item that ran
# moves its points from skipped_points into max_score, and what it earned
# into score; one the CPU grading graded on the emulated device (labs 01
# and 02's CUDA items, where no GPU answers) takes the GPU's score instead of
# the emulated one; a GPU grading's own emulated results are not a GPU's and
# are not taken. status is CPU's, with "; gpu: <status>" where the GPU grading
# of that submission did not end "graded" (its GPU items then stay skipped),
# "; gpu: missing" where it has no GPU row, and "; gpu: no GPU item ran"
# where it was graded but skipped every GPU item (no GPU answered there: the
# fold says so at the end, and exits 1 when no GPU item ran at all). Writes OUT/labNN.csv
# (atomically) and copies CPU's per-student folders beside it with the GPU
# results.json as gpu-results.json. Exit 2 on bad arguments or a CSV whose
# header is not the gradebook's, 1 when no GPU item ran in any submission's GPU
# grading, 0 otherwise.
set -uo pipefail
lab=${1:-}
cpu=${2:-}
gpu=${3:-}
out=${4:-}
B=${B:-build}
J=$B/tools/jsonq
if [ -z "$lab" ] || [ -z "$cpu" ] || [ -z "$gpu" ] || [ -z "$out" ]; then
    echo "usage: tools/gradebook-fold.sh LAB CPU_GRADEBOOK GPU_GRADEBOOK OUT" >&2
    exit 2
fi
ccsv=$cpu/lab$lab.csv
gcsv=$gpu/lab$lab.csv
for f in "$ccsv" "$gcsv"; do
    [ -f "$f" ] || { echo "gradebook-fold: no $f" >&2; exit 2; }
    case $(head -n 1 "$f") in
    student,score,max_score,skipped_points,*,status) ;;
    *) echo "gradebook-fold: $f: its header is not a gradebook's (student,score,max_score,skipped_points,...,status)" >&2
        exit 2 ;;
    esac
done
[ "$(head -n 1 "$ccsv")" = "$(head -n 1 "$gcsv")" ] ||
    { echo "gradebook-fold: $ccsv and $gcsv have different items: not the same lab and kit" >&2; exit 2; }
[ -x "$B/grader/lab$lab" ] || { echo "gradebook-fold: no judge $B/grader/lab$lab (make all)" >&2; exit 2; }
gpu_items=$("$B/grader/lab$lab" --list | awk '$4 == "gpu1" || $4 == "gpu4" { print $1 }' | paste -sd' ')
mkdir -p "$out" || exit 2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
header=$(head -n 1 "$ccsv")
# emulated RES: the items RES (a results.json) graded on the emulated device (tagged emulated-cuda), space-separated
emulated() {
    local n i name out=
    n=$("$J" "$1" 'tests.*.name' 2>/dev/null | wc -l)
    for ((i = 0; i < n; i++)); do
        "$J" "$1" "tests.$i.tags.*" 2>/dev/null | grep -qx emulated-cuda || continue
        name=$("$J" "$1" "tests.$i.name")
        name=${name%%:*}
        out="$out $name"
    done
    echo "$out "
}
echo "$header" >"$tmp/csv"
tail -n +2 "$ccsv" | while IFS= read -r row; do
    student=${row%%,*}
    grow=$(grep -m1 "^$(printf '%s' "$student" | sed 's/[][\.*^$]/\\&/g')," "$gcsv")
    res=$gpu/lab$lab/$student/results.json
    ran= # "item score max" of the GPU items its GPU grading ran
    gstatus=missing
    if [ -n "$grow" ]; then
        gstatus=${grow##*,}
        gstatus=${gstatus%%;*} # "graded; without ..." (files the skeleton's): graded
        if [ "$gstatus" = graded ] && ! "$J" "$res" >/dev/null 2>&1; then
            gstatus="no valid results.json"
        elif [ "$gstatus" = graded ]; then
            gemu=$(emulated "$res")
            n=$("$J" "$res" 'tests.*.name' | wc -l)
            for ((i = 0; i < n; i++)); do
                name=$("$J" "$res" "tests.$i.name")
                name=${name%% *} # "name: title" or "name"
                name=${name%:}
                case " $gpu_items " in *" $name "*) ;; *) continue ;; esac
                max=$("$J" "$res" "tests.$i.max_score")
                [ "$(awk -v m="$max" 'BEGIN { print (m > 0) }')" = 1 ] || continue
                # (graded on the emulated device, not on a GPU: the CPU gradebook's already)
                case $gemu in *" $name "*) continue ;; esac
                ran="$ran$name $("$J" "$res" "tests.$i.score") $max;"
            done
            [ -n "$ran" ] || gstatus="no GPU item ran"
        fi
    fi
    [ "$gstatus" = graded ] || echo "$gstatus" >>"$tmp/gpu-not"
    [ -z "$ran" ] || echo "$student" >>"$tmp/gpu-ran"
    # the GPU items the CPU grading graded itself (labs 01 and 02's, on the emulated device):
    # a GPU's result replaces theirs, the maximum unchanged
    awk -F, -v OFS=, -v header="$header" -v ran="$ran" -v gs="$gstatus" -v emulated="$(emulated "$cpu/lab$lab/$student/results.json")" '
        BEGIN { nh = split(header, h, ",") }
        {
            n = split(ran, items, ";")
            for (k = 1; k <= n; k++) {
                if (items[k] == "") continue
                split(items[k], w, " ")
                for (c = 5; c < nh; c++) {
                    if (h[c] != w[1]) continue
                    if (index(emulated, " " w[1] " ")) { $2 += w[2] - $c; $c = w[2] }
                    else { $c = w[2]; $2 += w[2]; $3 += w[3]; $4 -= w[3] }
                }
            }
            if (gs != "graded") $nh = $nh "; gpu: " gs
            print
        }' <<<"$row" >>"$tmp/csv"
    if [ -d "$cpu/lab$lab/$student" ]; then
        mkdir -p "$out/lab$lab/$student"
        cp -r "$cpu/lab$lab/$student/." "$out/lab$lab/$student/"
        [ -f "$res" ] && cp "$res" "$out/lab$lab/$student/gpu-results.json"
    fi
done
mv -f "$tmp/csv" "$out/lab$lab.csv.tmp" && mv -f "$out/lab$lab.csv.tmp" "$out/lab$lab.csv"
students=$(($(wc -l <"$out/lab$lab.csv") - 1))
idle=$(grep -cx "no GPU item ran" "$tmp/gpu-not" 2>/dev/null)
echo "gradebook-fold: lab $lab: $students student(s), GPU items ($gpu_items) from $gpu: $out/lab$lab.csv"
if [ "${idle:-0}" -gt 0 ]; then
    echo "gradebook-fold: $gpu graded ${idle} submission(s) without running a GPU item (skipped: no GPU answered there?):" \
        "their GPU points stay out; grade them on a GPU machine (tools/slurm/gradebook-gpu.sbatch)" >&2
    [ -s "$tmp/gpu-ran" ] || exit 1 # not one GPU item ran
fi
