#!/usr/bin/env bash
# new-lab.sh — scaffolds a new lab in the kit's one shape: a folder, a
# manifest and its tasks.
#
#   tools/new-lab.sh NN-name [--title TEXT]
#
# Writes, from the templates in tools/new-lab/ (one placeholder task, the
# mean of n floats, to replace with the lab's own):
#   labs/NN-name/        lab.mk (the manifest), task.h (the contract), task.c
#                        (the skeleton), main.c (the driver, on the engine: dl/engine.h), plots/error.gp,
#                        README.md (the handout, with its item table)
#   solutions/NN-name/   task.c, the reference (BEGIN/END SOLUTION markers)
#   grader/labNN.c       the items; grader/labNN_calls.c, the call wrappers;
#                        grader/api/labNN.txt, what the student file may use
#   grader/mutants/      NN-control.diff and NN-float-sum.diff
#   tools/test-labNN.sh  the driver end to end; slides/NN-name.md, the deck
# Nothing shared is edited: the Makefile, make run, the report, the grader's
# runner and make test find the lab by its manifest. The new lab builds,
# runs, grades 0 as a skeleton and full as the reference, and passes make
# test (tools/test-new-lab.sh proves it on a copy of the kit).
# Exit 2, having written nothing, on a bad name, a taken number or title.
set -uo pipefail
shopt -u patsub_replacement 2>/dev/null || true # "&" in a title is an "&"
die() {
    echo "new-lab: $*" >&2
    exit 2
}
usage="usage: tools/new-lab.sh NN-name [--title TEXT]   (NN two digits, name lowercase: 07-pipeline)"
dir=
title=
while [ $# -gt 0 ]; do
    case $1 in
    --title)
        [ $# -ge 2 ] || die "--title needs a text; $usage"
        title=$2
        shift ;;
    -h | --help)
        echo "$usage"
        exit 0 ;;
    -*) die "unknown flag '$1'; $usage" ;;
    *)
        [ -z "$dir" ] || die "one lab at a time ('$dir', then '$1'); $usage"
        dir=$1 ;;
    esac
    shift
done
[ -n "$dir" ] || die "$usage"
[[ $dir =~ ^([0-9][0-9])-([a-z][a-z0-9-]*[a-z0-9])$ ]] ||
    die "'$dir': expected NN-name: two digits, a dash, then a name of at least two characters that starts with a \
lowercase letter and holds lowercase letters, digits and dashes, ending in a letter or digit (07-pipeline)"
id=${BASH_REMATCH[1]}
name=${BASH_REMATCH[2]}
pfx=${name//-/_}
# the task's function, <name>_mean, must be the student's to define: not in the kit's namespace (dl_) nor
# one that grader/api/kit.txt keeps from student files (gr_*, ...)
fn=${pfx}_mean
[[ $fn == dl_* || $fn == __* ]] && die "'$dir': the task's function would be $fn, in the kit's namespace; pick another name"
set -f # the deny patterns are patterns, not file names
for pat in $(sed -n 's/^deny //p' grader/api/kit.txt 2>/dev/null); do
    # shellcheck disable=SC2053 # the pattern is a shell pattern by design
    [[ $fn == $pat ]] && die "'$dir': the task's function would be $fn, which grader/api/kit.txt denies to student files \
(deny $pat); pick another name"
done
set +f
[ -n "$title" ] || title="$name (a new lab: say in a line what it teaches)"
[[ $title == *$'\n'* || $title =~ [\"\\\$#@\`] ]] &&
    die "--title '$title': one line without \" \\ \$ # @ or \` (it goes into C strings and the manifest)"
[ -d labs ] && [ -f tools/lab.sh ] || die "run from the kit's top folder"
taken=$(ls -d labs/"$id"-* solutions/"$id"-* slides/"$id"-* grader/lab"$id".c grader/lab"$id"_calls.c grader/api/lab"$id".txt \
    tools/test-lab"$id".sh slides/"$id"-* grader/mutants/"$id"-* 2>/dev/null | head -n 3)
[ -z "$taken" ] || die "lab $id is taken: $(echo $taken)"
T=tools/new-lab
for f in lab.mk main.c task.h task.c README.md error.gp grader.c calls.c api.txt test-lab.sh slides.md; do
    [ -f "$T/$f.in" ] || die "the template $T/$f.in is missing"
done

# ---- write: a failure removes everything this run made ----
made=()
cleanup() {
    rm -rf "${made[@]}"
}
trap 'cleanup; exit 2' ERR
set -E
# put TEMPLATE DEST: the template with its placeholders filled
put() {
    local s
    s=$(<"$T/$1.in")
    s=${s//@ID@/$id}
    s=${s//@DIR@/$dir}
    s=${s//@PFX@/$pfx}
    s=${s//@TITLE@/$title}
    mkdir -p "$(dirname "$2")"
    printf '%s\n' "$s" >"$2"
}
made+=("labs/$dir" "solutions/$dir" "grader/lab$id.c" "grader/lab${id}_calls.c" "grader/api/lab$id.txt"
    "tools/test-lab$id.sh" "slides/$dir.md" "grader/mutants/$id-control.diff" "grader/mutants/$id-float-sum.diff")
put lab.mk "labs/$dir/lab.mk"
put main.c "labs/$dir/main.c"
put task.h "labs/$dir/task.h"
put README.md "labs/$dir/README.md"
put error.gp "labs/$dir/plots/error.gp"
put task.c "solutions/$dir/task.c"
put grader.c "grader/lab$id.c"
put calls.c "grader/lab${id}_calls.c"
put api.txt "grader/api/lab$id.txt"
put test-lab.sh "tools/test-lab$id.sh"
put slides.md "slides/$dir.md"
# the skeleton, made from the reference as make skeletons makes every lab's
make -s --no-print-directory "${B:-build}/tools/skelgen" >/dev/null
"${B:-build}/tools/skelgen" "solutions/$dir/task.c" "labs/$dir/task.c"
# the mutants: a control (a comment changes) and the classic mistake
mutant() { # NAME WHAT DIAGNOSIS SED
    local tmp
    tmp=$(mktemp -d)
    mkdir -p "$tmp/a/solutions/$dir" "$tmp/b/solutions/$dir"
    cp "solutions/$dir/task.c" "$tmp/a/solutions/$dir/"
    sed "$4" "solutions/$dir/task.c" >"$tmp/b/solutions/$dir/task.c"
    { printf '# mutant: %s\n# lab: %s\n# diagnosis: %s\n' "$2" "$id" "$3"
      [ "$3" = none ] || printf '# lose: mean_exact\n'
      (cd "$tmp" && diff -u "a/solutions/$dir/task.c" "b/solutions/$dir/task.c" | sed '1,2s/\t.*//') || true
    } >"grader/mutants/$id-$1.diff"
    rm -rf "$tmp"
    grep -q '^@@' "grader/mutants/$id-$1.diff" || { echo "new-lab: the $1 mutant changed nothing" >&2; false; }
}
mutant control "no-op control: only a comment changes; must score full marks" none \
    's|^/\* task.c — lab .*|& /* control mutant: nothing else changed */|'
mutant float-sum "the sum accumulated in float: the mean of a million floats drifts" float-accumulator \
    's|    double sum = 0;|    float sum = 0;|'
# the kit's layout for its own C (.clang-format; the student's file is theirs)
if command -v clang-format >/dev/null; then
    clang-format -i "labs/$dir/main.c" "labs/$dir/task.h" "grader/lab$id.c" "grader/lab${id}_calls.c"
fi
trap - ERR
bash tools/lab.sh check >/dev/null || { cleanup; die "the new manifest does not pass tools/lab.sh check"; }

echo "new-lab: lab $id made:"
printf '  %s\n' "${made[@]}"
cat <<MSG
Next:
  make -j2 && make grade LAB=$id SRC=solutions/$dir   # full marks: 15/15
  make grade LAB=$id                                   # the skeleton: 0/15
  grader/mutants/run.sh $id-control $id-float-sum      # both caught as named
  bash tools/test-lab$id.sh                            # the driver end to end
Then make it the lab it is meant to be: the README's "Adding a lab" lists
every file to change, in order.
MSG
