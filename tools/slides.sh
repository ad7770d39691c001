#!/usr/bin/env bash
# slides.sh — `make slides`: slides/NN-name.md into build/slides/NN-name.html,
# pandoc's dzslides format styled by slides/style.css. Each deck is one file
# that holds its style and its lab's plots (works offline; can be mailed).
#
#   tools/slides.sh [--runs DIR] [--out DIR] [--src DIR]
#
# A number a deck gives of a run is a placeholder, {{RUN path:fmt}}: the value
# at path in DIR/RUN/summary.json, formatted as a report headline's
# (tools/report.c, `report --fill`); a placeholder that cannot be filled
# fails that deck, naming its line. tools/check-slides.sh builds the decks
# from two runs that differ and fails on a number that stays the same.
# The plots are the .svg files `make run` wrote: an image in a deck names its
# path under DIR (default $B/run), `![what to see](01-logreg/scaling.svg)` is
# build/run/01-logreg/scaling.svg, so the plots and the numbers on the slides
# come from one real run. When a deck's lab has no finished run there, this
# runs `make run` first and says so (all labs, graded: the run the numbers in
# the decks were taken from; on a 2-core machine it takes minutes);
# DL_SLIDES_NO_RUN=1 fails instead. A plot a deck names that the run did not
# write is an error, not a blank slide. --src takes the decks from another
# folder (tools/check-slides.sh builds a made-up deck that way).
#
# Needs pandoc: `tools/deps.sh slides` installs it with the kit's other
# packages (apt-get, sudo when not root; DL_NO_DEPS=1 skips the install).
# tools/check-slides.sh checks that every slide fits its window.
set -euo pipefail
B=${B:-build}
runs=$B/run
out=$B/slides
src=slides
while [ $# -gt 0 ]; do
    case $1 in
    --runs)
        runs=${2:?--runs needs a folder}
        shift ;;
    --out)
        out=${2:?--out needs a folder}
        shift ;;
    --src)
        src=${2:?--src needs a folder}
        shift ;;
    *)
        echo "usage: tools/slides.sh [--runs DIR] [--out DIR] [--src DIR]" >&2
        exit 2 ;;
    esac
    shift
done

bash tools/deps.sh slides
command -v pandoc >/dev/null 2>&1 || {
    echo "slides: pandoc is not installed (tools/deps.sh slides installs it; DL_NO_DEPS=1 was set?)" >&2
    exit 1
}

# the runs the decks need: a lab whose run folder has no run.rc of 0
missing=()
for md in "$src"/*.md; do
    d=$(basename "${md%.md}")
    [ "$(cat "$runs/$d/run.rc" 2>/dev/null)" = 0 ] || missing+=("$d")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "${DL_SLIDES_NO_RUN:-0}" = 1 ] || [ "$runs" != "$B/run" ]; then
        echo "slides: no finished run in $runs for: ${missing[*]}; the decks show those runs' plots (\`make run\` makes them)" >&2
        exit 1
    fi
    echo "slides: no finished run of ${missing[*]} in $runs: the decks show that run's plots, so \`make run\` first"
    make --no-print-directory B="$B" run || echo "slides: \`make run\` reported a failure; the decks use what it wrote"
fi

# pandoc 2.19 renamed --self-contained (which 3.x still takes, with a warning) to --embed-resources
embed=(--self-contained)
pandoc --help | grep -- '--embed-resources' >/dev/null && embed=(--embed-resources --standalone) # (no -q: pipefail)

mkdir -p "$out"
status=0
for md in "$src"/*.md; do
    d=$(basename "${md%.md}")
    html=$out/$d.html
    # every plot the deck names must be a file of the run
    bad=0
    while IFS= read -r img; do
        [ -f "$runs/$img" ] || {
            echo "slides: $md shows $img, which is not in $runs (did \`make run\` write it?)" >&2
            bad=1
        }
    done < <(grep -o '](\([^) ]*\)\.\(svg\|png\))' "$md" | sed 's/^](//; s/)$//') # a caption may span lines
    if [ $bad = 1 ]; then
        status=1
        continue
    fi
    # the numbers a deck gives of a run: {{RUN path:fmt}}, filled from RUN's summary.json (tools/report.c)
    if ! "$B/tools/report" --fill "$runs" "$md" <"$md" >"$html.md"; then
        rm -f "$html.md"
        status=1
        continue
    fi
    if pandoc -f markdown -t dzslides --slide-level=2 --mathml "${embed[@]}" --css=slides/style.css \
        --resource-path="$runs:." --metadata pagetitle="ddplab $d" -o "$html.tmp" "$html.md" 2>"$html.log"; then
        mv "$html.tmp" "$html"
        echo "slides: $html"
        sed 's/^/    pandoc: /' "$html.log"
    else
        echo "slides: pandoc failed on $md:" >&2
        sed 's/^/    /' "$html.log" >&2
        rm -f "$html.tmp"
        status=1
    fi
    rm -f "$html.log" "$html.md"
done
exit $status
