#!/usr/bin/env bash
# run.sh — `make run`: every lab's reference solution on its default data,
# on the best device here, then graded, then one report page.
#
#   tools/run.sh [--quick] [--into DIR]
#
#   DIR/run/NN-name/        the driver's outputs (metrics, summary.json, plots),
#                           run.log, run.rc, grade.json (Gradescope format),
#                           grade.log, grade.rc
#   DIR/run/NN-name/SUB/    a lab's second run, when its manifest names one
#                           (LAB_NN_RUN2 := SUB, LAB_NN_RUN2_ARGS := flags):
#                           the same driver with those flags (not the first
#                           run's); the outputs, run.log and run.rc
#   DIR/report/index.html   the page: each lab's headline and key plot, then its
#                           grade, other plots, summary and log (tools/report.c)
# What runs, and what the page says of it, comes from the labs' manifests
# (labs/NN-name/lab.mk, read through tools/lab.sh): nothing here names a lab.
#
#   --into DIR  write there instead of $B (build/)
#   --lab NN    only that lab (again for more): its runs, grade and section
#   --quick     one epoch per run and no grading: a smoke run whose page
#               tools/check-report.sh checks in `make test`
set -uo pipefail
B=${B:-build}
into=$B
quick=0
only=()
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 ;;
    --into)
        into=${2:?--into needs a folder}
        shift ;;
    --lab)
        bash tools/lab.sh dir "${2:-}" >/dev/null || exit 2 # names the labs there are
        only+=("$2")
        shift ;;
    *)
        echo "usage: tools/run.sh [--quick] [--into DIR] [--lab NN]..." >&2
        exit 2 ;;
    esac
    shift
done
mkdir -p "$into/report"
lab() { bash tools/lab.sh "$@" || exit 2; }
lab check >/dev/null
# drive OUT ARGS...: the lab's reference with the flags, outputs into OUT;
# leaves run.log and run.rc there and returns the status. On a terminal it
# shows where the run is (the log's last epoch line and the seconds so far),
# on one line it then clears; in a CI log it prints nothing.
drive() {
    local out=$1 rc pid t0 last
    shift
    mkdir -p "$out"
    # shellcheck disable=SC2086 # launcher and args are word lists by design
    $launcher "$B/solutions/lab$id" --out "$out" --plot svg "$@" >"$out/run.log" 2>&1 &
    pid=$!
    t0=$SECONDS
    while [ -t 1 ] && kill -0 "$pid" 2>/dev/null; do
        last=$(grep -a -o -E '(^|[^a-z])epoch +[0-9]+[^,;]*' "$out/run.log" 2>/dev/null | tail -n 1 | sed 's/^[^e]*//')
        printf '\r\033[K  %s%s: %s, %d s' "$dir" "${sub:+ ($sub)}" "${last:-starting}" $((SECONDS - t0))
        sleep 1
    done
    wait "$pid"
    rc=$?
    [ -t 1 ] && printf '\r\033[K'
    echo $rc >"$out/run.rc"
    return $rc
}
args=()
fail=0
printf '%-28s %-14s %s\n' "lab" "run(s)" "grade (reference)"
for dir in $(lab list); do
    id=${dir%%-*}
    [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $id "* ]] || continue
    title=$(lab get "$id" TITLE)
    run_args=$(lab get "$id" RUN_ARGS)
    launcher=$(lab get "$id" LAUNCH)
    run2=$(lab get "$id" RUN2)
    run2_args=$(lab get "$id" RUN2_ARGS)
    if [ $quick -eq 1 ]; then
        run_args="$run_args --epochs 1"
        run2_args="$run2_args --epochs 1"
    fi
    out=$into/run/$dir
    rm -rf "$out"
    sub=
    # shellcheck disable=SC2086 # the args are word lists by design
    drive "$out" $run_args
    rc=$?
    status=$([ $rc -eq 0 ] && echo ok || echo "FAILED($rc)")
    if [ -n "$run2" ]; then # a plain folder name (tools/lab.sh checks)
        sub=$run2
        # shellcheck disable=SC2086
        drive "$out/$run2" $run2_args
        rc2=$?
        status="$status, $run2 $([ $rc2 -eq 0 ] && echo ok || echo "FAILED($rc2)")"
        [ $rc2 -eq 0 ] || fail=1
    fi
    if [ $quick -eq 1 ]; then
        score="not graded (--quick)"
        grc=0
    else
        "$B/grader/lab$id" --impl solutions --json "$out/grade.json" >"$out/grade.log" 2>&1
        grc=$?
        echo $grc >"$out/grade.rc"
        score=$(grep '^Score:' "$out/grade.log" | tail -n 1)
    fi
    printf '%-28s %-14s %s\n' "$dir" "$status" "${score:-grader did not finish}"
    [ $rc -eq 0 ] && [ $grc -eq 0 ] || fail=1
    mapfile -d '' view < <(lab view "$id")
    args+=(--lab "$out" "Lab $id — $title" "${view[@]}")
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
