#!/usr/bin/env bash
# release-tree.sh DIR [LAB] — lays out in DIR what a student gets: the kit's
# files without solutions/, the mutant catalogue, the benchmarks and CI.
# With LAB (01, 02, ...), the release is staged for that lab: the labs after
# it are left out (their folders, slides, graders, tests), and so is every
# kit file whose code answers a task of LAB or of a later lab (each lab's
# lab.mk names them: LAB_NN_KIT_ANSWERS) — a later lab that needs such code
# comes in a later release, once that lab's deadline has passed. The files
# come from this working tree (tracked, or untracked and not ignored), so the
# tree matches the grader built here. Used by the gradebook, which builds each
# submission in such a tree; tools/student-release.sh packs the committed one.
set -euo pipefail
dest=${1:?usage: release-tree.sh DIR [LAB]}
lab=${2:-}
mkdir -p "$dest"
drop='^(solutions/|grader/mutants/|grader/bench/|grader/adversarial/|grader/gradescope/|\.ci/)'
if [ -n "$lab" ]; then
    [[ $lab =~ ^[0-9][0-9]$ ]] && ls -d labs/"$lab"-* >/dev/null 2>&1 ||
        { echo "release-tree: LAB '$lab': expected the number of a lab in labs/ (01, 02, ...)" >&2; exit 2; }
    for dir in $(bash tools/lab.sh list); do
        id=${dir%%-*}
        if [ "$((10#$id))" -gt "$((10#$lab))" ]; then # a later lab: not in this release at all
            drop="$drop|^labs/$dir/|^slides/$dir\\.md\$|^grader/lab${id}[._]|^tools/test-lab$id\\.sh\$"
        fi
        if [ "$((10#$id))" -ge "$((10#$lab))" ]; then # open or later: the kit's answers to its tasks stay out
            for f in $(bash tools/lab.sh get "$id" KIT_ANSWERS); do
                drop="$drop|^${f//./\\.}\$"
            done
        fi
    done
fi
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then # this kit is a git checkout
    git ls-files -z --cached --others --exclude-standard
else
    find . -path ./build -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||'
fi | grep -zv -E "$drop" |
    while IFS= read -r -d '' f; do
        if [ -f "$f" ]; then printf '%s\0' "$f"; fi # (not one deleted but still tracked)
    done | xargs -0 -r cp -p --parents -t "$dest" # (one cp for many files: a release is hundreds)
