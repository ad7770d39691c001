#!/usr/bin/env bash
# run.sh — proves the grader catches every classic mistake it names.
#
# Each grader/mutants/NN-name.diff is a small diff against one solution file
# that makes one classic mistake, with a header:
#     # mutant: what it does
#     # lab: NN
#     # diagnosis: the name the grader must print as "[diagnosis: name]"
#     # items: the graded items that must catch it (optional; default all)
#     # lose: the items it must fail, and no others (optional; a full grade):
#     #       one mistake, one item — every other item passes, is skipped,
#     #       or says "parent failed"
#     # device: emu   (optional) a mistake in a .cu file that the emulated CUDA
#     #       device catches (common/emu; grader/gpu.h): the mutant is built for it
#     #       too (make EMU=1 into $B/emucuda) and graded with GR_CUDA=emu, so
#     #       task 5's CUDA items run there on any machine. Its CPU build keeps
#     #       the reference's object of the .cu file (nvcc is not run for it):
#     #       the CPU items cannot call it
# (diagnosis "none" marks the control: it must score full marks, on every
# item). Each is
# applied to a temporary copy of solutions/NN-*/, built into its own grader
# (build/mutants/NAME/), and graded. The run fails when a mutant scores full
# marks, or when its diagnosis is not among the grader's messages, or when
# the control loses a point.
#   grader/mutants/run.sh [NAME ...]     only those mutants
set -uo pipefail
B=${B:-build}
MB=$B/mutants
EB=$B/emucuda # the kit built for the emulated CUDA device (shared with make test's step 1e)
mkdir -p "$MB"
list=("$@")
[ ${#list[@]} -eq 0 ] && list=($(ls grader/mutants/*.diff | xargs -n1 basename | sed 's/\.diff$//'))
# One mutant: patch, build, grade; prints one line, "ok ..." or "not ok ...".
mutant() {
    local name=$1 t0=$SECONDS
    diff=grader/mutants/$name.diff
    lab=$(sed -n 's/^# lab: *//p' "$diff")
    diag=$(sed -n 's/^# diagnosis: *//p' "$diff")
    what=$(sed -n 's/^# mutant: *//p' "$diff")
    device=$(sed -n 's/^# device: *//p' "$diff")
    # only the items that must catch it (and their parents): the mutant test asks
    # "is this mistake caught, by name, where it should be", not a full grade
    read -r -a items <<<"$(sed -n 's/^# items: *//p' "$diff")"
    lose=$(sed -n 's/^# lose: *//p' "$diff" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
    [ -n "$lose" ] && items=()
    dir=$(basename "$(ls -d labs/"$lab"-*)")
    root=$MB/$name
    src=$root/src
    rm -rf "$root"
    mkdir -p "$src" "$root/obj/mutant/$lab"
    cp -p solutions/"$dir"/* "$src"/
    # Start from the reference's objects so only the patched file recompiles.
    for o in "$B"/obj/solutions/"$lab"/*.o; do
        [ -f "$o" ] && cp "$o" "$root/obj/mutant/$lab/"
    done
    # --fuzz=0: a diff whose context no longer matches the reference is stale, not quietly applied elsewhere
    if ! patch -s --fuzz=0 -p3 -d "$src" <"$diff" >"$root/patch.log" 2>&1; then
        echo "not ok  $name: the diff does not apply to solutions/$dir (see $root/patch.log)"
        return
    fi
    local emu=()
    if [ "$device" = emu ]; then
        mkdir -p "$root/emu/obj/mutant/$lab"
        for o in "$EB"/obj/solutions/"$lab"/*.o; do
            [ -f "$o" ] && cp "$o" "$root/emu/obj/mutant/$lab/"
        done
        touch "$src"/*.cu # the emulated build compiles the mutant's
        if ! make -s --no-print-directory EMU=1 B="$EB" mutant-grader LAB="$lab" MUT_DIR="$src" MUT_B="$root/emu" \
            >"$root/build-emu.log" 2>&1; then
            echo "not ok  $name: does not build for the emulated device (see $root/build-emu.log)"
            return
        fi
        emu=(--emu-code "$root/emu/mutant")
    fi
    # The CPU build's device code is the reference's object, not compiled again
    # (nvcc takes seconds), wherever no item runs it: a mutant of the emulated
    # device (its own build runs the CUDA items), and any mutant where no GPU
    # answers (the gpu1 items are skipped there). Where a GPU answers, nvcc
    # compiles the mutant's .cu files and the headers they include.
    if [ "$device" = emu ] || [ "$("$B/grader/lab$lab" --which-cuda 2>/dev/null)" != gpu ]; then
        for f in "$src"/*.cu; do
            o=$root/obj/mutant/$lab/$(basename "${f%.cu}").o
            [ -f "$f" ] && [ -f "$o" ] && touch "$o" # (newer than the patched files it depends on)
        done
    fi
    if ! make -s --no-print-directory mutant-grader LAB="$lab" MUT_DIR="$src" MUT_B="$root" >"$root/build.log" 2>&1; then
        echo "not ok  $name: does not build (see $root/build.log)"
        return
    fi
    GR_CUDA=${device:+emu} "$B/grader/lab$lab" --code "$root/mutant" --impl "mutant:$name" "${emu[@]}" "${items[@]}" \
        >"$root/grade.log" 2>&1
    rc=$?
    score=$(grep '^Score:' "$root/grade.log" | sed 's/^Score: \([0-9]*\/[0-9]*\).*/\1/')
    if [ "$diag" = none ]; then
        if [ $rc -eq 0 ]; then
            echo "ok      $name: control scores full marks ($score, $((SECONDS - t0)) s)"
        else
            echo "not ok  $name: the control mutant lost points ($score); see $root/grade.log"
        fi
        return
    fi
    failed=$(sed -n 's/^\[FAIL\] *[0-9]*\/[0-9]* *\([a-z0-9_]*\).*/\1/p' "$root/grade.log" | sort | tr '\n' ' ' | sed 's/ $//')
    if [ $rc -eq 0 ]; then
        echo "not ok  $name: scored full marks ($score) — the grader misses: $what"
    elif ! grep -q "\[diagnosis: $diag\]" "$root/grade.log"; then
        echo "not ok  $name: caught ($score) but without [diagnosis: $diag]; see $root/grade.log"
    elif [ -n "$lose" ] && [ "$failed" != "$lose" ]; then
        echo "not ok  $name: failed '$failed', expected only '$lose' (the others pass or say parent failed); see $root/grade.log"
    elif [ -n "$lose" ]; then
        echo "ok      $name: caught as $diag, only in $lose ($score, $((SECONDS - t0)) s)"
    else
        echo "ok      $name: caught as $diag ($score, $((SECONDS - t0)) s)"
    fi
}

# The judges first (shared by every mutant of a lab), so the parallel builds
# below only build their own directories.
labs_used=$(for name in "${list[@]}"; do sed -n 's/^# lab: *//p' "grader/mutants/$name.diff"; done | sort -u)
for lab in $labs_used; do
    make -s --no-print-directory "$B/grader/lab$lab" "$B/solutions/lab$lab" "$B/solutions/lab$lab-worker" >/dev/null || exit 1
done
# and, for the mutants of the emulated device, its judges and the references' objects
# (the drivers too: each mutant's build links the lab's driver objects, which two
# builds side by side must not both compile)
labs_emu=$(for name in "${list[@]}"; do
    grep -q '^# device: emu' "grader/mutants/$name.diff" && sed -n 's/^# lab: *//p' "grader/mutants/$name.diff"
done | sort -u)
for lab in $labs_emu; do
    make -s --no-print-directory EMU=1 B="$EB" "$EB/grader/lab$lab" "$EB/solutions/lab$lab" "$EB/solutions/lab$lab-worker" >/dev/null || exit 1
done
# Two at a time by default (MUTANT_JOBS): one builds while the other grades.
# Each grading takes its own sandbox user, so they do not meet. The later labs
# first: their gradings are the long ones (lab 06's, and the mutants that hang
# until the watchdog stops them), and lab 01's and 02's short ones fill the end.
mapfile -t order < <(printf '%s\n' "${list[@]}" | sort -r -t- -k1,1 -s)
for name in "${order[@]}"; do
    mutant "$name" >"$MB/$name.result" 2>&1 &
    while [ "$(jobs -rp | wc -l)" -ge "${MUTANT_JOBS:-2}" ]; do
        wait -n
    done
done
wait
pass=0
fail=0
for name in "${list[@]}"; do
    cat "$MB/$name.result"
    if grep -q '^ok ' "$MB/$name.result"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "mutants: $pass caught as named, $fail not"
[ $fail -eq 0 ]
