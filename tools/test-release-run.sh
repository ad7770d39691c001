#!/usr/bin/env bash
# test-release-run.sh REL [SOLUTIONS] — `make run` in a student release runs
# the student's code (tools/run.sh there, lab 01, a CPU build in REL/build):
#   - on the skeleton: each run stops at task 1, which the table and the page
#     say is not done yet (class "todo"), graded 0 as "your code", the tasks
#     the grade finds named; exit 0 (where the work stands is not an error),
#     1 with STRICT=1; no path of the reference anywhere;
#   - nothing deleted that the run did not write: a file left in the lab's run
#     folder is kept, in NN-name.prev, by the next run;
#   - its README is the student's (tools/student-README.md), its labs linked;
#   - with the reference's files as the student's (from SOLUTIONS, the kit's
#     solutions/ folder; skipped without it): the run ends, the page's headline
#     has the student's numbers (those of its summary.json) and the grade is
#     full marks, "your code".
# REL is the release's root (ddplab/), built or not: run.sh builds lab 01's
# driver, worker and judge itself. Called by tools/test.sh (step 8).
set -u
. tools/testlib.sh
rel=${1:?usage: test-release-run.sh REL [SOLUTIONS]}
sol=${2:-}
[ ! -d "$rel/solutions" ] || { not_ok "$rel is not a student release: it has solutions/"; finish; exit; }
page=$rel/build/report/index.html
# run.sh in the release, as `make run` starts it there (its own build folder, a CPU build)
rrun() { (cd "$rel" && env -u MAKEFLAGS -u STRICT B=build NO_CUDA=1 DL_NO_DEPS=1 bash tools/run.sh "$@"); }
rrun_strict() { (cd "$rel" && env -u MAKEFLAGS B=build NO_CUDA=1 DL_NO_DEPS=1 STRICT=1 bash tools/run.sh "$@"); }
text() { sed -e 's/<[^>]*>//g' "$page"; }

# ---- the release's README is the student's ----
if grep -q '^## The labs in this release' "$rel/README.md" && ! grep -qE 'IMPL=solutions|gradebook|student-release|solutions/' "$rel/README.md"; then
    ok "the release's README is the student's (no reference, no instructor's targets)"
else
    not_ok "the release's README is not the student's: $(grep -nE 'IMPL=solutions|gradebook|student-release|solutions/' "$rel/README.md" | head -n 3)"
fi
for l in $(grep -oE '^\| \[[0-9]{2}-[a-z0-9-]+\]\(labs/[^)]*\)' "$rel/README.md" | sed 's/.*(//; s/)$//'); do
    [ -f "$rel/$l" ] || not_ok "the README links $l, which the release lacks"
done

# ---- the skeleton ----
expect_rc 1 "STRICT=1: a task not done yet fails the run (quick)" -- rrun_strict --quick --lab 01
expect_rc 0 "tools/run.sh --lab 01 on the skeleton: tasks not done yet are not an error" -- rrun --lab 01
# (task 5, the CUDA kernel, is graded too where a GPU or the emulated device grades it: tools/run.sh)
expect_out '^01-logreg +task 1 not done yet +Score: 0/[0-9]+.*not done yet: tasks 1, 2, 3, 4(, 5)?$' \
    "its table: the run stopped at task 1 (not done yet), graded 0, the tasks not done named"
if grep -q 'class="todo">task 1 not done yet: ' "$page" && ! grep -q 'class="notrun"' "$page"; then
    ok "the page says 'task 1 not done yet' (not a failure)"
else
    not_ok "the page lacks 'task 1 not done yet', or has a 'not run' line: $(grep -o 'class="[a-z]*">[^<]*' "$page" | head -n 3)"
fi
grep -q 'Grade of your code: <b>0/' "$page" && ok "the page grades 'your code': 0" ||
    not_ok "the page's grade line: $(text | grep -m 1 'Grade of')"
text | grep -qE 'Not done yet, as the grader.s items that ran say: tasks 1, 2, 3 and 4\.|tasks 1, 2, 3, 4 and 5\.' &&
    ok "the page names the tasks the grade found not done" ||
    not_ok "the page does not name tasks 1 to 4 (and 5) as not done: $(text | grep -m 1 'Not done yet')"
if grep -rq 'solutions' "$page" "$rel/build/run/01-logreg"; then
    not_ok "the page or the run names solutions: $(grep -rl solutions "$page" "$rel/build/run/01-logreg" | head -n 3)"
else
    ok "neither the page nor the run folder names the reference (solutions/)"
fi

# ---- nothing deleted that the run did not write ----
echo "my notes" >"$rel/build/run/01-logreg/notes.txt"
[ -z "$sol" ] || cp "$sol"/01-logreg/* "$rel/labs/01-logreg/"
if [ -n "$sol" ]; then
    expect_rc 0 "with the reference's files as the student's, the run ends" -- rrun --lab 01
    expect_out '^01-logreg +ok +Score: ([0-9]+)/\1( |$)' "its table: ok, full marks"
else
    rrun --lab 01 >/dev/null 2>&1
fi
[ "$(cat "$rel/build/run/01-logreg.prev/notes.txt" 2>/dev/null)" = "my notes" ] &&
    ok "a file left in build/run/01-logreg is kept by the next run (in 01-logreg.prev)" ||
    not_ok "build/run/01-logreg.prev/notes.txt is not the file left there"
grep -q 'not implemented yet: lab01 task 1' "$rel/build/run/01-logreg.prev/run.log" 2>/dev/null &&
    ok "the run before is in 01-logreg.prev, whole" || not_ok "01-logreg.prev does not hold the skeleton's run"

# ---- the student's numbers ----
if [ -n "$sol" ]; then
    loss=$("$J" "$rel/build/run/01-logreg/summary.json" train_loss 2>/dev/null)
    epochs=$("$J" "$rel/build/run/01-logreg/summary.json" epochs_run 2>/dev/null)
    h=$(grep -o '<p class="headline">[^<]*' "$page" | head -n 1)
    if [ -n "$loss" ] && [[ $h == *"after $epochs epochs"* ]] && [[ $h == *"$(printf '%.3g' "$loss")"* ]]; then
        ok "the page's headline has the run's numbers (loss $(printf '%.3g' "$loss") after $epochs epochs)"
    else
        not_ok "the page's headline is not the run's (loss '$loss', $epochs epochs): ${h#*>}"
    fi
    grep -qE 'Grade of your code: <b>([0-9]+)/\1<' "$page" && ok "the page grades 'your code': full marks" ||
        not_ok "the page's grade line: $(text | grep -m 1 'Grade of')"
fi
finish
