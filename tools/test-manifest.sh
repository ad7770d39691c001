#!/usr/bin/env bash
# test-manifest.sh — the labs' manifests (labs/NN-name/lab.mk) are read one
# way, make's, through tools/lab.sh, which refuses a broken one by file and
# field; no script reads a lab.mk by hand.
set -uo pipefail
source tools/testlib.sh
W=$B/test/manifest
rm -rf "$W"
mkdir -p "$W"

# ---- the kit's own manifests ----
expect_rc 0 "every lab's manifest passes tools/lab.sh check" -- bash tools/lab.sh check
n_mk=$(ls labs/*/lab.mk | wc -l)
expect_cmp "$(bash tools/lab.sh list | wc -l)" == "$n_mk" "tools/lab.sh lists every labs/*/lab.mk"
for id in $(bash tools/lab.sh ids); do
    want=$(make -s --no-print-directory print-LAB_"${id}"_STUDENT_C)
    got=$(bash tools/lab.sh get "$id" STUDENT_C)
    [ "$got" = "$want" ] || not_ok "lab $id: lab.sh reads STUDENT_C '$got', the build '$want'"
done
ok "for every lab, lab.sh reads the student files the build compiles"
# the report's view: every field it hands over ends in a NUL; a second run's flags follow the first's
mapfile -d '' v < <(bash tools/lab.sh view 05)
expect_cmp "${#v[@]}" '>=' 8 "lab.sh view 05: the report's flags, one argument per NUL"
[ "${v[0]}" = --key-plot ] && [ "${v[2]}" = --headline ] && ok "… the key plot, then the headline" ||
    not_ok "lab.sh view 05 begins '${v[0]} ${v[2]}'"
printf '%s\n' "${v[@]}" | grep -qx -- --run2 && ok "… and lab 05's second run" || not_ok "lab.sh view 05 has no --run2"

# ---- no script reads a manifest by hand ----
hand=$(grep -nE "sed[^|]*LAB_|print-LAB_|awk[^|]*LAB_[0-9]" tools/*.sh grader/*/run.sh .ci/run 2>/dev/null |
    grep -v '^tools/lab.sh:\|^tools/test-manifest.sh:')
if [ -z "$hand" ]; then ok "no script reads a lab.mk with sed, awk or make print-"; else
    not_ok "scripts read lab.mk by hand:"
    printf '%s\n' "$hand" | sed 's/^/    | /'
fi

# ---- made-up kits: what make makes of a manifest, and what is refused ----
# kit NAME [DIR]: a folder with the reader and one lab whose lab.mk is stdin
# (its student files a.c and b.c, and their references, exist)
kit() {
    local k=$W/$1 d=${2:-01-made-up}
    mkdir -p "$k/tools" "$k/labs/$d" "$k/solutions/$d"
    cp tools/lab.sh tools/manifest.mk "$k/tools/"
    cat >"$k/labs/$d/lab.mk"
    touch "$k/labs/$d/a.c" "$k/labs/$d/b.c" "$k/solutions/$d/a.c" "$k/solutions/$d/b.c"
    echo "$k"
}
good='LAB_01_TITLE := a made-up lab
LAB_01_STUDENT_C := a.c
LAB_01_STUDENT_C += b.c
LAB_01_KEY_PLOT := curve
define LAB_01_HEADLINE
Loss {train_loss:g} after {epochs_run:#epoch},
on two lines.
endef
LAB_01_RUN_ARGS := --lr 0.5 \# not a comment
define LAB_01_CAPTION_curve
What to see.
endef'
k=$(kit good <<<"$good")
expect_rc 0 "a well-formed manifest passes" -- bash "$k/tools/lab.sh" check
expect_cmp "$(bash "$k/tools/lab.sh" files 01 | wc -w)" == 2 "+= is read as make reads it (two student files)"
[ "$(bash "$k/tools/lab.sh" get 01 HEADLINE)" = "Loss {train_loss:g} after {epochs_run:#epoch}, on two lines." ] &&
    ok "a define ... endef headline keeps its # and folds to one line" ||
    not_ok "the headline reads '$(bash "$k/tools/lab.sh" get 01 HEADLINE)'"
[ "$(bash "$k/tools/lab.sh" get 01 RUN_ARGS)" = "--lr 0.5 # not a comment" ] && ok "\\# is a #, as in make" ||
    not_ok "RUN_ARGS reads '$(bash "$k/tools/lab.sh" get 01 RUN_ARGS)'"
[ "$(bash "$k/tools/lab.sh" captions 01)" = "$(printf 'curve\tWhat to see.')" ] && ok "a caption: its plot and text" ||
    not_ok "captions: '$(bash "$k/tools/lab.sh" captions 01)'"
expect_rc 2 "an unknown field is refused" -- bash "$k/tools/lab.sh" get 01 HEADLNE
expect_out "'HEADLNE': not a manifest field" "… by name, with the fields there are"
[ "$(bash "$k/tools/lab.sh" each RUN_ARGS)" = "$(printf '01\t--lr 0.5 # not a comment')" ] &&
    ok "each FIELD: every lab's value, NN<TAB>value, as get gives it" ||
    not_ok "each RUN_ARGS reads '$(bash "$k/tools/lab.sh" each RUN_ARGS)'"
expect_rc 2 "each: an unknown field is refused" -- bash "$k/tools/lab.sh" each HEADLNE
expect_rc 2 "an unknown lab is refused" -- bash "$k/tools/lab.sh" dir 07
expect_out "no lab 07 in labs/ \(the labs: 01-made-up" "… with the labs there are"

k=$(kit nohead <<<"$(sed '5,8d' <<<"$good")")
expect_rc 2 "a manifest without a headline is refused" -- bash "$k/tools/lab.sh" list
expect_out "labs/01-made-up/lab.mk: LAB_01_HEADLINE is missing or empty" "… naming the file and the field"
k=$(kit run2 <<<"$good
LAB_01_RUN2 := ../elsewhere")
expect_rc 2 "a second run that is not a plain folder name is refused" -- bash "$k/tools/lab.sh" check
expect_out "LAB_01_RUN2 '../elsewhere': expected a plain folder name" "… naming the value and what was expected"
expect_out "LAB_01_RUN2 is set but LAB_01_RUN2_HEADLINE is missing" "… and the second run's missing headline"
k=$(kit folder 1-bad <<<"$good")
expect_rc 2 "a lab folder not named NN-name is refused" -- bash "$k/tools/lab.sh" list
expect_out "labs/1-bad: a lab's folder is NN-name" "… naming the folder"
k=$(kit foreign <<<"$good
LAB_02_TITLE := a field of another lab")
expect_rc 2 "a manifest that sets another lab's field is refused" -- bash "$k/tools/lab.sh" check
expect_out "sets LAB_02_TITLE, a field of lab 02: a manifest sets only its own lab's" "… naming the field and its lab"
k=$(kit misspelt <<<"$good
LAB_01_RUN_ARG := --lr 1")
expect_rc 2 "a misspelt field (it would be ignored) is refused" -- bash "$k/tools/lab.sh" check
expect_out "LAB_01_RUN_ARG is not a manifest field \(misspelt\?" "… naming it, with the fields there are"
k=$(kit nofile <<<"${good/b.c/c.c}")
expect_rc 2 "a student file that is not there is refused" -- bash "$k/tools/lab.sh" check
expect_out "names the student file c.c, but labs/01-made-up/c.c is missing" "… naming the file"
k=$(kit release <<<"$good")
rm -rf "$k/solutions"
expect_rc 0 "a kit without solutions/ (a student release) passes" -- bash "$k/tools/lab.sh" check
k=$(kit judge <<<"$good
LAB_01_JUDGE_ANSWERS := grader/lab02_ref.c")
expect_rc 2 "a judge answer that is not one of the lab's grader files is refused" -- bash "$k/tools/lab.sh" check
expect_out "LAB_01_JUDGE_ANSWERS names grader/lab02_ref.c: expected one of lab 01's grader files" "… naming it"
k=$(kit judge2 <<<"$good
LAB_01_JUDGE_ANSWERS := grader/lab01_ref.c")
expect_rc 2 "a judge answer with neither its source nor its object is refused" -- bash "$k/tools/lab.sh" check
expect_out "names grader/lab01_ref.c, but neither it nor its object grader/prebuilt/lab01_ref.o is there" "… naming both"
mkdir -p "$k/grader/prebuilt" && touch "$k/grader/prebuilt/lab01_ref.o"
expect_rc 0 "… and passes with its object alone (a student release)" -- bash "$k/tools/lab.sh" check
for id in $(bash tools/lab.sh ids); do
    for f in $(bash tools/lab.sh get "$id" JUDGE_ANSWERS); do
        [ -f "$f" ] || not_ok "lab $id: its judge answer $f is not in the kit"
    done
done
ok "every lab's judge answers are in the kit as source"
k=$(kit twice <<<"$good")
mkdir -p "$k/labs/01-again" "$k/solutions/01-again"
sed 's/LAB_01_/LAB_01_/' "$k/labs/01-made-up/lab.mk" >"$k/labs/01-again/lab.mk"
touch "$k/labs/01-again/a.c" "$k/labs/01-again/b.c" "$k/solutions/01-again/a.c" "$k/solutions/01-again/b.c"
expect_rc 2 "two folders with one number are refused" -- bash "$k/tools/lab.sh" check
expect_out "lab 01 is also 01-again: one folder per number|labs/01-made-up: lab 01 is also" "… naming both"
k=$(kit syntax <<<"define LAB_01_HEADLINE
never ended")
expect_rc 2 "a manifest make cannot read is refused" -- bash "$k/tools/lab.sh" list
expect_out "make cannot read the manifests: .*lab.mk" "… with make's message naming the file"
finish
