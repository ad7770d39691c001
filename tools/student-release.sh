#!/usr/bin/env bash
# student-release.sh — `make student-release`: the kit as students get it,
# without solutions/ and the mutant catalogue, from the committed tree (git
# archive), so nothing local leaks in. It writes one tarball per lab, staged
# for that lab (tools/release-tree.sh: the labs after it and the kit's code
# that answers its tasks or a later lab's stay out), to publish as the term
# goes — build/ddplab-student-labNN.tar.gz — and the whole kit at once,
# build/ddplab-student.tar.gz (every lab, every one open: the kit's code that
# answers a lab's tasks ships there only as objects, the unit tests that state
# those answers not at all, as in the release staged for that lab;
# tools/release-tree.sh without a lab), for a class or a self-learner that
# gets every lab on the first day.
#   make student-release            every staged release, and the whole kit
#   make student-release LAB=03     only the one staged for lab 03
#   make student-release LAB=all    only the whole kit
set -euo pipefail
B=${B:-build}
mkdir -p "$B"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "student-release: needs the kit's git checkout" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive --format=tar --prefix=src/ HEAD | tar -x -C "$tmp"
mapfile -t labs < <(bash "$tmp/src/tools/lab.sh" ids)
[ ${#labs[@]} -gt 0 ] || exit 2
want=("${labs[@]}" all) # (all: the whole kit)
[ -n "${LAB:-}" ] && want=("$LAB")
for id in "${want[@]}"; do
    rm -rf "$tmp/ddplab"
    if [ "$id" = all ]; then
        (cd "$tmp/src" && bash tools/release-tree.sh "$tmp/ddplab") || exit 2
        tar -C "$tmp" -czf "$B/ddplab-student.tar.gz" ddplab
        echo "student-release: $B/ddplab-student.tar.gz ($(du -h "$B/ddplab-student.tar.gz" | cut -f1)," \
            "$(find "$tmp/ddplab" -type f | wc -l) files): every lab, each open (its kit answers as objects)"
        continue
    fi
    (cd "$tmp/src" && bash tools/release-tree.sh "$tmp/ddplab" "$id") || exit 2
    tar -C "$tmp" -czf "$B/ddplab-student-lab$id.tar.gz" ddplab
    held=$(find "$tmp/ddplab/labs" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
    echo "student-release: $B/ddplab-student-lab$id.tar.gz ($(du -h "$B/ddplab-student-lab$id.tar.gz" | cut -f1)," \
        "$(find "$tmp/ddplab" -type f | wc -l) files), staged for lab $id: labs ${held% }"
done
