#!/usr/bin/env bash
# gradescope.sh LAB — `make gradescope LAB=NN`: the Gradescope autograder for
# one lab in build/gradescope/labNN/ (and labNN.zip when zip is installed):
# the student release staged for the lab (no solutions/, no mutants, no later
# lab, none of the kit code that answers its tasks), with setup.sh and
# run_autograder (grader/gradescope/) at its root and the lab's id in lab.txt.
set -euo pipefail
lab=${1:-}
B=${B:-build}
if [ -z "$lab" ] || ! ls -d labs/"$lab"-* >/dev/null 2>&1; then
    echo "usage: make gradescope LAB=NN   (one of: $(ls labs | cut -d- -f1 | tr '\n' ' '))" >&2
    exit 2
fi
dest=$B/gradescope/lab$lab
rm -rf "$dest" "$dest.zip"
bash tools/release-tree.sh "$dest" "$lab" # the release staged for this lab
cp grader/gradescope/setup.sh grader/gradescope/run_autograder "$dest/"
echo "$lab" >"$dest/lab.txt"
if command -v zip >/dev/null 2>&1; then
    (cd "$dest" && zip -qr "../lab$lab.zip" .)
    echo "gradescope: $dest.zip (upload it as the autograder; see the README's \"On Gradescope\")"
else
    echo "gradescope: $dest (zip it from inside: cd $dest && zip -r ../lab$lab.zip .; apt-get install zip)"
fi
