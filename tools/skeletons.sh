#!/usr/bin/env bash
# skeletons.sh write|check — the student files in labs/ are generated from
# solutions/ by build/tools/skelgen. `write` regenerates them; `check` fails
# (exit 1) when a committed skeleton differs from what the generator makes.
set -euo pipefail
mode=${1:-check}
B=${B:-build}
gen=$B/tools/skelgen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for mk in labs/*/lab.mk; do
    lab=$(basename "$(dirname "$mk")")
    files=$(sed -n 's/^LAB_[0-9]*_STUDENT_[A-Z]* *:= *//p' "$mk" | tr '\n' ' ')
    for f in $files; do
        src=solutions/$lab/$f
        if [ ! -f "$src" ]; then
            echo "skeletons: $src is listed in $mk but missing" >&2
            status=1
            continue
        fi
        "$gen" "$src" "$tmp/$f"
        if [ "$mode" = write ]; then
            if ! cmp -s "$tmp/$f" "labs/$lab/$f"; then
                cp "$tmp/$f" "labs/$lab/$f"
                echo "wrote labs/$lab/$f"
            fi
        elif ! cmp -s "$tmp/$f" "labs/$lab/$f"; then
            echo "skeletons: labs/$lab/$f differs from what solutions/$lab/$f generates:" >&2
            diff -u "labs/$lab/$f" "$tmp/$f" | head -n 20 >&2 || true
            echo "  (run 'make skeletons' and commit the result)" >&2
            status=1
        fi
    done
    for s in solutions/$lab/*; do
        name=$(basename "$s")
        case " $files " in *" $name "*) ;; *)
            echo "skeletons: solutions/$lab/$name is not listed in $mk (LAB_*_STUDENT_*)" >&2
            status=1 ;;
        esac
    done
done
if [ "$mode" = check ] && [ $status -eq 0 ]; then
    echo "skeletons: every student file matches its solution's generated skeleton"
fi
exit $status
