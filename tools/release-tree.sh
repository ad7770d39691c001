#!/usr/bin/env bash
# release-tree.sh DIR [LAB] — lays out in DIR what a student gets: the kit's
# files without solutions/, the mutant catalogue, the benchmarks and CI.
# With LAB (01, 02, ...), the release is staged for that lab: the labs after
# it are left out, every file of theirs, wherever it lies (a folder named
# after the lab, labs/NN-name/, or a file: slides/NN-name.md, grader/labNN*,
# grader/api/labNN.txt, grader/prebuilt/labNN_*.o, tools/test-labNN.sh,
# tools/slurm/labNN.sbatch, ...; checked again once the tree is laid out),
# and so is every kit file whose code answers a task of a lab (each lab's
# lab.mk names them: LAB_NN_KIT_ANSWERS): no release ships one as source, for
# LAB, a later lab or an earlier one (a student behind on it reads no answer).
# Without LAB, the release holds every lab at once (tools/student-release.sh's
# ddplab-student.tar.gz). For each lab in the release, its kit answers that
# are library files (common/src/NAME.c) ship as
# objects instead, common/prebuilt/NAME.o, which the Makefile puts in the
# library where the source is missing (lab 05's driver calls lab 03's
# sampler), and the others (their unit tests, which state the answers) stay
# out; the objects are built as the judge's answers' are (below). The files
# come from this working tree (tracked, or untracked and not ignored), so the
# tree matches the grader built here. Used by the gradebook, which builds each
# submission in such a tree; tools/student-release.sh packs the committed one.
#
# The release's README.md is the student's (tools/student-README.md, its
# @LABS@ line replaced by a table of the labs in the release), not the kit's,
# which is the instructor's and the contributor's as well: it speaks of the
# reference, the gradebook and the releases.
#
# The grader ships too (a student grades at home), but not the grader's own
# answers: each lab's lab.mk names its JUDGE_ANSWERS, grader files whose code
# answers one of its tasks (lab01_ref.c's double-precision scaler, the stable
# loss and sigmoid it checks against). No release holds their source; every
# release holds, for each lab in it, their objects as grader/prebuilt/NAME.o,
# which the Makefile links where the source is missing. What a student can
# read never answers a task (DESIGN.md); a compiled object is allowed. The
# objects are built here, by make, in a build folder of their own
# ($B/judge-answers: NO_CUDA, no SAN, so that it never rewrites the flags of
# the kit's own build folders); one object serves every build a release does,
# as the Makefile explains at PREBUILT_CFLAGS. In a release (no source, only
# the object) the object is copied through as it is.
set -euo pipefail
dest=${1:?usage: release-tree.sh DIR [LAB]}
lab=${2:-}
mkdir -p "$dest"
drop='^(solutions/|grader/mutants/|grader/bench/|grader/adversarial/|grader/gradescope/|\.ci/|tools/student-README\.md$)'
if [ -n "$lab" ]; then
    [[ $lab =~ ^[0-9][0-9]$ ]] && ls -d labs/"$lab"-* >/dev/null 2>&1 ||
        { echo "release-tree: LAB '$lab': expected the number of a lab in labs/ (01, 02, ...)" >&2; exit 2; }
fi
B=${B:-build}
# A later lab's files, wherever they are: a folder named NN-name, a file named
# NN-name.* or labNN, labNN.*, labNN_*, labNN-*, test-labNN.sh (an ERE).
later_files() { # ID DIR
    printf '(^|/)%s(/|\\.[^/]*$|$)|(^|/)(test-)?lab%s([._-][^/]*)?$' "$2" "$1"
}
later=() # ID:DIR of each lab after LAB
judge=() # the judge answers of the labs in this release: their sources stay out, their objects go in
kit=()   # the kit answers of the labs in this release that are library files: the same
declare -A judge_answers kit_answers titles
each() { # MAP FIELD: every lab's FIELD into MAP, by number, in one call
    # shellcheck disable=SC2034 # (a name reference: the caller's array)
    local -n map=$1
    local id v
    while IFS=$'\t' read -r id v; do map[$id]=$v; done < <(bash tools/lab.sh each "$2")
}
each judge_answers JUDGE_ANSWERS
each kit_answers KIT_ANSWERS
each titles TITLE
labs=$(bash tools/lab.sh list)
for dir in $labs; do
    id=${dir%%-*}
    for f in ${judge_answers[$id]}; do
        drop="$drop|^${f//./\\.}\$" # (a later lab's too: no release holds any)
        if [ -z "$lab" ] || [ "$((10#$id))" -le "$((10#$lab))" ]; then
            judge+=("$f")
        fi
    done
    if [ -n "$lab" ] && [ "$((10#$id))" -gt "$((10#$lab))" ]; then # a later lab: not in this release at all
        later+=("$id:$dir")
        drop="$drop|$(later_files "$id" "$dir")"
        for f in ${kit_answers[$id]}; do # (nor their objects, in a tree that has them)
            drop="$drop|^${f//./\\.}\$"
            [[ $f != common/src/*.c ]] || drop="$drop|^common/prebuilt/$(basename "${f%.c}")\\.o\$"
        done
    else # open or earlier: the kit's answers to its tasks never ship as source (the library's as objects)
        for f in ${kit_answers[$id]}; do
            drop="$drop|^${f//./\\.}\$"
            [[ $f != common/src/*.c ]] || kit+=("$f")
        done
    fi
done
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then # this kit is a git checkout
    git ls-files -z --cached --others --exclude-standard
else
    find . -path ./build -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||'
fi | grep -zv -E "$drop" |
    while IFS= read -r -d '' f; do
        if [ -f "$f" ]; then printf '%s\0' "$f"; fi # (not one deleted but still tracked)
    done | xargs -0 -r cp -p --parents -t "$dest" # (one cp for many files: a release is hundreds)
# the kit's revision, which a release has no .git to tell: the judge's results.json names it
# (extra_data.git_revision); a release of a release keeps the one it has (copied above), and a
# kit that is no checkout of its own (inside another repository) writes none
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    git rev-parse --short HEAD >"$dest/REVISION"
fi
# the student's README, with the labs this release holds (a tree without tools/student-README.md, a
# release itself, keeps the README.md it has: already the student's)
if [ -f tools/student-README.md ]; then
    rows=$(for dir in $labs; do
        id=${dir%%-*}
        [ -z "$lab" ] || [ "$((10#$id))" -le "$((10#$lab))" ] || continue
        printf '| [%s](labs/%s/README.md) | %s |\n' "$dir" "$dir" "${titles[$id]}"
    done)
    [ -n "$rows" ] || { echo "release-tree: no lab for the README's table" >&2; exit 1; }
    table=$(printf '| lab | subject |\n|-----|---------|\n%s' "$rows")
    awk -v table="$table" '$0 == "@LABS@" { print table; next } { print }' tools/student-README.md >"$dest/README.md"
    grep -q '^| \[' "$dest/README.md" || { echo "release-tree: tools/student-README.md has no @LABS@ line" >&2; exit 1; }
fi
# the judge's and the open labs' kit answers' objects: built here from their source, or (in a
# release) the ones it holds; grader/NAME.c's is grader/prebuilt/NAME.o, common/src/NAME.c's
# common/prebuilt/NAME.o
objs=()
for f in ${judge[@]+"${judge[@]}"} ${kit[@]+"${kit[@]}"}; do
    [ -f "$f" ] && objs+=("$B/judge-answers/prebuilt/${f%%/*}/$(basename "${f%.c}").o")
done
if [ ${#objs[@]} -gt 0 ]; then
    make -s --no-print-directory B="$B/judge-answers" NO_CUDA=1 SAN=0 "${objs[@]}" >/dev/null ||
        { echo "release-tree: cannot build the objects of ${judge[*]} ${kit[*]}" >&2; exit 1; }
fi
for f in ${judge[@]+"${judge[@]}"} ${kit[@]+"${kit[@]}"}; do
    top=${f%%/*}
    o=$(basename "${f%.c}").o
    mkdir -p "$dest/$top/prebuilt"
    if [ -f "$f" ]; then
        cp "$B/judge-answers/prebuilt/$top/$o" "$dest/$top/prebuilt/$o"
    elif [ -f "$top/prebuilt/$o" ]; then
        cp -p "$top/prebuilt/$o" "$dest/$top/prebuilt/$o"
    else
        echo "release-tree: neither $f nor $top/prebuilt/$o is here" >&2
        exit 1
    fi
done
# Nothing of a later lab went in: a path that names one (labNN, NN-name, anywhere in it) is a file the
# patterns above missed; the release is refused, with the files, rather than shipped with them.
for l in ${later[@]+"${later[@]}"}; do
    id=${l%%:*}
    dir=${l#*:}
    leak=$(find "$dest" -type f -printf '%P\n' | grep -E "(^|/|[^0-9a-z])(lab$id|$dir)([^0-9]|$)" || true)
    if [ -n "$leak" ]; then
        echo "release-tree: the release for lab $lab holds files of the later lab $id:" >&2
        printf '%s\n' "$leak" | sed 's/^/  /' >&2
        exit 1
    fi
done
