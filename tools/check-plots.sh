#!/usr/bin/env bash
# check-plots.sh — every plot reads at slide size: each text an SVG plot
# draws is at least 1/60 of the canvas's width (16 px on the kit's 960-px
# canvas: shown on a slide at a third of a 1280-px screen, that is still
# about 7 px) and stays on the canvas. tools/svgtext.c measures; this runs it.
#
#   bash tools/check-plots.sh [DIR|FILE.svg ...] [--shots DIR]
#
# Without arguments it checks the plots of a quick run: step 9's
# ($B/test/report-check/quick/run, which tools/check-report.sh writes), else
# one it makes itself (tools/run.sh --quick into $B/test/plot-check). A DIR
# is searched for *.svg. First it proves the check can fail: a plot drawn
# with the kit's old style (11-px text, 8.8-px subtitles) must be refused,
# naming the text, and so must a hand-made SVG whose small text hides behind
# nested groups, em units and a scale transform.
# --shots DIR also renders each plot to DIR/NAME.png at 960x600 in chromium,
# for a person to look at (not needed for the verdict).
set -u
. tools/testlib.sh
W=$B/test/plot-check
mkdir -p "$W"
shots=
targets=()
while [ $# -gt 0 ]; do
    case $1 in
    --shots)
        shots=${2:?--shots needs a folder}
        shift ;;
    -*)
        echo "usage: tools/check-plots.sh [DIR|FILE.svg ...] [--shots DIR]" >&2
        exit 2 ;;
    *) targets+=("$1") ;;
    esac
    shift
done
make -s --no-print-directory B="$B" "$B/tools/svgtext" >"$W/build.log" 2>&1 || {
    not_ok "tools/svgtext.c does not build:"
    tail -n 5 "$W/build.log" | sed 's/^/    | /'
    finish
    exit 1
}
S=$B/tools/svgtext

# ---- the check can fail ----
cat >"$W/nested.svg" <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1200" viewBox="0 0 960 600">
<g style="font-family:DejaVu Sans; font-size:20px"><text x="10" y="40">big enough</text>
<g font-size="0.75em"><text x="10" y="80">fifteen in em<tspan font-size="200%">thirty</tspan></text></g>
<g transform="translate(100,200) scale(0.5)"><text>scaled to ten</text></g></g>
<!-- <text font-size="4">in a comment</text> -->
<text x="900" y="300" font-size="18" text-anchor="start">runs off the right edge</text>
</svg>
EOF
expect_rc 1 "svgtext refuses a hand-made SVG with small text" -- "$S" "$W/nested.svg"
expect_out "text 15 < 16 .*'fifteen in em ?thirty'" "… text at 0.75em of 20 px (15) is named"
expect_out "text 10 < 16 .*'scaled to ten'" "… 20-px text in a group scaled by 0.5 (10) is named"
expect_out "runs off the 960x600 canvas.*'runs off the right edge'" "… text that leaves the canvas is named"
grep -q "big enough\|in a comment" <<<"$T_OUT" && not_ok "svgtext named text it should not" \
    || ok "… and 20-px text, and a comment, are not named"
expect_rc 2 "svgtext: a file that is not SVG is a usage error" -- "$S" "$W/build.log"
if command -v gnuplot >/dev/null; then
    # the kit's style before the change: 11-px text, subtitles at 0.8 of it
    printf '%s\n' "set terminal svg size 960,600 enhanced font 'DejaVu Sans,11'" "set output '$W/old-style.svg'" \
        "set title \"A title\\n{/*0.8 a subtitle at 8.8 px}\"" "plot x title 'a curve'" >"$W/old-style.gp"
    if gnuplot "$W/old-style.gp" >"$W/old-style.log" 2>&1; then
        expect_rc 1 "a plot drawn with the old style (11-px text) is refused" -- "$S" "$W/old-style.svg"
        expect_out "text 8.8 < 16 .*'a subtitle at 8.8 px'" "… its 8.8-px subtitle is named"
        expect_out "text 11 < 16 .*'a curve'" "… and its 11-px key"
    else
        not_ok "gnuplot could not draw the old-style plot: $(tail -n 1 "$W/old-style.log")"
    fi
    # and the kit's style now passes the same plot
    gnuplot -e "fmt='svg'; out='$W/new-style.svg'" common/plot/style.gp \
        -e "set title sprintf(\"A title\\n%s\", sub('a subtitle')); plot x title 'a curve'" >"$W/new-style.log" 2>&1
    expect_rc 0 "the same plot with common/plot/style.gp passes" -- "$S" "$W/new-style.svg"
else
    echo "# no gnuplot: the old-style plot is not drawn (the hand-made SVG above proves the check)"
fi

# ---- the plots ----
if [ ${#targets[@]} -eq 0 ]; then
    if [ -d "$B/test/report-check/quick/run" ]; then
        targets=("$B/test/report-check/quick/run")
    elif bash tools/run.sh --quick --into "$W/quick" >"$W/quick-run.log" 2>&1; then
        targets=("$W/quick/run")
    else
        not_ok "tools/run.sh --quick failed:"
        tail -n 8 "$W/quick-run.log" | sed 's/^/    | /'
    fi
fi
files=()
for t in "${targets[@]}"; do
    if [ -d "$t" ]; then
        mapfile -t -O ${#files[@]} files < <(find "$t" -name '*.svg' ! -name '*.tmp.*' | sort)
    else
        files+=("$t")
    fi
done
if [ ${#files[@]} -eq 0 ]; then
    not_ok "no SVG plot to check in ${targets[*]:-(nothing)}"
else
    "$S" "${files[@]}" >"$W/verdict.txt" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        ok "all ${#files[@]} SVG plots: every text at least 1/60 of the canvas's width, and on the canvas"
    else
        bad=$(cut -d: -f1 "$W/verdict.txt" | sort -u | wc -l)
        not_ok "$bad of ${#files[@]} SVG plots have text under 1/60 of their width or off the canvas:"
        sed 's/^/    | /' "$W/verdict.txt" | head -n 40
        [ "$(wc -l <"$W/verdict.txt")" -gt 40 ] && echo "    | … (all of it: $W/verdict.txt)"
    fi
fi

# ---- for a person: each plot as it looks ----
if [ -n "$shots" ] && [ ${#files[@]} -gt 0 ]; then
    browser=${DL_BROWSER:-$(command -v chromium || command -v chromium-browser || true)}
    if [ -z "$browser" ] || [ "$browser" = none ]; then
        echo "# --shots: no chromium here, no screenshots"
    else
        mkdir -p "$shots"
        flags=(--headless --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$W/profile" --window-size=960,600)
        [ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox)
        for f in "${files[@]}"; do
            name=$(printf '%s' "$f" | sed 's|^\./||; s|/|_|g; s|\.svg$||')
            timeout 60 "$browser" "${flags[@]}" --screenshot="$shots/$name.png" "file://$(realpath "$f")" \
                >/dev/null 2>&1 || echo "# --shots: chromium did not render $f"
        done
        echo "# screenshots: $shots/"
    fi
fi
finish
