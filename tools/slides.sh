#!/usr/bin/env bash
# slides.sh — `make slides`: slides/*.md into build/slides/*.html with pandoc's
# dzslides format (the whole deck in one file: works offline). Installs pandoc
# with apt-get when it is missing (sudo when not root).
set -euo pipefail
B=${B:-build}
if ! command -v pandoc >/dev/null 2>&1; then
    echo "slides: installing pandoc (the only tool the slides need)"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends pandoc >/dev/null
fi
mkdir -p "$B/slides"
for md in slides/*.md; do
    [ -f "$md" ] || continue
    out=$B/slides/$(basename "${md%.md}").html
    pandoc -s -t dzslides --mathml --slide-level=2 --metadata pagetitle="ddplab $(basename "${md%.md}")" \
        -f markdown -t dzslides -o "$out.tmp" "$md"
    mv "$out.tmp" "$out"
    echo "slides: $out"
done
