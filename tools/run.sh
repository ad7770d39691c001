#!/usr/bin/env bash
# run.sh — `make run`: every lab on its default data, on the best device here,
# then graded, then one report page. Whose code runs:
#   - in the full kit (solutions/ is here): each lab's reference solution,
#     build/solutions/labNN, as `make all` built it: what the labs reach;
#   - in a student release (no solutions/): yours, build/labs/labNN, which
#     run.sh builds first from labs/NN-name/ (the driver, the grader's worker
#     and the judge: `make` rebuilds what you changed). `--impl labs` does
#     the same in the full kit.
#
#   tools/run.sh [--quick] [--into DIR] [--lab NN]... [--impl labs|solutions]
#
#   DIR/run/NN-name/        the driver's outputs (metrics, summary.json, plots),
#                           run.log, run.rc, grade.json (Gradescope format),
#                           grade.log, grade.rc; for your code also build.log
#                           and build.rc (its build); emu-build.log where the
#                           lab's CUDA items were graded on the emulated device
#                           (no GPU here: the judge's --which-cuda says emu)
#   DIR/run/NN-name/SUB/    a lab's second run, when its manifest names one
#                           (LAB_NN_RUN2 := SUB, LAB_NN_RUN2_ARGS := flags):
#                           the same driver with those flags (not the first
#                           run's); the outputs, run.log and run.rc
#   DIR/run/NN-name.prev/   the lab's run before this one, as it was
#   DIR/report/index.html   the page: each lab's headline and key plot, then its
#                           grade, other plots, summary and log (tools/report.c)
# What runs, and what the page says of it, comes from the labs' manifests
# (labs/NN-name/lab.mk, read through tools/lab.sh): nothing here names a lab.
#
# Your code, task by task: each task you have not done yet returns "not
# implemented yet: labNN task K: ..." (DL_TODO, common/include/dl/status.h).
# The driver stops at the first such task it reaches: the table below and
# the page say "task K not done yet" (not a crash), and the lab is still
# graded, every item, so the items of the tasks you did pass and the grade
# names the tasks not done yet. Code that does not build is graded 0 with
# the compiler's reason (as `make grade` does), and its run is skipped.
#
# Nothing here deletes what it did not write: a lab's run goes into a fresh
# folder (DIR/run/.NN-name.XXXXXX); once the lab is done (its runs and its
# grade) that folder takes the place of DIR/run/NN-name, whose contents (the
# last run, and anything else you kept there) move to DIR/run/NN-name.prev.
# The .prev folder before it, which run.sh made, is removed then. An
# interrupted run removes only its own fresh folder.
#
#   --impl WHO  labs (your code) or solutions (the reference); the default
#               is the reference where solutions/ is, else yours
#   --into DIR  write there instead of $B (build/)
#   --lab NN    only that lab (again for more): its runs, grade and section
#   --quick     one epoch per run and no grading: a smoke run whose page
#               tools/check-report.sh checks in `make test`
#
# Exit status: 0 when every run ran to its end and (the reference) every
# grade is full marks or (your code) every lab was graded: lost points and
# tasks not done yet are where your work stands, not errors, as with `make
# grade`, unless STRICT=1. 1 when a run failed otherwise (a crash, an error
# other than a task not done yet), your code did not build, a grader could not
# grade, or the page could not be written. 2 on bad usage.
set -uo pipefail
# the folder make builds into: the one `make` with these settings (NO_CUDA=1, SAN=1, ...) uses
B=${B:-$(env -u MAKEFLAGS -u MFLAGS make -s --no-print-directory print-B 2>/dev/null || echo build)}
export B
into=$B
quick=0
only=()
impl=
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
    --impl)
        impl=${2:-}
        [ "$impl" = labs ] || [ "$impl" = solutions ] ||
            { echo "run.sh: --impl '$impl': expected labs (your code) or solutions (the reference)" >&2; exit 2; }
        shift ;;
    *)
        echo "usage: tools/run.sh [--quick] [--into DIR] [--lab NN]... [--impl labs|solutions]" >&2
        exit 2 ;;
    esac
    shift
done
if [ -z "$impl" ]; then
    if [ -d solutions ]; then impl=solutions; else impl=labs; fi
fi
if [ "$impl" = solutions ] && [ ! -d solutions ]; then
    echo "run.sh: --impl solutions: this kit has no solutions/ (a student release): run your code (--impl labs)" >&2
    exit 2
fi
mkdir -p "$into/report" "$into/run" || exit 1
lab() { bash tools/lab.sh "$@" || exit 2; }
lab check >/dev/null
# build TARGET...: make them (your code's build; the kit's settings come from the environment)
build() { env -u MAKEFLAGS -u MFLAGS make --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" "$@"; }
if [ "$impl" = labs ]; then
    build "$B/tools/report" >"$into/report/build.log" 2>&1 ||
        { sed 's/^/  build| /' "$into/report/build.log" >&2; echo "run.sh: cannot build the report tool" >&2; exit 1; }
fi
# The lab in progress: its fresh folder, removed when run.sh is stopped before the swap.
new=
trap '[ -n "$new" ] && rm -rf "$new"' EXIT
trap 'exit 130' INT TERM
# drive OUT ARGS...: the lab's driver with the flags, outputs into OUT;
# leaves run.log and run.rc there and returns the status. On a terminal it
# shows where the run is (the log's last epoch line and the seconds so far),
# on one line it then clears; in a CI log it prints nothing.
drive() {
    local out=$1 rc pid t0 last
    shift
    mkdir -p "$out"
    # shellcheck disable=SC2086 # launcher and args are word lists by design
    $launcher "$B/$impl/lab$id" --out "$out" --plot svg "$@" >"$out/run.log" 2>&1 &
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
# todo_task FILE: the task number of the first "not implemented yet: labNN task K" in FILE, or nothing
todo_task() { grep -a -m 1 -o -E "not implemented yet: lab$id task [0-9]+" "$1" 2>/dev/null | grep -o -E '[0-9]+$'; }
# run_status OUT RC: the run's word for the table into $word; bad=1 when it is a failure
run_status() {
    local k
    if [ "$2" -eq 0 ]; then
        word=ok
    elif [ "$impl" = labs ] && k=$(todo_task "$1/run.log") && [ -n "$k" ]; then
        word="task $k not done yet"
        [ "${STRICT:-0}" != 1 ] || bad=1
    else
        word="FAILED($2)"
        bad=1
    fi
}
args=()
fail=0
todo_labs=()
who=$([ "$impl" = labs ] && echo "your code" || echo reference)
printf '%-20s %-34s %s\n' "lab" "run(s)" "grade ($who)"
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
    new=$(mktemp -d "$into/run/.$dir.XXXXXX") || exit 1
    bad=0
    built=1
    judge_built=1
    if [ "$impl" = labs ]; then
        # the judge first (the kit's code: when it does not build, the kit is broken, not your code)
        judge_built=1
        if ! build "$B/grader/lab$id" >"$new/grader-build.log" 2>&1; then
            judge_built=0
            tail -n 40 "$new/grader-build.log" | sed 's/^/  build| /'
            echo "run.sh: the kit's grader for lab $id does not build (above; $out/grader-build.log)" >&2
        fi
        build "$B/labs/lab$id" "$B/labs/lab$id-worker" >"$new/build.log" 2>&1
        brc=$?
        echo $brc >"$new/build.rc"
        if [ $brc -ne 0 ]; then
            built=0
            bad=1
            tail -n 40 "$new/build.log" | sed 's/^/  build| /'
        fi
    fi
    sub=
    if [ $built -eq 1 ]; then
        # shellcheck disable=SC2086 # the args are word lists by design
        drive "$new" $run_args
        run_status "$new" $?
        status=$word
    else
        status="not built (build.log)"
    fi
    if [ -n "$run2" ] && [ $built -eq 1 ]; then # a plain folder name (tools/lab.sh checks)
        sub=$run2
        # shellcheck disable=SC2086
        drive "$new/$run2" $run2_args
        run_status "$new/$run2" $?
        status="$status, $run2 $word"
    fi
    score=
    if [ $quick -eq 1 ]; then
        score="not graded (--quick)"
    elif [ $judge_built -eq 0 ] || [ ! -x "$B/grader/lab$id" ]; then
        echo "run.sh: no grader: $B/grader/lab$id did not build (make $B/grader/lab$id says why)" >"$new/grade.log"
        echo 2 >"$new/grade.rc"
    else
        not_built=()
        [ $built -eq 1 ] || not_built=(--not-built "$new/build.log")
        # the CUDA items without a GPU: on the emulated device (as make grade does), the code under
        # test built for it beside the kit's emulated build ($B/emucuda); its output in emu-build.log
        emu=()
        if [ $built -eq 1 ] && [ "$("$B/grader/lab$id" --which-cuda 2>/dev/null)" = emu ]; then
            if build EMU=1 B="$B/emucuda" "$B/emucuda/grader/lab$id" "$B/emucuda/$impl/lab$id-worker" \
                >"$new/emu-build.log" 2>&1; then
                emu=(--emu-code "$B/emucuda/$impl")
            else
                emu=(--emu-not-built "$new/emu-build.log")
                tail -n 20 "$new/emu-build.log" | sed 's/^/  build| /'
            fi
        fi
        "$B/grader/lab$id" --impl "$impl" --json "$new/grade.json" "${not_built[@]}" "${emu[@]}" >"$new/grade.log" 2>&1
        echo $? >"$new/grade.rc"
        score=$(grep -a '^Score:' "$new/grade.log" | tail -n 1)
    fi
    if [ $quick -eq 0 ]; then
        grc=$(cat "$new/grade.rc")
        # the judge: 0 full marks, 1 points lost, 2 or more it could not grade
        if [ "$grc" -ge 2 ] || { [ "$grc" -eq 1 ] && { [ "$impl" = solutions ] || [ "${STRICT:-0}" = 1 ]; }; }; then
            bad=1
        fi
    fi
    if [ "$impl" = labs ] && [ -f "$new/grade.log" ]; then
        # the tasks the grader found not implemented, and those whose stub (DL_TODO) still stands in
        # the student's files: an item whose parent failed says nothing of its own task
        tasks=$({
            grep -a -o -E "not implemented yet: lab$id task [0-9]+" "$new/grade.log"
            for f in $(lab get "$id" STUDENT_C) $(lab get "$id" STUDENT_CU); do
                # (a stub in code, not in a comment: a reference's STUDENT: comment holds one too)
                grep -a -E "DL_TODO\(\"lab$id task [0-9]+" "labs/$dir/$f" 2>/dev/null | grep -v -E '/\*|//' |
                    grep -a -o -E "DL_TODO\(\"lab$id task [0-9]+"
            done
        } | grep -o -E '[0-9]+$' | sort -n -u | paste -s -d, - | sed 's/,/, /g')
        if [ -n "$tasks" ]; then
            [[ $tasks == *,* ]] && tasks="tasks $tasks" || tasks="task $tasks"
            score="$score; not done yet: $tasks"
            todo_labs+=("$id")
        fi
    fi
    printf '%-20s %-34s %s\n' "$dir" "$status" "${score:-grader did not finish (see $out/grade.log)}"
    [ $bad -eq 0 ] || fail=1
    # the swap: this run takes the last one's place, which is kept as .prev
    if [ -e "$out" ] || [ -L "$out" ]; then
        rm -rf "$out.prev"
        mv "$out" "$out.prev" || exit 1
    fi
    mv "$new" "$out" || exit 1
    # the driver's log names the folder it wrote to, the temporary one: the log says where its files are now
    for log in "$out/run.log" "$out"/*/run.log; do
        [ -f "$log" ] || continue
        text=$(<"$log") # (a quoted pattern matches as it is: no character of the path is special)
        printf '%s\n' "${text//"$new"/$out}" >"$log"
    done
    new=
    mapfile -d '' view < <(lab view "$id")
    args+=(--lab "$out" "Lab $id — $title" "${view[@]}")
done
note=()
text=
[ "$impl" = labs ] && text="Your code: each lab's driver and grader built from your files in labs/ (build/labs/labNN), \
on the lab's default data. A task you have not done yet stops the run there and is named in its lab's section."
[ $quick -eq 1 ] && text="${text:+$text }A quick run (tools/run.sh --quick): one epoch per lab, not graded. \
The numbers show that the page works, not what the labs reach; \`make run\` makes the real one."
[ -n "$text" ] && note=(--note "$text")
"$B/tools/report" "${note[@]}" "$into/report/index.html" "${args[@]}" || fail=1
echo
echo "report: $into/report/index.html"
echo "runs:   $into/run/*/ (metrics.csv, summary.json, plots, run.log, grade.json; the run before: NN-name.prev/)"
if [ ${#todo_labs[@]} -gt 0 ]; then
    echo "not done yet: tasks in lab ${todo_labs[*]} (each lab's line above; \`make grade LAB=NN\` says more)"
fi
if [ $fail -ne 0 ]; then
    echo "run: something failed; see the report and the logs above" >&2
    exit 1
fi
