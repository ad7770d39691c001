#!/usr/bin/env bash
# budget.sh — the code's size limits, checked (make test's step 2d), and the
# labs' own code counted:
#   - no C, CUDA or header file of labs/ or of common's library (src/,
#     include/, emu/) over 600 lines (tests are tables of cases: not counted);
#   - common/src/comm.c at most 450 (it routes operations, nothing else);
#   - every grader/labNN*.c under 700;
#   - a driver on the engine (its main.c names DL_LAB_MAIN) under 100 lines:
#     its story and its table of hooks. Lab 04's benchmark is a sweep, not a
#     training run, and keeps its own harness, as nccl-tests' perf tools do;
#   - no cycle among common's modules: module M (M.c and dl/M.h; a source
#     with no header of its own is a module too) needs N when one of its
#     files includes "dl/N.h"; tsort names a loop.
# Then a table of each lab's non-student C (the files its manifest does not
# give the student): what the labs' drivers and kits cost, lab by lab.
#   tools/budget.sh          exit 0 when every limit holds, 1 naming each one broken
set -u
cd "$(dirname "$0")/.." || exit 2
bad=0
over() { echo "budget: $1" >&2; bad=1; }

while read -r n f; do
    [ "$f" = total ] && continue
    [ "$n" -gt 600 ] && over "$f has $n lines (at most 600 in labs/ and common's library: split it by concern)"
done < <(find labs common/src common/include common/emu -type f \( -name '*.c' -o -name '*.cu' -o -name '*.h' \) -print0 | xargs -0 wc -l)

n=$(wc -l <common/src/comm.c)
[ "$n" -gt 450 ] && over "common/src/comm.c has $n lines (at most 450: it routes operations to MPI or NCCL, nothing else)"

for f in grader/lab[0-9][0-9]*.c; do
    n=$(wc -l <"$f")
    [ "$n" -ge 700 ] && over "$f has $n lines (under 700: move a part's items to a file of their own, GR_TEST)"
done

for f in labs/*/main.c; do
    grep -q DL_LAB_MAIN "$f" || continue
    n=$(wc -l <"$f")
    [ "$n" -ge 100 ] && over "$f has $n lines (a driver on the engine tells its story in under 100: the rest is hooks)"
done

# common's module graph: "M N" when M needs N, M's own header not counted
edges=$(for f in common/src/*.c common/src/*.h common/include/dl/*.h; do
    m=$(basename "$f") m=${m%.*}
    sed -n 's/^#include "dl\/\([A-Za-z0-9_]*\)\.h".*/\1/p' "$f" | while read -r dep; do
        [ "$dep" != "$m" ] && echo "$m $dep"
    done
done | sort -u)
if ! loops=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
    over "common's modules include each other in a loop:"
    printf '%s\n' "$loops" | sed 's/^tsort: /  /' >&2
fi

# the labs' own code: every .c of labs/NN-name/ that is not a student file
manifest=$(make -s --no-print-directory -f tools/manifest.mk)
total=0
printf '%-22s %6s  %s\n' lab lines "non-student C (main.c, driver, kit)"
for d in labs/[0-9][0-9]-*/; do
    d=${d%/} name=${d#labs/} id=${name%%-*}
    student=" $(printf '%s\n' "$manifest" | awk -F'\t' -v id="$id" '$1==id && $3=="STUDENT_C" {print $4}') "
    files=()
    for f in "$d"/*.c; do
        [[ $student == *" $(basename "$f") "* ]] || files+=("$f")
    done
    n=$(cat "${files[@]}" | wc -l)
    total=$((total + n))
    printf '%-22s %6d  %s\n' "$name" "$n" "$(for f in "${files[@]}"; do printf '%s ' "$(basename "$f")"; done)"
done
printf '%-22s %6d\n' all "$total"
[ $bad -eq 0 ] && echo "budget: every limit holds (files <= 600 lines, comm.c <= 450, graders < 700, engine drivers < 100, no module loop)"
exit $bad
