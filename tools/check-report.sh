#!/usr/bin/env bash
# check-report.sh — the report page (tools/report.c) says what it should,
# copes with runs that went wrong, and renders in a real browser.
#
#   bash tools/check-report.sh [REPORT.html]
#
# Without REPORT it makes a quick page first (tools/run.sh --quick: one epoch
# per lab, no grading); that is what `make test` does. With REPORT (say
# build/report/index.html after `make run`) it checks that page.
#   1 the page: one section per lab in labs/, each opening with its filled
#     headline (or a "not run: why" line, for a page given as REPORT) and
#     key plot, and a second headline and key plot (from its subfolder) for
#     a lab with a second run (LAB_NN_RUN2 in its lab.mk); every <img src>
#     is a file beside it; the elements it opens are closed
#   2 made-up run folders: a lab that never ran, an interrupted one, a failed
#     driver, no summary.json, a summary without a headline key, a lab with
#     no headline given, a second run that failed, hostile strings and
#     plot names: each says why in
#     its own line, everything is escaped, nothing unsafe is linked
#   3 in chromium: a screenshot of the window's size that is not blank, and
#     the DOM after rendering holds every headline and no image that failed
#     to load, and the browser's console stays silent (no script error, no
#     message); the broken-image marker is proven on part 2's page, the
#     console check on a page with a script error. Without chromium (or with DL_BROWSER=none) this part prints
#     SKIPPED and why; DL_BROWSER=path picks another Chromium-like browser.
# Writes its pages, screenshot and DOM to $B/test/report-check/.
set -u
. tools/testlib.sh
W=$B/test/report-check
rm -rf "$W"
mkdir -p "$W"
labs=()
mapfile -t labs < <(bash tools/lab.sh list) || exit 1

# ---- the page to check ----
if [ $# -ge 1 ]; then
    page=$1
    strict=0 # a page from elsewhere may hold labs that did not run; they must say why
    expect_file "$page" "the report $page exists"
else
    page=$W/quick/report/index.html
    strict=1
    if bash tools/run.sh --quick --into "$W/quick" >"$W/quick-run.log" 2>&1; then
        ok "tools/run.sh --quick ran every lab and wrote the page"
    else
        not_ok "tools/run.sh --quick failed:"
        tail -n 12 "$W/quick-run.log" | sed 's/^/    | /'
    fi
    # what a learner's terminal shows of a run: no plot script's complaint (gnuplot's
    # "warning:" or "Warning:", its line number) among the drivers' lines
    warned=$(grep -rhiE '^(".*\.gp" line [0-9]+: )?warning:' "$W/quick/run" --include=run.log | head -n 3)
    if [ -z "$warned" ]; then ok "no run of the quick page printed a plot script's warning"; else
        not_ok "a run printed a plot script's warning:"
        printf '%s\n' "$warned" | sed 's/^/    | /'
    fi
fi
[ -s "$page" ] || { finish; exit 1; }

# section ID [FILE]: the lines of one lab's section
section() { sed -n "/^<section id=\"$1\">/,/^<\/section>/p" "${2:-$page}"; }
# text: the text of HTML (tags dropped, the entities report.c writes decoded)
text() { sed -e 's/<[^>]*>//g' -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'; }

# beside FILE TAG ATTR [ENDING]: each <TAG ATTR="..."> of FILE (ending so, an extended
# regex: svg|png) resolves to a file beside the page; the count into FOUND
beside() {
    local file=$1 tag=$2 attr=$3 ending=${4:-} dir ref path n=0 bad=0
    dir=$(dirname "$file")
    while IFS= read -r ref; do
        n=$((n + 1))
        path=$dir/$(printf '%b' "${ref//%/\\x}")
        [ -f "$path" ] || {
            echo "    | <$tag $attr=\"$ref\"> is not a file ($path)"
            bad=1
        }
    done < <(grep -oE "<$tag $attr=\"[^\"#]*${ending:+\\.($ending)}\"" "$file" | sed -E "s/^<$tag $attr=\"//; s/\"$//")
    FOUND=$n
    return $bad
}
# the_imgs FILE: each <img src> (IMGS of them); the_links FILE: each plot thumbnail's link (<a href>
# to an .svg/.png, LINKS of them)
the_imgs() {
    beside "$1" img src
    local rc=$?
    IMGS=$FOUND
    return $rc
}
the_links() {
    beside "$1" a href 'svg|png'
    local rc=$?
    LINKS=$FOUND
    return $rc
}

# balanced FILE: every element the page opens is closed
balanced() {
    local file=$1 tag opened closed bad=0
    for tag in html body section details summary table tr figure figcaption pre p h1 h2 a; do
        opened=$(grep -o "<${tag}[ >]" "$file" | wc -l)
        closed=$(grep -o "</$tag>" "$file" | wc -l)
        [ "$opened" = "$closed" ] || {
            echo "    | <$tag> opened $opened times, closed $closed"
            bad=1
        }
    done
    return $bad
}

# ---- 1 the page ----
headlines=() # the labs whose every headline is on the page
n_headlines=0
for dir in "${labs[@]}"; do
    s=$(section "$dir")
    if [ -z "$s" ]; then
        not_ok "lab $dir has no section on the page"
        continue
    fi
    id=${dir%%-*}
    run2=$(bash tools/lab.sh get "$id" RUN2)
    want=1
    [ -n "$run2" ] && want=2
    h=$(grep -c 'class="headline"' <<<"$s")
    r=$(printf '%s\n' "$s" | grep 'class="notrun"' | text)
    u=$(printf '%s\n' "$s" | grep 'class="unavailable">headline unavailable' | text)
    if [ "$h" = "$want" ]; then
        ok "lab $dir opens with its headline: $(printf '%s\n' "$s" | grep 'class="headline"' | text | head -n 1)"
        [ -n "$run2" ] &&
            ok "lab $dir's second run ($run2) has its headline: $(printf '%s\n' "$s" | grep 'class="headline"' | text | sed -n 2p)"
        n_headlines=$((n_headlines + want))
        headlines+=("$dir")
    elif [ -n "$u" ]; then
        not_ok "lab $dir: $u"
    elif [ -n "$r" ] && [ $strict = 0 ]; then
        ok "lab $dir (or its second run) did not run and says why: $r"
    else
        not_ok "lab $dir has $h of its $want headlines and no 'not run' line${r:+ ($r)}"
    fi
    if [ "$h" = "$want" ]; then
        k=$(grep -c '<figure class="key"><img src=' <<<"$s")
        [ "$k" = "$want" ] && ok "lab $dir shows its key plot$([ "$want" = 2 ] && echo "s (both runs)")" \
            || not_ok "lab $dir: $k of $want key plots: $(printf '%s\n' "$s" | grep 'class="unavailable"' | text | head -n 1)"
    fi
    if [ "$h" = 2 ] && [ -n "$run2" ]; then
        printf '%s\n' "$s" | grep '<figure class="key"><img src=' | sed -n 2p | grep -q "<img src=\"[^\"]*/$run2/" \
            && ok "lab $dir: the second key plot is the $run2 run's" \
            || not_ok "lab $dir: the second key plot is not from the $run2 folder"
    fi
done
# the headline's numbers are summary.json's: lab 01's test accuracy, as a percentage
s01=$(dirname "$page")/../run/01-logreg/summary.json
if [ -f "$s01" ] && [ -n "$(section 01-logreg)" ]; then
    acc=$(awk -v a="$($J "$s01" test_accuracy)" 'BEGIN { printf "%.1f%%", 100 * a }')
    section 01-logreg | grep 'class="headline"' | grep -qF "test accuracy $acc" \
        && ok "lab 01's headline carries summary.json's test accuracy ($acc)" \
        || not_ok "lab 01's headline lacks 'test accuracy $acc' from $s01"
fi
# lab 05's second headline (part 2, AMP) carries its own test accuracy beside the fp32 run's
s05=$(dirname "$page")/../run/05-ddp-amp
if [ -f "$s05/amp/summary.json" ] && [ -f "$s05/summary.json" ] && [ -n "$(section 05-ddp-amp)" ]; then
    a=$(awk -v a="$($J "$s05/amp/summary.json" test_accuracy)" 'BEGIN { printf "%.1f%%", 100 * a }')
    b=$(awk -v a="$($J "$s05/summary.json" test_accuracy)" 'BEGIN { printf "%.1f%%", 100 * a }')
    section 05-ddp-amp | grep 'class="headline"' | grep -F "Test accuracy $a after" | grep -qF "(the fp32 run above: $b" \
        && ok "lab 05's AMP headline carries the AMP run's test accuracy ($a) beside the fp32 run's ($b)" \
        || not_ok "lab 05's AMP headline lacks 'Test accuracy $a after' and '(the fp32 run above: $b'"
fi
# every number a headline gives that its key plot shows too is the same quantity, written the same way:
# agree DIR N PLOT WHAT VALUE...: each VALUE (formatted as both write it) is in the section's N-th headline
# and in the text of the key plot PLOT (an .svg; a .png has no text to read: said, not checked)
agree() {
    local dir=$1 n=$2 plot=$3 what=$4 h t v bad=""
    shift 4
    [ -n "$(section "$dir")" ] || return 0
    h=$(section "$dir" | grep 'class="headline"' | text | sed -n "${n}p")
    if [ ! -f "$plot" ]; then
        echo "# $what: no $(basename "$plot") (a png run?): the headline against its plot is not checked"
        return 0
    fi
    t=$(sed -e 's/<[^>]*>/ /g' -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' "$plot")
    for v in "$@"; do
        grep -qF -- "$v" <<<"$h" || bad="$bad '$v' is not in the headline;"
        grep -qF -- "$v" <<<"$t" || bad="$bad '$v' is not in $(basename "$plot");"
    done
    if [ -z "$bad" ]; then ok "$what: $* in the headline and in the key plot"; else
        not_ok "$what:$bad"
        printf '    | headline: %s\n' "$h"
    fi
}
# fmt FORMAT SUMMARY KEY [SCALE]: a summary.json number as printf FORMAT writes it (times SCALE)
fmt() { awk -v f="$1" -v v="$($J "$2" "$3")" -v k="${4:-1}" 'BEGIN { printf f, v * k }'; }
R=$(dirname "$page")/../run
S=$R/01-logreg/summary.json
[ -f "$S" ] && agree 01-logreg 1 "$R/01-logreg/scaling.svg" "lab 01: the training losses of both runs" \
    "$(fmt %.3g "$S" train_loss)" "$(fmt %.3g "$S" raw_features_run.final_train_loss)"
S=$R/02-evaluation/summary.json
[ -f "$S" ] && agree 02-evaluation 1 "$R/02-evaluation/validation_curve.svg" \
    "lab 02: the chosen lambda, its validation macro-F1 beside the first lambda's, its one test score" \
    "λ = $(fmt %g "$S" chosen_lambda)" "$(fmt %.4f "$S" chosen_val_macro_f1)" "$(fmt %.4f "$S" first_val_macro_f1)" \
    "$(fmt %.1f%% "$S" test_accuracy 100)" "$(fmt %.3f "$S" test_macro_f1)"
S=$R/03-data-parallel/summary.json
[ -f "$S" ] && agree 03-data-parallel 1 "$R/03-data-parallel/epoch_time.svg" \
    "lab 03: a steady epoch of DDP and of the naive attempt, and their projected speedups" \
    "$(fmt '%.3f s' "$S" steady_epoch_seconds)" "$(fmt '%.3f s' "$S" naive.epoch_seconds)" \
    "$(fmt %.2f× "$S" projection.speedup)" "$(fmt %.2f× "$S" naive.projected_speedup)"
S=$R/04-ring-allreduce/summary.json
[ -f "$S" ] && agree 04-ring-allreduce 1 "$R/04-ring-allreduce/busbw.svg" \
    "lab 04: the large messages' busbw of the ring, the library and the naive allreduce" \
    "$(fmt '%.3g GB/s' "$S" algos.ring.large_busbw_gbs)" "$(fmt '%.3g GB/s' "$S" algos.library.large_busbw_gbs)" \
    "$(fmt '%.3g GB/s' "$S" algos.naive.large_busbw_gbs)"
S=$R/05-ddp-amp/summary.json
[ -f "$S" ] && agree 05-ddp-amp 1 "$R/05-ddp-amp/speedup.svg" "lab 05: each mode's projected speedup, the exposed share" \
    "$(fmt %.2f× "$S" projection.bucketed.speedup)" "$(fmt %.1f%% "$S" projection.bucketed.exposed_share 100)" \
    "$(fmt %.2f× "$S" projection.ddp-flat.speedup)" "$(fmt %.2f× "$S" projection.per-param.speedup)"
S=$R/05-ddp-amp/amp/summary.json
if [ -f "$S" ]; then
    shares=() # a share of 0 has no line on the plot's log axis (its title says so instead)
    for k in mean_underflow_share mean_subnormal_share; do
        awk -v v="$($J "$S" "amp_stats.$k")" 'BEGIN { exit !(v > 0) }' && shares+=("$(fmt %.3g%% "$S" "amp_stats.$k" 100)")
    done
    [ ${#shares[@]} -gt 0 ] && agree 05-ddp-amp 2 "$R/05-ddp-amp/amp/amp.svg" \
        "lab 05 (AMP): the mean shares of the gradient flushed to zero and subnormal" "${shares[@]}"
fi
if the_imgs "$page"; then ok "all $IMGS <img src> of the page are files beside it"; else not_ok "broken <img src> on the page"; fi
if balanced "$page"; then ok "every element the page opens is closed"; else not_ok "the page's elements do not balance"; fi
if the_links "$page"; then
    n_other=$(grep -c '<figure class="other">' "$page")
    expect_cmp "$LINKS" == "$n_other" "each of the $n_other plot thumbnails links to its plot, and all $LINKS links are files"
else not_ok "a thumbnail links to a missing file"; fi
# summary.json's arrays of objects and of numbers are tables, not "[…, …]"
if grep -q '"per_class"' "$(dirname "$page")/../run/02-evaluation/summary.json" 2>/dev/null; then
    section 02-evaluation | grep -q '<td>per_class</td><td><table class=arr><tr><th>class</th>' \
        && ok "lab 02's per_class is a table (a row per class)" || not_ok "lab 02's per_class is not rendered as a table"
fi
grep -q '\[…\|, …' "$page" && not_ok "an array is still written as [… , …] on the page" \
    || ok "no array on the page is written as [… , …]"
# the overview: each lab's result (its headline's first sentence) beside its grade
for dir in "${headlines[@]}"; do
    first=$(section "$dir" | grep 'class="headline"' | head -n 1 | text | sed 's/\. .*/./' | cut -c 1-60)
    sed -n '/<table class=overview>/,/<\/table>/p' "$page" | grep "href=\"#$dir\"" | text | grep -qF -- "$first" \
        && ok "the overview gives lab $dir's result: $first…" || not_ok "the overview lacks lab $dir's result '$first'"
done

# ---- 2 made-up run folders ----
F=$W/fixture
mkdir -p "$F/report" "$F/run/02-evaluation" "$F/run/02-nokey" "$F/run/05-failed" "$F/run/05-nosummary" \
    "$F/run/06-interrupted" "$F/run/09-noview" "$F/run/05-second/amp"
svg='<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#2a6fb0"/></svg>'
echo "$svg" >"$F/run/02-evaluation/validation_curve.svg"
echo "$svg" >"$F/run/02-evaluation/lost.svg"
echo "$svg" >"$F/run/09-noview/a.svg"
echo 0 | tee "$F/run/02-evaluation/run.rc" "$F/run/02-nokey/run.rc" "$F/run/05-nosummary/run.rc" \
    "$F/run/09-noview/run.rc" >/dev/null
cat >"$F/run/02-evaluation/summary.json" <<'EOF'
{"dataset": "<script>alert(1)</script> & \"q\"", "test_accuracy": 0.5, "test_macro_f1": 0.25,
 "rows": {"train": 9, "test": 7}, "chosen_lambda": 0.001, "chosen_val_macro_f1": 0.5, "first_lambda": 0,
 "first_val_macro_f1": 0.4,
 "plots": "validation_curve.svg,../../../etc/passwd.svg,x\" onload=\"y.svg,lost.svg,gone.svg"}
EOF
echo '{"dataset": "d", "test_accuracy": 0.5, "rows": {"train": 9, "test": 7}, "chosen_lambda": 0,
 "chosen_val_macro_f1": 0.5, "first_lambda": 0, "first_val_macro_f1": 0.5}' >"$F/run/02-nokey/summary.json"
echo 3 >"$F/run/05-failed/run.rc"
printf 'loading\nerror: <b>boom</b> & more\n' >"$F/run/05-failed/run.log"
echo '{"plots": "a.svg"}' >"$F/run/09-noview/summary.json"
echo 0 >"$F/run/05-second/run.rc"
echo '{"buckets": 2}' >"$F/run/05-second/summary.json"
echo 4 >"$F/run/05-second/amp/run.rc"
printf 'error: fp16 <i>boom</i>\n' >"$F/run/05-second/amp/run.log"
# each made-up lab shows what the real lab's manifest says (09-noview: nothing given)
mapfile -d '' v02 < <(bash tools/lab.sh view 02)
mapfile -d '' v05 < <(bash tools/lab.sh view 05)
expect_rc 0 "the report builds from broken run folders" -- "$B/tools/report" "$F/report/index.html" \
    --lab "$F/run/02-evaluation" "Lab <i>02</i>" "${v02[@]}" --lab "$F/run/02-nokey" "no key" "${v02[@]}" \
    --lab "$F/run/05-failed" "failed" "${v05[@]}" --lab "$F/run/05-nosummary" "no summary" "${v05[@]}" \
    --lab "$F/run/06-interrupted" "interrupted" --lab "$F/run/07-never" "never" --lab "$F/run/09-noview" "no view" \
    --lab "$F/run/05-second" "second run failed" "${v05[@]}"
expect_rc 2 "report: an unknown argument is refused" -- "$B/tools/report" "$W/x.html" --lab "$F/run/02-nokey" t --bogus
expect_rc 2 "report: a --run2 that is a path is refused" -- "$B/tools/report" "$W/x.html" --lab "$F/run/02-nokey" t \
    --run2 ../x
expect_rc 2 "report: a --headline before any --lab is refused" -- "$B/tools/report" "$W/x.html" --headline h
expect_no_file "$W/x.html" "a refused report writes no page"
FP=$F/report/index.html
# expect_in ID PATTERN WHAT: a section's text matches a fixed string
expect_in() {
    if section "$1" "$FP" | text | grep -qF -- "$2"; then ok "$3"; else
        not_ok "$3: section $1 lacks '$2'"
        section "$1" "$FP" | text | head -n 6 | sed 's/^/    | /'
    fi
}
expect_in 07-never "not run: there is no run folder" "a lab that never ran: 'not run' and why"
expect_in 06-interrupted "run.rc is missing" "an interrupted run: 'not run' and why"
expect_in 05-failed "not run: the driver exited with status 3: error: <b>boom</b> & more" \
    "a failed driver: its status and last line"
expect_in 05-nosummary "summary.json is missing or unreadable" "no summary.json: 'not run' and why"
expect_in 02-nokey "headline unavailable: summary.json has no value 'test_macro_f1'" "a missing headline key is named"
expect_in 09-noview "no headline given for this lab: its manifest (lab.mk) sets LAB_NN_HEADLINE" \
    "a lab with no headline is told where to declare one"
expect_in 09-noview "a.svg" "… and still shows its plot"
expect_in 05-second "the amp run: not run: the driver exited with status 4: error: fp16 <i>boom</i>" \
    "a second run that failed: its own 'not run' line, status and last line"
expect_in 05-second "the amp run: driver output" "… and its output, folded"
expect_in 02-evaluation "Softmax regression on <script>alert(1)</script> & \"q\", trained on 9 rows" \
    "the headline is filled, strings as text"
expect_in 02-evaluation "reaches test accuracy 50.0% and macro-F1 0.250." "the headline's numbers are formatted"
expect_in 02-evaluation "Validation macro-F1 and accuracy for each λ" "a plot's caption says what to see in it"
expect_in 02-evaluation "gone.svg is missing from the run folder" "a listed plot that is not there is named"
expect_in 02-evaluation "not a plain .svg/.png file name" "a plot name that is a path or markup is not linked"
grep -q '<script>\|<b>boom\|<i>02\|<i>boom' "$FP" && not_ok "a string from a file reached the page unescaped" \
    || ok "strings from files and titles are escaped"
grep '<img' "$FP" | grep -q 'etc/passwd\|onload=' && not_ok "an unsafe plot name was linked" \
    || ok "no unsafe plot name is linked"
if the_imgs "$FP"; then ok "the made-up page's $IMGS <img src> are files"; else not_ok "the made-up page links a missing file"; fi
if balanced "$FP"; then ok "the made-up page's elements balance"; else not_ok "the made-up page's elements do not balance"; fi
rm "$F/run/02-evaluation/lost.svg" # now the browser must mark it broken

# ---- 3 in a real browser ----
browser=${DL_BROWSER:-}
for b in chromium chromium-browser google-chrome; do
    [ -n "$browser" ] || browser=$(command -v "$b" 2>/dev/null)
done
if [ "$browser" = none ]; then
    echo "SKIPPED - rendering in a browser: DL_BROWSER=none"
    SKIPPED=1
elif [ -z "$browser" ]; then
    echo "SKIPPED - rendering in a browser: no chromium here (apt-get install chromium, or DL_BROWSER=path)"
    SKIPPED=1
else
    flags=(--headless --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$W/profile")
    [ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox) # chromium refuses to run as root with its sandbox
    WIN_W=1280 WIN_H=3600
    url=file://$(realpath "$page")
    make -s --no-print-directory B="$B" "$B/tools/pngstat" >"$W/pngstat-build.log" 2>&1 \
        || { not_ok "tools/pngstat.c does not build:"; tail -n 5 "$W/pngstat-build.log" | sed 's/^/    | /'; }
    t0=$(date +%s)
    timeout 120 "$browser" "${flags[@]}" --window-size=$WIN_W,$WIN_H --screenshot="$W/shot.png" "$url" \
        >"$W/browser.log" 2>&1
    if stats=$("$B/tools/pngstat" "$W/shot.png" 2>&1); then
        ok "$(basename "$browser") took a screenshot in $(($(date +%s) - t0)) s: $stats"
        read -r _ w _ h _ bg _ ink _ colour <<<"$stats"
        expect_cmp "$w" == $WIN_W "the screenshot is as wide as the window"
        expect_cmp "$h" == $WIN_H "the screenshot is as tall as the window"
        expect_cmp "$bg" '<' 0.97 "the screenshot is not blank (share of background pixels)"
        expect_cmp "$ink" '>' 0.4 "text or plots on many rows (share of rows with ink)"
        expect_cmp "$colour" '>' 0.002 "plots drawn in colour (share of coloured pixels)"
    else
        not_ok "no usable screenshot: $stats"
        tail -n 5 "$W/browser.log" | sed 's/^/    | /'
    fi
    # dom PAGE LOG: the DOM after rendering; the browser's log (console messages included) into LOG
    dom() {
        timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
            --dump-dom "file://$(realpath "$1")" 2>"$2"
    }
    # console LOG: the console messages the page printed (chromium logs each as CONSOLE)
    console() { grep -a 'CONSOLE' "$1" | sed 's/^\[[^]]*\] *//'; }
    dom "$page" "$W/console.log" >"$W/dom.html"
    if [ -s "$W/dom.html" ]; then
        missing=0
        for dir in "${headlines[@]}"; do
            while IFS= read -r want; do
                section "$dir" "$W/dom.html" | grep 'class="headline"' | text | grep -qxF -- "$want" || {
                    echo "    | a headline of lab $dir is not in the rendered DOM: $want"
                    missing=1
                }
            done < <(section "$dir" | grep 'class="headline"' | text)
        done
        [ $missing = 0 ] && ok "the rendered DOM holds all $n_headlines headlines" \
            || not_ok "headlines missing from the rendered DOM"
        n=$(grep -o '<img [^>]*class="broken"' "$W/dom.html" | wc -l)
        expect_cmp "$n" == 0 "no image failed to load in the browser"
    else
        not_ok "$(basename "$browser") --dump-dom printed nothing"
    fi
    msgs=$(console "$W/console.log")
    if [ -z "$msgs" ]; then ok "the browser's console stayed silent on the page (no script error, no message)"; else
        not_ok "the page printed to the browser's console:"
        printf '%s\n' "$msgs" | head -n 5 | sed 's/^/    | /'
    fi
    # the console check can fail: a page whose script throws
    printf '<!doctype html><title>x</title><p>x</p><script>report_is_undefined();</script>\n' >"$W/console-fixture.html"
    dom "$W/console-fixture.html" "$W/console-fixture.log" >/dev/null
    console "$W/console-fixture.log" | grep -q 'report_is_undefined' \
        && ok "a script error on a page reaches the console check (so the check above can fail)" \
        || not_ok "a page's script error was not seen in chromium's console log ($W/console-fixture.log)"
    dom "$FP" "$W/fixture-console.log" >"$W/fixture-dom.html"
    grep -q '<img [^>]*lost.svg[^>]*class="broken"' "$W/fixture-dom.html" \
        && ok "the browser marks an image whose file is gone as broken (so the check above can fail)" \
        || not_ok "an image whose file is gone was not marked broken in the browser"
    echo "# screenshot: $W/shot.png, rendered DOM: $W/dom.html"
fi
finish
status=$?
[ "${SKIPPED:-0}" = 1 ] && echo "# the browser part was SKIPPED (see above)"
exit $status
