# amp.gp — lab 05 part 2: the loss scale per step (log scale) with the skipped
# steps (inf/NaN found) marked, and, at the steps the probe measured, the
# shares of the gradient that the run's 16-bit type (fp16 or bf16) flushes to
# zero or keeps only as a subnormal (measured against the fp32 gradient of the
# same micro-batch), and of the weights the step left unchanged, on a log
# axis: they run from a few in a million to a third. The dashed lines are the
# means over the probed steps (summary.json's amp_stats).
# Variables: data (amp.csv: step, loss, scale, skipped, underflow, unchanged,
# model_scale, subnormal; -1: not probed at that step), amp, P.
lowp = (amp eq 'bf16') ? 'bf16' : 'fp16'
# the probed steps only, so that their points join into lines
set table $probed separator comma
plot data using "step":"underflow":"subnormal":"unchanged" with table if (column("underflow") >= 0)
unset table
set key noautotitle # $probed has no header line: its first line is data
stats data using "scale" nooutput name "S"
stats data using "skipped" nooutput name "SKIP"
n_skipped = SKIP_sum
stats data using "step" nooutput name "STEP"
final_scale = 0
stats data using (final_scale = column("scale"), 0) nooutput name "F"
n_probed = |$probed|
if (n_probed > 0) {
    stats $probed using 2 nooutput name "U"
    stats $probed using 3 nooutput name "SUB"
    stats $probed using 4 nooutput name "UNCH"
    # the smallest share above 0 (1 when there is none)
    pos(v) = v > 0 ? v : 1
    stats $probed using (pos(column(2)) < pos(column(3)) ? pos(column(2)) : pos(column(3))) nooutput name "POS"
    stats $probed using (pos(column(4))) nooutput name "POS4"
    # probed steps where a share drawn elsewhere is 0: those points are left out
    gap(v, max) = (v == 0 && max > 0) ? 1 : 0
    stats $probed using (gap(column(2), U_max) + gap(column(3), SUB_max) + gap(column(4), UNCH_max)) nooutput name "GAP"
}
pct(v) = sprintf("%.3g%%", 100 * v)
skipped_line = n_skipped > 0 ? sprintf("%d step(s) found an inf/NaN: skipped, and the scale halved", n_skipped) \
                             : "no step found an inf/NaN: none was skipped"
zero_line = (n_probed > 0 && SUB_max == 0) ? sprintf("; no gradient element was subnormal in %s at any probed step", lowp) : ""
gap_line = (n_probed > 0 && GAP_sum > 0) ? "; a share of 0 at a step is left out (log axis)" : ""
set multiplot title sprintf("Lab 05: --amp %s on %d rank(s), %d steps\n%s", amp, P, STEP_max, \
    sub(skipped_line . zero_line . gap_line))
# both panels share the left edge, so that their steps line up; the lower
# one is taller: it holds the key below it
set lmargin 12
set rmargin 4
set origin 0, 0.55
set size 1, 0.37
set xrange [0:STEP_max + 1]
unset xlabel
# the scale's range, widened by a factor 2 each way: a scale that never moves
# (fp16-noscale, bf16) is a flat line, not an empty range
set yrange [S_min / 2 : S_max * 2]
set logscale y 2
set format y pow2
set ylabel 'loss scale'
# the key above the panel, clear of the scale's line
set tmargin 2.8
set key at graph 1, graph 1 bottom right horizontal nobox noopaque samplen 1.5
# a labelled tic every 4x when the scale spans more than 8x
if (S_max / S_min > 8) { set ytics 4 }
# the legend's two scales: the last step's (the curve's end) and the one its update left (what
# summary.json's final_scale and the report's headline say: the scale the next step would use)
if (!exists("after")) after = final_scale
pow2(x) = sprintf('2^%s', sup(sprintf('%d', int(log(x) / log(2) + 0.5))))
plot data using "step":"scale" with steps ls 1 title sprintf('loss scale (last step: %s%s)', pow2(final_scale), \
         after != final_scale ? sprintf(', then %s', pow2(after)) : ''), \
     data using "step":(column("skipped") > 0 ? column("scale") : 1/0) with points pt 7 ps 1.2 lc rgb "red" \
          title (n_skipped > 0 ? 'skipped step (inf/NaN)' : '')
set origin 0, 0
set size 1, 0.57
set tmargin 1
set xlabel 'optimizer step'
set ytics auto
set logscale y 10
set ylabel 'share (log scale)'
set format y "%g%%"
if (n_probed == 0) {
    set yrange [1e-4:100]
    set label 1 'no step was probed (--probe-every 0)' at graph 0.5, graph 0.5 center
    plot NaN notitle
} else {
    # the axis starts a decade below the smallest share drawn
    lo = POS_min < POS4_min ? POS_min : POS4_min
    set yrange [10**floor(log10(100 * lo)) / 10:100]
    eval key_below(3)
    set key vertical maxrows 3
    # a share of 0 has no place on a log axis: it is left out, and a share that
    # is 0 at every probed step has no line and no key entry (the title says so)
    nz(v) = v > 0 ? 100 * v : 1/0
    plot $probed using 1:(nz(column(3))) with linespoints ls 3 \
              title (SUB_max > 0 ? sprintf('gradient: subnormal in %s', lowp) : ''), \
         $probed using 1:(nz(column(2))) with linespoints ls 2 \
              title (U_max > 0 ? sprintf('gradient: flushed to zero in %s', lowp) : ''), \
         $probed using 1:(nz(column(4))) with linespoints ls 4 \
              title (UNCH_max > 0 ? 'weights the step left unchanged' : ''), \
         nz(SUB_mean) with lines ls 3 lw 1 dt 2 title (SUB_max > 0 ? sprintf('mean: %s', pct(SUB_mean)) : ''), \
         nz(U_mean) with lines ls 2 lw 1 dt 2 title (U_max > 0 ? sprintf('mean: %s', pct(U_mean)) : ''), \
         nz(UNCH_mean) with lines ls 4 lw 1 dt 2 title (UNCH_max > 0 ? sprintf('mean: %s', pct(UNCH_mean)) : '')
}
unset multiplot
