#!/usr/bin/env bash
# release-tree.sh DIR — lays out in DIR what a student gets: the kit's files
# without solutions/, the mutant catalogue, the benchmarks and CI. The files
# come from this working tree (tracked, or untracked and not ignored), so the
# tree matches the grader built here. Used by the gradebook, which builds
# each submission in such a tree; tools/student-release.sh packs the
# committed one instead.
set -euo pipefail
dest=${1:?usage: release-tree.sh DIR}
mkdir -p "$dest"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then # this kit is a git checkout
    git ls-files -z --cached --others --exclude-standard
else
    find . -path ./build -prune -o -path ./.git -prune -o -type f -print0 | sed -z 's|^\./||'
fi | grep -zv -E '^(solutions/|grader/mutants/|grader/bench/|grader/adversarial/|grader/gradescope/|\.ci/)' |
    while IFS= read -r -d '' f; do
        [ -f "$f" ] || continue # deleted but still tracked
        mkdir -p "$dest/$(dirname "$f")"
        cp -p "$f" "$dest/$f"
    done
