#!/usr/bin/env bash
# run.sh — `make run`: every lab's reference solution on its default data,
# on the best device here, then graded, then one report page.
#
#   tools/run.sh [--quick] [--into DIR]
#
#   DIR/run/NN-name/        the driver's outputs (metrics, summary.json, plots),
#                           run.log, run.rc, grade.json (Gradescope format),
#                           grade.log, grade.rc
#   DIR/report/index.html   the page: each lab's headline and key plot, then its
#                           grade, other plots, summary and log (tools/report.c)
#
#   --into DIR  write there instead of $B (build/)
#   --quick     one epoch per lab and no grading: a smoke run whose page
#               tools/check-report.sh checks in `make test`
set -uo pipefail
B=${B:-build}
into=$B
quick=0
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --into)
        into=${2:?--into needs a folder}
        shift ;;
    *)
        echo "usage: tools/run.sh [--quick] [--into DIR]" >&2
        exit 2 ;;
    esac
    shift
done
mkdir -p "$into/report"
args=()
fail=0
printf '%-28s %-10s %s\n' "lab" "run" "grade (reference)"
for mk in labs/*/lab.mk; do
    dir=$(basename "$(dirname "$mk")")
    id=${dir%%-*}
    title=$(sed -n 's/^# lab [0-9]* — //p' "$mk" | head -n 1)
    run_args=$(sed -n "s/^LAB_${id}_RUN_ARGS *:= *//p" "$mk")
    launcher=$(sed -n "s/^LAB_${id}_LAUNCH *:= *//p" "$mk")
    [ $quick -eq 1 ] && run_args="$run_args --epochs 1"
    out=$into/run/$dir
    rm -rf "$out"
    mkdir -p "$out"
    # shellcheck disable=SC2086 # launcher and args are word lists by design
    $launcher "$B/solutions/lab$id" --out "$out" --plot svg --quiet $run_args >"$out/run.log" 2>&1
    rc=$?
    echo $rc >"$out/run.rc"
    if [ $quick -eq 1 ]; then
        score="not graded (--quick)"
        grc=0
    else
        "$B/grader/lab$id" --impl solutions --json "$out/grade.json" >"$out/grade.log" 2>&1
        grc=$?
        echo $grc >"$out/grade.rc"
        score=$(grep '^Score:' "$out/grade.log" | tail -n 1)
    fi
    printf '%-28s %-10s %s\n' "$dir" "$([ $rc -eq 0 ] && echo ok || echo "FAILED($rc)")" "${score:-grader did not finish}"
    [ $rc -eq 0 ] && [ $grc -eq 0 ] || fail=1
    args+=("$out" "Lab $id — $title")
done
note=()
[ $quick -eq 1 ] && note=(--note "A quick run (tools/run.sh --quick): one epoch per lab, not graded. \
The numbers show that the page works, not what the labs reach; \`make run\` makes the real one.")
"$B/tools/report" "${note[@]}" "$into/report/index.html" "${args[@]}" || fail=1
echo
echo "report: $into/report/index.html"
echo "runs:   $into/run/*/ (metrics.csv, summary.json, plots, run.log, grade.json)"
if [ $fail -ne 0 ]; then
    echo "run: something failed; see the report and the logs above" >&2
    exit 1
fi
