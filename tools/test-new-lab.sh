#!/usr/bin/env bash
# test-new-lab.sh — tools/new-lab.sh makes a lab that works with nothing
# else edited: on a copy of this kit (its files and its build), a scaffolded
# lab builds, is listed by its manifest, grades full marks as the reference
# and 0 as the skeleton, has its mutants caught by name, passes its own
# driver test, the handout and skeleton checks and clang-format, shows in
# make run's report, and is graded by the gradebook. Bad names are refused
# with nothing written.
set -uo pipefail
source tools/testlib.sh
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
K=$W/kit
mkdir -p "$K"
# the kit as it stands: tracked and untracked files (not the ignored), and the
# build, with their times (so that only what names the kit's path rebuilds there)
git ls-files -z --cached --others --exclude-standard 2>/dev/null | xargs -0 cp -p --parents -t "$K" 2>/dev/null ||
    tar -C . --exclude=./build --exclude=./.git -cf - . | tar -C "$K" -xf -
# (what make all built; not the other tests' work, which may be changing now)
mkdir -p "$K/build"
for f in "$B"/* "$B"/.flags "$B"/.root; do
    case ${f##*/} in adversarial | grade-src | grade-build | gradebook | gradescope | mutants | report | run | san | \
        skeleton | test | *.tar.gz) continue ;; esac
    [ -e "$f" ] && cp -a "$f" "$K/build/"
done
cd "$K" || exit 1
export B=build J=build/tools/jsonq
last=$(bash tools/lab.sh ids | tail -n 1)
id=$(printf '%02d' $((10#$last + 1)))
dir=$id-example

# ---- refused, with nothing written ----
before=$(find labs solutions grader tools slides | sort | md5sum)
expect_rc 2 "new-lab: a name without its number is refused" -- bash tools/new-lab.sh example
expect_out "expected NN-name" "… saying what a name is"
expect_rc 2 "new-lab: a number that is taken is refused" -- bash tools/new-lab.sh "$last-again"
expect_out "lab $last is taken" "… naming the number"
expect_rc 2 "new-lab: a title that would break a C string or the manifest is refused" -- \
    bash tools/new-lab.sh "$dir" --title 'say "hi" # there'
expect_rc 2 "new-lab: a name whose task function the kit denies to students (gr_*) is refused" -- \
    bash tools/new-lab.sh "$id-gr"
expect_out "would be gr_mean, which grader/api/kit.txt denies" "… naming the function and the rule"
[ "$(find labs solutions grader tools slides | sort | md5sum)" = "$before" ] && ok "… and the refusals wrote nothing" ||
    not_ok "a refused new-lab left files behind"

# ---- made ----
expect_rc 0 "new-lab $dir" -- bash tools/new-lab.sh "$dir" --title "an example lab & its shape"
expect_cmp "$(bash tools/lab.sh list | grep -c "^$dir\$")" == 1 \
    "the manifest lists it"
expect_cmp "$(wc -l <"labs/$dir/main.c")" '<=' 60 "its driver is at most 60 lines"
grep -Eq "^DL_LAB_MAIN\(|dl_engine_main\(" "labs/$dir/main.c" && ok "… a driver on the engine (DL_LAB_MAIN)" ||
    not_ok "the scaffold's driver does not run on the engine"
expect_rc 0 "the kit builds with it (make all)" -- make -s -j2 all
expect_rc 0 "the reference scores full marks" -- "build/grader/lab$id" --impl solutions --json "$W/ref.json"
expect_cmp "$($J "$W/ref.json" score)" == "$($J "$W/ref.json" extra_data.max_score)" "… all of its points"
expect_cmp "$($J "$W/ref.json" score)" '>' 0 "… which are more than none"
expect_rc 2 "the skeleton loses its points (make grade STRICT=1)" -- make -s --no-print-directory grade LAB="$id" \
    STRICT=1 JSON="$W/skel.json"
expect_cmp "$($J "$W/skel.json" score)" == 0 "… all of them"
expect_out "not implemented yet: lab$id task 1" "… saying 'not implemented yet'"
expect_rc 0 "its mutants: the control full marks, the classic mistake caught by name" -- \
    bash grader/mutants/run.sh "$id-control" "$id-float-sum"
expect_rc 0 "its driver test (tools/test-lab$id.sh)" -- bash "tools/test-lab$id.sh"
expect_rc 0 "its handout's item table matches its grader" -- bash tools/check-handouts.sh
expect_rc 0 "its skeleton is the reference's, generated" -- bash tools/skeletons.sh check
if command -v clang-format >/dev/null; then
    expect_rc 0 "its kit code follows .clang-format (and cppcheck finds nothing in it)" -- bash tools/style.sh \
        labs/"$dir"/* solutions/"$dir"/* grader/lab"$id"*.c
fi
expect_rc 0 "make run --quick runs it" -- bash tools/run.sh --quick --lab "$id" --into "$W/run"
page=$W/run/report/index.html
sed -n "/<section id=\"$dir\">/,/<\/section>/p" "$page" >"$W/section.html"
grep -q 'class="headline">The mean of 1024 floats' "$W/section.html" && ok "… and the report shows its headline" ||
    not_ok "the report's section for $dir has no filled headline: $(head -c 300 "$W/section.html")"
grep -q "error.svg" "$W/section.html" && ok "… and its key plot" || not_ok "the report's section has no key plot"
mkdir -p "$W/subs/ref" "$W/subs/skel"
cp "solutions/$dir"/* "$W/subs/ref/"
expect_rc 0 "the gradebook grades it" -- bash tools/gradebook.sh "$W/subs" "$id"
csv=build/gradebook/lab$id.csv
expect_cmp "$(grep '^ref,' "$csv" | cut -d, -f2)" == "$($J "$W/ref.json" score)" "… the reference: full marks"
expect_cmp "$(grep '^skel,' "$csv" | cut -d, -f2)" == 0 "… an empty submission: 0"
finish
