#!/usr/bin/env bash
# check-slides.sh — every slide of every deck shows all of its content, in a
# real browser, at a laptop's and a projector's size.
#
#   bash tools/check-slides.sh [--runs DIR] [--shots] [DECK.html ...]
#
# Without DECK it builds the decks first (tools/slides.sh, into
# $B/test/slides-check/slides/) from the plots in DIR (default: $B/run when
# `make run` has run every lab; else a quick run, tools/run.sh --quick, made
# here). `make test` passes the quick run its report check made.
#   1 in headless chromium, at 1280x720 and 1920x1080, each deck once with a
#     probe script that shows each slide in turn (as dzslides does for #N)
#     and fails the slide when anything on it (a line of text, a table, a
#     code block, a plot) ends below the slide's bottom, past its edges or
#     closer to an edge than 1% of the slide's width, when a <pre> or
#     <table> hides part of itself, or when an image did not load. A
#     failing slide is named with its deck, #N, title and what sticks out by
#     how much, and screenshotted (at most 12 per run; --shots takes every
#     slide at both sizes, for a human look)
#   2 each deck shows at least one plot, and every plot is inside the file
#   3 no console error: a script in the deck's <head>, before any of its
#     own, records every uncaught error (window's error event, a resource
#     that failed to load included) and every console.error; the probe
#     writes them out, and a deck with any fails, naming them
#   4 the probe can fail: a made-up deck (a slide that fits, one too long,
#     one too wide, one whose image does not load, one whose script logs a
#     console error) fails exactly where it should (needs pandoc)
# Without chromium, or without pandoc where decks must be built (or with
# DL_BROWSER=none), it prints SKIPPED and why, and exits 77.
# DL_BROWSER=path picks another Chromium-like browser.
# Writes its decks, probes, DOMs and screenshots to $B/test/slides-check/.
set -u
. tools/testlib.sh
W=$B/test/slides-check
runs=
decks=()
all_shots=0
while [ $# -gt 0 ]; do
    case $1 in
    --runs)
        runs=${2:?--runs needs a folder}
        shift ;;
    --shots) all_shots=1 ;;
    -*)
        echo "usage: tools/check-slides.sh [--runs DIR] [--shots] [DECK.html ...]" >&2
        exit 2 ;;
    *) decks+=("$1") ;;
    esac
    shift
done
rm -rf "$W"
mkdir -p "$W/probe" "$W/shots"
t0=$SECONDS

skip() {
    echo "SKIPPED - the slides' layout in a browser: $*"
    exit 77
}
browser=${DL_BROWSER:-}
for b in chromium chromium-browser google-chrome; do
    [ -n "$browser" ] || browser=$(command -v "$b" 2>/dev/null)
done
[ "$browser" = none ] && skip "DL_BROWSER=none"
[ -n "$browser" ] || skip "no chromium here (apt-get install chromium, or DL_BROWSER=path)"
have_pandoc=0
command -v pandoc >/dev/null 2>&1 && have_pandoc=1

# ---- the decks ----
if [ ${#decks[@]} -eq 0 ]; then
    [ $have_pandoc = 1 ] || skip "no pandoc here to build the decks (\`make slides\` installs it)"
    if [ -z "$runs" ]; then
        runs=$B/run
        for md in slides/*.md; do
            d=$(basename "${md%.md}")
            [ "$(cat "$runs/$d/run.rc" 2>/dev/null)" = 0 ] || runs=
        done
        if [ -z "$runs" ]; then
            runs=$W/quick/run
            if bash tools/run.sh --quick --into "$W/quick" >"$W/quick-run.log" 2>&1; then
                ok "no complete \`make run\` in $B/run: a quick run (tools/run.sh --quick) made the plots"
            else
                not_ok "tools/run.sh --quick failed:"
                tail -n 12 "$W/quick-run.log" | sed 's/^/    | /'
            fi
        fi
    fi
    if DL_NO_DEPS=1 DL_SLIDES_NO_RUN=1 bash tools/slides.sh --runs "$runs" --out "$W/slides" >"$W/slides.log" 2>&1; then
        ok "tools/slides.sh built the decks from the plots in $runs"
    else
        not_ok "tools/slides.sh failed:"
        tail -n 12 "$W/slides.log" | sed 's/^/    | /'
        finish
        exit 1
    fi
    for md in slides/*.md; do decks+=("$W/slides/$(basename "${md%.md}").html"); done
fi

# ---- the console: what the deck's scripts report, recorded from before the first of them ----
cat >"$W/console.js" <<'EOF'
<script>
window.__slideCheckErrors = [];
window.addEventListener('error', function (e) {
  var t = e.target && e.target !== window ? (e.target.currentSrc || e.target.src || e.target.href || '') : '';
  window.__slideCheckErrors.push('error: ' + (e.message || ('failed to load ' + t)));
}, true);
(function () {
  var err = console.error;
  console.error = function () {
    window.__slideCheckErrors.push('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return err.apply(console, arguments);
  };
})();
</script>
EOF

# ---- the probe: runs in the deck after it loaded, writes one line per slide into <pre id="slide-check"> ----
cat >"$W/probe.js" <<'EOF'
<script>
(function () {
  function check() {
    var secs = Array.prototype.slice.call(document.querySelectorAll('body > section'));
    var W = window.innerWidth, H = window.innerHeight, lines = [];
    lines.push('window ' + W + 'x' + H + ' slides ' + secs.length);
    secs.forEach(function (s, i) {
      secs.forEach(function (t) { t.removeAttribute('aria-selected'); });
      s.setAttribute('aria-selected', 'true');                // what dzslides does for #(i + 1)
      var r = s.getBoundingClientRect();
      var scale = r.width / s.offsetWidth;                   // dzslides scales the slide to the window
      var m = 0.01 * r.width;                                // the least margin to an edge
      var box = { l: Math.max(r.left, 0), t: Math.max(r.top, 0),
                  r: Math.min(r.right, W), b: Math.min(r.bottom, H) }; // what the window shows of the slide
      var worst = { below: 0, right: 0, left: 0, above: 0 }, what = {}, bad = [];
      function name(n) {
        var e = n.nodeType === 1 ? n : n.parentNode;
        var t = (n.textContent || e.getAttribute('alt') || '').replace(/\s+/g, ' ').trim().slice(0, 40);
        return '<' + e.tagName.toLowerCase() + '>' + (t ? ' "' + t + '"' : '');
      }
      function see(rect, n) {
        if (rect.width === 0 && rect.height === 0) return;
        var d = { below: rect.bottom - (box.b - m), right: rect.right - (box.r - m),
                  left: (box.l + m) - rect.left, above: (box.t + m) - rect.top };
        for (var k in d) if (d[k] > 0.5 && d[k] > worst[k]) { worst[k] = d[k]; what[k] = name(n); }
      }
      var all = s.querySelectorAll('*'), plots = 0, inside = 0;
      for (var j = 0; j < all.length; j++) {
        var e = all[j], cs = getComputedStyle(e), tag = e.tagName.toUpperCase();
        if (cs.visibility === 'hidden' || cs.display === 'none') continue;
        // text is measured line by line below; of the boxes, those a reader sees as one thing
        if (/^(IMG|SVG|VIDEO|CANVAS|MATH|TABLE|PRE)$/.test(tag)) see(e.getBoundingClientRect(), e);
        if ((tag === 'PRE' || tag === 'TABLE' || tag === 'FIGURE') && cs.overflow !== 'visible' &&
            (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1))
          bad.push(name(e) + ' hides ' + (e.scrollWidth - e.clientWidth) + 'x' + (e.scrollHeight - e.clientHeight) + ' px of itself');
        if (tag === 'IMG') {
          plots++;
          if (/^data:/.test(e.getAttribute('src') || '')) inside++;
          if (!(e.complete && e.naturalWidth > 0)) bad.push(name(e) + ' did not load');
        }
        if (tag === 'SVG' && !e.parentNode.closest('svg')) { plots++; inside++; } // a plot pandoc inlined
      }
      var tw = document.createTreeWalker(s, NodeFilter.SHOW_TEXT, null), n;
      while ((n = tw.nextNode())) {
        if (!/\S/.test(n.textContent) || n.parentNode.closest('svg')) continue;
        var rg = document.createRange();
        rg.selectNodeContents(n);
        var rs = rg.getClientRects();
        for (var k2 = 0; k2 < rs.length; k2++) see(rs[k2], n);
      }
      var words = { below: 'below the slide\'s bottom', right: 'past its right edge',
                    left: 'past its left edge', above: 'above its top' };
      for (var k in worst)
        if (worst[k] > 0) bad.push(what[k] + ' ends ' + Math.round(worst[k] / scale) + ' px ' + words[k] +
                                   ' (slide px, its 1% margin included)');
      var h = s.querySelector('h1, h2, h3');
      var title = h ? h.textContent.replace(/\s+/g, ' ').trim() : '(no title)';
      lines.push((bad.length ? 'FAIL' : 'ok') + ' #' + (i + 1) + ' plots ' + plots + ' embedded ' + inside +
                 ' "' + title + '"' + (bad.length ? ': ' + bad.join('; ') : ''));
    });
    secs.forEach(function (t) { t.removeAttribute('aria-selected'); });
    if (secs.length) secs[0].setAttribute('aria-selected', 'true');
    var errs = window.__slideCheckErrors || [];
    lines.push('console ' + errs.length + (errs.length ? ': ' + errs.join(' | ').replace(/\s+/g, ' ').slice(0, 600) : ''));
    var pre = document.createElement('pre');
    pre.id = 'slide-check';
    pre.textContent = '\n' + lines.join('\n') + '\n';
    document.documentElement.appendChild(pre);
  }
  window.addEventListener('load', function () {
    var st = document.createElement('style');               // no sliding in between: measure where a slide rests
    st.textContent = 'section { transition: none !important; }';
    document.head.appendChild(st);
    (document.fonts ? document.fonts.ready : Promise.resolve()).then(function () { setTimeout(check, 0); });
  });
})();
</script>
EOF

flags=(--headless --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$W/profile")
[ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox) # chromium refuses to run as root with its sandbox
# headless chromium's --window-size is the outer window; under --dump-dom the page's viewport is smaller by a
# frame (143 px in chromium 156), under --screenshot it is not. Measure the frame once, then ask for the
# viewport we mean: the probe reports the window it saw, and a wrong one fails.
echo '<pre id="vp"><script>document.write(innerWidth + " " + innerHeight)</script></pre>' >"$W/viewport.html"
vp=$(timeout 60 "$browser" "${flags[@]}" --window-size=1280,720 --dump-dom "file://$(realpath "$W/viewport.html")" \
    2>>"$W/browser.log" | sed -n 's/.*<\/script>\([0-9]*\) \([0-9]*\)<\/pre>.*/\1 \2/p')
read -r vw vh <<<"${vp:-1280 720}"
fw=$((1280 - vw)) fh=$((720 - vh))

# probe DECK SIZE: the probe's lines for every slide of DECK at SIZE (WxH) into $W/probe/NAME-SIZE.txt
probe() {
    local deck=$1 size=$2 d copy dom
    d=$(basename "${deck%.html}")
    # the probe goes in a copy beside the deck (so relative paths still resolve)
    copy=$(dirname "$deck")/.probe-$d.html
    awk -v probe="$W/probe.js" -v cons="$W/console.js" '
        /<head[ >]/ && !early { print; while ((getline l < cons) > 0) print l; early = 1; next }
        /<\/body>/ && !done { while ((getline l < probe) > 0) print l; done = 1 } { print }' \
        "$deck" >"$copy"
    dom=$W/probe/$d-$size.html
    timeout 120 "$browser" "${flags[@]}" --window-size=$((${size%x*} + fw)),$((${size#*x} + fh)) \
        --virtual-time-budget=10000 --dump-dom "file://$(realpath "$copy")" >"$dom" 2>>"$W/browser.log"
    rm -f "$copy"
    sed -n '/<pre id="slide-check">/,/<\/pre>/p' "$dom" | sed '1d;$d' |
        sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' >"$W/probe/$d-$size.txt"
    grep -q '^window ' "$W/probe/$d-$size.txt"
}
# shot DECK N SIZE FILE: a screenshot of slide N
shot() {
    timeout 60 "$browser" "${flags[@]}" --window-size="${3/x/,}" --screenshot="$4" "file://$(realpath "$1")#$2" \
        >>"$W/browser.log" 2>&1
}

# ---- 1, 2 the decks ----
shots=0
for deck in "${decks[@]}"; do
    d=$(basename "${deck%.html}")
    if ! [ -s "$deck" ]; then
        not_ok "deck $deck is missing or empty"
        continue
    fi
    for size in 1280x720 1920x1080; do
        res=$W/probe/$d-$size.txt
        if ! probe "$deck" "$size"; then
            not_ok "$d at $size: the probe wrote nothing (see $W/probe/$d-$size.html, $W/browser.log)"
            continue
        fi
        win=$(sed -n 's/^window \([0-9]*x[0-9]*\) .*/\1/p' "$res")
        [ "$win" = "$size" ] || not_ok "$d: the window is $win, not $size"
        n=$(grep -c '^ok #' "$res")
        all=$(grep -c '^\(ok\|FAIL\) #' "$res")
        cons=$(sed -n 's/^console \([0-9]*\).*/\1/p' "$res")
        if [ "${cons:-x}" = 0 ]; then
            ok "$d at $size: no console error"
        else
            not_ok "$d at $size: ${cons:-no} console error(s) recorded:"
            grep '^console ' "$res" | sed 's/^/    | /'
        fi
        if [ "$n" = "$all" ] && [ "$all" -gt 0 ]; then
            ok "$d at $size: all $all slides show all of their content"
        else
            not_ok "$d at $size: $((all - n)) of $all slides do not show all of their content:"
            grep '^FAIL' "$res" | sed 's/^FAIL /    | /'
            while read -r num; do
                [ $shots -lt 12 ] || break
                shots=$((shots + 1))
                f=$W/shots/$d-$(printf '%02d' "$num")-$size.png
                shot "$deck" "$num" "$size" "$f"
                echo "    | screenshot: $f"
            done < <(sed -n 's/^FAIL #\([0-9]*\) .*/\1/p' "$res")
        fi
        if [ $all_shots = 1 ]; then
            for ((num = 1; num <= all; num++)); do
                shot "$deck" "$num" "$size" "$W/shots/$d-$(printf '%02d' "$num")-$size.png"
            done
            echo "# screenshots of every slide of $d at $size: $W/shots/$d-NN-$size.png"
        fi
    done
    res=$W/probe/$d-1280x720.txt
    plots=$(sed -n 's/^\(ok\|FAIL\) #[0-9]* plots \([0-9]*\) .*/\2/p' "$res" | awk '{ s += $1 } END { print s + 0 }')
    inside=$(sed -n 's/^\(ok\|FAIL\) #[0-9]* plots [0-9]* embedded \([0-9]*\) .*/\2/p' "$res" |
        awk '{ s += $1 } END { print s + 0 }')
    if [ "$plots" -gt 0 ] && [ "$plots" = "$inside" ]; then
        ok "$d shows $plots plot(s), each inside the file"
    else
        not_ok "$d shows $plots plot(s), $inside of them inside the file (want at least one, all inside)"
    fi
done

# ---- 3 the probe can fail ----
if [ $have_pandoc = 1 ]; then
    F=$W/fixture
    mkdir -p "$F/src" "$F/run/01-made-up"
    echo 0 >"$F/run/01-made-up/run.rc"
    echo 'not an image' >"$F/run/01-made-up/broken.svg"
    {
        printf '# A made-up deck\n\nIts first slide fits.\n\n---\n\n## Fits\n\n- one line\n- and another\n\n---\n\n'
        printf '## Too long\n\n'
        for i in $(seq 1 24); do printf -- '- line %d of a list that runs off the bottom\n' "$i"; done
        # shellcheck disable=SC2016 # the backticks are Markdown's
        printf '\n---\n\n## Too wide\n\n```\n%s\n```\n\n---\n\n' "$(printf 'x%.0s' $(seq 1 160))"
        printf '## A plot that does not load\n\n![Nothing to see.](01-made-up/broken.svg)\n'
        printf '\n---\n\n## A script that logs an error\n\n<script>console.error("made-up console error")</script>\n\nIt fits.\n'
    } >"$F/src/01-made-up.md"
    if DL_NO_DEPS=1 bash tools/slides.sh --src "$F/src" --runs "$F/run" --out "$F" >"$F/slides.log" 2>&1 &&
        probe "$F/01-made-up.html" 1280x720; then
        got=$(sed -n 's/^\(ok\|FAIL\) #\([0-9]*\) .*/\1 #\2/p' "$W/probe/01-made-up-1280x720.txt" | tr '\n' ' ')
        want='ok #1 ok #2 FAIL #3 FAIL #4 FAIL #5 ok #6 '
        if [ "$got" = "$want" ] &&
            grep '^console ' "$W/probe/01-made-up-1280x720.txt" | grep -q 'console.error: made-up console error' &&
            grep '^FAIL #3 ' "$W/probe/01-made-up-1280x720.txt" | grep -q 'below the slide' &&
            grep '^FAIL #4 ' "$W/probe/01-made-up-1280x720.txt" | grep -q 'past its right edge' &&
            grep '^FAIL #5 ' "$W/probe/01-made-up-1280x720.txt" | grep -q 'did not load'; then
            ok "a made-up deck fails where it should: too long, too wide, a plot that did not load, a console error (so the checks above can fail)"
        else
            not_ok "the made-up deck: got '$got', want '$want':"
            sed 's/^/    | /' "$W/probe/01-made-up-1280x720.txt"
        fi
    else
        not_ok "the made-up deck did not build or probe:"
        tail -n 5 "$F/slides.log" | sed 's/^/    | /'
    fi
fi
echo "# ${#decks[@]} deck(s) at two sizes in $((SECONDS - t0)) s; probe results: $W/probe/"
finish
