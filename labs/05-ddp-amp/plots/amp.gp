# amp.gp — lab 05 part 2: the loss scale per step (log scale) with the skipped
# steps (inf/NaN found) marked, and the share of the gradient that flushes to
# zero in the run's 16-bit type (fp16 or bf16), measured against the fp32
# gradient of the same micro-batch.
# Variables: data (amp.csv: step, loss, scale, skipped, underflow, unchanged), amp, P.
set multiplot layout 2,1 title sprintf("Lab 05: --amp %s on %d rank(s)", amp, P)
# the scale's range, widened by a factor 2 each way: a scale that never moves
# (fp16-noscale, bf16) is a flat line, not an empty range
stats data using "scale" nooutput name "S"
set yrange [S_min / 2 : S_max * 2]
set logscale y 2
set format y "2^{%L}"
set xlabel 'optimizer step'
set ylabel 'loss scale'
set key top right
plot data using "step":"scale" with steps ls 1 title 'loss scale', \
     data using "step":(column("skipped") > 0 ? column("scale") : 1/0) with points pt 7 ps 1.2 lc rgb "red" \
          title 'skipped step (inf/NaN)'
unset logscale y
set yrange [*:*]
set format y "%g"
set yrange [0:*]
set ylabel 'share of elements'
set key top right
plot data using "step":(column("underflow") >= 0 ? column("underflow") : 1/0) with linespoints ls 2 \
          title sprintf('gradient elements flushed to zero in %s', amp eq 'bf16' ? 'bf16' : 'fp16'), \
     data using "step":(column("unchanged") >= 0 ? column("unchanged") : 1/0) with linespoints ls 3 \
          title 'weights unchanged by the step'
unset multiplot
