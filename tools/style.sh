#!/usr/bin/env bash
# style.sh — `make style`: clang-format (the rules in .clang-format) and
# cppcheck on every C and CUDA source of the kit. Exit 1 on any finding.
# `tools/style.sh fix` reformats in place (then run `make skeletons`).
# `tools/style.sh FILE...` checks only those (the kit's code among them): a new
# lab's files, say, without the minute cppcheck takes over the whole kit.
set -uo pipefail
if [ $# -gt 0 ] && [ "$1" != fix ]; then
    all=$(printf '%s\n' "$@" | grep -E '\.(c|h|cu|cc)$')
else
    all=$(git ls-files '*.c' '*.h' '*.cu' '*.cc' 2>/dev/null ||
        find common labs solutions grader tools -name '*.[ch]' -o -name '*.cu' -o -name '*.cc')
fi
# The student files (and the references that mirror them) are the student's to
# lay out; everything else follows .clang-format.
student=$(for lab in $(bash tools/lab.sh list); do
    for f in $(bash tools/lab.sh files "${lab%%-*}"); do
        echo "labs/$lab/$f"
        echo "solutions/$lab/$f"
    done
done)
# The hostile submissions in grader/adversarial are attacks, not kit code.
files=$(printf '%s\n' $all | grep -vxF -f <(printf '%s\n' $student) | grep -v '^grader/adversarial/')
status=0
if [ -z "$files" ]; then
    echo "style: no kit code among the files given (student files are the student's to lay out)"
    exit 0
fi
if ! command -v clang-format >/dev/null 2>&1; then
    echo "style: clang-format not found (apt-get install clang-format)" >&2
    exit 1
fi
if [ "${1:-}" = fix ]; then
    # shellcheck disable=SC2086
    clang-format -i $files
    echo "style: reformatted; now run 'make skeletons'"
    exit 0
fi
# shellcheck disable=SC2086
if clang-format --dry-run -Werror $files 2>"${TMPDIR:-/tmp}/ddplab-style.log"; then
    echo "style: clang-format clean ($(echo $files | wc -w) files)"
else
    grep -c 'error:' "${TMPDIR:-/tmp}/ddplab-style.log" | sed 's/^/style: clang-format findings: /'
    head -n 20 "${TMPDIR:-/tmp}/ddplab-style.log"
    status=1
fi
if command -v cppcheck >/dev/null 2>&1; then
    # shellcheck disable=SC2046
    if cppcheck -q -j "$(nproc)" --error-exitcode=1 --enable=warning,portability --inline-suppr \
        --suppress=missingIncludeSystem -Icommon/include -Icommon/src -Ilabs/01-logreg \
        --language=c --std=c11 $(echo "$files" | grep -v -e '\.cu$' -e '\.cc$' -e '^common/emu/.*\.h$' |
            grep -v '^labs/.*/\(scaler\|logreg\)\.c$') 2>&1; then
        echo "style: cppcheck clean"
    else
        status=1
    fi
    # the emulated CUDA device (common/emu) is C++ (checked with the whole kit)
    if [ $# -gt 0 ] && [ "$1" != fix ]; then
        :
    elif cppcheck -q --error-exitcode=1 --enable=warning,portability --inline-suppr --suppress=missingIncludeSystem \
        -Icommon/emu/include -Icommon/emu/src --language=c++ --std=c++17 common/emu/src/*.cc common/emu/tests/*.cc 2>&1; then
        echo "style: cppcheck clean (C++: common/emu)"
    else
        status=1
    fi
else
    echo "style: cppcheck not found (apt-get install cppcheck); skipped" >&2
fi
exit $status
