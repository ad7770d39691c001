#!/usr/bin/env bash
# student-release.sh — `make student-release`: the kit as students get it,
# without solutions/ and the mutant catalogue, from the committed tree (git
# archive), so nothing local leaks in. It writes one tarball per lab, staged
# for that lab (tools/release-tree.sh: the labs after it and the kit's code
# that answers its tasks or a later lab's stay out), to publish as the term
# goes — build/ddplab-student-labNN.tar.gz — and the release for the last lab,
# build/ddplab-student.tar.gz (every lab; earlier labs' answers in the kit
# included, as in any release after their deadline).
#   make student-release            every staged release
#   make student-release LAB=03     only the one for lab 03
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
last=${labs[${#labs[@]} - 1]}
want=("${labs[@]}")
[ -n "${LAB:-}" ] && want=("$LAB")
for id in "${want[@]}"; do
    rm -rf "$tmp/ddplab"
    (cd "$tmp/src" && bash tools/release-tree.sh "$tmp/ddplab" "$id") || exit 2
    tar -C "$tmp" -czf "$B/ddplab-student-lab$id.tar.gz" ddplab
    held=$(find "$tmp/ddplab/labs" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
    echo "student-release: $B/ddplab-student-lab$id.tar.gz ($(du -h "$B/ddplab-student-lab$id.tar.gz" | cut -f1)," \
        "$(find "$tmp/ddplab" -type f | wc -l) files), staged for lab $id: labs ${held% }"
    if [ "$id" = "$last" ]; then
        cp "$B/ddplab-student-lab$id.tar.gz" "$B/ddplab-student.tar.gz"
        echo "student-release: $B/ddplab-student.tar.gz: every lab, without solutions/ and the mutants"
    fi
done
