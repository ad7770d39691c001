#!/usr/bin/env bash
# student-release.sh — `make student-release`: the kit as students get it,
# without solutions/ and the mutant catalogue, as build/ddplab-student.tar.gz.
# Made from the committed tree (git archive), so nothing local leaks in.
set -euo pipefail
B=${B:-build}
mkdir -p "$B"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "student-release: needs the kit's git checkout" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive --format=tar --prefix=ddplab/ HEAD | tar -x -C "$tmp"
rm -rf "$tmp/ddplab/solutions" "$tmp/ddplab/grader/mutants" "$tmp/ddplab/grader/bench" \
    "$tmp/ddplab/grader/adversarial" "$tmp/ddplab/grader/gradescope" "$tmp/ddplab/.ci"
tar -C "$tmp" -czf "$B/ddplab-student.tar.gz" ddplab
echo "student-release: $B/ddplab-student.tar.gz ($(du -h "$B/ddplab-student.tar.gz" | cut -f1)), without solutions/ and the mutants"
