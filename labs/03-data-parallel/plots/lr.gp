# lr.gp — lab 03: the learning rate per step: linear warmup to base_lr x
# global/base batch, then the schedule. Variables: data (lr.csv), P.
# One step is drawn as a point in a range around it.
stats data using (column("step")) nooutput
if (STATS_records == 1) { set xrange [-0.5:0.5]; set xtics 1 }
set title sprintf("Learning rate per step (global batch = %d x per-rank batch)\n%s", P, sub("linear scaling with warmup; the dashed line is the unscaled base lr"))
set xlabel 'optimizer step'
set ylabel 'learning rate'
set yrange [0:*]
set key bottom right
plot data using "step":"lr" with linespoints ls 1 pt 7 ps 0.3 title 'scaled, with warmup', \
     data using "step":"unscaled" with lines ls 7 title 'base lr (one rank)'
