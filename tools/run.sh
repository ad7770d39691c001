#!/usr/bin/env bash
# run.sh — `make run`: every lab's reference solution on its default data,
# on the best device here, then graded, then one report page.
#
#   build/run/NN-name/      the driver's outputs (metrics, summary.json, plots),
#                           run.log, grade.json (Gradescope format), grade.log
#   build/report/index.html the page: tables, plots inline (SVG), grades, skips
set -uo pipefail
B=${B:-build}
mkdir -p "$B/report"
args=()
fail=0
printf '%-28s %-10s %s\n' "lab" "run" "grade (reference)"
for mk in labs/*/lab.mk; do
    dir=$(basename "$(dirname "$mk")")
    id=${dir%%-*}
    title=$(sed -n 's/^# lab [0-9]* — //p' "$mk" | head -n 1)
    run_args=$(sed -n "s/^LAB_${id}_RUN_ARGS *:= *//p" "$mk")
    launcher=$(sed -n "s/^LAB_${id}_LAUNCH *:= *//p" "$mk")
    out=$B/run/$dir
    rm -rf "$out"
    mkdir -p "$out"
    # shellcheck disable=SC2086 # launcher and args are word lists by design
    $launcher "$B/solutions/lab$id" --out "$out" --plot svg --quiet $run_args >"$out/run.log" 2>&1
    rc=$?
    echo $rc >"$out/run.rc"
    "$B/grader/lab$id" --impl solutions --json "$out/grade.json" >"$out/grade.log" 2>&1
    grc=$?
    echo $grc >"$out/grade.rc"
    score=$(grep '^Score:' "$out/grade.log" | tail -n 1)
    printf '%-28s %-10s %s\n' "$dir" "$([ $rc -eq 0 ] && echo ok || echo "FAILED($rc)")" "${score:-grader did not finish}"
    [ $rc -eq 0 ] && [ $grc -eq 0 ] || fail=1
    args+=("$out" "Lab $id — $title")
done
"$B/tools/report" "$B/report/index.html" "${args[@]}" || fail=1
echo
echo "report: $B/report/index.html"
echo "runs:   $B/run/*/ (metrics.csv, summary.json, plots, run.log, grade.json)"
if [ $fail -ne 0 ]; then
    echo "run: something failed; see the report and the logs above" >&2
    exit 1
fi
