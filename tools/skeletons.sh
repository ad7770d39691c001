#!/usr/bin/env bash
# skeletons.sh write|check|build DIR — the student files in labs/ are generated
# from solutions/ by build/tools/skelgen.
#   write        regenerates labs/NN-*/ student files
#   check        fails (exit 1) when a committed skeleton differs from what the
#                generator makes; skipped for files you have edited and not
#                committed (expected while you work on a lab)
#   build DIR    writes freshly generated skeletons to DIR/NN/ (for the tests)
set -euo pipefail
mode=${1:-check}
dest=${2:-}
B=${B:-build}
gen=$B/tools/skelgen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
checked=0
edited=()
in_git=0
git rev-parse --is-inside-work-tree >/dev/null 2>&1 && in_git=1
labs=$(bash tools/lab.sh list) || exit 2
for lab in $labs; do
    id=${lab%%-*}
    mk=labs/$lab/lab.mk
    files=$(bash tools/lab.sh files "$id") || exit 2
    for f in $files; do
        src=solutions/$lab/$f
        if [ ! -f "$src" ]; then
            echo "skeletons: $src is listed in $mk but missing" >&2
            status=1
            continue
        fi
        "$gen" "$src" "$tmp/$f"
        case $mode in
        write)
            if ! cmp -s "$tmp/$f" "labs/$lab/$f"; then
                cp "$tmp/$f" "labs/$lab/$f"
                echo "wrote labs/$lab/$f"
            fi ;;
        build)
            mkdir -p "$dest/$id"
            cp "$tmp/$f" "$dest/$id/$f" ;;
        check)
            if [ $in_git = 1 ] && ! git diff --quiet HEAD -- "labs/$lab/$f" 2>/dev/null \
                && git cat-file -e "HEAD:labs/$lab/$f" 2>/dev/null \
                && ! git diff --quiet HEAD -- "solutions/$lab/$f" 2>/dev/null; then
                : # both sides changed: a developer regenerating; compare below
            elif [ $in_git = 1 ] && ! git diff --quiet HEAD -- "labs/$lab/$f" 2>/dev/null \
                && git cat-file -e "HEAD:labs/$lab/$f" 2>/dev/null; then
                edited+=("labs/$lab/$f")
                continue
            fi
            checked=$((checked + 1))
            if ! cmp -s "$tmp/$f" "labs/$lab/$f"; then
                echo "skeletons: labs/$lab/$f differs from what solutions/$lab/$f generates:" >&2
                diff -u "labs/$lab/$f" "$tmp/$f" | head -n 20 >&2 || true
                echo "  (run 'make skeletons' and commit the result)" >&2
                status=1
            fi ;;
        esac
    done
    for s in solutions/$lab/*; do
        name=$(basename "$s")
        case " $files " in *" $name "*) ;; *)
            echo "skeletons: solutions/$lab/$name is not listed in $mk (LAB_*_STUDENT_*)" >&2
            status=1 ;;
        esac
    done
done
if [ "$mode" = check ]; then
    if [ ${#edited[@]} -gt 0 ]; then
        echo "skeletons: not comparing ${#edited[@]} file(s) you have edited: ${edited[*]}"
    fi
    [ $status -eq 0 ] && echo "skeletons: $checked student file(s) match their solution's generated skeleton"
fi
exit $status
