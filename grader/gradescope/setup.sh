#!/usr/bin/env bash
# setup.sh — Gradescope runs this once, as root, when it builds the
# autograder's image: the kit's packages, then the kit (CPU only: no GPUs
# there). The autograder's files are in /autograder/source (see the README's
# "On Gradescope").
set -euo pipefail
AG=${AUTOGRADER_ROOT:-/autograder} # another root for testing
cd "$AG/source"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2046 # the list is words
apt-get install -y -qq --no-install-recommends $(bash tools/deps.sh --list) util-linux iproute2 >/dev/null
make NO_CUDA=1 B=build/nocuda -j"$(nproc)" autograder
# Where no GPU answers, labs 01 and 02's CUDA items are graded on the emulated device (make
# EMU=1, the host's C++ compiler), as make grade and the gradebook grade them: its judge and
# library are built here, once, so that no submission's grading waits for them
lab=$(cat lab.txt)
if [ "$(build/nocuda/grader/lab"$lab" --which-cuda)" = emu ]; then
    make EMU=1 B=build/nocuda/emucuda -j"$(nproc)" "build/nocuda/emucuda/grader/lab$lab" build/nocuda/emucuda/lib/libddplab.a
fi
